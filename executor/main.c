/*
 * sp-executor, the executor role (docs/design.md section 1), started by
 * the broker with the fds of child/child.h.  It trusts no record: each
 * action is checked again against its own copy of the policy before
 * anything is done with it.  fd 1 to stderr, load
 * the policy handed over, read the credentials and start the engines,
 * confine, answer the frontend's hello, then check every record on the
 * action channel and hand the actions that pass to the dispatch
 * (executor/dispatch.h).  The broker's audit acknowledgements arrive on
 * the control channel.
 *
 * Exit status 0 when the frontend closed the channel, 70/71 on failure;
 * 78 when a credential, CA or known_hosts file cannot be
 * read at start-up: the broker checked the same files moments before, so
 * the operator's files changed or are unreadable, not the code.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libssh2.h>
#include <event2/event.h>

#include "child/child.h"
#include "common/exit.h"
#include "child/test_hook.h"
#include "common/channel.h"
#include "common/log.h"
#include "executor/credentials.h"
#include "executor/dispatch.h"
#include "policy/authz.h"
#include "policy/constraint.h"

struct executor {
	struct child_context ctx;
	struct event_base *base;
	struct event *ev_action;
	struct event *ev_control;
	struct credential_store creds;
	struct dispatch *dispatch;
	uint64_t refused;	/* records refused as protocol violations */
	size_t accepted;	/* actions handed to the dispatch */
	int status;
};

/* Tells the broker (which audits it) that a record was refused. */
static void
executor_violation(struct executor *ex, const uint8_t *rec, size_t len,
    const char *reason, uint64_t call_id)
{
	struct record_audit_event ev;

	ex->refused++;
	log_warn("record refused (%s); %llu so far", reason,
	    (unsigned long long)ex->refused);
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_VIOLATION;
	ev.flags = AUDIT_HAS_SHA256;
	ev.reason.ptr = (char *)reason;
	ev.reason.len = strlen(reason);
	ev.call_id = call_id;
	hash_sha256(rec, len, ev.sha256);
	(void)channel_send(ex->ctx.chan, RECORD_ROLE_BROKER, RECORD_AUDIT_EVENT,
	    &ev);
}

static void
executor_answer(struct executor *ex, uint64_t call_id,
    enum record_outcome outcome, const char *message)
{
	struct record_result r;

	record_result_message(&r, outcome, message);
	r.call_id = call_id;
	if (!channel_send(ex->ctx.chan, RECORD_ROLE_FRONTEND, RECORD_RESULT,
	    &r))
		ex->status = SP_EXIT_INTERNAL;
}

/*
 * The checks of docs/design.md invariant 3, in order.  Returns the reason
 * token of the first that fails, or NULL.
 */
static const char *
executor_check_action(const struct executor *ex, const struct record_action *a)
{
	const struct policy *p = ex->ctx.policy;
	const struct policy_tool *tool;
	char why[CONSTRAINT_REASON_MAX + 64];

	if (a->tool_index >= p->tool_count)
		return "tool-index-out-of-range";
	if (memcmp(a->fingerprint, ex->ctx.fingerprint, HASH_SHA256_LEN) != 0)
		return "fingerprint-mismatch";
	tool = &p->tools[a->tool_index];
	if (!policy_values_check(tool, a->args, a->arg_count, why, sizeof(why)))
		return "invalid-values";
	if (!policy_authorize(ex->ctx.profile, tool, NULL))
		return "scope-not-granted";
	return NULL;
}

/*
 * The session's limits, enforced here as well as in the frontend: a
 * compromised frontend must not exceed them.  Returns the reason token
 * and fills msg (naming the limit) when the action may not go.
 */
static const char *
executor_check_limits(const struct executor *ex, char *msg, size_t size)
{
	const struct policy_limits *l = &ex->ctx.policy->limits;

	if (dispatch_inflight(ex->dispatch) >= l->max_inflight) {
		snprintf(msg, size, "the executor refused this call: "
		    "limits.max_inflight (%zu calls running) reached",
		    l->max_inflight);
		return "max-inflight-exceeded";
	}
	if (ex->accepted >= l->calls_per_session) {
		snprintf(msg, size, "the executor refused this call: "
		    "limits.calls_per_session (%zu calls) is spent",
		    l->calls_per_session);
		return "calls-per-session-exceeded";
	}
	if (dispatch_withheld(ex->dispatch) >= REDACT_SESSION_MAX) {
		snprintf(msg, size, "the session has ended: %u results "
		    "withheld a credential a target sent back; no more calls "
		    "are taken (start a new session)", REDACT_SESSION_MAX);
		return "credential-reflected";
	}
	return NULL;
}

