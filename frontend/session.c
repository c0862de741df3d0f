/*
 * The MCP session (frontend/session.h).  Small on purpose: lifecycle,
 * ping, tools/list and a plain tools/call; issue 5 completes it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "broker/commands.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "frontend/session.h"
#include "policy/args.h"
#include "policy/authz.h"
#include "policy/catalog.h"

#define MCP_VERSION_LATEST "2025-11-25"
#define MCP_VERSION_PREVIOUS "2025-06-18"
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS -32602

struct inflight {
	bool used;
	uint64_t call_id;
	struct jsonrpc_id id;	/* owned */
};

struct session {
	const struct child_context *ctx;
	struct writer *out;
	int action_fd;
	int control_fd;
	bool initialized;
	bool malformed;
	uint64_t next_call_id;
	struct inflight *calls;	/* ctx->policy->limits.max_inflight entries */
	size_t ncalls;
};

/* Sends msg (owned, deleted here) on fd 1 as one compact line. */
static bool
session_send_json(struct session *s, cJSON *msg)
{
	char *text;
	bool ok;

	text = msg != NULL ? cJSON_PrintUnformatted(msg) : NULL;
	cJSON_Delete(msg);
	if (text == NULL) {
		log_error("out of memory");
		return false;
	}
	ok = writer_send(s->out, text, strlen(text));
	cJSON_free(text);
	return ok;
}

static cJSON *
session_envelope(const struct jsonrpc_id *id)
{
	cJSON *msg = cJSON_CreateObject();

	if (msg == NULL)
		return NULL;
	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddItemToObject(msg, "id", jsonrpc_id_to_json(id));
	return msg;
}

static bool
session_error(struct session *s, const struct jsonrpc_id *id, int code,
    const char *message)
{
	cJSON *msg = session_envelope(id), *err;

	if (msg == NULL || (err = cJSON_AddObjectToObject(msg, "error")) == NULL)
		return session_send_json(s, msg);
	cJSON_AddNumberToObject(err, "code", code);
	cJSON_AddStringToObject(err, "message", message);
	return session_send_json(s, msg);
}

/* result is owned and moved into the response. */
static bool
session_result(struct session *s, const struct jsonrpc_id *id, cJSON *result)
{
	cJSON *msg = session_envelope(id);

	if (msg == NULL || result == NULL) {
		cJSON_Delete(msg);
		cJSON_Delete(result);
		return session_send_json(s, NULL);
	}
	cJSON_AddItemToObject(msg, "result", result);
	return session_send_json(s, msg);
}

/* Tells the broker, which alone writes the audit log. */
static void
session_audit_rejection(struct session *s, const struct frame *f,
    const char *reason, int code)
{
	struct record_audit_event ev;
	struct buf out;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.frame_no = f->number;
	ev.reason.ptr = (char *)reason;
	ev.reason.len = strlen(reason);
	ev.code = code;
	if (f->status == FRAME_OK) {
		ev.flags = AUDIT_HAS_SHA256;
		hash_sha256(f->bytes, f->len, ev.sha256);
	}
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_audit_event_encode(&ev, &s->ctx->limits, &out) == RECORD_OK)
		(void)child_send_record(s->control_fd, &out);
	buf_free(&out);
}

/* One error, one audit record; false when the session must close. */
static bool
session_reject(struct session *s, const struct frame *f,
    const struct jsonrpc_id *id, int code, const char *reason,
    const char *message)
{
	struct jsonrpc_id null_id = { .kind = JSONRPC_ID_NULL };

	session_audit_rejection(s, f, reason, code);
	(void)session_error(s, id != NULL ? id : &null_id, code, message);
	if (s->ctx->policy->on_invalid == POLICY_ON_INVALID_REJECT)
		return true;
	s->malformed = true;
	return false;
}

/* The version the client asked for when we speak it, else our latest. */
static const char *
session_negotiate(const cJSON *params)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params,
	    "protocolVersion");

	if (cJSON_IsString(v) && strcmp(v->valuestring,
	    MCP_VERSION_PREVIOUS) == 0)
		return MCP_VERSION_PREVIOUS;
	return MCP_VERSION_LATEST;
}

static bool
session_initialize(struct session *s, const struct jsonrpc_message *m)
{
	cJSON *r, *tools, *info;

	if (s->initialized)
		return session_error(s, &m->id, JSONRPC_INVALID_REQUEST,
		    "already initialized");
	s->initialized = true;
	if ((r = cJSON_CreateObject()) == NULL)
		return session_result(s, &m->id, NULL);
	cJSON_AddStringToObject(r, "protocolVersion",
	    session_negotiate(m->params));
	/* The catalog never changes while a session runs. */
	tools = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r,
	    "capabilities"), "tools");
	cJSON_AddFalseToObject(tools, "listChanged");
	info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "sallyport");
	cJSON_AddStringToObject(info, "version", PACKAGE_VERSION);
	return session_result(s, &m->id, r);
}

