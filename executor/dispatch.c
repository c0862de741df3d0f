/*
 * The executor's dispatch (executor/dispatch.h): the life of a call,
 * from the checked action through the audit acknowledgement to one
 * result record.  Building requests is in dispatch_http.c and
 * dispatch_ssh.c; the audit events in exec_audit.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/exit.h"
#include "common/clock.h"
#include "common/log.h"
#include "executor/dispatch_int.h"

#define DISPATCH_SSH_KEEPALIVE_S	30
/* Below OpenSSH's default MaxSessions (10): more calls queue. */
#define DISPATCH_SSH_CHANNELS		8

static uint32_t
dispatch_budget_ms(const struct policy *p, const struct policy_tool *tool)
{
	const struct policy_target *t = &p->targets[tool->target_index];

	if (tool->timeout_ms != 0)
		return tool->timeout_ms;
	if (t->timeout_ms != 0)
		return t->timeout_ms;
	return p->limits.call_timeout_ms;
}

static void
dispatch_call_free(struct dispatch_call *c)
{
	struct dispatch_call **pp;

	for (pp = &c->d->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->ack_timer != NULL)
		event_free(c->ack_timer);
	buf_free(&c->result);
	exec_audit_forget(c);
	dispatch_http_clear(&c->http);
	value_array_free(c->args, c->arg_count);
	free(c);
}

struct dispatch_call *
dispatch_call_find(struct dispatch *d, uint64_t call_id)
{
	struct dispatch_call *c;

	for (c = d->calls; c != NULL; c = c->next)
		if (c->call_id == call_id)
			return c;
	return NULL;
}

void
dispatch_send_result(struct dispatch_call *c)
{
	if (!channel_send_encoded(c->d->ctx->chan, RECORD_ROLE_FRONTEND,
	    buf_ptr(&c->result), buf_len(&c->result))) {
		log_error("call %llu not answered",
		    (unsigned long long)c->call_id);
		c->d->status = SP_EXIT_INTERNAL;
	}
	dispatch_dup_keep(c);
	dispatch_call_free(c);
}

/*
 * A read-only tool's execution record is not waited for (docs/design.md
 * section 6: written at once, synced in groups), so the result goes
 * first: the frontend wakes while the broker is still being woken for
 * the record, one wake-up earlier on the client's path.
 */
static void
dispatch_send_result_then_audit(struct dispatch_call *c,
    enum record_outcome outcome, int32_t status, uint64_t duration_us)
{
	if (!channel_send_encoded(c->d->ctx->chan, RECORD_ROLE_FRONTEND,
	    buf_ptr(&c->result), buf_len(&c->result))) {
		log_error("call %llu not answered",
		    (unsigned long long)c->call_id);
		c->d->status = SP_EXIT_INTERNAL;
	}
	(void)exec_audit_execution(c, outcome, status, duration_us);
	dispatch_call_free(c);
}

/*
 * No ack of a mutating tool's execution record in time: the action has
 * happened, so the client still learns its result; the broker logs why
 * its record is missing or unsynced.
 */
static void
dispatch_on_record_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct dispatch_call *c = arg;

	(void)fd;
	(void)what;
	log_warn("call %llu: execution record not confirmed in %u ms",
	    (unsigned long long)c->call_id, c->budget_ms);
	dispatch_send_result(c);
}

/* A mutating tool's result waits for its synced execution record
 * (docs/design.md section 6). */
static void
dispatch_hold_result(struct dispatch_call *c)
{
	struct timeval tv = { c->budget_ms / 1000,
	    (c->budget_ms % 1000) * 1000 };

	c->state = CALL_WAITING_RECORD;
	if ((c->ack_timer = evtimer_new(c->d->base, dispatch_on_record_timeout,
	    c)) == NULL || evtimer_add(c->ack_timer, &tv) == -1) {
		log_error("call %llu: cannot wait for the execution record",
		    (unsigned long long)c->call_id);
		dispatch_send_result(c);
	}
}

void
dispatch_finish(struct dispatch_call *c, struct record_result *r,
    int32_t status)
{
	struct dispatch *d = c->d;
	bool ran = c->state == CALL_RUNNING;

	r->call_id = c->call_id;
	r->duration_us = clock_monotonic_us() - c->start_us;
	if (r->flags & RESULT_WITHHELD)
		d->withheld++;
	buf_init_writer(&c->result, RECORD_MAX_BYTES);
	if (record_result_encode(r, &d->ctx->limits, &c->result) !=
	    RECORD_OK) {
		log_error("call %llu not answered",
		    (unsigned long long)c->call_id);
		d->status = SP_EXIT_INTERNAL;
		dispatch_call_free(c);
		return;
	}
	if (ran && !c->tool->mutating) {
		dispatch_send_result_then_audit(c, r->outcome, status,
		    r->duration_us);
		return;
	}
	if (ran && !exec_audit_execution(c, r->outcome, status,
	    r->duration_us))
		ran = false;	/* not sent: no ack will come */
	if (ran)
		dispatch_hold_result(c);
	else
		dispatch_send_result(c);
}

