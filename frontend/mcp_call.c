#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "frontend/mcp_session_impl.h"
#include "policy/args.h"
#include "policy/authz.h"

static const char *mcp_call_progress_message(const struct mcp_session *s,
    const struct mcp_call *call);
static bool mcp_call_progress_line(struct mcp_call *call, const char *message,
    struct mcp_output *out);

#define MCP_NAMES_LIST_MAX 2048	/* bytes of tool names in a -32602 message */

/* Appends a tool result the session made itself (no record was sent). */
static bool
mcp_call_local_result(struct mcp_session *s, const struct jsonrpc_id *id,
    enum record_outcome outcome, const char *message, struct mcp_output *out)
{

	return mcp_session_call_response(s, id, result_render_local(&s->render,
	    outcome, message), out);
}

/* A result that refuses the call, and its rejection audit event. */
static bool
mcp_call_refuse(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, enum record_outcome outcome,
    const char *reason, const char *message, struct mcp_output *out)
{
	return mcp_call_local_result(s, id, outcome, message, out) &&
	    mcp_session_audit_rejection(s, frame, reason, 0, out);
}

/*
 * -32602 naming the tools this session's profile can call, and a
 * rejection: a client probing for tools it was not shown is what a
 * reviewer looks for.
 */
static bool
mcp_call_unknown_tool(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, const char *why, struct mcp_output *out)
{
	char msg[MCP_NAMES_LIST_MAX + 128];
	size_t i, used, shown = 0, hidden = 0;
	int n;

	n = snprintf(msg, sizeof(msg), "Invalid params: %s; available tools:",
	    why);
	used = n > 0 ? (size_t)n : 0;
	for (i = 0; i < s->policy->tool_count; i++) {
		if (s->profile == NULL ||
		    !policy_authorize(s->profile, &s->policy->tools[i], NULL))
			continue;
		if (used + strlen(s->policy->tools[i].name) + 2 >
		    MCP_NAMES_LIST_MAX) {
			hidden++;
			continue;
		}
		n = snprintf(msg + used, sizeof(msg) - used, "%s %s",
		    shown > 0 ? "," : "", s->policy->tools[i].name);
		used += (size_t)n;
		shown++;
	}
	if (shown == 0)
		snprintf(msg + used, sizeof(msg) - used, " none");
	else if (hidden > 0)
		snprintf(msg + used, sizeof(msg) - used, " and %zu more", hidden);
	return mcp_session_error(s, id, -32602, msg, out) &&
	    mcp_session_audit_rejection(s, frame, "unknown-tool", -32602, out);
}

static struct mcp_call *
mcp_call_free_slot(struct mcp_session *s)
{
	size_t i;

	for (i = 0; i < s->call_slots; i++)
		if (!s->calls[i].used)
			return &s->calls[i];
	return NULL;
}

static bool mcp_call_id_from_json(const cJSON *j, struct jsonrpc_id *id);

/*
 * params._meta.progressToken, copied into call: a string or an integer,
 * as the revisions define it; anything else asks for no progress.
 */
static bool
mcp_call_take_token(struct mcp_call *call, const cJSON *params)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	struct jsonrpc_id token;

	memset(&call->progress_token, 0, sizeof(call->progress_token));
	call->progress = 0;
	if (!mcp_call_id_from_json(cJSON_GetObjectItemCaseSensitive(meta,
	    "progressToken"), &token))
		return true;
	return jsonrpc_id_copy(&call->progress_token, &token);
}

