/*
 * Rendering what the frontend says to the MCP client: tools/call results
 * (from a result record, or made by the session itself), successful
 * responses and JSON-RPC errors, each as one complete line without its
 * '\n' (frontend/writer.h adds it on the way to fd 1).
 *
 * A tools/call result carries structuredContent and the same JSON, compact,
 * as its one text content block, and "isError": true for every outcome but
 * ok.  structuredContent satisfies the outputSchema of policy/catalog.h:
 *   issuer    "sallyport/<server name>", on every result and every error
 *             (errors carry it in error.data)
 *   outcome   ok | failed | unknown | denied | invalid
 *   message   what happened; for unknown, what to check before retrying
 *   http      status, content_type, body (text), truncated, plus
 *             body_shown_chars, body_total_bytes, retry_after_s and
 *             location when the target sent them
 *   ssh       exit_status (when the command exited) or signal, stdout,
 *             stderr, truncated, stdout_total_bytes, stderr_total_bytes
 *   external_data, note   present whenever target text is included
 *   redacted  true when the executor withheld a credential the target
 *             sent back ("[credential withheld]" stands in its place)
 *   duration_ms
 * Every string from a target passes sanitize_external_text() here, and
 * nowhere else.
 *
 * A line is a C string: rendered JSON never holds a NUL byte.
 *
 * Ownership: every function returning char * or cJSON * returns heap
 * memory the caller frees (free(3) for lines, cJSON_Delete for trees);
 * NULL means memory ran out (logged).  Functions taking a cJSON *result
 * or *structured consume it, whatever they return.
 */
#ifndef SP_FRONTEND_RESULT_RENDER_H
#define SP_FRONTEND_RESULT_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/jsonrpc.h"
#include "common/record.h"
#include "policy/policy.h"

/* The lines a client accepts: the official SDK refuses over 10 MiB. */
#define RESULT_LINE_MAX (10u * 1024 * 1024 - 1)
#define RESULT_FIELD_TEXT_MAX 512	/* content type, location, message */

/* Borrowed by the renderer; owned by the session. */
struct result_render_ctx {
	const struct policy *policy;
	const char *issuer;		/* "sallyport/<server name>" */
	size_t field_max_chars;		/* body, stdout, stderr: each */
};

/* "ok", "failed", ...; "unknown" for anything out of range. */
const char *result_outcome_name(enum record_outcome outcome);

/* structuredContent for the executor's answer r to a call of tool. */
cJSON *result_render_structured(const struct result_render_ctx *ctx,
    const struct policy_tool *tool, const struct record_result *r);

/*
 * structuredContent the session makes itself (invalid, denied, or unknown
 * when the executor was lost); message is Sallyport's own text.
 */
cJSON *result_render_local(const struct result_render_ctx *ctx,
    enum record_outcome outcome, const char *message);

/* The tools/call response line for id; consumes structured. */
char *result_render_call_response(const struct jsonrpc_id *id,
    cJSON *structured);

/* The same with "resultType": result_type (2026-07-28) unless NULL. */
char *result_render_call_response_typed(const struct jsonrpc_id *id,
    cJSON *structured, const char *result_type);

/* A notification line {"jsonrpc","method","params"}; consumes params. */
char *result_render_notification(const char *method, cJSON *params);

/* A request line of the server's, with a string id; consumes params. */
char *result_render_request(const char *id, const char *method,
    cJSON *params);

/* A successful response line {"jsonrpc","id","result"}; consumes result. */
char *result_render_success(const struct jsonrpc_id *id, cJSON *result);

/* An error response line with error.data.issuer. */
char *result_render_error(const struct result_render_ctx *ctx,
    const struct jsonrpc_id *id, int code, const char *message);

/*
 * The same with data's other members taken from data (an object,
 * consumed; NULL: none), the issuer first.
 */
char *result_render_error_data(const struct result_render_ctx *ctx,
    const struct jsonrpc_id *id, int code, const char *message, cJSON *data);

#endif
