#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_number.h"
#include "common/jsonrpc.h"
#include "common/log.h"

/* Longest decimal form of JSONRPC_ID_INTEGER_MAX, sign excluded. */
#define JSONRPC_ID_DIGITS_MAX 16

static const char *const jsonrpc_request_members[] = {
	"jsonrpc", "id", "method", "params", NULL
};
static const char *const jsonrpc_response_members[] = {
	"jsonrpc", "id", "result", "error", NULL
};
static const char *const jsonrpc_error_members[] = {
	"code", "message", "data", NULL
};

static const char jsonrpc_out_of_memory[] = "out of memory";

static enum jsonrpc_kind
jsonrpc_invalid(struct jsonrpc_message *msg, int code, const char *reason)
{
	msg->kind = JSONRPC_INVALID;
	msg->error_code = code;
	msg->reason = reason;
	msg->method = NULL;
	msg->params = msg->result = msg->error = NULL;
	return JSONRPC_INVALID;
}

/*
 * Parses an id number's raw text: -?(0|[1-9][0-9]*) only (the JSON
 * scanner already refused leading zeros), no -0, magnitude <= 2^53 - 1.
 */
static bool
jsonrpc_parse_integer_text(const char *text, int64_t *out)
{
	const char *digits = text[0] == '-' ? text + 1 : text;
	size_t n = strlen(digits), i;
	int64_t v = 0;

	if (n == 0 || n > JSONRPC_ID_DIGITS_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (digits[i] < '0' || digits[i] > '9')
			return false;
		v = v * 10 + (digits[i] - '0');
	}
	if (v > JSONRPC_ID_INTEGER_MAX || (digits != text && v == 0))
		return false;
	*out = digits != text ? -v : v;
	return true;
}

static bool
jsonrpc_id_set_text(struct jsonrpc_id *id, enum jsonrpc_id_kind kind,
    const char *s)
{
	size_t len = strlen(s);

	id->string = malloc(len + 1);
	if (id->string == NULL) {
		log_error("cannot allocate %zu bytes", len + 1);
		return false;
	}
	memcpy(id->string, s, len + 1);
	id->string_len = len;
	id->kind = kind;
	return true;
}

static bool
jsonrpc_id_set_string(struct jsonrpc_id *id, const char *s)
{
	return jsonrpc_id_set_text(id, JSONRPC_ID_STRING, s);
}

/* Reads a usable id from item; NULL if it is one, else why not. */
static const char *
jsonrpc_read_id(const struct json_doc *doc, const cJSON *item,
    struct jsonrpc_id *id)
{
	if (cJSON_IsString(item))
		return jsonrpc_id_set_string(id, item->valuestring) ?
		    NULL : jsonrpc_out_of_memory;
	if (!cJSON_IsNumber(item))
		return "id is not a string or an integer";
	if (doc->id_token != JSON_ID_NUMBER ||
	    doc->id_text_len > JSON_ID_TEXT_MAX)
		return "id is not an integer within +-(2^53 - 1)";
	if (!jsonrpc_parse_integer_text(doc->id_text, &id->integer))
		return jsonrpc_id_set_text(id, JSONRPC_ID_NUMBER_TEXT,
		    doc->id_text) ? "id is not an integer within +-(2^53 - 1)" :
		    jsonrpc_out_of_memory;
	id->kind = JSONRPC_ID_INTEGER;
	return NULL;
}

/* True if every member name of object is in the NULL-terminated list. */
static bool
jsonrpc_members_allowed(const cJSON *object, const char *const *allowed)
{
	const cJSON *child;
	size_t i;

	for (child = object->child; child != NULL; child = child->next) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(child->string, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return false;
	}
	return true;
}

static bool
jsonrpc_version_ok(const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");

	return cJSON_IsString(v) && strcmp(v->valuestring, "2.0") == 0;
}

static enum jsonrpc_kind
jsonrpc_classify_call(const cJSON *root, bool has_id,
    struct jsonrpc_message *msg)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");

	if (!cJSON_IsString(method))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "method is not a string");
	if (params != NULL && !cJSON_IsObject(params) && !cJSON_IsArray(params))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "params is not an object or an array");
	if (!jsonrpc_members_allowed(root, jsonrpc_request_members))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "member not defined by JSON-RPC");
	msg->method = method->valuestring;
	msg->params = params;
	msg->kind = has_id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION;
	msg->reason = has_id ? "request" : "notification";
	return msg->kind;
}

static bool
jsonrpc_error_object_ok(const cJSON *error)
{
	const cJSON *code, *message;

	if (!cJSON_IsObject(error))
		return false;
	code = cJSON_GetObjectItemCaseSensitive(error, "code");
	message = cJSON_GetObjectItemCaseSensitive(error, "message");
	if (!cJSON_IsNumber(code) || !cJSON_IsString(message))
		return false;
	if (code->valuedouble != floor(code->valuedouble) ||
	    fabs(code->valuedouble) > INT32_MAX)
		return false;
	return jsonrpc_members_allowed(error, jsonrpc_error_members);
}

static enum jsonrpc_kind
jsonrpc_classify_response(const cJSON *root, const cJSON *id_item,
    struct jsonrpc_message *msg)
{
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(root, "result");
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(root, "error");

