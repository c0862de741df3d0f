/*
 * A child's stderr, relayed by the broker (docs/design.md section 1,
 * invariant 1).  Each child's fd 2 (and the executor's fd 1) is the write
 * end of a pipe of its own; the broker reads the other end and writes
 * each line to its own stderr in the one format of common/log.h, as
 * "sp[ROLE]: LEVEL: LINE" (or "<N>sp[ROLE]: LINE" when the broker's
 * stderr is the journal), ROLE the child's true role.  A child that can
 * run code can thus write anything, but never a line that reads as
 * another process's: a forged "sp[sp]: ..." (the broker's session-end
 * anchor, say) comes out as "sp[frontend]: warning: sp[sp]: ...".
 *
 * A line is at most CHILD_STDERR_LINE_MAX bytes: the rest is dropped up
 * to the next newline and the line says it was cut.  Control bytes, DEL
 * and bytes that are not valid UTF-8 (and the C1 controls) are written as
 * \xHH, so a line is one line and sends a terminal no escape.  The
 * child's own "sp[ROLE]: LEVEL: " prefix (common/log.h), when it names
 * its own role, is replaced by the broker's for that level, so an honest
 * line reads as the child wrote it; any other line is a warning.
 */
#ifndef SP_BROKER_CHILD_STDERR_H
#define SP_BROKER_CHILD_STDERR_H

#include <stdbool.h>
#include <stddef.h>

struct event;
struct event_base;

/* Bytes of one line kept (common/log.c writes at most 1024 and '\n'). */
#define CHILD_STDERR_LINE_MAX 1024
/* Bytes read per wake-up: a child spewing stderr cannot starve the
 * control channels, which the same loop reads. */
#define CHILD_STDERR_READ_MAX 16384

struct child_stderr {
	const char *role;	/* "frontend" or "executor", static */
	int fd;			/* read end, owned; -1 once at EOF */
	int out;		/* where lines go, borrowed (STDERR_FILENO) */
	struct event *ev;	/* owned; NULL until child_stderr_watch() */
	size_t len;		/* bytes in line */
	bool cut;		/* line was cut: the rest is dropped */
	char line[CHILD_STDERR_LINE_MAX];
};

/* Takes fd (the pipe's read end, owned from now on; -1: none). */
void child_stderr_init(struct child_stderr *cs, const char *role, int fd,
    int out);

/*
 * Reads the pipe on base (borrowed) as the child writes, up to
 * CHILD_STDERR_READ_MAX bytes a wake-up; at EOF the last partial line is
 * written and the pipe closed.  Makes the fd non-blocking.  false after
 * logging.
 */
bool child_stderr_watch(struct child_stderr *cs, struct event_base *base);

/*
 * For a child that is gone (no writer left): reads what is still in the
 * pipe, without blocking, writes it, flushes a partial line and closes.
 */
void child_stderr_drain(struct child_stderr *cs);

/* Takes n bytes as if read from the pipe (exposed for tests). */
void child_stderr_feed(struct child_stderr *cs, const char *bytes, size_t n);

/* Writes a partial line, closes the pipe and frees the event. */
void child_stderr_close(struct child_stderr *cs);

#endif