void
dispatch_answer(struct dispatch_call *c, enum record_outcome outcome,
    uint32_t flags, const char *message)
{
	struct record_result r;

	record_result_message(&r, outcome, message);
	r.flags = flags;
	dispatch_finish(c, &r, 0);
}

/* The broker let the intent through: act now, unless cancelled meanwhile. */
static void
dispatch_start(struct dispatch_call *c)
{
	event_free(c->ack_timer);
	c->ack_timer = NULL;
	if (c->cancelled) {
		/* Its intent is in the log: so is its end, as for a late ack. */
		(void)exec_audit_execution(c, RECORD_OUTCOME_FAILED, 0,
		    clock_monotonic_us() - c->start_us);
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "cancelled before it started; nothing was sent");
		return;
	}
	c->state = CALL_RUNNING;
	if (c->tool->kind == TOOL_HTTP)
		(void)dispatch_http_start(c);
	else
		(void)dispatch_ssh_start(c);
}

/* No acknowledgement within the budget: the action must not run. */
static void
dispatch_on_ack_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct dispatch_call *c = arg;

	(void)fd;
	(void)what;
	if (c->state == CALL_WAITING_FIRST) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0, "a duplicate of a "
		    "call that did not end in time; nothing was sent for it");
		return;
	}
	log_warn("call %llu: no audit acknowledgement in %u ms; not run",
	    (unsigned long long)c->call_id, c->budget_ms);
	/*
	 * The broker may still write the intent (a slow disk, not a hung
	 * broker): follow it with the execution record saying the call
	 * failed, so the log never shows an intent whose fate is unknown.
	 */
	(void)exec_audit_execution(c, RECORD_OUTCOME_FAILED, 0,
	    clock_monotonic_us() - c->start_us);
	dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
	    "the audit log did not confirm this call in time; nothing was "
	    "sent");
}

bool
dispatch_await_intent(struct dispatch_call *c)
{
	struct timeval tv;

	c->state = CALL_WAITING_ACK;
	tv.tv_sec = c->budget_ms / 1000;
	tv.tv_usec = (c->budget_ms % 1000) * 1000;
	if ((c->ack_timer = evtimer_new(c->d->base, dispatch_on_ack_timeout,
	    c)) == NULL || evtimer_add(c->ack_timer, &tv) == -1) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "the executor could not schedule this call");
		return false;
	}
	if (!exec_audit_intent(c)) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "the audit intent could not be sent; nothing was sent");
		return false;
	}
	return true;
}

void
dispatch_action(struct dispatch *d, struct record_action *a)
{
	const struct policy *p = d->ctx->policy;
	struct dispatch_call *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_error("out of memory");
		d->status = SP_EXIT_INTERNAL;
		return;
	}
	c->d = d;
	c->call_id = a->call_id;
	c->tool_index = a->tool_index;
	c->tool = &p->tools[a->tool_index];
	c->args = a->args;
	c->arg_count = a->arg_count;
	a->args = NULL;
	a->arg_count = 0;
	c->budget_ms = dispatch_budget_ms(p, c->tool);
	c->start_us = clock_monotonic_us();
	c->next = d->calls;
	d->calls = c;
	/* No intent before a human said yes (docs/design.md section 8.1). */
	if (c->tool->confirm)
		(void)dispatch_confirm_ask(c);
	else
		(void)dispatch_await_intent(c);
}

