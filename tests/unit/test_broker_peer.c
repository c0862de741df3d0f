/*
 * broker/peer.h: which profile a client gets.  A socketpair stands for a
 * socket-activated connection (its peer is this process, so SO_PEERCRED
 * gives our uid and gid); a pipe stands for a local assistant.
 */
#include "config.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/peer.h"
#include "policy/load.h"

/*
 * The profiles in a policy, with @U our uid, @G our gid, @X and @Y a uid
 * and a gid that are not ours.
 */
static struct policy *
load_profiles(const char *profiles)
{
	char text[4096];
	struct policy_diags d = { 0 };
	struct policy *p;
	size_t n;
	unsigned id;

	n = (size_t)snprintf(text, sizeof(text), "{\"sallyport\": 1, "
	    "\"profiles\": {");
	for (; *profiles != '\0' && n + 16 < sizeof(text); profiles++) {
		if (profiles[0] != '@' || strchr("UGXY", profiles[1]) == NULL) {
			text[n++] = *profiles;
			continue;
		}
		profiles++;
		id = *profiles == 'U' || *profiles == 'X' ? (unsigned)getuid() :
		    (unsigned)getgid();
		if (*profiles == 'X' || *profiles == 'Y')
			id += 4242;
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u", id);
	}
	snprintf(text + n, sizeof(text) - n, "}}");
	p = policy_load("t.json", text, strlen(text), &d);
	cr_assert_not_null(p, "%s", text);
	cr_assert_eq(d.count, 0, "%s: %s", text, d.count ? d.items[0].text : "");
	policy_diags_free(&d);
	return p;
}

/* The chosen profile's name, or "(none)"; *from as the broker would log. */
static const char *
pick(const struct policy *p, const char *requested, bool over_socket,
    const char **from)
{
	const struct policy_profile *pr;
	int fds[2];

	if (over_socket)
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	else
		cr_assert_eq(pipe(fds), 0);
	pr = peer_pick_profile(p, requested, fds[0], from);
	close(fds[0]);
	close(fds[1]);
	return pr != NULL ? pr->name : "(none)";
}

/* Review F1: a "default" whose match excludes the peer is no fallback. */
Test(peer, a_matched_default_is_only_for_its_match)
{
	struct policy *p = load_profiles("\"default\": {\"scopes\": "
	    "[\"admin\"], \"match\": {\"uid\": [@X]}}");
	const char *from;

	cr_assert_str_eq(pick(p, NULL, true, &from), "(none)");
	cr_assert_str_eq(from, "none");
	cr_assert_str_eq(pick(p, NULL, false, &from), "(none)");
	cr_assert_str_eq(from, "none");
	cr_assert_str_eq(pick(p, "default", true, &from), "(none)");
	cr_assert_str_eq(from, "refused");
	cr_assert_str_eq(pick(p, "default", false, &from), "(none)");
	cr_assert_str_eq(from, "refused");
	policy_free(p);
}

/*
 * docs/design.md section 7: a socket peer of another uid nobody matches gets no
 * tools (tests/integration/sp_connect_relays_unchanged.py connects as uid 65534 for that);
 * a socket peer of our own uid is the local user (a socketpair here, as
 * Node's stdio is) and gets the local rule.
 */
Test(peer, a_socket_peer_without_a_match_gets_no_default)
{
	struct policy *p = load_profiles("\"default\": {\"scopes\": "
	    "[\"read\"]}, \"other\": {\"scopes\": [\"write\"], \"match\": "
	    "{\"uid\": [@X], \"gid\": [@Y]}}");
	const char *from;

	cr_assert_str_eq(pick(p, NULL, true, &from), "default");
	cr_assert_str_eq(from, "default");
	cr_assert_str_eq(pick(p, NULL, false, &from), "default");
	cr_assert_str_eq(from, "default");
	/* --profile of a profile without a match is the operator's choice. */
	cr_assert_str_eq(pick(p, "default", true, &from), "default");
	cr_assert_str_eq(from, "--profile");
	cr_assert_str_eq(pick(p, "other", true, &from), "(none)");
	cr_assert_str_eq(from, "refused");
	cr_assert_str_eq(pick(p, "other", false, &from), "(none)");
	cr_assert_str_eq(pick(p, "Other \"$(id)\"", true, &from), "(none)");
	cr_assert_str_eq(from, "unknown");
	policy_free(p);
}