	if (result != NULL && error != NULL)
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "response has both result and error");
	if (id_item == NULL)
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "response without id");
	if (cJSON_IsNull(id_item) && error == NULL)
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "result with a null id");
	if (error != NULL && !jsonrpc_error_object_ok(error))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "error is not a code/message object");
	if (!jsonrpc_members_allowed(root, jsonrpc_response_members))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "member not defined by JSON-RPC");
	msg->result = result;
	msg->error = error;
	msg->kind = JSONRPC_RESPONSE;
	msg->reason = "response";
	return JSONRPC_RESPONSE;
}

/* The message is an object; id is read first so refusals can echo it. */
static enum jsonrpc_kind
jsonrpc_classify_object(const struct json_doc *doc,
    struct jsonrpc_message *msg)
{
	const cJSON *root = doc->root;
	const cJSON *id_item = cJSON_GetObjectItemCaseSensitive(root, "id");
	const char *id_problem = NULL;

	if (id_item != NULL && !cJSON_IsNull(id_item))
		id_problem = jsonrpc_read_id(doc, id_item, &msg->id);
	if (id_problem == jsonrpc_out_of_memory)
		return jsonrpc_invalid(msg, JSONRPC_INTERNAL_ERROR, id_problem);
	if (!jsonrpc_version_ok(root))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "jsonrpc is not \"2.0\"");
	if (id_problem != NULL)
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST, id_problem);
	if (cJSON_GetObjectItemCaseSensitive(root, "method") != NULL) {
		if (cJSON_IsNull(id_item))
			return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
			    "request with a null id");
		return jsonrpc_classify_call(root, id_item != NULL, msg);
	}
	if (cJSON_GetObjectItemCaseSensitive(root, "result") != NULL ||
	    cJSON_GetObjectItemCaseSensitive(root, "error") != NULL)
		return jsonrpc_classify_response(root, id_item, msg);
	return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
	    "neither a method nor a result or error");
}

enum jsonrpc_kind
jsonrpc_classify(const struct json_doc *doc, struct jsonrpc_message *msg)
{
	memset(msg, 0, sizeof(*msg));
	if (doc->root == NULL)
		return jsonrpc_invalid(msg, JSONRPC_PARSE_ERROR, "no JSON value");
	if (cJSON_IsArray(doc->root))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "batch (JSON array) not supported");
	if (!cJSON_IsObject(doc->root))
		return jsonrpc_invalid(msg, JSONRPC_INVALID_REQUEST,
		    "message is not a JSON object");
	return jsonrpc_classify_object(doc, msg);
}

void
jsonrpc_message_free(struct jsonrpc_message *msg)
{
	if (msg == NULL)
		return;
	jsonrpc_id_free(&msg->id);
	memset(msg, 0, sizeof(*msg));
}

void
jsonrpc_id_free(struct jsonrpc_id *id)
{
	if (id == NULL)
		return;
	free(id->string);
	memset(id, 0, sizeof(*id));
}

bool
jsonrpc_id_from_raw(const char *raw, struct jsonrpc_id *id)
{
	cJSON *item;
	bool ok;

	memset(id, 0, sizeof(*id));
	if (raw[0] == '\0')
		return true;
	if (raw[0] != '"') {
		if (jsonrpc_parse_integer_text(raw, &id->integer)) {
			id->kind = JSONRPC_ID_INTEGER;
			return true;
		}
		return jsonrpc_id_set_text(id, JSONRPC_ID_NUMBER_TEXT, raw);
	}
	/* the scanner passed it with no \u0000, so cJSON decodes it whole */
	item = cJSON_ParseWithOpts(raw, NULL, 1);
	if (item == NULL || !cJSON_IsString(item)) {
		cJSON_Delete(item);
		return true;
	}
	ok = jsonrpc_id_set_string(id, item->valuestring);
	cJSON_Delete(item);
	return ok;
}

bool
jsonrpc_id_copy(struct jsonrpc_id *dst, const struct jsonrpc_id *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->kind == JSONRPC_ID_STRING ||
	    src->kind == JSONRPC_ID_NUMBER_TEXT)
		return jsonrpc_id_set_text(dst, src->kind, src->string);
	dst->kind = src->kind;
	dst->integer = src->integer;
	return true;
}

bool
jsonrpc_id_equal(const struct jsonrpc_id *a, const struct jsonrpc_id *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case JSONRPC_ID_NULL:
		return true;
	case JSONRPC_ID_INTEGER:
		return a->integer == b->integer;
	case JSONRPC_ID_STRING:
	case JSONRPC_ID_NUMBER_TEXT:
		return a->string_len == b->string_len &&
		    memcmp(a->string, b->string, a->string_len) == 0;
	}
	return false;
}

cJSON *
jsonrpc_id_to_json(const struct jsonrpc_id *id)
{
	switch (id->kind) {
	case JSONRPC_ID_INTEGER:
		return json_number_int64(id->integer);
	case JSONRPC_ID_STRING:
		return cJSON_CreateString(id->string);
	case JSONRPC_ID_NUMBER_TEXT:
		/* the scanner passed it as an RFC 8259 number */
		return cJSON_CreateRaw(id->string);
	case JSONRPC_ID_NULL:
		break;
	}
	return cJSON_CreateNull();
}

char *
jsonrpc_id_render(const struct jsonrpc_id *id)
{
	cJSON *item = jsonrpc_id_to_json(id);
	char *text;

	if (item == NULL) {
		log_error("cannot build the id");
		return NULL;
	}
	text = cJSON_PrintUnformatted(item);
	cJSON_Delete(item);
	if (text == NULL)
		log_error("cannot print the id");
	return text;
}
