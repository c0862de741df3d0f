/*
 * The broker's side of each audit event a child sends (docs/design.md
 * section 6): an intent is decided against the limits and the
 * idempotency journal, written, and only then acknowledged (and so is
 * the "asked" confirmation of a tool with a journal, which the journal
 * alone decides, before a human is asked); the other
 * kinds are written and counted; an intent that never got its execution
 * record is written "unknown" at the session's end.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "broker/approvals.h"
#include "state/journal.h"
#include "state/limits.h"
#include "broker/supervise_int.h"
#include "child/test_hook.h"
#include "common/channel.h"
#include "common/clock.h"
#include "common/exit.h"
#include "common/log.h"

/* How late the test hook broker:late-ack sends an ack
 * (tests/integration/no_intent_no_action.py). */
#define SUPERVISE_LATE_ACK_MS 3000

/* An ack held back by the test hook broker:late-ack. */
struct supervise_late_ack {
	struct supervisor *sv;
	enum record_role role;
	struct record_audit_ack ack;
};

static void
supervise_send_ack(struct supervisor *sv, enum record_role role,
    const struct record_audit_ack *ack)
{
	if (!channel_send(sv->chan, role, RECORD_AUDIT_ACK, ack))
		log_error("%s not answered", record_role_name(role));
}

static void
supervise_on_late_ack(evutil_socket_t fd, short what, void *arg)
{
	struct supervise_late_ack *late = arg;

	(void)fd;
	(void)what;
	supervise_send_ack(late->sv, late->role, &late->ack);
	free(late);
}

/*
 * Test builds: broker:late-ack sends the acks of execution records
 * SUPERVISE_LATE_ACK_MS late, as a slow disk would, so a test can see the
 * executor hold a mutating tool's result until then; broker:late-intent-ack
 * does the same to intents, so a test can cancel a call while its intent
 * waits.
 */
static bool
supervise_ack_late(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, const struct record_audit_ack *ack)
{
	struct timeval tv = { SUPERVISE_LATE_ACK_MS / 1000,
	    (SUPERVISE_LATE_ACK_MS % 1000) * 1000 };
	struct supervise_late_ack *late;

	if (!(ev->kind == RECORD_AUDIT_EXECUTION ?
	    test_hook_is("broker", "late-ack") :
	    test_hook_is("broker", "late-intent-ack")) ||
	    (late = malloc(sizeof(*late))) == NULL)
		return false;
	late->sv = sv;
	late->role = c->role;
	late->ack = *ack;
	if (event_base_once(sv->base, -1, EV_TIMEOUT, supervise_on_late_ack,
	    late, &tv) == 0)
		return true;
	free(late);
	return false;
}

static void
supervise_ack(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, bool written)
{
	struct record_audit_ack ack = { .call_id = ev->call_id,
	    .status = written ? RECORD_AUDIT_WRITTEN : RECORD_AUDIT_FAILED };
	const char *key = ev->kind == RECORD_AUDIT_INTENT && written ?
	    journal_key_of(sv->journal, ev->call_id) : NULL;

	/* the target's Idempotency-Key header (docs/design.md section 9) */
	if (key != NULL) {
		ack.message.ptr = (char *)key;
		ack.message.len = strlen(key);
	}

	if (test_hook_is("broker", "no-ack"))	/* a broker that hangs */
		return;
	if (c->pid == 0)	/* drained after its death: nobody waits */
		return;
	if (supervise_ack_late(sv, c, ev, &ack))
		return;
	supervise_send_ack(sv, c->role, &ack);
}

/* An intent a limit refused, or a duplicate: its own answer. */
static void
supervise_ack_decision(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, const struct limits_decision *d)
{
	struct record_audit_ack ack;

	memset(&ack, 0, sizeof(ack));
	ack.call_id = ev->call_id;
	if (d->verdict == LIMITS_DUPLICATE) {
		ack.status = RECORD_AUDIT_DUPLICATE;
		ack.first_call_id = d->first_call;
	} else if (d->replay) {
		ack.status = RECORD_AUDIT_REPLAY;
		ack.message.ptr = (char *)d->message;
		ack.message.len = strlen(d->message);
	} else {
		ack.status = RECORD_AUDIT_DENIED;
		ack.message.ptr = (char *)d->message;
		ack.message.len = strlen(d->message);
	}
	if (c->pid != 0)
		supervise_send_ack(sv, c->role, &ack);
}

/*
 * The record of a refused intent ("limit") or of a duplicate (an
 * "intent" with duplicate_of, which no execution record follows).
 */