/* The action record for the executor; the slot is taken on success. */
static bool
mcp_call_send(struct mcp_session *s, const struct jsonrpc_id *id,
    const cJSON *params, uint32_t tool_index, struct value *values,
    size_t count, struct mcp_output *out)
{
	struct mcp_call *call = mcp_call_free_slot(s);
	struct record_action a;

	if (call == NULL || !jsonrpc_id_copy(&call->id, id))
		return false;
	if (!mcp_call_take_token(call, params)) {
		jsonrpc_id_free(&call->id);
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.call_id = ++s->next_call_id;
	a.tool_index = tool_index;
	memcpy(a.fingerprint, s->fingerprint, sizeof(a.fingerprint));
	a.args = values;
	a.arg_count = count;
	if (!mcp_output_add_record(out, &s->limits, RECORD_ACTION, &a)) {
		jsonrpc_id_free(&call->id);
		jsonrpc_id_free(&call->progress_token);
		return false;
	}
	call->used = true;
	call->cancelled = false;
	call->call_id = a.call_id;
	call->tool_index = tool_index;
	s->inflight++;
	if (!mcp_confirm_prepare(s, call, &s->policy->tools[tool_index],
	    values, params))
		return false;
	/* told at once, not at the first tick, that a person must act */
	if (s->policy->tools[tool_index].confirm_spec.via_operator &&
	    call->progress_token.kind != JSONRPC_ID_NULL)
		return mcp_call_progress_line(call,
		    mcp_call_progress_message(s, call), out);
	return true;
}

static bool
mcp_call_denied_scope(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, const struct policy_tool *tool,
    struct mcp_output *out)
{
	const char *missing = tool->scope;
	char msg[512];

	if (s->profile == NULL)
		snprintf(msg, sizeof(msg), "%s needs scope \"%s\"; this session "
		    "has no profile, so it may call no tool", tool->name,
		    missing);
	else {
		(void)policy_authorize(s->profile, tool, &missing);
		snprintf(msg, sizeof(msg), "%s needs scope \"%s\", which profile "
		    "\"%s\" does not grant", tool->name, missing,
		    s->profile->name);
	}
	return mcp_call_refuse(s, frame, id, RECORD_OUTCOME_DENIED,
	    "scope-denied", msg, out);
}

static bool
mcp_call_invalid_args(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, const struct policy_tool *tool,
    struct args_error_report *rep, struct mcp_output *out)
{
	char *text = args_error_report_text(rep, tool->name);
	bool ok;

	if (text == NULL) {
		log_error("out of memory");
		return false;
	}
	ok = mcp_call_refuse(s, frame, id, RECORD_OUTCOME_INVALID,
	    "invalid-arguments", text, out);
	free(text);
	return ok;
}

/* max_inflight; true when the call may go. */
static bool
mcp_call_within_limits(struct mcp_session *s, char *msg, size_t size,
    const char **reason)
{
	if (s->inflight >= s->call_slots && mcp_confirm_awaits_client(s)) {
		snprintf(msg, size, "%zu calls are in flight, the most this "
		    "session allows, and a human's confirmation is awaited; "
		    "answer it or wait for a result, then retry",
		    s->call_slots);
		*reason = "too-many-inflight";
		return false;
	}
	if (s->inflight >= s->call_slots) {
		snprintf(msg, size, "%zu calls are already running, the most "
		    "this session allows; wait for a result and retry",
		    s->call_slots);
		*reason = "too-many-inflight";
		return false;
	}
	return true;
}

/*
 * A tools/call past calls_per_session: refused unread, and the session
 * closes after MCP_OVER_BUDGET_MAX of them, so a client that does not
 * stop costs a bounded amount.  Each still sends its rejection event:
 * the broker folds identical ones into one record (audit/audit_event.h).
 */
static bool
mcp_call_over_budget(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, struct mcp_output *out)
{
	size_t budget = s->policy->limits.calls_per_session;
	char msg[160];

	snprintf(msg, sizeof(msg), "this session's budget of %zu calls is "
	    "spent; start a new session", budget);
	if (!mcp_call_refuse(s, frame, id, RECORD_OUTCOME_DENIED,
	    "budget-spent", msg, out))
		return false;
	if (s->calls_seen - budget >= MCP_OVER_BUDGET_MAX) {
		log_error("%zu calls after the budget of %zu was spent: "
		    "closing the session", s->calls_seen - budget, budget);
		s->state = MCP_STATE_CLOSED;
		s->exit_status = MCP_EXIT_BUDGET;
	}
	return true;
}

/*
 * -32021 with data.requiredCapabilities in ClientCapabilities' shape
 * (form elicitation), and a rejection: nothing reaches the executor.
 */
static bool
mcp_call_missing_capability(struct mcp_session *s,
    const struct mcp_frame *frame, const struct jsonrpc_id *id,
    const struct policy_tool *tool, struct mcp_output *out)
{
	cJSON *data = cJSON_CreateObject(), *caps, *el;
	char msg[256];

	snprintf(msg, sizeof(msg), "Missing required client capabilities: "
	    "elicitation (%s asks a human to confirm through form "
	    "elicitation; nothing was sent)", tool->name);
	if (data == NULL ||
	    (caps = cJSON_AddObjectToObject(data,
	    "requiredCapabilities")) == NULL ||
	    (el = cJSON_AddObjectToObject(caps, "elicitation")) == NULL ||
	    cJSON_AddObjectToObject(el, "form") == NULL) {
		log_error("out of memory");
		cJSON_Delete(data);
		return false;
	}
	return mcp_output_add_line(out, result_render_error_data(&s->render,
	    id, MCP_MISSING_CAPABILITY, msg, data)) &&
	    mcp_session_audit_rejection(s, frame, "missing-capability",
	    MCP_MISSING_CAPABILITY, out);
}

/* Authorized, validated, within limits: then and only then a record. */
static bool
mcp_call_tool(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_id *id, const struct policy_tool *tool,
    size_t index, const cJSON *params, struct mcp_output *out)
{
	const cJSON *arguments = cJSON_GetObjectItemCaseSensitive(params,
	    "arguments");
	struct args_error_report rep;
	struct value *values = NULL;
	const char *reason = NULL;
	char msg[256];
	bool ok;

	if (s->profile == NULL || !policy_authorize(s->profile, tool, NULL))
		return mcp_call_denied_scope(s, frame, id, tool, out);
	memset(&rep, 0, sizeof(rep));
	if (!policy_args_validate(tool, arguments, &values, &rep)) {
		ok = mcp_call_invalid_args(s, frame, id, tool, &rep, out);
		args_error_report_free(&rep);
		return ok;
	}
	if (!mcp_call_within_limits(s, msg, sizeof(msg), &reason)) {
		value_array_free(values, tool->param_count);
		return mcp_call_refuse(s, frame, id, RECORD_OUTCOME_DENIED,
		    reason, msg, out);
	}
	if (mcp_confirm_capability_missing(s, tool, params)) {
		value_array_free(values, tool->param_count);
		return mcp_call_missing_capability(s, frame, id, tool, out);
	}
	ok = mcp_call_send(s, id, params, (uint32_t)index, values,
	    tool->param_count, out);
	value_array_free(values, tool->param_count);
	return ok;
}

/* What a rejection of this call can name: its tool and arguments. */
static void
mcp_call_frame_names(struct mcp_session *s, const struct jsonrpc_message *msg,
    struct mcp_frame *f)
{
	const cJSON *name;
	size_t index = 0;

	if (!cJSON_IsObject(msg->params))
		return;
	f->arguments = cJSON_GetObjectItemCaseSensitive(msg->params,
	    "arguments");
	name = cJSON_GetObjectItemCaseSensitive(msg->params, "name");
	if (cJSON_IsString(name) && (f->tool = policy_tool_by_name(s->policy,
	    name->valuestring, &index)) != NULL)
		f->tool_index = (uint32_t)index;
}

bool
mcp_call_tools_call(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_message *msg, struct mcp_output *out)
{
	struct mcp_frame f = *frame;

	mcp_call_frame_names(s, msg, &f);
	/* Counted before anything is looked at: refused calls spend it too. */
	if (++s->calls_seen > s->policy->limits.calls_per_session)
		return mcp_call_over_budget(s, &f, &msg->id, out);
	if (!cJSON_IsObject(msg->params))
		return mcp_call_unknown_tool(s, &f, &msg->id,
		    "tools/call needs an object with a tool name", out);
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(msg->params,
	    "name")))
		return mcp_call_unknown_tool(s, &f, &msg->id,
		    "tools/call needs a string name", out);
	if (f.tool == NULL)
		return mcp_call_unknown_tool(s, &f, &msg->id, "no such tool",
		    out);
	return mcp_call_tool(s, &f, &msg->id, f.tool, f.tool_index,
	    msg->params, out);
}