static bool
session_tools_list(struct session *s, const struct jsonrpc_message *m)
{
	size_t len;
	char *text = policy_catalog_render(s->ctx->policy, s->ctx->profile,
	    &len);
	cJSON *list = text != NULL ? cJSON_Parse(text) : NULL;

	free(text);
	return session_result(s, &m->id, list);
}

/* A tool result the model reads: outcome and message, also as text. */
static cJSON *
session_tool_result(const struct session *s, const char *outcome,
    const char *message, bool is_error)
{
	cJSON *r = cJSON_CreateObject(), *sc, *content, *block;
	char issuer[128], *text;

	(void)snprintf(issuer, sizeof(issuer), "sallyport/%s",
	    s->ctx->policy->server_name);
	sc = cJSON_AddObjectToObject(r, "structuredContent");
	cJSON_AddStringToObject(sc, "issuer", issuer);
	cJSON_AddStringToObject(sc, "outcome", outcome);
	cJSON_AddStringToObject(sc, "message", message);
	content = cJSON_AddArrayToObject(r, "content");
	block = cJSON_CreateObject();
	cJSON_AddItemToArray(content, block);
	cJSON_AddStringToObject(block, "type", "text");
	text = cJSON_PrintUnformatted(sc);
	cJSON_AddStringToObject(block, "text", text != NULL ? text : "");
	cJSON_free(text);
	cJSON_AddBoolToObject(r, "isError", is_error);
	return r;
}

static struct inflight *
session_free_slot(struct session *s)
{
	size_t i;

	for (i = 0; i < s->ncalls; i++)
		if (!s->calls[i].used)
			return &s->calls[i];
	return NULL;
}

/* Builds and sends the action record; values are consumed. */
static bool
session_send_action(struct session *s, size_t tool_index,
    struct value *values, struct inflight *slot, const struct jsonrpc_id *id)
{
	struct record_action a;
	struct buf out;
	bool ok;

	memset(&a, 0, sizeof(a));
	a.call_id = ++s->next_call_id;
	a.tool_index = (uint32_t)tool_index;
	memcpy(a.fingerprint, s->ctx->fingerprint, sizeof(a.fingerprint));
	a.args = values;
	a.arg_count = s->ctx->policy->tools[tool_index].param_count;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	ok = record_action_encode(&a, &s->ctx->limits, &out) == RECORD_OK &&
	    child_send_record(s->action_fd, &out) &&
	    jsonrpc_id_copy(&slot->id, id);
	buf_free(&out);
	value_array_free(values, a.arg_count);
	if (ok) {
		slot->used = true;
		slot->call_id = a.call_id;
	}
	return ok;
}

static bool
session_call_checked(struct session *s, const struct jsonrpc_message *m,
    const struct policy_tool *tool, size_t index)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params,
	    "arguments");
	struct args_error_report err = { 0 };
	struct inflight *slot;
	struct value *values;
	const char *missing;
	char *text;
	bool ok;

	if (!policy_authorize(s->ctx->profile, tool, &missing))
		return session_result(s, &m->id, session_tool_result(s,
		    "denied", "this profile lacks the tool's scope", true));
	if (!policy_args_validate(tool, args, &values, &err)) {
		text = args_error_report_text(&err, tool->name);
		ok = session_result(s, &m->id, session_tool_result(s,
		    "invalid", text != NULL ? text : "invalid arguments", true));
		free(text);
		args_error_report_free(&err);
		return ok;
	}
	if ((slot = session_free_slot(s)) == NULL) {
		value_array_free(values, tool->param_count);
		return session_error(s, &m->id, JSONRPC_INVALID_REQUEST,
		    "too many calls in flight");
	}
	if (!session_send_action(s, index, values, slot, &m->id))
		return session_error(s, &m->id, JSONRPC_INTERNAL_ERROR,
		    "the executor cannot be reached");
	return true;
}

static bool
session_tools_call(struct session *s, const struct jsonrpc_message *m)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
	const struct policy_tool *tool = NULL;
	size_t index = 0;

	if (cJSON_IsString(name))
		tool = policy_tool_by_name(s->ctx->policy, name->valuestring,
		    &index);
	if (tool == NULL || !policy_authorize(s->ctx->profile, tool, NULL))
		return session_error(s, &m->id, JSONRPC_INVALID_PARAMS,
		    "unknown tool");
	return session_call_checked(s, m, tool, index);
}

