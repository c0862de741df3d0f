/*
 * Supervision of a session's children (broker/supervise.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/audit_event.h"
#include "child/child.h"
#include "broker/child_stderr.h"
#include "broker/journal.h"
#include "broker/limits.h"
#include "broker/open_calls.h"
#include "broker/commands.h"
#include "broker/supervise.h"
#include "broker/approvals.h"
#include "child/test_hook.h"
#include "common/channel.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/spawn.h"

/* How long a frontend asked to stop may take before it is killed. */
#define SUPERVISE_STOP_GRACE_MS 2000
#define SUPERVISE_TICK_MS AUDIT_LOG_SYNC_MS
/*
 * After a child dies unasked, the other is given this long to be reaped
 * on its own before it is killed: a child that died of its peer's death
 * (closed channel) is then not mistaken for the cause.
 */
#define SUPERVISE_SETTLE_MS 50
#define SUPERVISE_LATE_ACK_MS 3000	/* test hook broker:late-ack; tests/integration/no_intent_no_action.py */
/* Records taken per wake-up: a busy child cannot starve the signals. */
#define SUPERVISE_RECORDS_PER_WAKEUP 64

static const int supervise_signals[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
#define NSIGNALS (sizeof(supervise_signals) / sizeof(supervise_signals[0]))

struct supervisor {
	struct event_base *base;
	struct audit_log *log;
	const struct policy *policy;
	const struct record_limits *limits;
	const uint8_t *fingerprint;
	uint32_t call_timeout_ms;
	struct event *ev_signal[NSIGNALS];
	struct event *ev_control[CHILD_COUNT];
	struct event *ev_grace;		/* ends what is left, at once */
	struct event *ev_settle;	/* ends the rest after a death */
	struct event *ev_tick;		/* audit group sync */
	struct channel *chan;		/* to both children */
	bool killed[CHILD_COUNT];	/* ended by the broker: expected */
	bool abnormal;			/* a child died unasked */
	bool ending;			/* the session is ending in order */
	char end_why[32];		/* "signal TERM" when ending */
	bool status_set;
	struct child *kids;
	struct supervise_summary *sum;
	struct audit_event_session audit;	/* folding, the note budget */
	struct child_stderr err[CHILD_COUNT];	/* children's stderr relays */
	struct open_calls open;		/* intents without an execution */
	struct limits *lim;		/* per-tool limits, duplicates; owned */
	struct journal *journal;	/* idempotency journal; owned */
	struct approvals *approvals;	/* borrowed, or NULL */
};

static void
supervise_kill_all(struct supervisor *sv)
{
	int i;

	for (i = 0; i < CHILD_COUNT; i++) {
		if (sv->kids[i].pid <= 0)
			continue;
		sv->killed[i] = true;
		if (kill(sv->kids[i].pid, SIGKILL) == -1)
			log_error("kill %s: %s",
			    record_role_name(sv->kids[i].role), strerror(errno));
	}
}

static void
supervise_set_status(struct supervisor *sv, int status, const char *why)
{
	if (sv->status_set)
		return;
	sv->status_set = true;
	sv->sum->status = status;
	(void)snprintf(sv->sum->why, sizeof(sv->sum->why), "%s", why);
}

static void
supervise_arm(struct event *ev, uint32_t ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	(void)event_add(ev, &tv);
}

/*
 * The child whose death ended the session: one killed by a signal the
 * broker did not send, else one that exited unasked.  When one child
 * dies the other often exits at once on the closed channel, and either
 * may be reaped first, so the cause is chosen after both are gone.
 */
static const struct child *
supervise_cause(const struct supervisor *sv)
{
	int i;

	for (i = 0; i < CHILD_COUNT; i++)
		if (!sv->killed[i] && WIFSIGNALED(sv->kids[i].status))
			return &sv->kids[i];
	for (i = 0; i < CHILD_COUNT; i++)
		if (!sv->killed[i] && WIFEXITED(sv->kids[i].status) &&
		    WEXITSTATUS(sv->kids[i].status) != 0)
			return &sv->kids[i];
	return &sv->kids[CHILD_FRONTEND];
}

/* Says which role died and why; the status is 70, or 71 for a sandbox. */
static void
supervise_report_death(struct supervisor *sv)
{
	const struct child *c = supervise_cause(sv);
	char how[96], why[sizeof(sv->sum->why)];
	int code = SP_EXIT_INTERNAL;

	spawn_describe_exit(c->status, how, sizeof(how));
	log_error("%s died: %s; the session ended", record_role_name(c->role),
	    how);
	if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == SP_EXIT_SANDBOX)
		code = SP_EXIT_SANDBOX;
	(void)snprintf(why, sizeof(why), "%s %s", record_role_name(c->role),
	    how);
	sv->status_set = false;
	supervise_set_status(sv, code, why);
}