void
dispatch_cancel(struct dispatch *d, uint64_t call_id)
{
	struct dispatch_call *c = dispatch_call_find(d, call_id);
	bool sent = false;

	if (c == NULL || c->cancelled || c->state == CALL_WAITING_RECORD)
		return;		/* unknown, or done: its result is on its way */
	if (c->state == CALL_WAITING_CONFIRM ||
	    c->state == CALL_WAITING_JOURNAL) {
		dispatch_confirm_withdraw(c);
		return;
	}
	c->cancelled = true;
	if (c->state == CALL_WAITING_ACK) {
		/* The intent is logged; the ack still closes the call. */
		return;
	}
	if (c->ssh != NULL) {
		ssh_call_cancel(c->ssh);
		c->ssh = NULL;
		dispatch_answer(c, RECORD_OUTCOME_UNKNOWN,
		    RESULT_STARTED | RESULT_REQUEST_SENT,
		    "cancelled while running; the command may have run");
	} else if (c->tool->kind == TOOL_HTTP &&
	    http_engine_cancel(d->http, c, &sent)) {
		if (sent)
			dispatch_answer(c, RECORD_OUTCOME_UNKNOWN,
			    RESULT_STARTED | RESULT_REQUEST_SENT, "cancelled "
			    "while running; the request may have been applied");
		else
			dispatch_answer(c, RECORD_OUTCOME_FAILED,
			    RESULT_STARTED, "cancelled before the request was "
			    "sent");
	}
}

void
dispatch_audit_ack(struct dispatch *d, const struct record_audit_ack *ack)
{
	struct dispatch_call *c = dispatch_call_find(d, ack->call_id);

	if (c != NULL && c->state == CALL_WAITING_RECORD) {
		if (ack->status != RECORD_AUDIT_WRITTEN)
			log_warn("call %llu: its execution record could not be "
			    "written", (unsigned long long)ack->call_id);
		dispatch_send_result(c);
		return;
	}
	if (c != NULL && c->state == CALL_WAITING_JOURNAL) {
		dispatch_confirm_journal(c, ack);
		return;
	}
	if (c == NULL || c->state != CALL_WAITING_ACK) {
		log_warn("audit ack for call %llu, which is not waiting",
		    (unsigned long long)ack->call_id);
		return;
	}
	if (ack->status == RECORD_AUDIT_WRITTEN && ack->message.len ==
	    sizeof(c->idem_key) - 1)
		memcpy(c->idem_key, ack->message.ptr, sizeof(c->idem_key));
	if (ack->status == RECORD_AUDIT_DUPLICATE)
		dispatch_dup_wait(c, ack->first_call_id);
	else if (!dispatch_ack_answers(c, ack))
		dispatch_start(c);
}

bool
dispatch_ack_answers(struct dispatch_call *c,
    const struct record_audit_ack *ack)
{
	if (ack->status == RECORD_AUDIT_WRITTEN)
		return false;
	if (ack->status == RECORD_AUDIT_DENIED)
		dispatch_answer(c, RECORD_OUTCOME_DENIED, 0, ack->message.ptr);
	else if (ack->status == RECORD_AUDIT_REPLAY)
		dispatch_answer(c, RECORD_OUTCOME_OK, RESULT_REPLAY,
		    ack->message.ptr);
	else
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "the audit log could not record this call; nothing was "
		    "sent");
	return true;
}

size_t
dispatch_withheld(const struct dispatch *d)
{
	return d->withheld;
}

size_t
dispatch_inflight(const struct dispatch *d)
{
	const struct dispatch_call *c;
	size_t n = 0;

	for (c = d->calls; c != NULL; c = c->next)
		n++;
	return n;
}

int
dispatch_status(const struct dispatch *d)
{
	return d->status;
}

struct dispatch *
dispatch_new(struct event_base *base, const struct child_context *ctx,
    const struct credential_store *creds)
{
	struct ssh_engine_config sc = {
		.keepalive_seconds = DISPATCH_SSH_KEEPALIVE_S,
		.max_channels = DISPATCH_SSH_CHANNELS,
	};
	struct dispatch *d;

	if ((d = calloc(1, sizeof(*d))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	d->base = base;
	d->ctx = ctx;
	d->creds = creds;
	if ((d->http = http_engine_new(base, 0)) == NULL ||
	    (d->ssh = ssh_engine_new(base, &sc)) == NULL ||
	    !dispatch_ssh_targets(d) ||
	    (d->confirm = confirm_keeper_new(
	    ctx->policy->limits.calls_per_session)) == NULL) {
		dispatch_free(d);
		return NULL;
	}
	/* No more attempts run at once than calls may. */
	http_engine_set_easy_pool(d->http, ctx->policy->limits.max_inflight);
	return d;
}

void
dispatch_free(struct dispatch *d)
{
	if (d == NULL)
		return;
	/* Engines first: they drop calls without calling back. */
	if (d->http != NULL)
		http_engine_free(d->http);
	if (d->ssh != NULL)
		ssh_engine_free(d->ssh);
	while (d->calls != NULL)
		dispatch_call_free(d->calls);
	dispatch_dup_free(d);
	free(d->ssh_target_ids);
	confirm_keeper_free(d->confirm);
	free(d);
}
