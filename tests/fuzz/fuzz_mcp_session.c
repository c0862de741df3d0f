/*
 * libFuzzer target for the MCP session: the input is a byte stream split
 * at '\n' into frames, fed to one session (profile with scope "read"
 * only).  Every action the session sends is answered with a result whose
 * body is the frame that caused it.  Invariants checked after each frame:
 * at most one protocol line; every line one valid JSON message under the
 * SDK's limit; every executor record decodes and names a tool the profile
 * may call; nothing at all once the session closed; no role tag in a
 * rendered body.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "frontend/mcp_session.h"
#include "frontend/result_render.h"
#include "policy/authz.h"
#include "policy/catalog.h"
#include "policy/load.h"

static const char fuzz_policy[] =
	"{\"sallyport\":1,\"server\":{\"name\":\"fuzz\"},"
	"\"limits\":{\"max_inflight\":3,\"calls_per_session\":20},"
	"\"credentials\":{\"tok\":{\"type\":\"bearer\",\"file\":\"/x/tok\"}},"
	"\"targets\":{\"api\":{\"type\":\"http\","
	"\"base_url\":\"http://127.0.0.1:8080\",\"credential\":\"tok\"}},"
	"\"tools\":[{\"name\":\"get_item\",\"description\":\"Read.\","
	"\"target\":\"api\",\"scope\":\"read\",\"http\":{\"method\":\"GET\","
	"\"path\":\"/items/{id}\"},\"params\":{\"id\":{\"type\":\"integer\"}}},"
	"{\"name\":\"put_item\",\"description\":\"Write.\",\"target\":\"api\","
	"\"scope\":\"write\",\"http\":{\"method\":\"PUT\",\"path\":\"/i/{n}\"},"
	"\"params\":{\"n\":{\"type\":\"string\",\"maxLength\":40}}}],"
	"\"profiles\":{\"default\":{\"scopes\":[\"read\"]}}}";

static void
fuzz_check_line(const struct mcp_item *it)
{
	cJSON *j, *body;

	/* One line without its '\n': the writer adds it. */
	if (it->len == 0 || it->len >= RESULT_LINE_MAX ||
	    memchr(it->data, '\n', it->len) != NULL)
		abort();
	j = cJSON_ParseWithLength((const char *)it->data, it->len);
	if (j == NULL)
		abort();
	body = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j,
	    "result"), "structuredContent"), "http"), "body");
	if (cJSON_IsString(body) && strchr(body->valuestring, '<') != NULL &&
	    (strcasestr(body->valuestring, "<system>") != NULL ||
	    strcasestr(body->valuestring, "</system>") != NULL))
		abort();
	cJSON_Delete(j);
}

/* Answers an action with the frame as its body. */
static void
fuzz_answer(struct mcp_session *s, const struct policy *p, const uint8_t *data,
    size_t len, const struct mcp_item *it, struct mcp_output *out)
{
	struct record_limits limits;
	struct record_action a;
	struct record_cancel c;
	struct record_result r;

	record_limits_default(&limits);
	if (record_cancel_decode(it->data, it->len, &c) == RECORD_OK)
		return;
	if (record_action_decode(it->data, it->len, &limits, &a) != RECORD_OK ||
	    a.tool_index >= p->tool_count ||
	    !policy_authorize(&p->profiles[0], &p->tools[a.tool_index], NULL))
		abort();
	memset(&r, 0, sizeof(r));
	r.call_id = a.call_id;
	r.outcome = (enum record_outcome)(1 + len % 5);
	r.kind = RECORD_RESULT_HTTP;
	r.http.status = 200;
	r.http.body.ptr = (uint8_t *)data;
	r.http.body.len = len;
	r.http.body_total = len;
	record_action_free(&a);
	if (len % 3 != 0 && !mcp_session_handle_result(s, &r, out))
		abort();
}

static void
fuzz_check(struct mcp_session *s, const struct policy *p, const uint8_t *data,
    size_t len, struct mcp_output *out, bool was_closed)
{
	size_t i, n = out->count, lines = 0;

	if (was_closed && n > 0)
		abort();
	for (i = 0; i < n; i++) {
		if (out->items[i].kind == MCP_ITEM_LINE) {
			fuzz_check_line(&out->items[i]);
			lines++;
		} else if (out->items[i].kind == MCP_ITEM_EXECUTOR)
			fuzz_answer(s, p, data, len, &out->items[i], out);
	}
	if (lines > 1)
		abort();
	for (i = n; i < out->count; i++)
		if (out->items[i].kind == MCP_ITEM_LINE)
			fuzz_check_line(&out->items[i]);
}

static struct mcp_session *
fuzz_session(struct policy **pp)
{
	struct policy_diags diags;
	struct mcp_session_config cfg;
	struct mcp_session *s;
	size_t len;

	memset(&diags, 0, sizeof(diags));
	*pp = policy_load("fuzz", fuzz_policy, sizeof(fuzz_policy) - 1, &diags);
	policy_diags_free(&diags);
	if (*pp == NULL)
		abort();
	cfg.policy = *pp;
	cfg.profile = &(*pp)->profiles[0];
	cfg.catalog_json = policy_catalog_render(*pp, cfg.profile, &len);
	cfg.catalog_len = len;
	cfg.server_version = "fuzz";
	s = mcp_session_new(&cfg);
	free((char *)cfg.catalog_json);
	if (s == NULL)
		abort();
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_output out = { NULL, 0, 0 };
	struct policy *p;
	struct mcp_session *s = fuzz_session(&p);
	const uint8_t *nl, *end = data + size;
	uint64_t frame_no = 0;
	bool was_closed;

	while (data < end) {
		nl = memchr(data, '\n', (size_t)(end - data));
		if (nl == NULL)
			nl = end;
		was_closed = mcp_session_should_close(s);
		if (!mcp_session_handle_frame(s, data, (size_t)(nl - data),
		    ++frame_no, &out))
			abort();
		fuzz_check(s, p, data, (size_t)(nl - data), &out, was_closed);
		mcp_output_clear(&out);
		data = nl + 1;
	}
	if (!mcp_session_executor_lost(s, &out))
		abort();
	mcp_output_clear(&out);
	mcp_session_free(s);
	policy_free(p);
	return 0;
}