/* Why a frontend that ended on its own ended, or NULL for a death. */
static const char *
supervise_frontend_end_why(const struct child *c)
{
	if (!WIFEXITED(c->status))
		return NULL;
	switch (WEXITSTATUS(c->status)) {
	case SP_EXIT_OK: return "end of input";
	case SP_EXIT_MALFORMED: return "malformed input";
	case SP_EXIT_IOERR: return "the client stopped reading";
	case SP_EXIT_BUDGET: return "calls past the budget";
	}
	return NULL;
}

static void
supervise_child_gone(struct supervisor *sv, int slot)
{
	struct child *c = &sv->kids[slot];

	if (slot == CHILD_FRONTEND && supervise_frontend_end_why(c) != NULL) {
		supervise_set_status(sv, WEXITSTATUS(c->status),
		    sv->ending ? sv->end_why : supervise_frontend_end_why(c));
		/* In-flight work may finish, bounded by the call timeout. */
		supervise_arm(sv->ev_grace, sv->call_timeout_ms);
		return;
	}
	/* The executor leaves with 0 only once the frontend closed the
	 * action channel; a frontend still running then ends on its own. */
	if (slot == CHILD_EXECUTOR && WIFEXITED(c->status) &&
	    WEXITSTATUS(c->status) == 0)
		return;
	if (sv->killed[slot] || sv->abnormal)	/* expected, or known */
		return;
	sv->abnormal = true;
	supervise_arm(sv->ev_settle, SUPERVISE_SETTLE_MS);
}

/*
 * Reaps every child that has ended, then judges them frontend first: an
 * executor that left because the frontend closed the channel is not a
 * failure, whichever exit waitpid() happened to return first.
 */
static void
supervise_reap(struct supervisor *sv)
{
	bool gone[CHILD_COUNT] = { false, false };
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < CHILD_COUNT; i++)
			if (sv->kids[i].pid == pid) {
				sv->kids[i].pid = 0;
				sv->kids[i].status = status;
				gone[i] = true;
			}
	for (i = 0; i < CHILD_COUNT; i++)
		if (gone[i])
			supervise_child_gone(sv, i);
	if (sv->kids[CHILD_FRONTEND].pid == 0 &&
	    sv->kids[CHILD_EXECUTOR].pid == 0)
		(void)event_base_loopbreak(sv->base);
}

/* Ends the session in order: the frontend stops reading, calls finish. */
static void
supervise_end(struct supervisor *sv, const char *why)
{
	if (sv->ending)
		return;
	sv->ending = true;
	log_info("%s: ending the session", why);
	(void)snprintf(sv->end_why, sizeof(sv->end_why), "%s", why);
	if (sv->kids[CHILD_FRONTEND].pid > 0)
		(void)kill(sv->kids[CHILD_FRONTEND].pid, SIGTERM);
	supervise_arm(sv->ev_grace,
	    SUPERVISE_STOP_GRACE_MS + sv->call_timeout_ms);
	/* The frontend's own end sets the status; this is the fallback. */
	if (sv->kids[CHILD_FRONTEND].pid == 0)
		supervise_set_status(sv, SP_EXIT_OK, sv->end_why);
}

