/*
 * JSON-RPC 2.0 classification of one parsed frame (json.h): request,
 * notification, response or invalid, with the reason and the error code
 * the answer would carry.  A frame that json.h refused is a parse error
 * (JSONRPC_PARSE_ERROR) and never reaches this module.
 *
 * Decisions:
 * - Only an object is a message.  A JSON array (a batch) is invalid: MCP
 *   2025-06-18 and later have no batches.  null, numbers, strings, true
 *   and false at top level are invalid.  All -32600.
 * - "jsonrpc" must be exactly the string "2.0".
 * - "id" is a string or an integer written without fraction or exponent,
 *   within +-(2^53 - 1) (the integers every JSON peer reads exactly), and
 *   not -0.  Booleans, floats (1.0, 1e0), null, objects and arrays are
 *   refused.  "1" and 1 are different ids; 0 is valid.  Only a response
 *   carrying "error" may have "id": null (answers to unreadable frames).
 * - No members beyond the JSON-RPC ones: a request or notification has
 *   exactly jsonrpc, method, params (optional) and, for a request, id; a
 *   response has jsonrpc, id and exactly one of result and error.  Two
 *   peers disagreeing about an extra member is how ambiguity gets in, and
 *   MCP defines none (its _meta lives inside params and result).
 * - "method" is a string; "params", when present, an object or an array.
 * - "error" is an object with an integer "code", a string "message" and
 *   optionally "data", nothing else.
 * - When a message is invalid but its id was readable, the id is kept so
 *   the error answer can echo it; otherwise the answer carries null.
 *
 * Ownership: struct jsonrpc_id owns its string (jsonrpc_id_free).  In a
 * struct jsonrpc_message, id is owned (jsonrpc_message_free), while method,
 * params, result and error are borrowed from the json_doc's tree and live
 * as long as it does.
 */
#ifndef SP_COMMON_JSONRPC_H
#define SP_COMMON_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/json.h"

#define JSONRPC_PARSE_ERROR	-32700
#define JSONRPC_INVALID_REQUEST	-32600
#define JSONRPC_INTERNAL_ERROR	-32603
#define JSONRPC_ID_INTEGER_MAX	INT64_C(9007199254740991)	/* 2^53 - 1 */

enum jsonrpc_id_kind {
	JSONRPC_ID_NULL = 0,	/* absent, null or unreadable: renders null */
	JSONRPC_ID_INTEGER,
	JSONRPC_ID_STRING,
	/*
	 * A number that is no usable id (1.5, 1e0, 2^53), kept in string as
	 * written so the error answering it carries it and the client's
	 * request settles; only an invalid message has one.
	 */
	JSONRPC_ID_NUMBER_TEXT,
};

struct jsonrpc_id {
	enum jsonrpc_id_kind kind;
	int64_t integer;
	char *string;		/* owned, NUL-terminated, no NUL inside */
	size_t string_len;
};

enum jsonrpc_kind {
	JSONRPC_INVALID = 0,
	JSONRPC_REQUEST,
	JSONRPC_NOTIFICATION,
	JSONRPC_RESPONSE,
};

struct jsonrpc_message {
	enum jsonrpc_kind kind;
	struct jsonrpc_id id;	/* owned */
	const char *method;	/* borrowed; requests and notifications */
	const cJSON *params;	/* borrowed; NULL when absent */
	const cJSON *result;	/* borrowed; responses: result xor error */
	const cJSON *error;
	int error_code;		/* invalid only: the code of the answer */
	const char *reason;	/* static phrase */
};

/*
 * Classifies doc->root into *msg (overwritten).  Returns msg->kind.  On
 * allocation failure the message is invalid with JSONRPC_INTERNAL_ERROR.
 */
enum jsonrpc_kind jsonrpc_classify(const struct json_doc *doc,
    struct jsonrpc_message *msg);

void jsonrpc_message_free(struct jsonrpc_message *msg);

void jsonrpc_id_free(struct jsonrpc_id *id);

/* Deep copy into *dst (overwritten); false on allocation failure. */
bool jsonrpc_id_copy(struct jsonrpc_id *dst, const struct jsonrpc_id *src);

/* Same kind and same value: "1" and 1 differ. */
bool jsonrpc_id_equal(const struct jsonrpc_id *a, const struct jsonrpc_id *b);

/*
 * A new cJSON item (caller frees with cJSON_Delete) that prints exactly as
 * the id was received; integers are raw text so cJSON never writes them
 * in exponent form.  NULL on allocation failure.
 */
cJSON *jsonrpc_id_to_json(const struct jsonrpc_id *id);

/*
 * The id of a frame json_parse_frame refused as valid JSON, from the raw
 * text it kept (json_error.id_raw): a string, an integer, a number kept
 * as written, or null for "".  False only when out of memory; the caller
 * frees id with jsonrpc_id_free.
 */
bool jsonrpc_id_from_raw(const char *raw, struct jsonrpc_id *id);

/* The id as JSON text (null, 7, "a\"b"); caller frees with cJSON_free. */
char *jsonrpc_id_render(const struct jsonrpc_id *id);

#endif
