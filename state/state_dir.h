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
 * link, and trusted only as state_dir_entry_trusted() says, at every
 * open (a replaced file too).  The file grows by one line per counted
 * call; an operator may truncate or replace it at any time, which starts
 * the counts over.
 */
#ifndef SP_STATE_STATE_DIR_H
#define SP_STATE_STATE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "policy/load.h"
#include "policy/policy.h"

/* state_dir's entry for the approval sockets (broker/approvals.h) */
#define APPROVALS_DIR "approvals"
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

/*
 * What a file or directory in state_dir must be before the broker trusts
 * what it holds (the rules of credential files; docs/design.md section
 * 9): not a symbolic link, owned by owner (the running user), writable by
 * nobody else, and a file has no second name (a hard link).  st is
 * lstat(2)'s, or fstat(2)'s of a descriptor opened O_NOFOLLOW.  false
 * with why: what is wrong, then the fix (chown, chmod, rm).
 */
bool state_dir_entry_trusted(const struct stat *st, uid_t owner, char *why,
    size_t why_size);

/*
 * state_dir itself: false with why when another user could rename or
 * remove what the broker keeps there (owned by another user than owner
 * or root; writable by group or others without the sticky bit); *open
 * set when anyone may still add names (world-writable, sticky), which
 * can keep sessions from starting but changes nothing they trust.
 */
bool state_dir_dir_trusted(const struct stat *st, uid_t owner, bool *open,
    char *why, size_t why_size);

/*
 * sp mcp's and sp check's start check of policy's state_dir: the
 * directory by state_dir_dir_trusted(), then each name sp opens there
 * (limits.jsonl, journal.jsonl, approvals/) that exists by
 * state_dir_entry_trusted(); each problem added to diags at state_dir's
 * place, the first error as sentence for a client (NULL: not wanted).
 * false when it added an error.
 */
bool state_dir_check_start(const struct policy *policy,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size);

#endif