static void
supervise_on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct supervisor *sv = arg;
	char why[32];

	(void)what;
	if (sig == SIGCHLD) {
		supervise_reap(sv);
		return;
	}
	(void)snprintf(why, sizeof(why), "signal %s", sigabbrev_np((int)sig));
	supervise_end(sv, why);
}

static void
supervise_on_grace(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor *sv = arg;

	(void)fd;
	(void)what;
	log_warn("a child did not end in time; killing it");
	supervise_set_status(sv, SP_EXIT_INTERNAL, "a child did not end");
	supervise_kill_all(sv);
}

static void
supervise_on_settle(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	supervise_kill_all(arg);
}

static void
supervise_on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor *sv = arg;

	(void)fd;
	(void)what;
	if (sv->log != NULL && !audit_log_tick(sv->log, clock_monotonic_ms()))
		sv->sum->audit_failures++;
}


static void
supervise_send_ack(struct supervisor *sv, enum record_role role,
    const struct record_audit_ack *ack)
{
	if (!channel_send(sv->chan, role, RECORD_AUDIT_ACK, ack))
		log_error("%s not answered", record_role_name(role));
}

/* An ack held back by the test hook broker:late-ack. */
struct supervise_late_ack {
	struct supervisor *sv;
	enum record_role role;
	struct record_audit_ack ack;
};

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

	if (!test_hook_is("broker", ev->kind == RECORD_AUDIT_EXECUTION ?
	    "late-ack" : "late-intent-ack") ||
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
	m = audit_event_members(sv->policy, record_role_name(c->role), ev);
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
	struct timespec wall;
	enum journal_verdict j;
	const char *key;
	uint64_t wall_ms;

	if (ev->kind == RECORD_AUDIT_EXECUTION) {
		if ((key = journal_key_of(sv->journal, ev->call_id)) != NULL)
			(void)snprintf(d->journal, sizeof(d->journal), "%s",
			    key);
		limits_end(sv->lim, ev->call_id, clock_monotonic_ms());
		(void)clock_gettime(CLOCK_REALTIME, &wall);
		journal_end(sv->journal, ev->call_id, ev->outcome, ev->status,
		    (uint64_t)wall.tv_sec * 1000 +
		    (uint64_t)wall.tv_nsec / 1000000);
	}
	d->verdict = LIMITS_PASS;
	if (ev->kind != RECORD_AUDIT_INTENT)
		return false;
	(void)clock_gettime(CLOCK_REALTIME, &wall);
	wall_ms = (uint64_t)wall.tv_sec * 1000 +
	    (uint64_t)wall.tv_nsec / 1000000;
	j = journal_check(sv->journal, ev, wall_ms, d->journal, d->message,
	    sizeof(d->message));
	if (j == JOURNAL_REPLAY || j == JOURNAL_REFUSED)
		limits_journal_verdict(d, j == JOURNAL_REPLAY);
	else if (limits_decide(sv->lim, ev, clock_monotonic_ms(), wall_ms, d) ==
	    LIMITS_PASS) {
		if (j == JOURNAL_PASS)
			journal_begin(sv->journal, ev, d->journal, wall_ms);
		return false;
	} else if (j == JOURNAL_PASS)
		journal_abandon(sv->journal);
	supervise_write_decision(sv, c, ev, d);
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
static void
supervise_record_event(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev)
{
	struct audit_event_plan plan;
	struct limits_decision d = { .verdict = LIMITS_PASS };
	enum audit_event_fate fate = AUDIT_EVENT_WRITTEN;

	if (!audit_event_plan(sv->policy, record_role_name(c->role), ev,
	    &plan) || !supervise_call_admit(sv, ev))
		fate = AUDIT_EVENT_FAILED;
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
			    sv->policy, record_role_name(c->role), ev, &plan);
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

static void
supervise_audit_event(struct supervisor *sv, const struct child *c,
    const uint8_t *rec, size_t len)
{
	struct record_audit_event ev;
	enum record_error e;

	if ((e = record_audit_event_decode(rec, len, sv->limits, &ev)) !=
	    RECORD_OK) {
		log_error("%s sent a bad audit event: %s",
		    record_role_name(c->role), record_error_str(e));
		sv->sum->audit_failures++;
		return;
	}
	supervise_record_event(sv, c, &ev);
	record_audit_event_free(&ev);
}

/* The child at the other end of a channel; from is one of ours. */
static int
supervise_slot(const struct supervisor *sv, enum record_role from)
{
	return sv->kids[CHILD_FRONTEND].role == from ? CHILD_FRONTEND :
	    CHILD_EXECUTOR;
}

static void
supervise_control_closed(struct supervisor *sv, int slot)
{
	(void)event_del(sv->ev_control[slot]);
	(void)close(sv->kids[slot].control);
	sv->kids[slot].control = -1;
	channel_attach(sv->chan, sv->kids[slot].role, -1);
}

/*
 * A child that broke the protocol ends the session, status 70, whatever
 * was set before: a frontend that ended on its own input may have sent
 * the record last.
 */
static void
supervise_broken(struct supervisor *sv, enum record_role from)
{
	sv->status_set = false;
	supervise_set_status(sv, SP_EXIT_INTERNAL, "protocol broken");
	supervise_kill_all(sv);
	supervise_control_closed(sv, supervise_slot(sv, from));
}

static bool
supervise_refused(void *arg, enum record_role from, const uint8_t *rec,
    size_t len, enum record_error e)
{
	(void)rec;
	(void)len;
	(void)e;
	supervise_broken(arg, from);
	return true;
}

/* A child's first record: its role and our catalog. */
static bool
supervise_hello(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct supervisor *sv = arg;
	struct record_hello h;

	if (record_hello_decode(rec, len, &h) != RECORD_OK || h.role != from ||
	    memcmp(h.fingerprint, sv->fingerprint, HASH_SHA256_LEN) != 0) {
		log_error("%s broke the control protocol",
		    record_role_name(from));
		supervise_broken(sv, from);
		return false;
	}
	channel_set_state(sv->chan, from, CHANNEL_READY);
	return true;
}

static bool
supervise_on_event(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct supervisor *sv = arg;

	supervise_audit_event(sv, &sv->kids[supervise_slot(sv, from)], rec,
	    len);
	return true;
}

/* A call waits for sp approve (broker/approvals.h). */
static bool
supervise_on_operator_ask(void *arg, enum record_role from,
    const uint8_t *rec, size_t len)
{
	struct supervisor *sv = arg;
	struct record_operator_ask a;

	if (record_operator_ask_decode(rec, len, &a) != RECORD_OK ||
	    sv->approvals == NULL) {
		log_error("executor sent an approval request the broker cannot "
		    "take");
		supervise_broken(sv, from);
		return false;
	}
	approvals_ask(sv->approvals, &a);
	record_operator_ask_free(&a);
	return true;
}

/* An approver's answer, to the executor, which alone decides. */
static bool
supervise_send_approval(void *arg, const struct record_operator_answer *a)
{
	struct supervisor *sv = arg;

	return channel_send(sv->chan, RECORD_ROLE_EXECUTOR,
	    RECORD_OPERATOR_ANSWER, a);
}

/* Each child greets, then sends audit events; it is answered with acks. */
static const struct channel_peer supervise_peers[] = {
	{
		.role = RECORD_ROLE_FRONTEND,
		.start = CHANNEL_HELLO,
		.accept = {
			[CHANNEL_HELLO] = CHANNEL_TYPE(RECORD_HELLO),
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_AUDIT_EVENT),
		},
		.sends = CHANNEL_TYPE(RECORD_AUDIT_ACK),
		.on = {
			[RECORD_HELLO] = supervise_hello,
			[RECORD_AUDIT_EVENT] = supervise_on_event,
		},
	},
	{
		.role = RECORD_ROLE_EXECUTOR,
		.start = CHANNEL_HELLO,
		.accept = {
			[CHANNEL_HELLO] = CHANNEL_TYPE(RECORD_HELLO),
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_AUDIT_EVENT) |
			    CHANNEL_TYPE(RECORD_OPERATOR_ASK),
		},
		.sends = CHANNEL_TYPE(RECORD_AUDIT_ACK) |
		    CHANNEL_TYPE(RECORD_OPERATOR_ANSWER),
		.on = {
			[RECORD_HELLO] = supervise_hello,
			[RECORD_AUDIT_EVENT] = supervise_on_event,
			[RECORD_OPERATOR_ASK] = supervise_on_operator_ask,
		},
	},
};

