/*
 * Peer credentials and the profile they select (broker/peer.h).
 */
#include "config.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

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

const struct policy_profile *
peer_match_profile(const struct policy *policy, uid_t uid, gid_t gid)
{
	const struct policy_profile *p;
	size_t i;

	for (i = 0; i < policy->profile_count; i++) {
		p = &policy->profiles[i];
		if (peer_listed(p->match_uids, p->match_uid_count, uid) ||
		    peer_listed(p->match_gids, p->match_gid_count, gid))
			return p;
	}
	return NULL;
}

const struct policy_profile *
peer_pick_profile(const struct policy *policy, const char *requested, int fd,
    const char **from)
{
	const struct policy_profile *p;
	uid_t uid;
	gid_t gid;

	if (requested != NULL) {
		p = policy_profile_by_name(policy, requested);
		*from = p != NULL ? "--profile" : "unknown";
		return p;
	}
	if (peer_credentials(fd, &uid, &gid, NULL) &&
	    (p = peer_match_profile(policy, uid, gid)) != NULL) {
		*from = "peer credentials";
		return p;
	}
	p = policy_profile_by_name(policy, "default");
	*from = p != NULL ? "default" : "none";
	return p;
}
