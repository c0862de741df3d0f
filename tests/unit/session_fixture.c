#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/authz.h"
#include "policy/catalog.h"
#include "policy/load.h"
#include "tests/unit/session_fixture.h"

static const char harness_policy_fmt[] =
	"{\"sallyport\":1,"
	"\"server\":{\"name\":\"test-gw\",\"on_invalid\":\"%s\","
	"\"sandbox\":\"best-effort\"},"
	"\"limits\":{\"max_inflight\":%d,\"calls_per_session\":%d,"
	"\"result_max_chars\":%d},"
	"\"credentials\":{\"tok\":{\"type\":\"bearer\",\"file\":\"/nonexistent/tok\"},"
	"\"key\":{\"type\":\"ssh-key\",\"private_key\":\"/nonexistent/key\"}},"
	"\"targets\":{\"api\":{\"type\":\"http\","
	"\"base_url\":\"http://127.0.0.1:8080\",\"credential\":\"tok\"},"
	"\"box\":{\"type\":\"ssh\",\"host\":\"127.0.0.1\",\"port\":2222,"
	"\"user\":\"ops\",\"credential\":\"key\",\"host_key_sha256\":"
	"\"SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\"}},"
	"\"tools\":["
	"{\"name\":\"get_item\",\"description\":\"Read one item.\","
	"\"target\":\"api\",\"scope\":\"read\","
	"\"http\":{\"method\":\"GET\",\"path\":\"/items/{id}\"},"
	"\"params\":{\"id\":{\"type\":\"integer\",\"minimum\":1}}},"
	"{\"name\":\"create_item\",\"description\":\"Create an item.\","
	"\"target\":\"api\",\"scope\":\"write\",\"mutating\":true,"
	"\"http\":{\"method\":\"POST\",\"path\":\"/items\","
	"\"body\":{\"name\":\"{name}\",\"qty\":\"{qty}\"}},"
	"\"params\":{\"name\":{\"type\":\"string\",\"maxLength\":80},"
	"\"qty\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100}}},"
	"{\"name\":\"echo_text\",\"description\":\"Echo a text.\","
	"\"target\":\"box\",\"scope\":\"read\","
	"\"ssh\":{\"argv\":[\"printf\",\"%%s\",\"{text}\"]},"
	"\"params\":{\"text\":{\"type\":\"string\",\"maxLength\":200}}}"
	"],"
	"\"profiles\":{\"default\":{\"scopes\":[\"read\"]}}}";

static const struct harness_limits harness_defaults = {
	"close", 4, 200, 16000,
};

char *
harness_policy_text(const struct harness_limits *l)
{
	char *text = NULL;

	if (l == NULL)
		l = &harness_defaults;
	cr_assert(asprintf(&text, harness_policy_fmt, l->on_invalid,
	    l->max_inflight, l->calls_per_session, l->result_max_chars) > 0);
	return text;
}

static struct policy *
harness_load(const char *text)
{
	struct policy_diags diags;
	struct policy *p;
	size_t i;

	memset(&diags, 0, sizeof(diags));
	p = policy_load("test", text, strlen(text), &diags);
	for (i = 0; p == NULL && i < diags.count; i++)
		cr_log_error("%s", diags.items[i].text);
	cr_assert_not_null(p, "the test policy must load");
	policy_diags_free(&diags);
	return p;
}

void
harness_start_policy(struct harness *h, const char *policy_text)
{
	struct mcp_session_config cfg;
	size_t len = 0;
	char *catalog;

	memset(h, 0, sizeof(*h));
	h->policy = harness_load(policy_text);
	cfg.policy = h->policy;
	cfg.profile = policy_profile_by_name(h->policy, "default");
	cr_assert_not_null(cfg.profile);
	catalog = policy_catalog_render(h->policy, cfg.profile, &len);
	cr_assert_not_null(catalog);
	cfg.catalog_json = catalog;
	cfg.catalog_len = len;
	cfg.server_version = "0.1-test";
	h->s = mcp_session_new(&cfg);
	cr_assert_not_null(h->s);
	free(catalog);
}

void
harness_start(struct harness *h, const struct harness_limits *l)
{
	char *text = harness_policy_text(l);

	harness_start_policy(h, text);
	free(text);
}

void
harness_end(struct harness *h)
{
	mcp_output_clear(&h->out);
	mcp_session_free(h->s);
	policy_free(h->policy);
	memset(h, 0, sizeof(*h));
}

void
harness_feed_len(struct harness *h, const char *frame, size_t len)
{
	static uint64_t frame_no;

	cr_assert(mcp_session_handle_frame(h->s, (const uint8_t *)frame, len,
	    ++frame_no, &h->out), "internal error on frame %s", frame);
}

void
harness_feed(struct harness *h, const char *frame)
{
	harness_feed_len(h, frame, strlen(frame));
}

void
harness_clear(struct harness *h)
{
	mcp_output_clear(&h->out);
}

void
harness_open(struct harness *h)
{
	harness_feed(h, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	harness_feed(h, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/initialized\"}");
	cr_assert_eq(harness_count(h, MCP_ITEM_LINE), 1);
	harness_clear(h);
}

size_t
harness_count(const struct harness *h, enum mcp_item_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < h->out.count; i++)
		if (h->out.items[i].kind == kind)
			n++;
	return n;
}

const struct mcp_item *
harness_item(const struct harness *h, enum mcp_item_kind kind, size_t n)
{
	size_t i;

	for (i = 0; i < h->out.count; i++)
		if (h->out.items[i].kind == kind && n-- == 0)
			return &h->out.items[i];
	return NULL;
}

const char *
harness_line(const struct harness *h, size_t n)
{
	const struct mcp_item *it = harness_item(h, MCP_ITEM_LINE, n);

	cr_assert_not_null(it, "no line %zu", n);
	cr_assert_eq(strlen((const char *)it->data), it->len,
	    "a line holds no NUL and is NUL-terminated");
	cr_assert_null(memchr(it->data, '\n', it->len),
	    "one message is one line, and the writer adds its newline");
	return (const char *)it->data;
}

void
harness_action(const struct harness *h, size_t n, struct record_action *a)
{
	const struct mcp_item *it = harness_item(h, MCP_ITEM_EXECUTOR, n);
	struct record_limits limits;

	cr_assert_not_null(it, "no executor record %zu", n);
	record_limits_default(&limits);
	cr_assert_eq(record_action_decode(it->data, it->len, &limits, a),
	    RECORD_OK, "executor record %zu is an action", n);
}

void
harness_audit(const struct harness *h, size_t n,
    struct record_audit_event *ev)
{
	const struct mcp_item *it = harness_item(h, MCP_ITEM_AUDIT, n);
	struct record_limits limits;

	cr_assert_not_null(it, "no audit record %zu", n);
	record_limits_default(&limits);
	cr_assert_eq(record_audit_event_decode(it->data, it->len, &limits, ev),
	    RECORD_OK, "audit record %zu decodes", n);
}

char *
harness_call_frame(const char *id, const char *tool, const char *args)
{
	char *f = NULL;

	cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
	    "\"arguments\":%s}}", id, tool, args) > 0);
	return f;
}
