/*
 * The contract between the broker and the two children it starts
 * (docs/design.md section 1): the fd numbers each child finds at exec, and the
 * start-up every child runs in the same order before its own session code:
 * read the policy bytes it was handed, load them, confine itself.
 *
 * A child is its own program, `sp-frontend LEVEL PROFILE` or
 * `sp-executor LEVEL PROFILE` (record_role_program(), common/record.h),
 * installed in $(libexecdir)/sallyport and started by the broker alone:
 * LEVEL is the broker's log level (SP_LOG_LEVEL, sp(1)), handed over on
 * the command line so that no child reads it from its environment;
 * PROFILE is the profile name fixed by the broker ("" for no profile: no
 * tools).
 */
#ifndef SP_CHILD_CHILD_H
#define SP_CHILD_CHILD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/channel.h"
#include "common/hash.h"
#include "common/record.h"
#include "common/sandbox.h"
#include "policy/policy.h"

/* Fds every child holds at exec; nothing else is open. */
#define CHILD_FD_POLICY 3	/* sealed memfd with the policy bytes */
#define CHILD_FD_ACTION 4	/* SOCK_SEQPACKET frontend <-> executor */
#define CHILD_FD_CONTROL 5	/* SOCK_SEQPACKET child <-> broker */

/*
 * The frontend's root when started as root: empty, root-owned, made by
 * the broker if missing and shared by every session (like OpenSSH's
 * /run/sshd); nothing can be created in it once the frontend is there.
 */
#define CHILD_EMPTY_DIR "/run/sallyport-empty"

/*
 * What a child knows after start-up.  policy and profile are owned by
 * the context (profile points into policy, NULL: no tools);
 * child_context_free() releases them.  chan, the child's channels
 * (common/channel.h), is made and freed by the role's main, which sets
 * it once its peer table is up.
 */
struct child_context {
	enum record_role role;
	struct channel *chan;
	struct policy *policy;
	const struct policy_profile *profile;
	uint8_t fingerprint[HASH_SHA256_LEN];
	struct record_limits limits;
};

/*
 * The first thing a child's main does: reads its command line, starts
 * logging as role at LEVEL and returns PROFILE (borrowed from argv).
 * Exits 64 after one line when the command line is not the broker's
 * (a person started the program by hand).
 */
const char *child_args(int argc, char **argv, enum record_role role);

/*
 * Reads the policy from CHILD_FD_POLICY (then closes it), loads it and
 * finds profile_name in it.  Exits 70 after logging on any failure: the
 * broker validated the same bytes, so a failure here is internal.
 */
void child_context_load(struct child_context *ctx, enum record_role role,
    const char *profile_name);

/*
 * Confines the calling child for its role as the policy's "sandbox" says
 * (chroot and uid drop when root, parent-death signal, not dumpable,
 * no-new-privs, seccomp).  Exits 71 when a required step fails; in
 * best-effort mode logs exactly what is missing and returns.
 */
void child_confine(const struct child_context *ctx);

/*
 * For the broker, before it starts the children, when root: the frontend
 * drops to "nobody" and the executor to server.run_as, and the two must
 * never share a uid (docs/design.md section 1: each child its own).  So
 * without run_as, or with a run_as of nobody's uid, one line naming
 * server.run_as and SP_EXIT_CONFIG; a user that does not exist or is root,
 * one line and SP_EXIT_SANDBOX (refused before any child starts, not an
 * executor that dies at start while the frontend already answers).  When
 * not root nothing is dropped: a run_as is said to be unused (a warning).
 * The line is written into why (why[0] is NUL when there is none), for
 * sp mcp to log and sp check to place at server.run_as.  SP_EXIT_OK when
 * the session may start.
 */
int child_drop_users_check(const struct policy *policy, char *why,
    size_t why_size);

void child_context_free(struct child_context *ctx);

/* Record limits for the channels of a session under policy. */
void child_record_limits(const struct policy *policy,
    struct record_limits *limits);

#endif
