/*
 * Which profile a session gets (docs/design.md sections 3 and 7).  The client
 * is identified by SO_PEERCRED when fd 0 is a unix socket (systemd socket
 * activation, sp connect), else by the running process's real uid and gid
 * (a local assistant started sp mcp itself).
 *
 * A profile with a "match" is only ever given to a client it matches, by
 * any path.  A profile without one matches nobody by credentials.
 *
 * Unix socket peer:  --profile NAME if that profile has no match or its
 *                    match fits the peer (else refused); otherwise the
 *                    profile whose uid list holds the peer's uid, else the
 *                    one whose gid list holds its gid; otherwise, when
 *                    the peer's uid is the running uid (it could have
 *                    started sp itself: Node's stdio is a socketpair),
 *                    the local rule below; otherwise no profile: no
 *                    tools.  "default" is never a fallback for a socket
 *                    peer of another uid (systemd's Accept=yes).
 * Another socket:    (not AF_UNIX, or no credentials: TCP, an unconnected
 *                    socket) the peer is unknown: --profile NAME only when
 *                    that profile has no match; otherwise no tools.
 * Anything else:     (a pipe, a tty, a file) --profile NAME with the same
 *                    match rule against the running uid/gid; otherwise
 *                    "default" when the policy has it and it has no match
 *                    or its match fits the running uid/gid; otherwise no
 *                    tools.
 *
 * The loader refuses one uid (or one gid) in two profiles, so the choice
 * never depends on the order of profiles in the file.  SO_PEERCRED gives
 * only the peer's effective gid at connect time, never its supplementary
 * groups, and a user may pick it among their groups (newgrp, sg): a gid
 * match must suit every member of that group.
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

/*
 * The profile whose match lists uid, else the one whose match lists gid,
 * else NULL.  Borrowed from policy.
 */
const struct policy_profile *peer_match_profile(const struct policy *policy,
    uid_t uid, gid_t gid);

/*
 * The session's profile by the rules above for a client on fd (borrowed
 * from policy); NULL when none applies.  *from says how it was chosen (a
 * static phrase).  requested (--profile) is never a fallback: when the
 * policy lacks it, NULL and *from is "unknown"; when its match does not
 * fit the client, NULL, *from is "refused" and one line is logged.  A
 * socket peer without credentials and without --profile: NULL, *from is
 * "unknown peer".
 */
const struct policy_profile *peer_pick_profile(const struct policy *policy,
    const char *requested, int fd, const char **from);

#endif
