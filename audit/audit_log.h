/*
 * The audit log writer (docs/design.md section 6; line format in
 * common/audit_chain.h).  Only the broker writes the log; it calls
 * audit_log_append() once per record.
 *
 * Several processes may append to one file at once.  Each append takes an
 * exclusive flock(2) on the file (per open file description, so two
 * handles in one process exclude each other too), re-reads the tail to
 * chain to the true last record, writes the whole line with one write(2)
 * and unlocks.  seq is therefore global to the file.
 *
 * A torn tail (bytes after the last "\n", left by a writer killed inside
 * write(2)) is never a record: the next writer cuts it off with
 * ftruncate(2) under the lock and its record carries
 * "torn_tail":{"bytes":N,"sha256":"<hex of the cut bytes>"}, so the loss
 * stays recorded inside the chain.  (A file made append-only with
 * chattr +a refuses the cut, and appending then fails loudly.  A writer
 * killed between the cut and its own write loses that attestation, not a
 * record.)  A handle must not be shared across fork(2): the lock belongs
 * to the open file description, so each process opens its own.
 *
 * Durability: durable appends are fdatasync'ed before returning (intent
 * and execution of mutating tools); others are synced in groups, at the
 * latest AUDIT_LOG_SYNC_MS after the first unsynced record when the
 * caller calls audit_log_tick() or appends again, and at close.
 *
 * No credential may be passed in members: callers render arguments with
 * audit_args.h.  A secret that reaches a record stays in the file.
 */
#ifndef SP_AUDIT_AUDIT_LOG_H
#define SP_AUDIT_AUDIT_LOG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/sandbox.h"

#define AUDIT_LOG_SYNC_MS 100
/* How the log is opened, relative to its directory: the broker's seccomp
 * filter allows openat(2) with exactly these flags on that directory. */
#define AUDIT_LOG_OPEN_FLAGS SANDBOX_AUDIT_LOG_FLAGS
#define AUDIT_KEY_MAX 1024	/* bytes of an HMAC key file */

struct audit_log;

/*
 * Opens (creating with mode 0600) the log at path for appending; refuses
 * a symlink or a non-regular file.  key (key_len bytes) is copied and may
 * be NULL for a plain chain; session is copied (1..AUDIT_SESSION_MAX
 * printable ASCII bytes).  Returns NULL after logging why.  The caller
 * owns the result and releases it with audit_log_close().
 */
struct audit_log *audit_log_open(const char *path, const uint8_t *key,
    size_t key_len, const char *session);

/*
 * Appends one record of kind (1..AUDIT_KIND_MAX bytes of [a-z-]) whose own
 * members are those of members (a cJSON object, borrowed; NULL for none;
 * a member named like a writer's member is refused).  false after logging
 * why: the record was not written, or (durable) it was written but could
 * not be synced; either way the caller must act as if it were not, and
 * not start the action it announces.
 */
bool audit_log_append(struct audit_log *log, const char *kind,
    const cJSON *members, bool durable);

/*
 * A session's start, written late (docs/design.md section 6): members
 * (borrowed, copied) become the session-start record written by
 * audit_log_begin(), or by the first audit_log_append() before its own
 * record in the same locked turn, whichever comes first; so no record of
 * the session can precede it.  false after logging (memory).
 */
bool audit_log_hold_start(struct audit_log *log, const cJSON *members);

/*
 * Writes the held session-start now, synced; true when it is in the file
 * or none is held.  On failure it stays held and false is returned.
 */
bool audit_log_begin(struct audit_log *log);

/* Whether a session-start is held and not yet in the file. */
bool audit_log_start_held(const struct audit_log *log);

/* Syncs when records are pending and AUDIT_LOG_SYNC_MS have passed since
 * the last sync; now_ms is clock_monotonic_ms() (common/clock.h).  false
 * if the sync failed. */
bool audit_log_tick(struct audit_log *log, uint64_t now_ms);

/* The hash of this handle's last record (the session anchor to print at
 * session end), or 64 zeros before the first; owned by log. */
const char *audit_log_last_hash(const struct audit_log *log);

/* The O_PATH fd of the log's directory, which rotation reopens the log
 * in (for the broker's seccomp filter); owned by log. */
int audit_log_dir_fd(const struct audit_log *log);

/*
 * What an observer learns of one record this handle appended: all
 * borrowed for the call.  members are the caller's (never a credential:
 * see above).
 */
struct audit_log_note {
	const char *session;
	const char *kind;
	const cJSON *members;		/* NULL for none */
	uint64_t seq;
	const char *prev;		/* HASH_SHA256_HEX_LEN hex digits */
	const char *hash;
	bool durable;			/* synced before the caller went on */
};

typedef void audit_log_observer(void *arg, const struct audit_log_note *note);

/*
 * After each record this handle appends (and, when durable, syncs),
 * calls fn(arg, note): how the anchors leave the host
 * (audit/audit_journal.h).  arg is borrowed; fn NULL stops.
 */
void audit_log_observe(struct audit_log *log, audit_log_observer *fn,
    void *arg);

/* Bytes this handle has appended, newlines included. */
uint64_t audit_log_bytes(const struct audit_log *log);

/* Syncs pending records, zeroes the key and frees log (NULL allowed);
 * false if the final sync failed. */
bool audit_log_close(struct audit_log *log);

/*
 * Reads an HMAC key file: its exact bytes (1..AUDIT_KEY_MAX, a trailing
 * newline included) into key, length in *key_len.  false after logging.
 */
bool audit_key_read(const char *path, uint8_t key[AUDIT_KEY_MAX],
    size_t *key_len);

#endif
