/*
 * A call of a tool with confirm, before its intent (docs/design.md
 * section 8.1): the challenge goes to the frontend, a confirmation
 * record "asked" to the broker, and a timer runs to the challenge's
 * expiry.  For a tool with a journal the "asked" record goes first,
 * with the call's values, and the challenge only once the broker
 * acknowledged it: an identical call the journal replays or refuses is
 * answered so, and nobody is asked (section 9).  The call then ends
 * denied, naming why, unless an answer the keeper accepts comes first (executor/confirm.h); only then is the
 * "accepted" record sent, then the intent, then the action.  Each
 * decision is a confirmation record before anything else about the call.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "child/test_hook.h"
#include "common/exit.h"
#include "common/log.h"
#include "executor/dispatch_int.h"
#include "policy/audit_args.h"
#include "policy/confirm_message.h"

/* The operator's question travels in one OPERATOR_ASK record. */
_Static_assert(CONFIRM_MESSAGE_BYTES_MAX <= RECORD_TEXT_CAP,
    "the question fits an OPERATOR_ASK record");

/* The shape of what the human typed: "string(N)", never the text. */
static char *
dispatch_confirm_shape(const struct record_confirm_answer *a)
{
	cJSON *text, *shape;
	char *out = NULL;

	if ((text = cJSON_CreateString(a->retyped.ptr)) != NULL &&
	    (shape = audit_json_shape(text)) != NULL) {
		out = cJSON_PrintUnformatted(shape);
		cJSON_Delete(shape);
	}
	cJSON_Delete(text);
	return out;
}

/* One confirmation record; false when it could not be sent. */
static bool
dispatch_confirm_audit(struct dispatch_call *c, enum confirm_decision d,
    const struct record_confirm_answer *a)
{
	const char *token = confirm_decision_token(d);
	struct record_audit_event ev;
	struct record_text shape = { NULL, 0 };
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CONFIRMATION;
	ev.call_id = c->call_id;
	ev.tool_index = c->tool_index;
	ev.reason.ptr = (char *)token;
	ev.reason.len = strlen(token);
	if (d == CONFIRM_ASKED && c->tool->idem_window_s != 0) {
		if (!(ok = exec_audit_with_values(c, &ev)))
			log_error("call %llu: confirmation record not sent",
			    (unsigned long long)c->call_id);
		return ok;
	}
	if (a != NULL && a->has_retyped) {
		if ((shape.ptr = dispatch_confirm_shape(a)) == NULL)
			return false;
		shape.len = strlen(shape.ptr);
		ev.shapes = &shape;
		ev.shape_count = 1;
	}
	ok = channel_send(c->d->ctx->chan, RECORD_ROLE_BROKER,
	    RECORD_AUDIT_EVENT, &ev);
	cJSON_free(shape.ptr);
	if (!ok)
		log_error("call %llu: confirmation record not sent",
		    (unsigned long long)c->call_id);
	return ok;
}

/* Not confirmed: the decision's record, then a denial; nothing acted. */
static void
dispatch_confirm_deny(struct dispatch_call *c, enum confirm_decision d,
    const struct record_confirm_answer *a)
{
	(void)dispatch_confirm_audit(c, d, a);
	dispatch_answer(c, RECORD_OUTCOME_DENIED, 0,
	    confirm_decision_message(d));
}

static void
dispatch_confirm_on_expiry(evutil_socket_t fd, short what, void *arg)
{
	struct dispatch_call *c = arg;

	(void)fd;
	(void)what;
	dispatch_confirm_deny(c, CONFIRM_EXPIRED, NULL);
}

/* via operator: the broker lists the call for sp approve. */
static bool
dispatch_operator_ask(struct dispatch_call *c,
    const struct record_confirm_challenge *challenge)
{
	struct record_operator_ask ask;
	bool ok;

	memset(&ask, 0, sizeof(ask));
	ask.call_id = c->call_id;
	ask.tool_index = c->tool_index;
	ask.challenge = *challenge;
	/* rendered here, not by the frontend, so what an approver reads
	 * comes from the values this executor holds */
	if ((ask.message.ptr = confirm_message_render(c->tool, c->args,
	    c->arg_count, &ask.message.len)) == NULL) {
		log_error("call %llu: the approval message could not be built",
		    (unsigned long long)c->call_id);
		return false;
	}
	ok = channel_send(c->d->ctx->chan, RECORD_ROLE_BROKER,
	    RECORD_OPERATOR_ASK, &ask);
	free(ask.message.ptr);
	return ok;
}

/* Where the challenge goes: the frontend (the client asks), or the
 * broker (an operator answers through sp approve; the frontend never
 * sees it, save in the test build's leak). */
static bool
dispatch_confirm_send(struct dispatch_call *c,
    const struct record_confirm_challenge_msg *m)
{
	if (!c->tool->confirm_spec.via_operator)
		return channel_send(c->d->ctx->chan, RECORD_ROLE_FRONTEND,
		    RECORD_CONFIRM_CHALLENGE, m);
	if (test_hook_is("executor", "operator-leak") &&
	    !channel_send(c->d->ctx->chan, RECORD_ROLE_FRONTEND,
	    RECORD_CONFIRM_CHALLENGE, m))
		return false;
	return dispatch_operator_ask(c, &m->challenge);
}