/* A requestId as a JSON-RPC id; false when no id could be it. */
static bool
mcp_call_id_from_json(const cJSON *j, struct jsonrpc_id *id)
{
	double d;

	memset(id, 0, sizeof(*id));
	if (cJSON_IsString(j)) {
		id->kind = JSONRPC_ID_STRING;
		id->string = j->valuestring;	/* borrowed for comparison */
		id->string_len = strlen(j->valuestring);
		return true;
	}
	if (!cJSON_IsNumber(j))
		return false;
	d = j->valuedouble;
	if (d < -(double)JSONRPC_ID_INTEGER_MAX ||
	    d > (double)JSONRPC_ID_INTEGER_MAX || (double)(int64_t)d != d)
		return false;
	id->kind = JSONRPC_ID_INTEGER;
	id->integer = (int64_t)d;
	return true;
}

/* A cancel record for call to the executor, and its question withdrawn. */
static bool
mcp_call_send_cancel(struct mcp_session *s, struct mcp_call *call,
    struct mcp_output *out)
{
	struct record_cancel c;

	c.call_id = call->call_id;
	return mcp_output_add_record(out, &s->limits, RECORD_CANCEL, &c) &&
	    mcp_confirm_withdraw(call, out);
}

/* A cancel record for call; no response will be sent for it. */
static bool
mcp_call_cancel(struct mcp_session *s, struct mcp_call *call,
    struct mcp_output *out)
{
	if (!mcp_call_send_cancel(s, call, out))
		return false;
	call->cancelled = true;
	return true;
}

