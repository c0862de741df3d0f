/*
 * The frontend's audit events about frames (docs/design.md section 6):
 * a rejection names what the frame let the frontend know (the method,
 * the tool when it is one of the catalog's, the shapes of the arguments
 * it sent), and a client event carries what initialize said about the
 * client.  The broker renders both and trusts neither: tool names come
 * from its catalog by index, texts are sanitized there.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy/audit_args.h"
#include "common/hash.h"
#include "common/log.h"
#include "frontend/mcp_session_impl.h"

#define MCP_AUDIT_CLIENT_TEXT_MAX 256	/* bytes sent; the broker cuts more */

/* The method as a token the record allows, or NULL (then not named). */
static const char *
mcp_audit_method(const char *method)
{
	size_t i, n;

	if (method == NULL || (n = strlen(method)) == 0 ||
	    n > RECORD_TOKEN_MAX)
		return NULL;
	for (i = 0; i < n; i++)
		if (!((method[i] >= 'a' && method[i] <= 'z') ||
		    (method[i] >= 'A' && method[i] <= 'Z') ||
		    (method[i] >= '0' && method[i] <= '9') ||
		    method[i] == '/' || method[i] == '_' || method[i] == '-'))
			return NULL;
	return method;
}

/* Appends the compact JSON of one shape (consumed). */
static bool
mcp_audit_add_shape(struct record_text *t, size_t *n, cJSON *shape)
{
	if (!audit_text_take(&t[*n], shape))
		return false;
	(*n)++;
	return true;
}

static bool
mcp_audit_declared(const struct policy_tool *tool, const char *name)
{
	size_t i;

	for (i = 0; tool != NULL && i < tool->param_count; i++)
		if (strcmp(tool->params[i].name, name) == 0)
			return true;
	return false;
}

/*
 * One shape per param of the frame's tool (looked up by name), then one
 * per argument it does not declare, in the order sent, at most
 * RECORD_ARGS_CAP in all.  Arguments that are not an object are one
 * undeclared shape.  Never a value: these arguments were not accepted.
 */
static bool
mcp_audit_shapes(const struct mcp_frame *frame, struct record_text **out,
    size_t *count)
{
	const struct policy_tool *tool = frame->tool;
	const cJSON *args = frame->arguments, *m;
	struct record_text *t;
	size_t n = 0, i;

	*out = NULL;
	*count = 0;
	if (tool == NULL && args == NULL)
		return true;
	if ((t = calloc(RECORD_ARGS_CAP, sizeof(*t))) == NULL)
		return false;
	for (i = 0; tool != NULL && i < tool->param_count &&
	    n < RECORD_ARGS_CAP; i++)
		if (!mcp_audit_add_shape(t, &n, audit_json_shape(cJSON_IsObject(
		    args) ? cJSON_GetObjectItemCaseSensitive(args,
		    tool->params[i].name) : NULL)))
			goto fail;
	if (args != NULL && !cJSON_IsObject(args) && n < RECORD_ARGS_CAP &&
	    !mcp_audit_add_shape(t, &n, audit_json_shape(args)))
		goto fail;
	if (!cJSON_IsObject(args))
		goto done;
	cJSON_ArrayForEach(m, args) {
		if (n == RECORD_ARGS_CAP)
			break;
		if (!mcp_audit_declared(tool, m->string) &&
		    !mcp_audit_add_shape(t, &n, audit_json_shape(m)))
			goto fail;
	}
done:
	*out = t;
	*count = n;
	return true;
fail:
	audit_texts_free(t, n);
	log_error("out of memory");
	return false;
}

static bool
mcp_audit_send(struct mcp_session *s, const struct record_audit_event *ev,
    struct mcp_output *out)
{
	return mcp_output_add_record(out, &s->limits, RECORD_AUDIT_EVENT, ev);
}

bool
mcp_session_audit_rejection(struct mcp_session *s,
    const struct mcp_frame *frame, const char *reason, int code,
    struct mcp_output *out)
{
	struct record_audit_event ev;
	const char *method = mcp_audit_method(frame->method);
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.frame_no = frame->number;
	ev.reason.ptr = (char *)reason;
	ev.reason.len = strlen(reason);
	ev.code = code;
	if (method != NULL) {
		ev.method.ptr = (char *)method;
		ev.method.len = strlen(method);
	}
	if (frame->bytes != NULL) {
		ev.flags = AUDIT_HAS_SHA256;
		hash_sha256(frame->bytes, frame->len, ev.sha256);
	}
	if (frame->tool != NULL) {
		ev.flags |= AUDIT_HAS_TOOL;
		ev.tool_index = frame->tool_index;
	}
	if (!mcp_audit_shapes(frame, &ev.shapes, &ev.shape_count))
		return false;
	ok = mcp_audit_send(s, &ev, out);
	audit_texts_free(ev.shapes, ev.shape_count);
	return ok;
}

/* A member of clientInfo (or params) as bounded text, empty if absent. */
static void
mcp_audit_client_text(const cJSON *obj, const char *name,
    struct record_text *t)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	t->ptr = NULL;
	t->len = 0;
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return;
	t->ptr = v->valuestring;
	t->len = strnlen(v->valuestring, MCP_AUDIT_CLIENT_TEXT_MAX);
}

bool
mcp_session_audit_client(struct mcp_session *s, const cJSON *params,
    struct mcp_output *out)
{
	struct record_text texts[RECORD_AUDIT_CLIENT_TEXTS];
	struct record_audit_event ev;
	const cJSON *info = cJSON_GetObjectItemCaseSensitive(params,
	    "clientInfo");

	/* the broker sanitizes; a cut may split a UTF-8 sequence, which it
	 * replaces like any other byte it does not keep */
	mcp_audit_client_text(info, "name", &texts[0]);
	mcp_audit_client_text(info, "version", &texts[1]);
	mcp_audit_client_text(params, "protocolVersion", &texts[2]);
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CLIENT;
	ev.method.ptr = (char *)"initialize";
	ev.method.len = strlen(ev.method.ptr);
	ev.shapes = texts;
	ev.shape_count = RECORD_AUDIT_CLIENT_TEXTS;
	return mcp_audit_send(s, &ev, out);
}
