/*
 * Asking the human through the client (docs/design.md section 8.2).
 *
 * The frontend decides nothing here: the executor issued the challenge
 * and will verify it; the frontend shows the question and relays the
 * answer with the challenge.  A legacy session whose client declared
 * form elicitation in initialize gets one elicitation/create per
 * challenge, id "sallyport-confirm-CALL", with the question built from
 * the tool's template and its validated values (policy/confirm_message.h:
 * each value escaped, never folded, and every cut said, as the operator
 * reads it) and a schema of one field: the retype
 * param's value, typed again as a string, or a boolean "confirm".  A
 * client without the capability is not asked: the executor is told at
 * once and denies the call.  The call's slot stays taken while it waits,
 * and every other frame is handled meanwhile.
 *
 * A modern (2026-07-28) session has no server-to-client request: the
 * same question goes back as the call's result, resultType
 * "input_required", input request "sallyport-confirm", the challenge as
 * requestState (base64 of nonce, big-endian expiry, MAC), and the
 * executor is told "relayed".  The retry carries requestState and
 * inputResponses; it is a new call, and its challenge is answered with
 * the one brought back (unreadable: all zero), for the executor to judge.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/log.h"
#include "frontend/mcp_session_impl.h"
#include "policy/confirm_message.h"

#define MCP_CONFIRM_ID_PREFIX "sallyport-confirm-"
/* The field of a question without retype. */
#define MCP_CONFIRM_FIELD "confirm"
/* The key of the one input request of a 2026-07-28 input_required. */
#define MCP_CONFIRM_INPUT_KEY "sallyport-confirm"
/* requestState's bytes: nonce, expiry, MAC */
#define MCP_CONFIRM_STATE_LEN (RECORD_CONFIRM_NONCE_LEN + 8 + \
	HASH_SHA256_LEN)
#define MCP_META_CLIENT_CAPABILITIES \
	"io.modelcontextprotocol/clientCapabilities"

static uint64_t
mcp_confirm_u64(const uint8_t *p)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* caps.elicitation declares form mode: an empty object is form mode
 * (2025-11-25); url alone is not. */
static bool
mcp_confirm_form_mode(const cJSON *caps)
{
	const cJSON *el = cJSON_GetObjectItemCaseSensitive(caps, "elicitation");
	const cJSON *form = cJSON_GetObjectItemCaseSensitive(el, "form");
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(el, "url");

	return cJSON_IsObject(el) &&
	    (cJSON_IsObject(form) || (form == NULL && url == NULL));
}

/* The capabilities a 2026-07-28 request declared in its _meta. */
static const cJSON *
mcp_confirm_request_caps(const cJSON *params)
{
	return cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(params, "_meta"),
	    MCP_META_CLIENT_CAPABILITIES);
}

/*
 * A legacy client without the capability still gets a tool result
 * (CONFIRM_UNSUPPORTED): its revisions define no error for it.  An
 * operator's tool asks no one through the client.
 */
bool
mcp_confirm_capability_missing(const struct mcp_session *s,
    const struct policy_tool *tool, const cJSON *params)
{
	return s->era == MCP_ERA_MODERN && tool->confirm &&
	    !tool->confirm_spec.via_operator &&
	    !mcp_confirm_form_mode(mcp_confirm_request_caps(params));
}

void
mcp_confirm_capability(struct mcp_session *s, const cJSON *params)
{
	s->elicitation = mcp_confirm_form_mode(
	    cJSON_GetObjectItemCaseSensitive(params, "capabilities"));
}

void
mcp_confirm_free(struct mcp_confirm_wait *w)
{
	free(w->message);
	free(w->state_retyped);
	memset(w, 0, sizeof(*w));
}

static enum record_confirm_verdict mcp_confirm_verdict(
    const struct policy_tool *tool, const cJSON *response,
    const char **retyped);

