/*
 * Entry of the executor role (executor/executor.h): fd 1 to stderr, load
 * the policy handed over, read the credentials and start the engines,
 * confine, answer the frontend's hello, then check every record on the
 * action channel and hand the actions that pass to the dispatch
 * (executor/dispatch.h).  The broker's audit acknowledgements arrive on
 * the control channel.
 *
 * Exit status 70 when libcurl or libssh2 cannot be loaded
 * (executor/netlib.h): the installation is broken, not the policy.
 * Exit status 78 when a credential, CA or known_hosts file cannot be
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
#include <event2/event.h>

#include "broker/child_role.h"
#include "broker/commands.h"
#include "broker/test_hook.h"
#include "common/log.h"
#include "executor/credentials.h"
#include "executor/dispatch.h"
#include "executor/executor.h"
#include "executor/netlib.h"
#include "policy/authz.h"
#include "policy/constraint.h"

struct executor {
	struct child_context ctx;
	struct event_base *base;
	struct event *ev_action;
	struct event *ev_control;
	struct credential_store creds;
	struct dispatch *dispatch;
	uint8_t *recbuf;	/* RECORD_MAX_BYTES bytes */
	bool greeted;		/* the frontend's hello was right */
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
	struct buf out;

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
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_audit_event_encode(&ev, &ex->ctx.limits, &out) == RECORD_OK)
		(void)child_send_record(CHILD_FD_CONTROL, &out);
	buf_free(&out);
}

static void
executor_answer(struct executor *ex, uint64_t call_id,
    enum record_outcome outcome, const char *message)
{
	struct record_result r;
	struct buf out;

	memset(&r, 0, sizeof(r));
	r.call_id = call_id;
	r.outcome = outcome;
	r.kind = RECORD_RESULT_NONE;
	r.message.ptr = (char *)message;
	r.message.len = strlen(message);
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_result_encode(&r, &ex->ctx.limits, &out) != RECORD_OK ||
	    !child_send_record(CHILD_FD_ACTION, &out))
		ex->status = SP_EXIT_INTERNAL;
	buf_free(&out);
}

/*
 * The checks of DESIGN.md invariant 3, in order.  Returns the reason
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
	return NULL;
}

static void
executor_action(struct executor *ex, const uint8_t *rec, size_t len)
{
	struct record_action a;
	const char *reason;
	char msg[160];

	if (record_action_decode(rec, len, &ex->ctx.limits, &a) != RECORD_OK) {
		executor_violation(ex, rec, len, "undecodable-action", 0);
		return;
	}
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
}

static void
executor_cancel(struct executor *ex, const uint8_t *rec, size_t len)
{
	struct record_cancel c;

	if (record_cancel_decode(rec, len, &c) != RECORD_OK) {
		executor_violation(ex, rec, len, "undecodable-cancel", 0);
		return;
	}
	dispatch_cancel(ex->dispatch, c.call_id);
}

static void
executor_hello(struct executor *ex, const uint8_t *rec, size_t len)
{
	struct record_hello hello;
	struct buf out;

	if (record_hello_decode(rec, len, &hello) != RECORD_OK ||
	    hello.role != RECORD_ROLE_FRONTEND ||
	    memcmp(hello.fingerprint, ex->ctx.fingerprint, HASH_SHA256_LEN)) {
		executor_violation(ex, rec, len, "bad-hello", 0);
		ex->status = SP_EXIT_INTERNAL;
		(void)event_base_loopbreak(ex->base);
		return;
	}
	hello.role = RECORD_ROLE_EXECUTOR;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_hello_encode(&hello, &out) != RECORD_OK ||
	    !child_send_record(CHILD_FD_CONTROL, &out) ||
	    !test_hook_hello_to_frontend(&hello, &out) ||
	    !child_send_record(CHILD_FD_ACTION, &out))
		ex->status = SP_EXIT_INTERNAL;
	buf_free(&out);
	ex->greeted = true;
}

static void
executor_record(struct executor *ex, const uint8_t *rec, size_t len)
{
	enum record_type type;

	if (!ex->greeted) {
		executor_hello(ex, rec, len);
		return;
	}
	if (record_peek(rec, len, NULL, &type) != RECORD_OK) {
		executor_violation(ex, rec, len, "unknown-record", 0);
		return;
	}
	if (type == RECORD_ACTION)
		executor_action(ex, rec, len);
	else if (type == RECORD_CANCEL)
		executor_cancel(ex, rec, len);
	else
		executor_violation(ex, rec, len, "unexpected-record", 0);
}

/*
 * One record per wake-up.  Reading until EAGAIN was measured (strace,
 * 3000 calls): one more recv per call at 1 in flight, and no fewer
 * epoll_wait at 16 in flight, where libevent already serves every ready
 * channel per wait.
 */