static void
supervise_write_decision(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, const struct limits_decision *d)
{
	const struct policy_tool *tool = &sv->policy->tools[ev->tool_index];
	cJSON *m;
	bool ok;

	if (sv->log == NULL)
		return;
	m = audit_event_members(sv->policy, c->role, ev);
	if (d->verdict == LIMITS_DUPLICATE)
		ok = m != NULL && cJSON_AddNumberToObject(m, "duplicate_of",
		    (double)d->first_call) != NULL &&
		    audit_log_append(sv->log, "intent", m, tool->mutating);
	else if (d->replay)
		ok = m != NULL && cJSON_AddStringToObject(m, "journal",
		    d->journal) != NULL &&
		    cJSON_AddTrueToObject(m, "replay") != NULL &&
		    audit_log_append(sv->log, "intent", m, tool->mutating);
	else if (d->journal[0] != '\0')
		ok = m != NULL && cJSON_AddStringToObject(m, "journal",
		    d->journal) != NULL && limits_add_members(m, d) &&
		    audit_log_append(sv->log, "limit", m, false);
	else
		ok = m != NULL && limits_add_members(m, d) &&
		    audit_log_append(sv->log, "limit", m, false);
	cJSON_Delete(m);
	if (!ok)
		sv->sum->audit_failures++;
}

/*
 * Limits and duplicates are decided with the intent (docs/design.md
 * section 9): true when the intent is answered here, written as a limit
 * or a duplicate, and never acted on.
 */
static bool
supervise_limit_intent(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, struct limits_decision *d)
{
	enum journal_verdict j;
	const char *key;
	uint64_t wall_ms;

	if (ev->kind == RECORD_AUDIT_EXECUTION) {
		if ((key = journal_key_of(sv->journal, ev->call_id)) != NULL)
			(void)snprintf(d->journal, sizeof(d->journal), "%s",
			    key);
		limits_end(sv->lim, ev->call_id, clock_monotonic_ms());
		journal_end(sv->journal, ev->call_id, ev->outcome, ev->status,
		    clock_wall_ms());
	}
	d->verdict = LIMITS_PASS;
	if (ev->kind != RECORD_AUDIT_INTENT)
		return false;
	wall_ms = clock_wall_ms();
	j = journal_check(sv->journal, ev, wall_ms, d->journal, d->message,
	    sizeof(d->message));
	if (j == JOURNAL_REPLAY || j == JOURNAL_REFUSED)
		limits_journal_verdict(d, j == JOURNAL_REPLAY);
	else if (limits_decide(sv->lim, ev, clock_monotonic_ms(), wall_ms, d) ==
	    LIMITS_PASS) {
		if (j != JOURNAL_PASS || journal_begin(sv->journal, ev,
		    d->journal, wall_ms, d->message, sizeof(d->message)))
			return false;
		limits_journal_verdict(d, false);	/* not recorded: not sent */
	} else if (j == JOURNAL_PASS)
		journal_abandon(sv->journal);
	supervise_write_decision(sv, c, ev, d);
	supervise_ack_decision(sv, c, ev, d);
	return true;
}

/*
 * The "asked" confirmation of a tool with a journal (docs/design.md
 * section 9): a call the journal replays or refuses is answered now,
 * written as its intent would be, and no human is asked.  Else the
 * journal is released untouched -- the intent checks it again and holds
 * it, the human may take minutes -- and the record is written as any.
 */
static bool
supervise_journal_first(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev, struct limits_decision *d)
{
	struct record_audit_event intent = *ev;
	enum journal_verdict j;

	j = journal_check(sv->journal, ev, clock_wall_ms(), d->journal,
	    d->message, sizeof(d->message));
	if (j == JOURNAL_PASS)
		journal_abandon(sv->journal);
	if (j != JOURNAL_REPLAY && j != JOURNAL_REFUSED) {
		d->journal[0] = '\0';	/* asked names no key */
		return false;
	}
	limits_journal_verdict(d, j == JOURNAL_REPLAY);
	intent.kind = RECORD_AUDIT_INTENT;
	intent.reason.ptr = NULL;
	intent.reason.len = 0;
	supervise_write_decision(sv, c, &intent, d);
	supervise_ack_decision(sv, c, ev, d);
	return true;
}

static void
supervise_count(struct supervise_summary *sum, enum record_audit_kind kind)
{
	switch (kind) {
	case RECORD_AUDIT_REJECTION: sum->rejections++; break;
	case RECORD_AUDIT_VIOLATION: sum->violations++; break;
	case RECORD_AUDIT_INTENT: sum->intents++; break;
	case RECORD_AUDIT_EXECUTION: sum->executions++; break;
	case RECORD_AUDIT_CANCELLATION: sum->cancellations++; break;
	case RECORD_AUDIT_OPENED: break;
	case RECORD_AUDIT_CLIENT: break;
	case RECORD_AUDIT_CONFIRMATION: break;
	case RECORD_AUDIT_LIMIT: break;
	}
}

/*
 * Before an event is written: an execution ends its call; an intent opens
 * one only within limits.max_inflight and under a call id not open, else
 * it is refused (answered FAILED, so the executor does not act).
 */
static bool
supervise_call_admit(struct supervisor *sv, const struct record_audit_event *ev)
{
	if (ev->kind == RECORD_AUDIT_EXECUTION)
		open_calls_close(&sv->open, ev->call_id);
	if (ev->kind != RECORD_AUDIT_INTENT ||
	    open_calls_may_open(&sv->open, ev->call_id))
		return true;
	log_error("intent for call %" PRIu64 " refused: %zu calls are open "
	    "(limits.max_inflight %zu), or one has its id", ev->call_id,
	    sv->open.n, sv->open.cap);
	return false;
}

