/*
 * Per-tool limits and duplicate detection, decided by the broker at a
 * call's intent (docs/design.md section 9), so a limit costs no message
 * of its own: the intent's AUDIT_ACK says WRITTEN, DENIED (with the
 * limit, the count and when it resets) or DUPLICATE (with the call whose
 * answer this one gets).
 *
 * The executor sends one SHA-256 digest per value with the intent
 * (common/value.h, value_digest()); a call's key is the SHA-256 of its
 * tool's name and those digests.  Nothing else of a value reaches the
 * broker.
 *
 * - min_interval_ms: a call whose key was started less than that long
 *   ago is refused.
 * - per_day: calls of the tool per UTC day.
 * - max_distinct: digests of one param seen this session; a new one past
 *   the maximum is refused, one already seen is not.
 * - duplicates: a mutating call whose key is in flight, or ended less than
 *   limits.dedupe_ms ago, is answered DUPLICATE of the first; it never
 *   acts and counts against no limit.
 *
 * Without state_dir everything lives in the broker's memory and ends
 * with the session.  With it, per_day and min_interval_ms are kept in
 * state_dir's limits.jsonl (state/state_dir.h), decided and appended
 * under its lock, so every sp mcp of the host shares one count, and one
 * last start per call key, per uid (or profile); max_distinct and
 * duplicates stay per session.  One line per call that passed:
 *   {"day":D,"tool":"name","who":"uid:1001"}
 * with ,"key":"<64 hex>","start":MS added when the tool has
 * min_interval_ms (the call's key; CLOCK_REALTIME ms, which the
 * processes of a host share).  A line without key counts for per_day.
 * A refused or duplicate call changes no count.  The calls remembered for
 * min_interval_ms and dedupe_ms are at most LIMITS_RECENT_MAX; past that,
 * with none expired, a call is refused rather than let through unchecked.
 */
#ifndef SP_STATE_LIMITS_H
#define SP_STATE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/hash.h"
#include "common/record.h"
#include "policy/policy.h"

#define LIMITS_RECENT_MAX	4096
#define LIMITS_MESSAGE_MAX	512
#define LIMITS_WHO_MAX		80
#define LIMITS_STATE_FILE	"limits.jsonl"	/* in state_dir */

enum limits_verdict {
	LIMITS_PASS,		/* write the intent and act */
	LIMITS_DENIED,		/* refuse: limit, count, max, resets */
	LIMITS_DUPLICATE,	/* answer with first_call's result */
};

/* What limits_decide() decided; the texts are static or in message. */
struct limits_decision {
	enum limits_verdict verdict;
	const char *limit;		/* "per_day", "min_interval_ms", ... */
	const char *param;		/* max_distinct: the param; else NULL */
	uint64_t count;			/* calls (values) so far */
	uint64_t max;
	char resets[64];		/* UTC time, or "session-end" */
	uint64_t first_call;		/* DUPLICATE */
	uint8_t key[HASH_SHA256_LEN];	/* the call's key */
	bool counted;			/* per_day counted in state_dir already */
	bool replay;			/* the journal's: answer, do not act */
	char journal[2 * HASH_SHA256_LEN + 1];	/* its key, or "" */
	char message[LIMITS_MESSAGE_MAX];	/* DENIED: for the client */
};

struct limits;		/* opaque; the supervisor owns one per session */
struct state_file;	/* state/state_dir.h */
struct pg_state;	/* state/pg.h */

/*
 * pg (borrowed, may be NULL): per_day and min_interval_ms are decided in
 * PostgreSQL (state/pg.h), each by one call, whatever state says; a call
 * it does not answer is refused.  Else state (borrowed, may be NULL) holds the per_day counts of every session
 * of the host, each counted for who ("uid:1001", or "profile:NAME" when
 * the peer's uid is not known).  NULL when out of memory (logged).
 */
struct limits *limits_new(const struct policy *policy,
    struct state_file *state, struct pg_state *pg, const char *who);
void limits_free(struct limits *l);

/*
 * The verdict on an INTENT event with one digest per param.  mono_ms is
 * CLOCK_MONOTONIC, wall_ms CLOCK_REALTIME, both in ms.
 */
enum limits_verdict limits_decide(struct limits *l,
    const struct record_audit_event *intent, uint64_t mono_ms,
    uint64_t wall_ms, struct limits_decision *d);

/* The intent d passed is in the log: count it (d from limits_decide()). */
void limits_commit(struct limits *l, const struct record_audit_event *intent,
    const struct limits_decision *d, uint64_t mono_ms);

/* The execution of call_id arrived: the dedupe window starts now. */
void limits_end(struct limits *l, uint64_t call_id, uint64_t mono_ms);

/* The journal answered instead (state/journal.h): d's message is its. */
void limits_journal_verdict(struct limits_decision *d, bool replay);

/* Adds a "limit" record's own members (limit, count, max, resets). */
bool limits_add_members(cJSON *m, const struct limits_decision *d);

/* One stderr line at start when a tool has limits or a journal, and
 * there is no state_dir: they end with us. */
void limits_say_scope(const struct policy *policy);

#endif