static bool
executor_action(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct executor *ex = arg;
	struct record_action a;
	enum record_error e;
	const char *reason;
	char msg[160];

	if ((e = record_action_decode(rec, len, &ex->ctx.limits, &a)) !=
	    RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	if ((reason = executor_check_action(ex, &a)) != NULL) {
		executor_violation(ex, rec, len, reason, a.call_id);
		executor_answer(ex, a.call_id, strcmp(reason,
		    "scope-not-granted") == 0 ? RECORD_OUTCOME_DENIED :
		    RECORD_OUTCOME_INVALID, "the executor refused this call");
	} else if ((reason = executor_check_limits(ex, msg, sizeof(msg))) !=
	    NULL) {
		executor_violation(ex, rec, len, reason, a.call_id);
		executor_answer(ex, a.call_id, RECORD_OUTCOME_DENIED, msg);
	} else if (!test_hook_is("executor", "hold")) {
		ex->accepted++;
		dispatch_action(ex->dispatch, &a);
		if (dispatch_status(ex->dispatch) != 0)
			ex->status = dispatch_status(ex->dispatch);
	}
	record_action_free(&a);
	return ex->status == 0;
}

static bool
executor_cancel(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct executor *ex = arg;
	struct record_cancel c;
	enum record_error e;

	if ((e = record_cancel_decode(rec, len, &c)) != RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	dispatch_cancel(ex->dispatch, c.call_id);
	return true;
}

/* The frontend's relay of a human's answer (executor/confirm.h). */
static bool
executor_confirm_answer(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct executor *ex = arg;
	struct record_confirm_answer a;
	enum record_error e;

	if ((e = record_confirm_answer_decode(rec, len, &ex->ctx.limits,
	    &a)) != RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	dispatch_confirm_answer(ex->dispatch, &a);
	record_confirm_answer_free(&a);
	return ex->status == 0;
}

/* An approver's answer: only the broker, which read its uid, sends one. */
static bool
executor_operator_answer(void *arg, enum record_role from,
    const uint8_t *rec, size_t len)
{
	struct executor *ex = arg;
	struct record_operator_answer a;
	enum record_error e;

	if ((e = record_operator_answer_decode(rec, len, &ex->ctx.limits,
	    &a)) != RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	dispatch_operator_answer(ex->dispatch, &a);
	record_operator_answer_free(&a);
	return ex->status == 0;
}

/* The frontend's hello, answered to the broker and the frontend. */
static bool
executor_hello(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct executor *ex = arg;
	struct record_hello hello;
	enum record_error e;

	if ((e = record_hello_decode(rec, len, &hello)) != RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	if (hello.role != from ||
	    memcmp(hello.fingerprint, ex->ctx.fingerprint, HASH_SHA256_LEN)) {
		executor_violation(ex, rec, len, "bad-hello", 0);
		ex->status = SP_EXIT_INTERNAL;
		return false;
	}
	channel_set_state(ex->ctx.chan, from, CHANNEL_READY);
	test_hook_stray(ex->ctx.chan, "executor", false);
	hello.role = RECORD_ROLE_EXECUTOR;
	if (!channel_send(ex->ctx.chan, RECORD_ROLE_BROKER, RECORD_HELLO,
	    &hello))
		ex->status = SP_EXIT_INTERNAL;
	test_hook_hello_to_frontend(&hello);
	if (!channel_send(ex->ctx.chan, from, RECORD_HELLO, &hello))
		ex->status = SP_EXIT_INTERNAL;
	test_hook_stray(ex->ctx.chan, "executor", true);
	return ex->status == 0;
}

/* The broker's audit acknowledgements. */
static bool
executor_ack(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct executor *ex = arg;
	struct record_audit_ack ack;
	enum record_error e;

	if ((e = record_audit_ack_decode(rec, len, &ack)) != RECORD_OK)
		return channel_undecodable(ex->ctx.chan, from, rec, len, e);
	dispatch_audit_ack(ex->dispatch, &ack);
	record_audit_ack_free(&ack);
	return true;
}

/* The audited reason of a record the channel refused from the frontend. */
static const char *
executor_fault_reason(const uint8_t *rec, size_t len, enum channel_fault f)
{
	enum record_type type = RECORD_RESULT;	/* the frontend sends none */

	switch (f) {
	case CHANNEL_FAULT_TOO_LONG:
		return "record-too-long";
	case CHANNEL_FAULT_TYPE:
		return "unexpected-record";
	case CHANNEL_FAULT_BODY:
		break;
	default:
		return "unknown-record";
	}
	(void)record_peek(rec, len, NULL, &type);
	switch (type) {
	case RECORD_HELLO:
		return "bad-hello";
	case RECORD_ACTION:
		return "undecodable-action";
	case RECORD_CANCEL:
		return "undecodable-cancel";
	case RECORD_CONFIRM_ANSWER:
		return "undecodable-confirmation";
	default:
		return "unknown-record";
	}
}

/*
 * A record no peer may send in this state, or a body that does not
 * decode where the table says that is fatal: the frontend's is audited
 * as a violation before the channel ends the executor (the broker
 * drains it after the executor is gone); the broker audits its own.
 */
static bool
executor_refused(void *arg, enum record_role from, const uint8_t *rec,
    size_t len, enum channel_fault f)
{
	if (from == RECORD_ROLE_FRONTEND)
		executor_violation(arg, rec, len,
		    executor_fault_reason(rec, len, f), 0);
	return false;
}

/*
 * The frontend's action record that does not decode (the table's
 * audited type): audited, and its call answered as invalid when the
 * body holds at least the call id, its first field, so that the call
 * is not left waiting.
 */
static bool
executor_undecodable(void *arg, enum record_role from, enum record_type type,
    const uint8_t *rec, size_t len)
{
	struct executor *ex = arg;
	struct buf in;
	uint64_t call_id = 0;
	bool answer;

	(void)from;
	(void)type;
	buf_init_reader(&in, rec + RECORD_HEADER_LEN, len - RECORD_HEADER_LEN);
	answer = buf_get_u64(&in, &call_id) == RECORD_OK;
	executor_violation(ex, rec, len, "undecodable-action", call_id);
	if (answer)
		executor_answer(ex, call_id, RECORD_OUTCOME_INVALID,
		    "the executor could not decode this call");
	return ex->status == 0;
}

static const struct channel_peer executor_peers[] = {
	{
		.role = RECORD_ROLE_FRONTEND,
		.start = CHANNEL_HELLO,
		.accept = {
			[CHANNEL_HELLO] = CHANNEL_TYPE(RECORD_HELLO),
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_ACTION) |
			    CHANNEL_TYPE(RECORD_CANCEL) |
			    CHANNEL_TYPE(RECORD_CONFIRM_ANSWER),
		},
		.sends = CHANNEL_TYPE(RECORD_HELLO) |
		    CHANNEL_TYPE(RECORD_RESULT) |
		    CHANNEL_TYPE(RECORD_CONFIRM_CHALLENGE),
		.on = {
			[RECORD_HELLO] = executor_hello,
			[RECORD_ACTION] = executor_action,
			[RECORD_CANCEL] = executor_cancel,
			[RECORD_CONFIRM_ANSWER] = executor_confirm_answer,
		},
		/* a caller's bad call must not end the session for all */
		.audited = CHANNEL_TYPE(RECORD_ACTION),
	},
	{
		.role = RECORD_ROLE_BROKER,
		.start = CHANNEL_READY,		/* the broker sends no hello */
		.accept = {
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_AUDIT_ACK) |
			    CHANNEL_TYPE(RECORD_OPERATOR_ANSWER),
		},
		.sends = CHANNEL_TYPE(RECORD_HELLO) |
		    CHANNEL_TYPE(RECORD_AUDIT_EVENT) |
		    CHANNEL_TYPE(RECORD_OPERATOR_ASK),
		.on = {
			[RECORD_AUDIT_ACK] = executor_ack,
			[RECORD_OPERATOR_ANSWER] = executor_operator_answer,
		},
	},
};

/*
 * One record per wake-up.  Reading until EAGAIN was measured (strace,
 * 3000 calls): one more recv per call at 1 in flight, and no fewer
 * epoll_wait at 16 in flight, where libevent already serves every ready
 * channel per wait.
 */
#define EXECUTOR_RECORDS_PER_WAKEUP 1

static void
executor_on_action(evutil_socket_t fd, short what, void *arg)
{
	struct executor *ex = arg;

	(void)fd;
	(void)what;
	/* Closed: the frontend is gone, nothing more can be asked. */
	if (channel_read(ex->ctx.chan, RECORD_ROLE_FRONTEND,
	    EXECUTOR_RECORDS_PER_WAKEUP) != CHANNEL_OPEN || ex->status != 0)
		(void)event_base_loopbreak(ex->base);
}

static void
executor_on_control(evutil_socket_t fd, short what, void *arg)
{
	struct executor *ex = arg;

	(void)fd;
	(void)what;
	/* Closed: the broker is gone, no intent can be acknowledged. */
	if (channel_read(ex->ctx.chan, RECORD_ROLE_BROKER,
	    EXECUTOR_RECORDS_PER_WAKEUP) != CHANNEL_OPEN)
		(void)event_base_loopbreak(ex->base);
}

static void
executor_setup(struct executor *ex)
{
	const struct channel_config chan = {
		.peers = executor_peers,
		.peer_count = sizeof(executor_peers) / sizeof(executor_peers[0]),
		.arg = ex,
		.limits = &ex->ctx.limits,
		.exit_status = SP_EXIT_INTERNAL,
		.refused = executor_refused,
		.undecodable = executor_undecodable,
	};

	/* Signals to the whole group are the broker's to act on: it ends
	 * the executor once the frontend is gone. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
	    signal(SIGINT, SIG_IGN) == SIG_ERR ||
	    signal(SIGHUP, SIG_IGN) == SIG_ERR ||
	    signal(SIGTERM, SIG_IGN) == SIG_ERR ||
	    (ex->base = event_base_new()) == NULL ||
	    (ex->ctx.chan = channel_new(&chan)) == NULL ||
	    (ex->ev_action = event_new(ex->base, CHILD_FD_ACTION,
	    EV_READ | EV_PERSIST, executor_on_action, ex)) == NULL ||
	    (ex->ev_control = event_new(ex->base, CHILD_FD_CONTROL,
	    EV_READ | EV_PERSIST, executor_on_control, ex)) == NULL)
		fatal(SP_EXIT_INTERNAL, "cannot set up the event loop");
	channel_attach(ex->ctx.chan, RECORD_ROLE_FRONTEND, CHILD_FD_ACTION);
	channel_attach(ex->ctx.chan, RECORD_ROLE_BROKER, CHILD_FD_CONTROL);
	if (!credential_store_load(&ex->creds, ex->ctx.policy))
		fatal(SP_EXIT_CONFIG, "cannot read the credential files");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (ex->dispatch = dispatch_new(ex->base, &ex->ctx, &ex->creds)) ==
	    NULL)
		fatal(SP_EXIT_INTERNAL, "cannot start the HTTP and SSH engines");
}

int
main(int argc, char **argv)
{
	struct executor ex;
	const char *profile;

	/* Before any library: nothing this process prints reaches fd 1. */
	if (!sandbox_stdout_to_stderr())
		return SP_EXIT_INTERNAL;
	profile = child_args(argc, argv, RECORD_ROLE_EXECUTOR);
	/* Which libraries the dynamic linker chose, for a bug report. */
	log_debug("%s, libssh2/%s", curl_version(), libssh2_version(0));
	memset(&ex, 0, sizeof(ex));
	child_context_load(&ex.ctx, RECORD_ROLE_EXECUTOR, profile);
	executor_setup(&ex);
	child_confine(&ex.ctx);
	test_hook_run("executor");
	if (event_add(ex.ev_action, NULL) == -1 ||
	    event_add(ex.ev_control, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot watch the action channel");
	(void)event_base_dispatch(ex.base);
	dispatch_free(ex.dispatch);
	credential_store_free(&ex.creds);
	curl_global_cleanup();
	event_free(ex.ev_control);
	event_free(ex.ev_action);
	channel_free(ex.ctx.chan);
	child_context_free(&ex.ctx);
	test_hook_heap_report("executor");
	return ex.status;
}
