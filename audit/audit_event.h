/*
 * From a child's audit event (common/record.h, AUDIT_EVENT) to the members
 * of an audit log record (audit/audit_log.h), and the broker's answer.
 *
 * Every member is rendered from a typed, bounded field of the event or
 * from the policy the broker loaded itself: names of tools and targets
 * come from the catalog by the event's tool index, numbers are numbers,
 * reasons are tokens, and the only texts a child supplies are the
 * argument shapes: one per param, each the compact JSON of audit_args.h's
 * rendering ("\"string(36)\"", "42", "\"…1234\""), which the broker
 * parses back, accepts only as a JSON string, number or boolean, and
 * prints again escaped.  The offending bytes of a rejection or violation never
 * reach the log, only their SHA-256.
 *
 * Which role may send which kind: the frontend rejections, cancellations
 * and the one OPENED that says its session is in use, the executor intents, executions, violations and
 * cancellations.
 *
 * Acks (AUDIT_ACK, same call id): every INTENT is answered, and every
 * EXECUTION of a mutating tool; the child waits for that answer before it
 * acts (intent) or before the result goes to the frontend (execution of a
 * mutating tool).  Both records of a mutating tool are fsynced before the
 * ack says WRITTEN; the others are synced in groups.
 */
#ifndef SP_AUDIT_AUDIT_EVENT_H
#define SP_AUDIT_AUDIT_EVENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "audit/audit_log.h"
#include "common/record.h"
#include "policy/policy.h"

/*
 * Bytes of rejection and violation records one session may write.  They
 * are what a client (or a compromised frontend) can make without limit;
 * the records of calls (intents, executions, cancellations) are bounded
 * by calls_per_session and never count here.  2 700 or so records.
 */
#define AUDIT_EVENT_NOTES_MAX (1024u * 1024)

/* Bytes kept of each text a client chose (clientInfo's name, version). */
#define AUDIT_EVENT_CLIENT_TEXT_MAX 64

/* What the broker is to do with one event. */
struct audit_event_plan {
	const char *kind;	/* log record kind ("intent"), static */
	bool durable;		/* fsync before the ack */
	bool acked;		/* the child waits for an AUDIT_ACK */
	bool opens;		/* OPENED: write the held session-start
				 * (audit_log_begin()), no record of its own */
	bool note;		/* a rejection or violation: may be dropped */
	bool journal_first;	/* the "asked" confirmation of a tool with a
				 * journal: the journal answers first, and
				 * the record carries the call's values as
				 * an intent does (docs/design.md section 9) */
	const char *journal;	/* an intent's or execution's idempotency
				 * key (state/journal.h), set by the
				 * caller; NULL for none */
	/* a confirmation an operator answered (broker/approvals.h), set by
	 * the caller: approver_key "approver_uid" or "denied_by_uid", or
	 * NULL for none */
	const char *approver_key;
	uint32_t approver_uid;
};

/*
 * A session's audit state beyond one event (zero-initialise; the
 * supervisor owns it):
 *
 * - Folding.  A rejection with the reason, code, method and tool of
 *   the session's last rejection record is not written: it is counted,
 *   and the count is written as one more "rejection" record with
 *   "repeated": N (no shapes), the frame number and SHA-256 of the last
 *   of them, when another rejection comes or the session ends
 *   (audit_event_flush()).  Nothing else ends a run: records of calls
 *   may come between, and the count is exact, not the order.
 * - The note budget.  Once AUDIT_EVENT_NOTES_MAX bytes of rejections and
 *   violations were written, later ones are dropped and counted
 *   (dropped), and notes_spent() turns true: the session is to end in
 *   order.  Intents are never dropped: one that cannot be written is
 *   answered FAILED and its action does not run.
 */
struct audit_event_session {
	bool run_open;			/* run_* is the last rejection written */
	char run_reason[RECORD_TOKEN_MAX + 1];
	char run_method[RECORD_TOKEN_MAX + 1];
	int32_t run_code;
	uint32_t run_tool;		/* with AUDIT_HAS_TOOL in run_flags */
	uint64_t run_folded;		/* identical since, not yet written */
	uint64_t run_frame;		/* the last of them */
	uint32_t run_flags;		/* its AUDIT_HAS_SHA256, the run's
					 * AUDIT_HAS_TOOL */
	uint8_t run_sha256[HASH_SHA256_LEN];
	uint64_t note_bytes;		/* rejections and violations written */
	uint64_t dropped;		/* notes not written: the budget is spent */
};

enum audit_event_fate {
	AUDIT_EVENT_WRITTEN,	/* in the log */
	AUDIT_EVENT_FOLDED,	/* counted into the run of its like */
	AUDIT_EVENT_DROPPED,	/* a note past the budget: counted only */
	AUDIT_EVENT_FAILED,	/* not written: an error, logged */
};

/*
 * Checks that role (the frontend or the executor) may send ev and
 * that ev names a tool of policy when it must; fills *plan.  false (after
 * logging) for an event the broker refuses: an acked event is then
 * answered FAILED.
 */
bool audit_event_plan(const struct policy *policy, enum record_role role,
    const struct record_audit_event *ev, struct audit_event_plan *plan);

/*
 * The record's members for ev, which audit_event_plan() accepted; the
 * caller owns the result.  NULL after logging: out of memory, or a shape
 * that is not a JSON scalar (then the event is not written).
 */
cJSON *audit_event_members(const struct policy *policy,
    enum record_role role,
    const struct record_audit_event *ev);

/*
 * Writes ev (which audit_event_plan() accepted as *plan) to log, folded
 * or dropped as struct audit_event_session says.  Only WRITTEN may be
 * acked as written.
 */
enum audit_event_fate audit_event_write(struct audit_event_session *as,
    struct audit_log *log, const struct policy *policy, enum record_role role,
    const struct record_audit_event *ev, const struct audit_event_plan *plan);

/* Writes the folded run, if any; false after logging. */
bool audit_event_flush(struct audit_event_session *as, struct audit_log *log,
    const struct policy *policy);

/* The note budget is spent: the session should end. */
bool audit_event_notes_spent(const struct audit_event_session *as);

#endif
