/*
 * The idempotency journal (docs/design.md section 9) of mutating tools
 * with "idempotency": an identical call (same profile, tool and values)
 * within window_s of one that was done is answered with that call's
 * recorded outcome and not sent again; after one whose outcome is
 * unknown it is refused until an operator records the truth (sp journal
 * resolve) or the window passes.
 *
 * The key is the SHA-256 of the profile's name, the tool's name and the
 * values' digests (common/value.h), in hex.  Before the intent is
 * written an entry "pending" is added; the call's execution record
 * makes it "done" (outcome ok), "failed" (failed, denied, invalid) or
 * "unknown"; an executor that died with the call open makes it
 * "unknown".  A pending entry older than twice the tool's budget is
 * taken as unknown (a broker killed mid-call).
 *
 * Without state_dir the journal lives in the broker and ends with the
 * session.  With it, STATE_DIR/journal.jsonl holds one JSON line per
 * change, {"key","state","ts","call","tool","summary"}, the last line of
 * a key wins, and every decision reads what other sessions appended
 * under the file's lock (state/state_dir.h), which is held from the
 * check until the pending line is in, so two sessions never both send.
 * At most JOURNAL_MAX keys are held; past that, with none expired, a
 * call is refused rather than sent unrecorded; so is a call whose pending
 * line cannot be written (state_dir full).  An outcome that cannot be
 * written leaves that pending line, which other sessions take as in
 * flight, then unknown: the call is never sent again blindly.
 */
#ifndef SP_STATE_JOURNAL_H
#define SP_STATE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/record.h"
#include "policy/policy.h"

#define JOURNAL_MAX		4096
#define JOURNAL_STATE_FILE	"journal.jsonl"	/* in state_dir */
#define JOURNAL_KEY_HEX		(2 * HASH_SHA256_LEN)

enum journal_verdict {
	JOURNAL_NONE,		/* the tool keeps no journal */
	JOURNAL_PASS,		/* act; the journal is locked until
				 * journal_begin() or journal_abandon() */
	JOURNAL_REPLAY,		/* answer with message, do not act */
	JOURNAL_REFUSED,	/* deny with message */
};

struct journal;
struct state_file;
struct pg_state;	/* state/pg.h */

/* state and pg (borrowed) may be NULL; with pg the journal is in
 * PostgreSQL (state/pg.h): journal_check() reads the key's entry, and
 * journal_begin() takes it in one call, only while no entry answers the
 * key, so of two hosts only one sends; no answer from the database is
 * a refusal.  NULL when out of memory (logged). */
struct journal *journal_new(const struct policy *policy,
    struct state_file *state, struct pg_state *pg, const char *profile);
void journal_free(struct journal *j);

/* The verdict on an intent; key gets its hex key (JOURNAL_KEY_HEX + 1). */
enum journal_verdict journal_check(struct journal *j,
    const struct record_audit_event *intent, uint64_t wall_ms, char *key,
    char *message, size_t message_size);

/*
 * After PASS: the entry pending for intent's call, then unlocked.  false
 * when the pending line could not be written to state_dir: the call must
 * not be sent (message says so), as an unrecorded call could be sent
 * again by another session whatever its outcome.
 */
bool journal_begin(struct journal *j, const struct record_audit_event *intent,
    const char *key, uint64_t wall_ms, char *message, size_t message_size);
/* After PASS, when something else refused the call: unlocked. */
void journal_abandon(struct journal *j);

/* call_id's key, or NULL when it has no pending entry of ours. */
const char *journal_key_of(const struct journal *j, uint64_t call_id);

/* An entry's state, as journal.jsonl, the database and sp journal
 * name it (journal_state_names). */
enum journal_state {
	JOURNAL_PENDING, JOURNAL_DONE, JOURNAL_FAILED, JOURNAL_UNKNOWN,
	JOURNAL_STATES
};

extern const char *const journal_state_names[JOURNAL_STATES];

/* s's state into *out; false when s (may be NULL) names none. */
bool journal_state_parse(const char *s, enum journal_state *out);

/*
 * What an entry (its tool, state and ts, from journal.jsonl or the
 * database) says to an identical call at wall_ms, as journal_check()
 * decides it for a session that did not make it: *now, where a pending
 * entry older than twice the tool's budget is unknown.  false when it
 * decides nothing: its window passed, its tool is not policy's or keeps
 * no journal, or state names no state.  For sp metrics
 * (state/state_summary.h).
 */
bool journal_state_now(const struct policy *p, const char *tool,
    const char *state, uint64_t ts_ms, uint64_t wall_ms,
    enum journal_state *now);

/* The call's end: its outcome, and status for the summary. */
void journal_end(struct journal *j, uint64_t call_id,
    enum record_outcome outcome, int32_t status, uint64_t wall_ms);

#endif
