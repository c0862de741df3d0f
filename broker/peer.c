/*
 * Peer credentials and the profile they select (broker/peer.h).
 */
#include "config.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/peer.h"
#include "common/log.h"
#include "policy/authz.h"

bool
peer_credentials(int fd, uid_t *uid, gid_t *gid, pid_t *pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int domain;
	socklen_t dlen = sizeof(domain);
	struct stat st;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) == -1 ||
	    domain != AF_UNIX)
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred) || cred.pid == 0)
		return false;
	*uid = cred.uid;
	*gid = cred.gid;
	if (pid != NULL)
		*pid = cred.pid;
	return true;
}

static bool
peer_listed(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The profile whose ids (uids or gids of each profile) list id. */
static const struct policy_profile *
peer_listing(const struct policy *policy, bool by_uid, uint32_t id)
{
	const struct policy_profile *p;
	size_t i;

	for (i = 0; i < policy->profile_count; i++) {
		p = &policy->profiles[i];
		if (by_uid ? peer_listed(p->match_uids, p->match_uid_count, id) :
		    peer_listed(p->match_gids, p->match_gid_count, id))
			return p;
	}
	return NULL;
}

/* The loader keeps each id in one profile, so uid-then-gid is the order. */
const struct policy_profile *
peer_match_profile(const struct policy *policy, uid_t uid, gid_t gid)
{
	const struct policy_profile *p;

	if ((p = peer_listing(policy, true, (uint32_t)uid)) != NULL)
		return p;
	return peer_listing(policy, false, (uint32_t)gid);
}

/* A profile without a match suits anyone it is given to explicitly. */
static bool
peer_fits(const struct policy_profile *p, uid_t uid, gid_t gid)
{
	if (p->match_uid_count == 0 && p->match_gid_count == 0)
		return true;
	return peer_listed(p->match_uids, p->match_uid_count, (uint32_t)uid) ||
	    peer_listed(p->match_gids, p->match_gid_count, (uint32_t)gid);
}

static const struct policy_profile *
peer_requested(const struct policy *policy, const char *requested,
    uid_t uid, gid_t gid, const char **from)
{
	const struct policy_profile *p;

	if ((p = policy_profile_by_name(policy, requested)) == NULL) {
		*from = "unknown";
		return NULL;
	}
	if (!peer_fits(p, uid, gid)) {
		log_error("profile '%s' does not match uid %u gid %u",
		    requested, (unsigned)uid, (unsigned)gid);
		*from = "refused";
		return NULL;
	}
	*from = "--profile";
	return p;
}

/* A socket at all, whatever its family: a peer may be behind it. */
static bool
peer_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * A socket whose peer has no credentials to read (TCP, say, if a unit's
 * ListenStream= names a port): the client is anyone, not the running
 * user, so it fits no match and never gets "default".
 */
static const struct policy_profile *
peer_unknown(const struct policy *policy, const char *requested,
    const char **from)
{
	const struct policy_profile *p;

	*from = "unknown peer";
	if (requested == NULL)
		return NULL;
	if ((p = policy_profile_by_name(policy, requested)) == NULL) {
		*from = "unknown";
		return NULL;
	}
	if (p->match_uid_count != 0 || p->match_gid_count != 0) {
		log_error("profile '%s' has a match, and the peer's credentials "
		    "cannot be read", requested);
		*from = "refused";
		return NULL;
	}
	*from = "--profile";
	return p;
}

const struct policy_profile *
peer_pick_profile(const struct policy *policy, const char *requested, int fd,
    const char **from)
{
	const struct policy_profile *p;
	bool socket_peer;
	uid_t uid;
	gid_t gid;

	if (!(socket_peer = peer_credentials(fd, &uid, &gid, NULL))) {
		if (peer_is_socket(fd))
			return peer_unknown(policy, requested, from);
		uid = getuid();
		gid = getgid();
	}
	if (requested != NULL)
		return peer_requested(policy, requested, uid, gid, from);
	if (socket_peer) {
		p = peer_match_profile(policy, uid, gid);
		*from = p != NULL ? "peer credentials" : "none";
		/*
		 * A peer of our own uid could have started sp mcp itself
		 * (Node's child_process stdio is a socketpair, not a pipe),
		 * so the local rule below applies to it; a peer of any
		 * other uid (systemd's Accept=yes) never gets "default".
		 */
		if (p != NULL || uid != getuid())
			return p;
	}
	p = policy_profile_by_name(policy, "default");
	if (p != NULL && !peer_fits(p, uid, gid))
		p = NULL;
	*from = p != NULL ? "default" : "none";
	return p;
}