/*
 * One record from a channel into ex->recbuf.  > 0: its whole length,
 * beyond RECORD_MAX_BYTES when it was cut (MSG_TRUNC); 0: the peer is
 * gone or the channel broke; -1: nothing to read yet.
 */
static ssize_t
executor_recv_record(struct executor *ex, int fd)
{
	ssize_t n = recv(fd, ex->recbuf, RECORD_MAX_BYTES, MSG_TRUNC);

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return -1;
	return n < 0 ? 0 : n;
}

static void
executor_on_action(evutil_socket_t fd, short what, void *arg)
{
	struct executor *ex = arg;
	ssize_t n;

	(void)what;
	if ((n = executor_recv_record(ex, fd)) == -1)
		return;
	if (n > (ssize_t)RECORD_MAX_BYTES) {
		executor_violation(ex, ex->recbuf, RECORD_MAX_BYTES,
		    "record-too-long", 0);
		return;
	}
	if (n > 0) {
		executor_record(ex, ex->recbuf, (size_t)n);
		if (ex->status != 0)
			(void)event_base_loopbreak(ex->base);
		return;
	}
	/* The frontend is gone: nothing more can be asked. */
	(void)event_base_loopbreak(ex->base);
}

/* The broker's audit acknowledgements. */
static void
executor_on_control(evutil_socket_t fd, short what, void *arg)
{
	struct executor *ex = arg;
	ssize_t n;

	(void)what;
	if ((n = executor_recv_record(ex, fd)) == -1)
		return;
	if (n > (ssize_t)RECORD_MAX_BYTES) {
		/* Dropped: the call it would ack times out unrun. */
		log_error("executor_on_control: a %zd-byte record from the "
		    "broker is past the limit", n);
		return;
	}
	if (n > 0) {
		dispatch_control_record(ex->dispatch, ex->recbuf, (size_t)n);
		return;
	}
	/* The broker is gone: no intent can be acknowledged any more. */
	(void)event_base_loopbreak(ex->base);
}

static void
executor_setup(struct executor *ex)
{
	/* Signals to the whole group are the broker's to act on: it ends
	 * the executor once the frontend is gone. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
	    signal(SIGINT, SIG_IGN) == SIG_ERR ||
	    signal(SIGHUP, SIG_IGN) == SIG_ERR ||
	    signal(SIGTERM, SIG_IGN) == SIG_ERR ||
	    (ex->base = event_base_new()) == NULL ||
	    (ex->recbuf = malloc(RECORD_MAX_BYTES)) == NULL ||
	    (ex->ev_action = event_new(ex->base, CHILD_FD_ACTION,
	    EV_READ | EV_PERSIST, executor_on_action, ex)) == NULL ||
	    (ex->ev_control = event_new(ex->base, CHILD_FD_CONTROL,
	    EV_READ | EV_PERSIST, executor_on_control, ex)) == NULL)
		fatal(SP_EXIT_INTERNAL, "cannot set up the event loop");
	if (!credential_store_load(&ex->creds, ex->ctx.policy))
		fatal(SP_EXIT_CONFIG, "cannot read the credential files");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (ex->dispatch = dispatch_new(ex->base, &ex->ctx, &ex->creds)) ==
	    NULL)
		fatal(SP_EXIT_INTERNAL, "cannot start the HTTP and SSH engines");
}

int
executor_main(int argc, char **argv)
{
	struct executor ex;

	/* Before any library: nothing this process prints reaches fd 1. */
	if (!sandbox_stdout_to_stderr())
		return SP_EXIT_INTERNAL;
	log_init("executor", LOG_LEVEL_INFO);
	if (argc != 2)
		fatal(SP_EXIT_USAGE, "internal role started by hand");
	/* Before any curl or libssh2 call; netlib_load() named the cause. */
	if (!netlib_load())
		return SP_EXIT_INTERNAL;
	memset(&ex, 0, sizeof(ex));
	child_context_load(&ex.ctx, SANDBOX_ROLE_EXECUTOR, argv[1]);
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
	free(ex.recbuf);
	child_context_free(&ex.ctx);
	test_hook_heap_report("executor");
	return ex.status;
}