/*
 * A 2026-07-28 retry: requestState, the challenge the first round
 * carried (unreadable: all zero, which the executor refuses as forged),
 * and the human's answer in inputResponses.
 */
static bool
mcp_confirm_take_state(struct mcp_confirm_wait *w,
    const struct policy_tool *tool, const cJSON *params)
{
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(params,
	    "requestState");
	const cJSON *answer = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(params, "inputResponses"),
	    MCP_CONFIRM_INPUT_KEY);
	uint8_t raw[sizeof(w->state) + 3];
	const char *retyped = NULL;
	size_t n;

	if (!cJSON_IsString(state))
		return true;
	w->has_state = true;
	if (base64_decode(state->valuestring, strlen(state->valuestring), raw,
	    sizeof(raw), &n) && n == MCP_CONFIRM_STATE_LEN) {
		memcpy(w->state.nonce, raw, sizeof(w->state.nonce));
		w->state.expiry_ms = mcp_confirm_u64(raw +
		    sizeof(w->state.nonce));
		memcpy(w->state.mac, raw + sizeof(w->state.nonce) + 8,
		    sizeof(w->state.mac));
	}
	w->state_verdict = mcp_confirm_verdict(tool, answer, &retyped);
	if (retyped != NULL && (w->state_retyped = strdup(retyped)) == NULL) {
		log_error("out of memory");
		return false;
	}
	return true;
}

bool
mcp_confirm_prepare(struct mcp_session *s, struct mcp_call *call,
    const struct policy_tool *tool, const struct value *values,
    const cJSON *params)
{
	size_t len;

	memset(&call->confirm, 0, sizeof(call->confirm));
	if (!tool->confirm)
		return true;
	call->confirm.can_ask = s->era == MCP_ERA_MODERN ?
	    mcp_confirm_form_mode(mcp_confirm_request_caps(params)) :
	    s->elicitation;
	if (s->era == MCP_ERA_MODERN &&
	    !mcp_confirm_take_state(&call->confirm, tool, params))
		return false;
	call->confirm.message = confirm_message_render(tool, values,
	    tool->param_count, &len);
	if (call->confirm.message == NULL) {
		log_error("the confirmation message could not be built");
		return false;
	}
	call->confirm.phase = MCP_CONFIRM_WAITING;
	return true;
}

bool
mcp_confirm_unanswered(const struct mcp_call *call)
{
	return call->confirm.phase == MCP_CONFIRM_WAITING ||
	    call->confirm.phase == MCP_CONFIRM_CHALLENGED ||
	    call->confirm.phase == MCP_CONFIRM_ASKED;
}

static struct mcp_call *
mcp_confirm_call(struct mcp_session *s, uint64_t call_id)
{
	size_t i;

	for (i = 0; i < s->call_slots; i++)
		if (s->calls[i].used && !s->calls[i].cancelled &&
		    s->calls[i].call_id == call_id)
			return &s->calls[i];
	return NULL;
}

/* The answer record for the executor; the call waits no more. */
static bool
mcp_confirm_answer(struct mcp_session *s, struct mcp_call *call,
    enum record_confirm_verdict verdict, const char *retyped,
    struct mcp_output *out)
{
	struct record_confirm_answer a;

	memset(&a, 0, sizeof(a));
	a.call_id = call->call_id;
	a.verdict = verdict;
	a.challenge = call->confirm.challenge;
	/* longer than any value of the param: sent as none, so refused */
	if (retyped != NULL && verdict == RECORD_CONFIRM_ACCEPT &&
	    strlen(retyped) <= record_confirm_retyped_max(&s->limits)) {
		a.has_retyped = true;
		a.retyped.ptr = (char *)retyped;
		a.retyped.len = strlen(retyped);
	}
	call->confirm.phase = MCP_CONFIRM_ANSWERED;
	return mcp_output_add_record(out, &s->limits, RECORD_CONFIRM_ANSWER,
	    &a);
}

