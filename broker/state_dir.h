/*
 * A file of state_dir (docs/design.md section 9): append-only JSON lines
 * shared by every sp mcp of the host, opened by the broker before its
 * confinement, as it opens the audit log.
 *
 * Each decision runs under flock(LOCK_EX): state_file_lock() re-reads
 * what was appended since this process's last position (so a second
 * process's lines are seen at once), handing each complete line to the
 * caller; it starts over (reset, then every line from the start) when
 * the file is shorter than that position (truncated) or its name now
 * names another file (replaced: opened anew, relative to the directory
 * fd, with SANDBOX_AUDIT_LOG_FLAGS, the only open the broker's filter
 * allows).  A last line without its newline is a writer killed in the
 * middle: under the lock nobody is writing, so it is skipped, and the
 * next append starts on a line of its own.  A line that does not parse
 * is the caller's to skip.
 *
 * Created 0600 (umask 077 is set by sp mcp), never through a symbolic
 * link.  The file grows by one line per counted call; an operator may
 * truncate or replace it at any time, which starts the counts over.
 */
#ifndef SP_BROKER_STATE_DIR_H
#define SP_BROKER_STATE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define STATE_LINE_MAX 1024	/* longer lines are skipped */

/* Called for each complete line (no newline, NUL-terminated). */
struct state_reader {
	void (*reset)(void *arg);
	void (*line)(void *arg, const char *line, size_t len);
	void *arg;
};

struct state_file;	/* opaque; its owner frees it */

/* dir/name, created when missing; NULL after logging. */
struct state_file *state_file_open(const char *dir, const char *name);
/* Another file of sibling's directory, through the same directory fd
 * (the one the broker's filter allows); sibling must outlive it. */
struct state_file *state_file_open_beside(const struct state_file *sibling,
    const char *name);
void state_file_free(struct state_file *sf);

/* The directory fd, for the broker's filter (sandbox.h). */
int state_file_dir_fd(const struct state_file *sf);

/* Locks, then reads what is new; false (unlocked, logged) on an error. */
bool state_file_lock(struct state_file *sf, const struct state_reader *r);

/* While locked: appends one line (newline added); false after logging. */
bool state_file_append(struct state_file *sf, const char *line, size_t len);

void state_file_unlock(struct state_file *sf);

#endif
