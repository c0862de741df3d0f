/*
 * Which profile a session gets (DESIGN.md sections 3 and 7): the one
 * named on the command line, else the one whose match fits the peer's
 * SO_PEERCRED when fd 0 is a unix socket, else "default" if the policy
 * has it; otherwise none (no tools).
 */
#ifndef SP_BROKER_PEER_H
#define SP_BROKER_PEER_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy/policy.h"

/*
 * Reads the peer's uid, gid and pid (pid may be NULL) of fd when it is a
 * connected unix socket.  false when it is not one (a pipe, a tty, a
 * file).  The pid is the socket's creator's at connect time: for the
 * audit, not for trust.
 */
bool peer_credentials(int fd, uid_t *uid, gid_t *gid, pid_t *pid);

/* The first profile whose match lists uid or gid, or NULL. */
const struct policy_profile *peer_match_profile(const struct policy *policy,
    uid_t uid, gid_t gid);

/*
 * The session's profile by the rule above for a client on fd; NULL when
 * none applies.  *from says how it was chosen (a static phrase).  A
 * requested name the policy lacks is not a fallback: NULL, and
 * *from is "unknown".
 */
const struct policy_profile *peer_pick_profile(const struct policy *policy,
    const char *requested, int fd, const char **from);

#endif