bool
mcp_call_withdraw_questions(struct mcp_session *s, struct mcp_output *out)
{
	struct mcp_call *call;
	size_t i;

	if (!mcp_confirm_awaits_client(s))
		return true;
	for (i = 0; i < s->call_slots; i++) {
		call = &s->calls[i];
		if (!call->used || call->cancelled ||
		    !mcp_confirm_unanswered(call))
			continue;
		if (!mcp_call_send_cancel(s, call, out))
			return false;
		call->confirm.phase = MCP_CONFIRM_ANSWERED;
	}
	return true;
}

bool
mcp_call_cancelled(struct mcp_session *s, const cJSON *params,
    struct mcp_output *out)
{
	struct jsonrpc_id id;
	struct mcp_call *call;

	if (!mcp_call_id_from_json(cJSON_GetObjectItemCaseSensitive(params,
	    "requestId"), &id))
		return true;
	call = mcp_session_call_by_id(s, &id);
	if (call == NULL)
		return true;	/* already answered, or never ours: ignored */
	return mcp_call_cancel(s, call, out);
}

bool
mcp_session_client_lost(struct mcp_session *s, struct mcp_output *out)
{
	size_t i;
	bool ok = true;

	for (i = 0; i < s->call_slots; i++)
		if (s->calls[i].used && !s->calls[i].cancelled)
			ok = mcp_call_cancel(s, &s->calls[i], out) && ok;
	ok = mcp_session_end_input(s, out) && ok;
	s->state = MCP_STATE_CLOSED;
	if (s->exit_status == MCP_EXIT_CLEAN)
		s->exit_status = MCP_EXIT_CLIENT_GONE;
	return ok;
}

static bool
mcp_call_audit_cancellation(struct mcp_session *s, const struct mcp_call *call,
    bool started, struct mcp_output *out)
{
	struct record_audit_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CANCELLATION;
	ev.flags = started ? AUDIT_STARTED : 0;
	ev.call_id = call->call_id;
	ev.tool_index = call->tool_index;
	return mcp_output_add_record(out, &s->limits, RECORD_AUDIT_EVENT, &ev);
}

static void
mcp_call_release(struct mcp_session *s, struct mcp_call *call)
{
	mcp_confirm_free(&call->confirm);
	jsonrpc_id_free(&call->id);
	jsonrpc_id_free(&call->progress_token);
	memset(call, 0, sizeof(*call));
	s->inflight--;
}

static struct mcp_call *
mcp_call_by_call_id(struct mcp_session *s, uint64_t call_id)
{
	size_t i;

	for (i = 0; i < s->call_slots; i++)
		if (s->calls[i].used && s->calls[i].call_id == call_id)
			return &s->calls[i];
	return NULL;
}