/* Review F5: the uid match wins over a gid match, in either file order. */
Test(peer, a_uid_match_beats_a_gid_match)
{
	static const char *const orders[] = {
		"\"ops\": {\"scopes\": [\"admin\"], \"match\": {\"gid\": "
		"[@G]}}, \"restricted\": {\"scopes\": [], \"match\": "
		"{\"uid\": [@U]}}",
		"\"restricted\": {\"scopes\": [], \"match\": {\"uid\": "
		"[@U]}}, \"ops\": {\"scopes\": [\"admin\"], \"match\": "
		"{\"gid\": [@G]}}",
	};
	struct policy *p;
	const char *from;
	size_t i;

	for (i = 0; i < 2; i++) {
		p = load_profiles(orders[i]);
		cr_assert_str_eq(pick(p, NULL, true, &from), "restricted",
		    "order %zu", i);
		cr_assert_str_eq(from, "peer credentials");
		cr_assert_str_eq(peer_match_profile(p, getuid(),
		    getgid())->name, "restricted");
		cr_assert_str_eq(peer_match_profile(p, getuid() + 1,
		    getgid())->name, "ops");
		cr_assert_null(peer_match_profile(p, getuid() + 1,
		    getgid() + 1));
		/* Both fit this peer, so --profile may name either. */
		cr_assert_str_eq(pick(p, "ops", true, &from), "ops");
		policy_free(p);
	}
}

/* A local assistant (not a socket) is the running user. */
Test(peer, a_local_client_is_the_running_user)
{
	struct policy *p = load_profiles("\"default\": {\"scopes\": "
	    "[\"read\"], \"match\": {\"gid\": [@G, @Y]}}, \"ops\": "
	    "{\"scopes\": [\"write\"], \"match\": {\"uid\": [@U]}}");
	const char *from;

	cr_assert_str_eq(pick(p, NULL, false, &from), "default");
	cr_assert_str_eq(from, "default");
	cr_assert_str_eq(pick(p, "ops", false, &from), "ops");
	cr_assert_str_eq(from, "--profile");
	cr_assert_str_eq(pick(p, NULL, true, &from), "ops");
	policy_free(p);
}

/*
 * A connected TCP socket on loopback: the kind of fd a unit whose
 * ListenStream= names a port would hand over.  fds[0] is the accepted
 * (server) end.
 */
static void
tcp_pair(int fds[2])
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int l;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_neq(l = socket(AF_INET, SOCK_STREAM, 0), -1);
	cr_assert_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	cr_assert_neq(fds[1] = socket(AF_INET, SOCK_STREAM, 0), -1);
	cr_assert_eq(connect(fds[1], (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_neq(fds[0] = accept(l, NULL, NULL), -1);
	close(l);
}

/*
 * Review host F1: a socket whose peer has no credentials (TCP, an
 * unconnected unix socket) is not the running user: no "default", and a
 * matched profile cannot be asked for, however the policy is written.
 */
Test(peer, a_socket_without_credentials_is_nobody)
{
	struct policy *p = load_profiles("\"default\": {\"scopes\": "
	    "[\"read\"]}, \"ops\": {\"scopes\": [\"write\"], \"match\": "
	    "{\"uid\": [@U], \"gid\": [@G]}}");
	const struct policy_profile *pr;
	const char *from = NULL;
	int fds[2], lone;
	uid_t uid;
	gid_t gid;

	tcp_pair(fds);
	cr_assert_not(peer_credentials(fds[0], &uid, &gid, NULL));
	cr_assert_null(peer_pick_profile(p, NULL, fds[0], &from));
	cr_assert_str_eq(from, "unknown peer");
	cr_assert_null(peer_pick_profile(p, "ops", fds[0], &from));
	cr_assert_str_eq(from, "refused");
	cr_assert_null(peer_pick_profile(p, "nope \"$(id)\"", fds[0], &from));
	cr_assert_str_eq(from, "unknown");
	/* The operator's explicit choice of an unmatched profile stands. */
	pr = peer_pick_profile(p, "default", fds[0], &from);
	cr_assert(pr != NULL && strcmp(pr->name, "default") == 0);
	cr_assert_str_eq(from, "--profile");
	close(fds[0]);
	close(fds[1]);
	cr_assert_neq(lone = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	cr_assert_null(peer_pick_profile(p, NULL, lone, &from));
	cr_assert_str_eq(from, "unknown peer");
	close(lone);
	policy_free(p);
}