/* One field: the retype param's value as a string, or a boolean. */
static cJSON *
mcp_confirm_schema(const struct policy_tool *tool)
{
	size_t r = tool->confirm_spec.retype;
	const char *name = r == POLICY_CONFIRM_NO_RETYPE ? MCP_CONFIRM_FIELD :
	    tool->params[r].name;
	cJSON *schema = cJSON_CreateObject(), *props, *field, *req;
	char title[160];
	bool ok;

	if (r == POLICY_CONFIRM_NO_RETYPE)
		snprintf(title, sizeof(title), "Run this action");
	else
		snprintf(title, sizeof(title), "Type the value of %s again to "
		    "confirm", name);
	ok = schema != NULL &&
	    cJSON_AddStringToObject(schema, "type", "object") != NULL &&
	    (props = cJSON_AddObjectToObject(schema, "properties")) != NULL &&
	    (field = cJSON_AddObjectToObject(props, name)) != NULL &&
	    cJSON_AddStringToObject(field, "type", r == POLICY_CONFIRM_NO_RETYPE ?
	    "boolean" : "string") != NULL &&
	    cJSON_AddStringToObject(field, "title", title) != NULL &&
	    (req = cJSON_AddArrayToObject(schema, "required")) != NULL;
	if (ok) {
		cJSON *n = cJSON_CreateString(name);

		ok = n != NULL && cJSON_AddItemToArray(req, n);
	}
	if (!ok) {
		cJSON_Delete(schema);
		return NULL;
	}
	return schema;
}

/* {message, requestedSchema}: elicitation/create's params; NULL when
 * out of memory (logged). */
static cJSON *
mcp_confirm_question(const struct mcp_session *s, const struct mcp_call *call)
{
	const struct policy_tool *tool = &s->policy->tools[call->tool_index];
	cJSON *params = cJSON_CreateObject(), *schema = mcp_confirm_schema(tool);

	if (params == NULL || schema == NULL ||
	    cJSON_AddStringToObject(params, "message",
	    call->confirm.message) == NULL ||
	    !cJSON_AddItemToObject(params, "requestedSchema", schema)) {
		log_error("out of memory");
		cJSON_Delete(params);
		cJSON_Delete(schema);
		return NULL;
	}
	return params;
}

static bool
mcp_confirm_ask(struct mcp_session *s, struct mcp_call *call,
    struct mcp_output *out)
{
	cJSON *params = mcp_confirm_question(s, call);
	char id[64];

	if (params == NULL)
		return false;
	snprintf(id, sizeof(id), MCP_CONFIRM_ID_PREFIX "%" PRIu64,
	    call->call_id);
	call->confirm.phase = MCP_CONFIRM_ASKED;
	return mcp_output_add_line(out, result_render_request(id,
	    "elicitation/create", params));
}

/* The challenge as requestState: nonce, expiry (big-endian), MAC. */
static bool
mcp_confirm_state_text(const struct record_confirm_challenge *c, char *out,
    size_t cap)
{
	uint8_t raw[MCP_CONFIRM_STATE_LEN];
	size_t i;

	memcpy(raw, c->nonce, sizeof(c->nonce));
	for (i = 0; i < 8; i++)
		raw[sizeof(c->nonce) + i] = (uint8_t)(c->expiry_ms >>
		    (56 - 8 * i));
	memcpy(raw + sizeof(c->nonce) + 8, c->mac, sizeof(c->mac));
	return base64_encode(raw, sizeof(raw), out, cap);
}

/*
 * 2026-07-28 (docs/design.md section 8.2): the question goes back in the
 * tools/call result, resultType "input_required", the challenge as its
 * requestState; the executor is told the call ends here, and the
 * client's retry brings the answer and the challenge back.
 */
