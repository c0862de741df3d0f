/*
 * Entry of the executor role (executor/executor.h): fd 1 to stderr, load
 * the policy handed over, confine, answer the frontend's hello, then
 * check every record on the action channel.
 *
 * No engine is wired in yet: an action that passes every check is
 * answered with outcome "failed" and "no engine for this tool yet" (the
 * HTTP and SSH engines are a later step; this is not the finished
 * executor).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/audit_client.h"
#include "broker/child_role.h"
#include "broker/commands.h"
#include "broker/test_hook.h"
#include "common/log.h"
#include "executor/executor.h"
#include "policy/authz.h"
#include "policy/constraint.h"

struct executor {
	struct child_context ctx;
	struct event_base *base;
	struct event *ev_action;
	uint8_t *recbuf;	/* RECORD_MAX_BYTES bytes */
	bool greeted;		/* the frontend's hello was right */
	uint64_t refused;	/* records refused as protocol violations */
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

/* No intent, no action: the broker must have written it first. */
static void
executor_run(struct executor *ex, const struct record_action *a)
{
	const struct policy_tool *tool = &ex->ctx.policy->tools[a->tool_index];
	struct record_result r;

	if (!audit_client_intent(CHILD_FD_CONTROL, &ex->ctx.limits, tool, a)) {
		executor_answer(ex, a->call_id, RECORD_OUTCOME_FAILED,
		    "not run: its intent could not be audited");
		return;
	}
	memset(&r, 0, sizeof(r));
	r.call_id = a->call_id;
	r.outcome = RECORD_OUTCOME_FAILED;
	(void)audit_client_execution(CHILD_FD_CONTROL, &ex->ctx.limits, tool,
	    a, &r);
	executor_answer(ex, a->call_id, RECORD_OUTCOME_FAILED,
	    "no engine for this tool yet");
}

static void
executor_action(struct executor *ex, const uint8_t *rec, size_t len)
{
	struct record_action a;
	const char *reason;

	if (record_action_decode(rec, len, &ex->ctx.limits, &a) != RECORD_OK) {
		executor_violation(ex, rec, len, "undecodable-action", 0);
		return;
	}
	if ((reason = executor_check_action(ex, &a)) != NULL) {
		executor_violation(ex, rec, len, reason, a.call_id);
		executor_answer(ex, a.call_id, strcmp(reason,
		    "scope-not-granted") == 0 ? RECORD_OUTCOME_DENIED :
		    RECORD_OUTCOME_INVALID, "the executor refused this call");
	} else if (!test_hook_is("executor", "hold")) {
		executor_run(ex, &a);
	}
	record_action_free(&a);
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
	    !child_send_record(CHILD_FD_ACTION, &out) ||
	    !child_send_record(CHILD_FD_CONTROL, &out))
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
	else if (type != RECORD_CANCEL)	/* nothing runs yet to cancel */
		executor_violation(ex, rec, len, "unexpected-record", 0);
}

static void
executor_on_action(evutil_socket_t fd, short what, void *arg)
{
	struct executor *ex = arg;
	ssize_t n;

	(void)what;
	n = recv(fd, ex->recbuf, RECORD_MAX_BYTES, MSG_TRUNC);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
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
	    EV_READ | EV_PERSIST, executor_on_action, ex)) == NULL)
		fatal(SP_EXIT_INTERNAL, "cannot set up the event loop");
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
	memset(&ex, 0, sizeof(ex));
	child_context_load(&ex.ctx, SANDBOX_ROLE_EXECUTOR, argv[1]);
	executor_setup(&ex);
	child_confine(&ex.ctx);
	test_hook_run("executor");
	if (event_add(ex.ev_action, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot watch the action channel");
	(void)event_base_dispatch(ex.base);
	event_free(ex.ev_action);
	free(ex.recbuf);
	child_context_free(&ex.ctx);
	return ex.status;
}