/* An intent that is in the log opens its call. */
static void
supervise_call_written(struct supervisor *sv,
    const struct record_audit_event *ev)
{
	if (ev->kind == RECORD_AUDIT_INTENT)
		open_calls_open(&sv->open, ev->call_id, ev->tool_index,
		    clock_monotonic_ms());
}

/*
 * The frontend's OPENED: the held session-start goes into the log now
 * (docs/design.md section 6).  One that cannot be written ends the
 * session before any action, as a session never runs unaudited.
 */
static void
supervise_opened(struct supervisor *sv)
{
	if (sv->log == NULL || audit_log_begin(sv->log))
		return;
	/* The append named the system error; this names the record and
	 * what it costs: the session, before any action. */
	log_error("session-start could not be audited: ending the session");
	sv->sum->audit_failures++;
	supervise_set_status(sv, SP_EXIT_INTERNAL, "session-start not audited");
	supervise_kill_all(sv);
}

/*
 * Writes the record, then acks what the child waits for: WRITTEN only
 * once the record is in the file (synced, for a mutating tool).  Without
 * a log nothing is audited and the broker said so at start.
 */
void
supervise_audit_event(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev)
{
	struct audit_event_plan plan;
	struct limits_decision d = { .verdict = LIMITS_PASS };
	enum audit_event_fate fate = AUDIT_EVENT_WRITTEN;

	if (!audit_event_plan(sv->policy, c->role, ev,
	    &plan) || !supervise_call_admit(sv, ev))
		fate = AUDIT_EVENT_FAILED;
	else if (plan.journal_first &&
	    supervise_journal_first(sv, c, ev, &d))
		return;
	else if (supervise_limit_intent(sv, c, ev, &d))
		return;
	else if (plan.opens) {
		supervise_opened(sv);
		return;
	} else {
		/* before the write: the record names the approver */
		approvals_decided(sv->approvals, ev, &plan);
		if (d.journal[0] != '\0')
			plan.journal = d.journal;
		if (sv->log != NULL)
			fate = audit_event_write(&sv->audit, sv->log,
			    sv->policy, c->role, ev, &plan);
	}
	if (fate == AUDIT_EVENT_FAILED) {
		sv->sum->audit_failures++;
		if (ev->kind == RECORD_AUDIT_INTENT)	/* it will not run */
			journal_end(sv->journal, ev->call_id,
			    RECORD_OUTCOME_FAILED, 0, 0);
	}
	else {
		supervise_count(sv->sum, ev->kind);
		supervise_call_written(sv, ev);
		if (ev->kind == RECORD_AUDIT_INTENT)
			limits_commit(sv->lim, ev, &d, clock_monotonic_ms());
	}
	if (plan.acked)
		supervise_ack(sv, c, ev, fate == AUDIT_EVENT_WRITTEN);
	if (audit_event_notes_spent(&sv->audit))
		supervise_end(sv, "audit limit reached");
}

/* One call's end as the client was told it: outcome unknown. */
static bool
supervise_write_unknown(struct supervisor *sv, const struct open_call *oc,
    uint64_t now_ms)
{
	struct record_audit_event ev;
	cJSON *m;
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.call_id = oc->call_id;
	ev.tool_index = oc->tool_index;
	ev.outcome = RECORD_OUTCOME_UNKNOWN;
	ev.duration_us = (now_ms - oc->since_ms) * 1000;
	m = audit_event_members(sv->policy, RECORD_ROLE_BROKER, &ev);
	ok = m != NULL && cJSON_AddStringToObject(m, "reason",
	    "executor-ended") != NULL &&
	    audit_log_append(sv->log, "execution", m, true);
	cJSON_Delete(m);
	return ok;
}

/*
 * The executor is gone and its last records are in: each intent it left
 * without an execution gets one from the broker, before session-end, so
 * the log says what the client was told (docs/design.md section 1,
 * invariant 6: in flight when the executor died means unknown).
 */
void
supervise_end_open_calls(struct supervisor *sv)
{
	uint64_t now_ms = clock_monotonic_ms(), wall_ms = clock_wall_ms();
	size_t i;

	for (i = 0; i < sv->open.n; i++)
		journal_end(sv->journal, sv->open.calls[i].call_id,
		    RECORD_OUTCOME_UNKNOWN, 0, wall_ms);
	if (sv->open.n == 0 || sv->log == NULL)
		return;
	log_warn("the executor ended with %zu calls unreported: audited as "
	    "outcome unknown", sv->open.n);
	for (i = 0; i < sv->open.n; i++) {
		if (supervise_write_unknown(sv, &sv->open.calls[i], now_ms))
			supervise_count(sv->sum, RECORD_AUDIT_EXECUTION);
		else
			sv->sum->audit_failures++;
	}
	sv->open.n = 0;
}