static bool
mcp_confirm_relay(struct mcp_session *s, struct mcp_call *call,
    struct mcp_output *out)
{
	char state[BASE64_ENCODE_SIZE(MCP_CONFIRM_STATE_LEN)];
	cJSON *r = cJSON_CreateObject(), *requests, *one,
	    *params = mcp_confirm_question(s, call);
	bool ok;

	if (r == NULL || params == NULL ||
	    cJSON_AddStringToObject(r, "resultType", "input_required") ==
	    NULL ||
	    (requests = cJSON_AddObjectToObject(r, "inputRequests")) == NULL ||
	    (one = cJSON_AddObjectToObject(requests,
	    MCP_CONFIRM_INPUT_KEY)) == NULL ||
	    !cJSON_AddItemToObject(one, "params", params)) {
		log_error("out of memory");
		cJSON_Delete(r);
		cJSON_Delete(params);
		return false;
	}
	if (!mcp_confirm_state_text(&call->confirm.challenge, state,
	    sizeof(state)) ||
	    cJSON_AddStringToObject(one, "method", "elicitation/create") ==
	    NULL || cJSON_AddStringToObject(r, "requestState", state) == NULL) {
		log_error("out of memory");
		cJSON_Delete(r);
		return false;
	}
	/* its id is free at once: the retry may come before the result */
	call->cancelled = true;
	ok = mcp_output_add_line(out, result_render_success(&call->id, r)) &&
	    mcp_confirm_answer(s, call, RECORD_CONFIRM_RELAYED, NULL, out);
	call->confirm.phase = MCP_CONFIRM_RELAYED;
	return ok;
}

bool
mcp_session_handle_challenge(struct mcp_session *s,
    const struct record_confirm_challenge_msg *m, struct mcp_output *out)
{
	struct mcp_call *call = mcp_confirm_call(s, m->call_id);

	/* Cancelled meanwhile: the executor has the cancel and ends it. */
	if (call == NULL)
		return true;
	/* withdrawn at the end of input: the executor has the cancel */
	if (call->confirm.phase == MCP_CONFIRM_ANSWERED ||
	    call->confirm.phase == MCP_CONFIRM_RELAYED)
		return true;
	if (call->confirm.phase != MCP_CONFIRM_WAITING) {
		log_error("a challenge for call %" PRIu64 ", which does not "
		    "wait for one; ignored", m->call_id);
		return true;
	}
	call->confirm.challenge = m->challenge;
	call->confirm.phase = MCP_CONFIRM_CHALLENGED;
	if (!call->confirm.can_ask)
		return mcp_confirm_answer(s, call, RECORD_CONFIRM_UNSUPPORTED,
		    NULL, out);
	if (s->era != MCP_ERA_MODERN)
		return mcp_confirm_ask(s, call, out);
	if (!call->confirm.has_state)
		return mcp_confirm_relay(s, call, out);
	/* the retry: its answer, with the challenge it brought back */
	call->confirm.challenge = call->confirm.state;
	return mcp_confirm_answer(s, call, call->confirm.state_verdict,
	    call->confirm.state_retyped, out);
}

/* The call a response's id names, while its question is out. */
static struct mcp_call *
mcp_confirm_asked_call(struct mcp_session *s, const struct jsonrpc_id *id)
{
	const size_t n = sizeof(MCP_CONFIRM_ID_PREFIX) - 1;
	struct mcp_call *call;
	unsigned long long v;
	char *end;

	if (id->kind != JSONRPC_ID_STRING || id->string_len <= n ||
	    strncmp(id->string, MCP_CONFIRM_ID_PREFIX, n) != 0 ||
	    id->string[n] < '1' || id->string[n] > '9')
		return NULL;
	errno = 0;
	v = strtoull(id->string + n, &end, 10);
	if (errno != 0 || *end != '\0')
		return NULL;
	call = mcp_confirm_call(s, (uint64_t)v);
	return call != NULL && call->confirm.phase == MCP_CONFIRM_ASKED ?
	    call : NULL;
}

