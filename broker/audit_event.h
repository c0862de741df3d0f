/*
 * From a child's audit event (common/record.h, AUDIT_EVENT) to the members
 * of an audit log record (broker/audit_log.h), and the broker's answer.
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
#ifndef SP_BROKER_AUDIT_EVENT_H
#define SP_BROKER_AUDIT_EVENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/record.h"
#include "policy/policy.h"

/* What the broker is to do with one event. */
struct audit_event_plan {
	const char *kind;	/* log record kind ("intent"), static */
	bool durable;		/* fsync before the ack */
	bool acked;		/* the child waits for an AUDIT_ACK */
	bool opens;		/* OPENED: write the held session-start
				 * (audit_log_begin()), no record of its own */
};

/*
 * Checks that role ("frontend" or "executor", static) may send ev and
 * that ev names a tool of policy when it must; fills *plan.  false (after
 * logging) for an event the broker refuses: an acked event is then
 * answered FAILED.
 */
bool audit_event_plan(const struct policy *policy, const char *role,
    const struct record_audit_event *ev, struct audit_event_plan *plan);

/*
 * The record's members for ev, which audit_event_plan() accepted; the
 * caller owns the result.  NULL after logging: out of memory, or a shape
 * that is not a JSON scalar (then the event is not written).
 */
cJSON *audit_event_members(const struct policy *policy, const char *role,
    const struct record_audit_event *ev);

#endif
