/*
 * Starting the two children of a session (docs/design.md section 1,
 * invariants 5 and 7): the broker forks and execs the programs
 * sp-frontend and sp-executor (child/child.h gives their command line),
 * each with exactly the fds of child/child.h:
 *
 *   frontend  0 client's stdin  1 client's stdout  2 its stderr pipe
 *   executor  0 /dev/null       1 its stderr pipe  2 its stderr pipe
 *   both      3 policy memfd (sealed)  4 action channel  5 control channel
 *
 * The action channel is one SOCK_SEQPACKET socketpair between the
 * children; each control channel a socketpair to the broker; each stderr
 * pipe is read by the broker, which writes its lines with the child's
 * role (broker/child_stderr.h).
 */
#ifndef SP_BROKER_CHILDREN_H
#define SP_BROKER_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/record.h"

enum child_slot { CHILD_FRONTEND = 0, CHILD_EXECUTOR = 1, CHILD_COUNT = 2 };

/* A started child; control is the broker's end of its channel (owned). */
struct child {
	enum record_role role;	/* RECORD_ROLE_FRONTEND or _EXECUTOR */
	pid_t pid;		/* 0 once reaped */
	int control;		/* -1 once closed */
	int err;		/* read end of its stderr pipe, -1 once
				   handed to a relay or closed */
	int status;		/* wait status once reaped */
};

/*
 * The children's programs, opened once when sp mcp starts, before its
 * confinement, and run from these fds (fexecve): each child runs the file
 * opened then, so a package upgrade during the session cannot give it a
 * frontend or an executor of another version than its broker.
 *
 * Both come from one directory: the running sp's own (readlink of
 * /proc/self/exe) when sp-frontend is there -- the build tree, where
 * tests/sp-test finds the test builds beside it -- else
 * SP_PKGLIBEXECDIR, $(libexecdir)/sallyport fixed at configure time
 * (the installed sp in $(bindir) has none beside it).  No environment
 * variable or argument can name another directory, so nothing a caller
 * of a root broker sets can choose the programs it runs as root; the
 * running sp's directory is trusted as much as the sp in it is.
 */
struct child_programs {
	int exe[CHILD_COUNT];	/* O_PATH fds, owned; -1 when closed */
};

/*
 * Opens both programs into p.  false after logging which file is missing
 * or not an executable regular file; p then holds none.
 */
bool children_programs_open(struct child_programs *p);

void children_programs_close(struct child_programs *p);

/*
 * Starts both children from progs (borrowed), handing them policy (len
 * bytes, borrowed), the profile name ("" for none) and the broker's log
 * level.  client_out is the saved fd of the client's
 * stdout; it is given to the frontend and closed here, and fd 0 of the
 * broker is pointed at /dev/null, so the frontend alone holds the client.
 * On failure logs, kills what was started and returns false.
 */
bool children_start(const struct child_programs *progs, const char *policy,
    size_t len, const char *profile, int client_out,
    struct child kids[CHILD_COUNT]);

/*
 * Kills, reaps and closes whatever of kids is still there: for a broker
 * that cannot go on (its own sandbox failed), not a session's end.
 */
void children_kill(struct child kids[CHILD_COUNT]);

/*
 * Each channel's send and receive buffers, asked for explicitly so that a
 * maximum-size record (RECORD_MAX_BYTES) is always one datagram, whatever
 * the host's net.core.wmem_default: the record plus slack for the header
 * and the kernel's per-datagram accounting.
 */
#define CHANNEL_BUFFER_BYTES (RECORD_MAX_BYTES + 16384)

/*
 * Sets SO_SNDBUF and SO_RCVBUF of the socket fd (borrowed) to
 * CHANNEL_BUFFER_BYTES and reads them back; false after logging if the
 * kernel granted less (net.core.wmem_max or rmem_max below it).
 */
bool channel_buffers_set(int fd);

#endif