/* An accepted form's field: the retyped text, or the boolean's verdict. */
static enum record_confirm_verdict
mcp_confirm_accepted(const struct policy_tool *tool, const cJSON *content,
    const char **retyped)
{
	size_t r = tool->confirm_spec.retype;
	const cJSON *field;

	*retyped = NULL;
	if (r == POLICY_CONFIRM_NO_RETYPE) {
		field = cJSON_GetObjectItemCaseSensitive(content,
		    MCP_CONFIRM_FIELD);
		return cJSON_IsTrue(field) ? RECORD_CONFIRM_ACCEPT :
		    RECORD_CONFIRM_DECLINE;
	}
	field = cJSON_GetObjectItemCaseSensitive(content, tool->params[r].name);
	/* anything but a string is no retyped value: the executor says so */
	if (cJSON_IsString(field))
		*retyped = field->valuestring;
	return RECORD_CONFIRM_ACCEPT;
}

/* An elicitation result {action, content}; anything else is a cancel. */
static enum record_confirm_verdict
mcp_confirm_verdict(const struct policy_tool *tool, const cJSON *response,
    const char **retyped)
{
	const cJSON *action = cJSON_GetObjectItemCaseSensitive(response,
	    "action");

	*retyped = NULL;
	if (!cJSON_IsString(action))
		return RECORD_CONFIRM_CANCEL;
	if (strcmp(action->valuestring, "accept") == 0)
		return mcp_confirm_accepted(tool,
		    cJSON_GetObjectItemCaseSensitive(response, "content"),
		    retyped);
	if (strcmp(action->valuestring, "decline") == 0)
		return RECORD_CONFIRM_DECLINE;
	return RECORD_CONFIRM_CANCEL;
}

bool
mcp_confirm_response(struct mcp_session *s, const struct jsonrpc_message *msg,
    struct mcp_output *out)
{
	struct mcp_call *call = mcp_confirm_asked_call(s, &msg->id);
	const char *retyped = NULL;
	enum record_confirm_verdict verdict = RECORD_CONFIRM_CANCEL;

	if (call == NULL) {
		log_debug("ignoring a response from the client");
		return true;
	}
	/* An error (the client could not show it) asked nobody: a cancel. */
	if (msg->error == NULL)
		verdict = mcp_confirm_verdict(&s->policy->tools[call->tool_index],
		    msg->result, &retyped);
	return mcp_confirm_answer(s, call, verdict, retyped, out);
}

/*
 * A legacy call that will ask or has asked: its challenge may still be on
 * its way from the executor, and then the question goes out at once.  A
 * modern session's question goes back as a result, answered by a retry.
 */
bool
mcp_confirm_awaits_client(const struct mcp_session *s)
{
	const struct mcp_call *call;
	size_t i;

	if (s->era == MCP_ERA_MODERN)
		return false;
	for (i = 0; i < s->call_slots; i++) {
		call = &s->calls[i];
		if (call->used && !call->cancelled && call->confirm.can_ask &&
		    mcp_confirm_unanswered(call))
			return true;
	}
	return false;
}

bool
mcp_confirm_withdraw(struct mcp_call *call, struct mcp_output *out)
{
	cJSON *params;
	char id[64];

	if (call->confirm.phase != MCP_CONFIRM_ASKED)
		return true;
	call->confirm.phase = MCP_CONFIRM_CHALLENGED;
	snprintf(id, sizeof(id), MCP_CONFIRM_ID_PREFIX "%" PRIu64,
	    call->call_id);
	if ((params = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(params, "requestId", id) == NULL ||
	    cJSON_AddStringToObject(params, "reason", "the call this "
	    "confirmation was for has ended") == NULL) {
		log_error("out of memory");
		cJSON_Delete(params);
		return false;
	}
	return mcp_output_add_line(out, result_render_notification(
	    "notifications/cancelled", params));
}