/* The expiry: timeout_s from now, for the journal's answer and again
 * for the human's. */
static bool
dispatch_confirm_arm(struct dispatch_call *c)
{
	struct timeval tv = { (time_t)c->tool->confirm_spec.timeout_s, 0 };

	return (c->ack_timer = evtimer_new(c->d->base,
	    dispatch_confirm_on_expiry, c)) != NULL &&
	    evtimer_add(c->ack_timer, &tv) == 0;
}

static void
dispatch_confirm_fail(struct dispatch_call *c)
{
	dispatch_answer(c, RECORD_OUTCOME_FAILED, 0, "the executor could not "
	    "ask for a confirmation; nothing was sent");
}

/* The challenge out, "asked" audited first unless it was already. */
static bool
dispatch_confirm_challenge(struct dispatch_call *c, bool audit_asked)
{
	struct dispatch *d = c->d;
	struct record_confirm_challenge_msg m;

	c->state = CALL_WAITING_CONFIRM;
	memset(&m, 0, sizeof(m));
	m.call_id = c->call_id;
	if (!confirm_issue(d->confirm, d->ctx, c->tool_index, c->args,
	    c->arg_count, c->tool->confirm_spec.timeout_s, &m.challenge) ||
	    !dispatch_confirm_arm(c) || (audit_asked &&
	    !dispatch_confirm_audit(c, CONFIRM_ASKED, NULL)) ||
	    !dispatch_confirm_send(c, &m)) {
		dispatch_confirm_fail(c);
		return false;
	}
	return true;
}

bool
dispatch_confirm_ask(struct dispatch_call *c)
{
	if (c->tool->idem_window_s == 0)
		return dispatch_confirm_challenge(c, true);
	c->state = CALL_WAITING_JOURNAL;
	if (!dispatch_confirm_arm(c) ||
	    !dispatch_confirm_audit(c, CONFIRM_ASKED, NULL)) {
		dispatch_confirm_fail(c);
		return false;
	}
	return true;
}

/* The journal replayed or refused the call: answered, nobody asked;
 * else the human is asked now. */
void
dispatch_confirm_journal(struct dispatch_call *c,
    const struct record_audit_ack *ack)
{
	event_free(c->ack_timer);
	c->ack_timer = NULL;
	if (ack->status == RECORD_AUDIT_DUPLICATE)	/* not the journal's */
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0, "the audit log "
		    "could not record this call; nothing was sent");
	else if (!dispatch_ack_answers(c, ack))
		(void)dispatch_confirm_challenge(c, false);
}

void
dispatch_confirm_withdraw(struct dispatch_call *c)
{
	dispatch_confirm_deny(c, CONFIRM_WITHDRAWN, NULL);
}

/* Accepted: its record, then the intent and the action as for any call. */
static void
dispatch_confirm_go(struct dispatch_call *c,
    const struct record_confirm_answer *a)
{
	event_free(c->ack_timer);
	c->ack_timer = NULL;
	if (!dispatch_confirm_audit(c, CONFIRM_ACCEPTED, a)) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0, "the confirmation "
		    "could not be audited; nothing was sent");
		return;
	}
	(void)dispatch_await_intent(c);
}

void
dispatch_confirm_answer(struct dispatch *d,
    const struct record_confirm_answer *a)
{
	struct dispatch_call *c = dispatch_call_find(d, a->call_id);
	enum confirm_decision decision;

	if (c == NULL || c->state != CALL_WAITING_CONFIRM) {
		log_warn("confirmation for call %llu, which is not waiting for "
		    "one; ignored", (unsigned long long)a->call_id);
		return;
	}
	/* via operator: whatever the frontend relays is not an approval */
	if (c->tool->confirm_spec.via_operator)
		decision = CONFIRM_OPERATOR_ONLY;
	else
		decision = confirm_verify(d->confirm, d->ctx, c->tool_index,
		    c->args, c->arg_count, a);
	if (decision == CONFIRM_ACCEPTED)
		dispatch_confirm_go(c, a);
	else
		dispatch_confirm_deny(c, decision, a);
}

void
dispatch_operator_answer(struct dispatch *d,
    const struct record_operator_answer *oa)
{
	const struct record_confirm_answer *a = &oa->answer;
	struct dispatch_call *c = dispatch_call_find(d, a->call_id);
	enum confirm_decision decision;

	if (c == NULL || c->state != CALL_WAITING_CONFIRM ||
	    !c->tool->confirm_spec.via_operator) {
		log_warn("approval for call %llu, which is not waiting for "
		    "one; ignored", (unsigned long long)a->call_id);
		return;
	}
	decision = confirm_verify(d->confirm, d->ctx, c->tool_index, c->args,
	    c->arg_count, a);
	if (decision == CONFIRM_DECLINED)
		decision = CONFIRM_OPERATOR_DENIED;
	if (decision == CONFIRM_ACCEPTED)
		dispatch_confirm_go(c, a);
	else
		dispatch_confirm_deny(c, decision, a);
}
