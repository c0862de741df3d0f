/*
 * Supervision of a session's children (broker/supervise.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "audit/audit_event.h"
#include "child/child.h"
#include "broker/child_stderr.h"
#include "state/journal.h"
#include "state/limits.h"
#include "broker/open_calls.h"
#include "common/exit.h"
#include "broker/supervise.h"
#include "broker/supervise_int.h"
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
 * (closed channel) is then not mistaken for the cause.  One still on its
 * way out (its control channel at EOF or not yet read) gets up to
 * SUPERVISE_SETTLE_WAITS more such waits, so a loaded machine that is
 * slow to turn an exiting process into a zombie does not make the broker
 * kill it and blame the other.
 */
#define SUPERVISE_SETTLE_MS 50
#define SUPERVISE_SETTLE_WAITS 40
/* Records taken per wake-up: a busy child cannot starve the signals. */
#define SUPERVISE_RECORDS_PER_WAKEUP 64

static const int supervise_signals[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
_Static_assert(sizeof(supervise_signals) / sizeof(supervise_signals[0]) ==
    SUPERVISE_NSIGNALS, "one event per signal watched");
#define NSIGNALS SUPERVISE_NSIGNALS



void
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

void
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
void
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

/*
 * Whether a live child may still end on its own: its control channel is
 * closed (exit closes every fd before the kernel makes the process a
 * zombie) or holds records the loop has not read yet.  A child with an
 * open, quiet channel is not leaving.
 */
static bool
supervise_child_leaving(const struct child *c)
{
	char byte;

	if (c->control == -1)
		return true;
	return recv(c->control, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
}

static void
supervise_on_settle(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor *sv = arg;
	bool leaving = sv->settle_waits < SUPERVISE_SETTLE_WAITS;
	int i;

	(void)fd;
	(void)what;
	for (i = 0; i < CHILD_COUNT && leaving; i++)
		if (sv->kids[i].pid > 0 &&
		    !supervise_child_leaving(&sv->kids[i]))
			leaving = false;
	if (leaving) {
		sv->settle_waits++;
		supervise_arm(sv->ev_settle, SUPERVISE_SETTLE_MS);
		return;
	}
	supervise_kill_all(sv);
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
    size_t len, enum channel_fault f)
{
	(void)rec;
	(void)len;
	(void)f;
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
	enum record_error e;

	if ((e = record_hello_decode(rec, len, &h)) != RECORD_OK)
		return channel_undecodable(sv->chan, from, rec, len, e);
	if (h.role != from ||
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
	struct record_audit_event ev;
	enum record_error e;

	if ((e = record_audit_event_decode(rec, len, sv->limits, &ev)) !=
	    RECORD_OK)
		return channel_undecodable(sv->chan, from, rec, len, e);
	supervise_audit_event(sv, &sv->kids[supervise_slot(sv, from)], &ev);
	record_audit_event_free(&ev);
	return true;
}

/* A call waits for sp approve (broker/approvals.h). */
static bool
supervise_on_operator_ask(void *arg, enum record_role from,
    const uint8_t *rec, size_t len)
{
	struct supervisor *sv = arg;
	struct record_operator_ask a;
	enum record_error e;

	if ((e = record_operator_ask_decode(rec, len, &a)) != RECORD_OK)
		return channel_undecodable(sv->chan, from, rec, len, e);
	if (sv->approvals == NULL) {
		record_operator_ask_free(&a);
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
	    (sv->lim = limits_new(policy, scope->limits, scope->pg,
	    scope->who)) != NULL &&
	    (sv->journal = journal_new(policy, scope->journal,
	    scope->pg, scope->profile)) != NULL &&
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