bool
mcp_session_handle_result(struct mcp_session *s,
    const struct record_result *r, struct mcp_output *out)
{
	struct mcp_call *call = mcp_call_by_call_id(s, r->call_id);
	const struct policy_tool *tool;
	bool ok;

	if (call == NULL) {
		log_error("result for call %" PRIu64 ", which is not in flight",
		    r->call_id);
		return true;
	}
	/* a question still out to the client is moot now */
	if (!mcp_confirm_withdraw(call, out))
		ok = false;
	else if (call->confirm.phase == MCP_CONFIRM_RELAYED)
		ok = true;	/* answered with input_required already */
	else if (call->cancelled)
		ok = mcp_call_audit_cancellation(s, call, (r->flags &
		    (RESULT_STARTED | RESULT_REQUEST_SENT)) != 0, out);
	else {
		tool = &s->policy->tools[call->tool_index];
		ok = mcp_session_call_response(s, &call->id,
		    result_render_structured(&s->render, tool, r), out);
	}
	mcp_call_release(s, call);
	return mcp_session_run_deferred(s, out) && ok;
}

bool
mcp_session_executor_lost(struct mcp_session *s, struct mcp_output *out)
{
	char msg[256];
	size_t i;
	bool ok = true, unconfirmed;

	for (i = 0; i < s->call_slots; i++) {
		struct mcp_call *call = &s->calls[i];

		if (!call->used)
			continue;
		snprintf(msg, sizeof(msg), "the executor ended before "
		    "answering; the request may have reached the target; "
		    "check %s's effect before retrying",
		    s->policy->tools[call->tool_index].name);
		/* unanswered, the executor acts on nothing (design.md 8.1) */
		unconfirmed = mcp_confirm_unanswered(call);
		ok = mcp_confirm_withdraw(call, out) && ok;
		if (call->cancelled)
			ok = mcp_call_audit_cancellation(s, call, !unconfirmed,
			    out) && ok;
		else if (unconfirmed)
			ok = mcp_call_local_result(s, &call->id,
			    RECORD_OUTCOME_FAILED, "the executor ended while "
			    "this call waited for a human's confirmation; "
			    "nothing was sent", out) && ok;
		else
			ok = mcp_call_local_result(s, &call->id,
			    RECORD_OUTCOME_UNKNOWN, msg, out) && ok;
		mcp_call_release(s, call);
	}
	ok = mcp_session_end_input(s, out) && ok;
	s->state = MCP_STATE_CLOSED;
	s->exit_status = MCP_EXIT_INTERNAL;
	return ok;
}

/* What a call waits for, in its progress notifications: an operator's
 * sp approve (docs/design.md section 8.3), or the call itself. */
static const char *
mcp_call_progress_message(const struct mcp_session *s,
    const struct mcp_call *call)
{
	const struct policy_tool *t = &s->policy->tools[call->tool_index];

	if (t->confirm && t->confirm_spec.via_operator)
		return "waiting for an operator's approval (sp approve), "
		    "outside this session";
	return "the call is still running";
}

/* One notifications/progress for call, its value one above the last. */
static bool
mcp_call_progress_line(struct mcp_call *call, const char *message,
    struct mcp_output *out)
{
	cJSON *params = cJSON_CreateObject();
	cJSON *token = jsonrpc_id_to_json(&call->progress_token);

	if (token != NULL && (params == NULL ||
	    !cJSON_AddItemToObject(params, "progressToken", token))) {
		cJSON_Delete(token);
		token = NULL;
	}
	if (token == NULL || cJSON_AddNumberToObject(params, "progress",
	    (double)(call->progress + 1)) == NULL ||
	    cJSON_AddStringToObject(params, "message", message) == NULL) {
		log_error("out of memory");
		cJSON_Delete(params);
		return false;
	}
	call->progress++;
	return mcp_output_add_line(out, result_render_notification(
	    "notifications/progress", params));
}

bool
mcp_session_progress(struct mcp_session *s, struct mcp_output *out)
{
	size_t i;

	for (i = 0; i < s->call_slots; i++) {
		struct mcp_call *call = &s->calls[i];

		if (!call->used || call->cancelled ||
		    call->progress_token.kind == JSONRPC_ID_NULL)
			continue;
		if (!mcp_call_progress_line(call,
		    mcp_call_progress_message(s, call), out))
			return false;
	}
	return true;
}