static bool
session_request(struct session *s, const struct jsonrpc_message *m)
{
	if (strcmp(m->method, "initialize") == 0)
		return session_initialize(s, m);
	if (strcmp(m->method, "ping") == 0)
		return session_result(s, &m->id, cJSON_CreateObject());
	if (!s->initialized)
		return session_error(s, &m->id, JSONRPC_INVALID_REQUEST,
		    "not initialized");
	if (strcmp(m->method, "tools/list") == 0)
		return session_tools_list(s, m);
	if (strcmp(m->method, "tools/call") == 0)
		return session_tools_call(s, m);
	return session_error(s, &m->id, JSONRPC_METHOD_NOT_FOUND,
	    "method not found");
}

static bool
session_message(struct session *s, const struct frame *f,
    const struct json_doc *doc)
{
	struct jsonrpc_message m;
	bool go_on = true;

	switch (jsonrpc_classify(doc, &m)) {
	case JSONRPC_REQUEST:
		(void)session_request(s, &m);
		break;
	case JSONRPC_NOTIFICATION:
	case JSONRPC_RESPONSE:
		break;	/* never answered */
	default:
		go_on = session_reject(s, f, &m.id, m.error_code,
		    "invalid-request", m.reason);
		break;
	}
	jsonrpc_message_free(&m);
	return go_on;
}

bool
session_frame(struct session *s, const struct frame *f)
{
	struct json_doc doc;
	struct json_error err;
	bool go_on;

	if (f->status != FRAME_OK)
		return session_reject(s, f, NULL, JSONRPC_PARSE_ERROR,
		    "bad-frame", frame_status_string(f->status));
	if (!json_parse_frame(f->bytes, f->len, JSON_DEPTH_DEFAULT, &doc,
	    &err))
		return session_reject(s, f, NULL, JSONRPC_PARSE_ERROR,
		    "parse-error", err.reason);
	go_on = session_message(s, f, &doc);
	json_doc_free(&doc);
	return go_on;
}

static const char *
session_outcome_name(enum record_outcome o)
{
	switch (o) {
	case RECORD_OUTCOME_OK: return "ok";
	case RECORD_OUTCOME_FAILED: return "failed";
	case RECORD_OUTCOME_DENIED: return "denied";
	case RECORD_OUTCOME_INVALID: return "invalid";
	default: return "unknown";
	}
}

bool
session_executor_record(struct session *s, const uint8_t *rec, size_t len)
{
	struct record_result r;
	enum record_error e;
	size_t i;

	if ((e = record_result_decode(rec, len, &s->ctx->limits, &r)) !=
	    RECORD_OK) {
		log_error("executor record refused: %s", record_error_str(e));
		return false;
	}
	for (i = 0; i < s->ncalls; i++)
		if (s->calls[i].used && s->calls[i].call_id == r.call_id)
			break;
	if (i < s->ncalls) {
		(void)session_result(s, &s->calls[i].id, session_tool_result(s,
		    session_outcome_name(r.outcome), r.message.ptr != NULL ?
		    r.message.ptr : "", r.outcome != RECORD_OUTCOME_OK));
		jsonrpc_id_free(&s->calls[i].id);
		s->calls[i].used = false;
	}
	record_result_free(&r);
	return i < s->ncalls;
}

void
session_executor_lost(struct session *s)
{
	size_t i;

	for (i = 0; i < s->ncalls; i++) {
		if (!s->calls[i].used)
			continue;
		(void)session_result(s, &s->calls[i].id, session_tool_result(s,
		    "unknown", "the executor stopped while this call was in "
		    "flight; it may have been applied: check the target", true));
		jsonrpc_id_free(&s->calls[i].id);
		s->calls[i].used = false;
	}
}

size_t
session_inflight(const struct session *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->ncalls; i++)
		n += s->calls[i].used;
	return n;
}

int
session_exit_status(const struct session *s)
{
	return s->malformed ? SP_EXIT_MALFORMED : SP_EXIT_OK;
}

struct session *
session_new(const struct child_context *ctx, struct writer *out,
    int action_fd, int control_fd)
{
	struct session *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->ctx = ctx;
	s->out = out;
	s->action_fd = action_fd;
	s->control_fd = control_fd;
	s->ncalls = ctx->policy->limits.max_inflight;
	if (s->ncalls == 0 ||
	    (s->calls = calloc(s->ncalls, sizeof(*s->calls))) == NULL) {
		log_error("cannot allocate %zu call slots", s->ncalls);
		free(s);
		return NULL;
	}
	return s;
}

void
session_free(struct session *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ncalls; i++)
		jsonrpc_id_free(&s->calls[i].id);
	free(s->calls);
	free(s);
}