/* After the children are gone: what they sent last is still audited. */
static void
supervise_drain(struct supervisor *sv, int slot)
{
	(void)channel_read(sv->chan, sv->kids[slot].role, SIZE_MAX);
}

/*
 * Takes the records waiting (up to SUPERVISE_RECORDS_PER_WAKEUP; the
 * event fires again for the rest), each acked as soon as it is written,
 * so events that arrived together cost one wake-up.
 */
static void
supervise_on_control(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor *sv = arg;
	int slot = sv->kids[CHILD_FRONTEND].control == fd ? CHILD_FRONTEND :
	    CHILD_EXECUTOR;
	enum channel_read end;

	(void)what;
	end = channel_read(sv->chan, sv->kids[slot].role,
	    SUPERVISE_RECORDS_PER_WAKEUP);
	if (end == CHANNEL_CLOSED || end == CHANNEL_BROKEN)
		supervise_control_closed(sv, slot);
}

struct supervisor *
supervise_new(struct event_base *base, struct audit_log *log,
    const struct policy *policy, const struct record_limits *limits,
    const uint8_t fingerprint[HASH_SHA256_LEN], uint32_t call_timeout_ms,
    const struct supervise_scope *scope)
{
	struct channel_config chan = {
		.peers = supervise_peers,
		.peer_count = sizeof(supervise_peers) /
		    sizeof(supervise_peers[0]),
		.limits = limits,
		.exit_status = SP_EXIT_INTERNAL,
		.refused = supervise_refused,
	};
	struct supervisor *sv;
	size_t i;

	if ((sv = calloc(1, sizeof(*sv))) == NULL)
		return NULL;
	sv->base = base;
	sv->log = log;
	sv->policy = policy;
	sv->limits = limits;
	sv->fingerprint = fingerprint;
	sv->call_timeout_ms = call_timeout_ms;
	for (i = 0; i < CHILD_COUNT; i++)	/* no pipe until supervise_run() */
		child_stderr_init(&sv->err[i], "", -1, STDERR_FILENO);
	for (i = 0; i < NSIGNALS; i++)
		if ((sv->ev_signal[i] = evsignal_new(base, supervise_signals[i],
		    supervise_on_signal, sv)) == NULL ||
		    event_add(sv->ev_signal[i], NULL) == -1)
			goto fail;
	sv->ev_grace = evtimer_new(base, supervise_on_grace, sv);
	sv->ev_settle = evtimer_new(base, supervise_on_settle, sv);
	sv->ev_tick = event_new(base, -1, EV_PERSIST, supervise_on_tick, sv);
	chan.arg = sv;
	sv->chan = channel_new(&chan);
	if (sv->ev_grace != NULL && sv->ev_settle != NULL &&
	    sv->ev_tick != NULL && sv->chan != NULL &&
	    open_calls_init(&sv->open, policy->limits.max_inflight) &&
	    (sv->lim = limits_new(policy, scope->limits, scope->who)) != NULL &&
	    (sv->journal = journal_new(policy, scope->journal,
	    scope->profile)) != NULL &&
	    (scope->approvals == NULL || approvals_start(scope->approvals,
	    base, supervise_send_approval, sv))) {
		sv->approvals = scope->approvals;
		return sv;
	}
fail:
	log_error("cannot set up the supervision loop");
	supervise_free(sv);
	return NULL;
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
	m = audit_event_members(sv->policy, "broker", &ev);
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
static void
supervise_end_open_calls(struct supervisor *sv)
{
	uint64_t now_ms = clock_monotonic_ms();
	struct timespec wall;
	size_t i;

	(void)clock_gettime(CLOCK_REALTIME, &wall);
	for (i = 0; i < sv->open.n; i++)
		journal_end(sv->journal, sv->open.calls[i].call_id,
		    RECORD_OUTCOME_UNKNOWN, 0, (uint64_t)wall.tv_sec * 1000 +
		    (uint64_t)wall.tv_nsec / 1000000);
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

/* The relays take the read ends of the children's stderr pipes. */
static bool
supervise_stderr_watch(struct supervisor *sv)
{
	int i;

	for (i = 0; i < CHILD_COUNT; i++) {
		child_stderr_init(&sv->err[i],
		    record_role_name(sv->kids[i].role), sv->kids[i].err,
		    STDERR_FILENO);
		sv->kids[i].err = -1;
		if (!child_stderr_watch(&sv->err[i], sv->base))
			return false;
	}
	return true;
}

/* Both children are reaped: what they wrote last is said, then EOF. */
static void
supervise_stderr_drain(struct supervisor *sv)
{
	int i;

	for (i = 0; i < CHILD_COUNT; i++)
		child_stderr_drain(&sv->err[i]);
}

bool
supervise_run(struct supervisor *sv, struct child kids[CHILD_COUNT],
    struct supervise_summary *summary)
{
	struct timeval tick = { 0, SUPERVISE_TICK_MS * 1000 };
	int i;

	memset(summary, 0, sizeof(*summary));
	sv->kids = kids;
	sv->sum = summary;
	if (!supervise_stderr_watch(sv))
		return false;
	for (i = 0; i < CHILD_COUNT; i++) {
		channel_attach(sv->chan, kids[i].role, kids[i].control);
		sv->ev_control[i] = event_new(sv->base, kids[i].control,
		    EV_READ | EV_PERSIST, supervise_on_control, sv);
		if (sv->ev_control[i] == NULL ||
		    event_add(sv->ev_control[i], NULL) == -1)
			return false;
	}
	test_hook_stray(sv->chan, "broker", true);	/* no hello: greeted */
	/* Group syncs of the audit log; without one, nothing to wake for. */
	if (sv->log != NULL && event_add(sv->ev_tick, &tick) == -1)
		return false;
	supervise_reap(sv);	/* a child may have died already */
	if (kids[CHILD_FRONTEND].pid != 0 || kids[CHILD_EXECUTOR].pid != 0)
		(void)event_base_dispatch(sv->base);
	if (sv->abnormal)
		supervise_report_death(sv);
	for (i = 0; i < CHILD_COUNT; i++)
		if (kids[i].control >= 0) {
			supervise_drain(sv, i);
			supervise_control_closed(sv, i);
		}
	supervise_end_open_calls(sv);
	if (sv->log != NULL && !audit_event_flush(&sv->audit, sv->log,
	    sv->policy))
		summary->audit_failures++;
	summary->audit_dropped = sv->audit.dropped;
	supervise_stderr_drain(sv);
	return true;
}

void
supervise_free(struct supervisor *sv)
{
	size_t i;

	if (sv == NULL)
		return;
	for (i = 0; i < NSIGNALS; i++)
		if (sv->ev_signal[i] != NULL)
			event_free(sv->ev_signal[i]);
	for (i = 0; i < CHILD_COUNT; i++)
		if (sv->ev_control[i] != NULL)
			event_free(sv->ev_control[i]);
	for (i = 0; i < CHILD_COUNT; i++)
		child_stderr_close(&sv->err[i]);
	if (sv->ev_grace != NULL)
		event_free(sv->ev_grace);
	if (sv->ev_settle != NULL)
		event_free(sv->ev_settle);
	if (sv->ev_tick != NULL)
		event_free(sv->ev_tick);
	channel_free(sv->chan);
	open_calls_free(&sv->open);
	limits_free(sv->lim);
	journal_free(sv->journal);
	free(sv);
}
