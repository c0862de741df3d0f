#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tests/unit/session_fixture.h"

/* The article's stream failures, and a few more; each is one frame. */
static const struct hostile {
	const char *name;
	const char *frame;
	int code;
	const char *id;		/* the id the error must carry */
} hostile[] = {
	{ "debug line", "DEBUG: server starting on stdio", -32700, "null" },
	{ "banner after a valid request",
	  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	  "{\"name\":\"get_item\",\"arguments\":{\"id\":1}}} Server ready",
	  -32700, "null" },
	{ "truncated JSON",
	  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	  "{\"name\":\"get_item\",\"argu", -32700, "null" },
	{ "two joined objects",
	  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	  "{\"name\":\"get_item\",\"arguments\":{\"id\":1}}}{\"jsonrpc\":\"2.0\","
	  "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get_item\","
	  "\"arguments\":{\"id\":2}}}", -32700, "null" },
	{ "plausible method, params not a structure",
	  "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	  "\"params\":\"get_item $(reboot)\"}", -32600, "7" },
	{ "null", "null", -32600, "null" },
	{ "jsonrpc 1.0", "{\"jsonrpc\":\"1.0\",\"id\":\"q\\\"1\",\"method\":"
	  "\"ping\"}", -32600, "\"q\\\"1\"" },
	{ "batch", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	  "\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":1}}}]",
	  -32600, "null" },
	{ "empty line", "", -32700, "null" },
	/* one JSON value refused by a stricter rule: the id settles the call */
	{ "duplicate key", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	  "\"method\":\"tools/call\"}", -32600, "1" },
	{ "float id", "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}",
	  -32600, "1.0" },
	{ "\\u0000 in a tool name", "{\"jsonrpc\":\"2.0\",\"id\":\"c\\\"2 \xc3\xa9\","
	  "\"method\":\"tools/call\",\"params\":{\"name\":\"get\\u0000item\","
	  "\"arguments\":{\"id\":1}}}", -32600, "\"c\\\"2 \xc3\xa9\"" },
	{ "lone surrogate before the id", "{\"jsonrpc\":\"2.0\",\"method\":"
	  "\"tools/call\",\"params\":{\"name\":\"get_item\",\"arguments\":"
	  "{\"id\":\"\\udc00\"}},\"id\":-9}", -32600, "-9" },
	{ "\\u0000 in the id itself", "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\","
	  "\"method\":\"ping\"}", -32600, "null" },
	{ "\\u0000 then truncated", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	  "\"tools/call\",\"params\":{\"name\":\"a\\u0000", -32700, "null" },
	{ "extra member", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\","
	  "\"x\":1}", -32600, "3" },
	{ "multibyte garbage", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac\n", -32700, "null" },
};

static const char valid_call[] =
	"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
	"{\"name\":\"get_item\",\"arguments\":{\"id\":5}}}";

static void
check_one_error(const struct harness *h, const struct hostile *c)
{
	char want[128];
	const char *line;

	cr_assert_eq(harness_count(h, MCP_ITEM_LINE), 1, "%s: one line",
	    c->name);
	cr_assert_eq(harness_count(h, MCP_ITEM_EXECUTOR), 0,
	    "%s: zero records", c->name);
	line = harness_line(h, 0);
	snprintf(want, sizeof(want), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"error\":{\"code\":%d,\"message\":\"", c->id, c->code);
	cr_assert(strncmp(line, want, strlen(want)) == 0,
	    "%s: want %s..., got %s", c->name, want, line);
	cr_assert(strstr(line, "\"data\":{\"issuer\":\"sallyport/test-gw\"}")
	    != NULL, "%s: issuer in error.data", c->name);
}

static void
check_audit(const struct harness *h, const struct hostile *c)
{
	struct record_audit_event ev;
	uint8_t sha[HASH_SHA256_LEN];

	cr_assert_eq(harness_count(h, MCP_ITEM_AUDIT), 1, "%s", c->name);
	harness_audit(h, 0, &ev);
	hash_sha256(c->frame, strlen(c->frame), sha);
	cr_assert_eq(ev.kind, RECORD_AUDIT_REJECTION);
	cr_assert_eq(ev.code, c->code);
	cr_assert(ev.flags & AUDIT_HAS_SHA256);
	cr_assert_eq(memcmp(ev.sha256, sha, sizeof(sha)), 0,
	    "%s: audit holds the frame's hash", c->name);
	cr_assert_gt(ev.frame_no, 0);
	record_audit_event_free(&ev);
}

Test(malformed, each_hostile_line_closes_a_fresh_session)
{
	struct harness h;
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		harness_start(&h, NULL);
		harness_open(&h);
		harness_feed(&h, hostile[i].frame);
		check_one_error(&h, &hostile[i]);
		check_audit(&h, &hostile[i]);
		cr_assert(mcp_session_should_close(h.s), "%s", hostile[i].name);
		cr_assert_eq(mcp_session_exit_status(h.s), 65);
		cr_assert_not(mcp_session_may_read(h.s, 0));
		harness_clear(&h);
		harness_feed(&h, valid_call);
		harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
		    "\"ping\"}");
		cr_assert_eq(h.out.count, 0, "%s: nothing after is processed",
		    hostile[i].name);
		harness_end(&h);
	}
}

Test(malformed, hostile_line_before_initialize_also_closes)
{
	struct harness h;

	harness_start(&h, NULL);
	harness_feed(&h, hostile[0].frame);
	check_one_error(&h, &hostile[0]);
	cr_assert(mcp_session_should_close(h.s));
	harness_end(&h);
}

Test(malformed, with_reject_the_next_request_works_and_inherits_nothing)
{
	static const struct harness_limits reject = { "reject", 4, 200, 16000 };
	struct record_action a;
	struct harness h;
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		harness_start(&h, &reject);
		harness_open(&h);
		harness_feed(&h, hostile[i].frame);
		check_one_error(&h, &hostile[i]);
		cr_assert_not(mcp_session_should_close(h.s), "%s",
		    hostile[i].name);
		harness_clear(&h);
		/* id 7 was the rejected frame's: it is not in flight */
		harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"get_item\","
		    "\"arguments\":{\"id\":5}}}");
		cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0, "%s",
		    hostile[i].name);
		cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
		harness_action(&h, 0, &a);
		cr_assert_eq(a.tool_index, TOOL_GET_ITEM);
		cr_assert_eq(a.args[0].u.integer, 5);
		record_action_free(&a);
		harness_end(&h);
	}
}

Test(malformed, frames_the_reader_refused_close_without_a_hash)
{
	struct record_audit_event ev;
	struct frame f;
	struct harness h;

	harness_start(&h, NULL);
	harness_open(&h);
	memset(&f, 0, sizeof(f));
	f.status = FRAME_TOO_LONG;
	f.number = 3;
	f.error_offset = 1048577;
	f.reason = "line longer than max_frame_bytes";
	cr_assert(mcp_session_handle_bad_frame(h.s, &f, &h.out));
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	cr_assert(strstr(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32700,") == harness_line(&h, 0), "%s",
	    harness_line(&h, 0));
	harness_audit(&h, 0, &ev);
	cr_assert_eq(ev.frame_no, 3);
	cr_assert_str_eq(ev.reason.ptr, "bad-frame");
	cr_assert_eq(ev.flags & AUDIT_HAS_SHA256, 0);
	record_audit_event_free(&ev);
	cr_assert_eq(mcp_session_exit_status(h.s), 65);
	harness_end(&h);
}

/*
 * A byte stream through the real frame reader, as the frontend's loop
 * feeds it: returns how many action records the session sent.
 */
static size_t
run_stream(struct harness *h, const char *stream, size_t len,
    size_t max_frame)
{
	struct frame_reader r;
	struct frame f;
	size_t actions;

	cr_assert(frame_reader_init(&r, max_frame));
	frame_reader_feed(&r, stream, len);
	/* Frames after a close are still fed: the session must ignore them. */
	while (frame_reader_next(&r, &f)) {
		if (f.status == FRAME_OK)
			harness_feed_len(h, (const char *)f.bytes, f.len);
		else
			cr_assert(mcp_session_handle_bad_frame(h->s, &f,
			    &h->out));
	}
	if (frame_reader_finish(&r, &f))
		cr_assert(mcp_session_handle_bad_frame(h->s, &f, &h->out));
	frame_reader_free(&r);
	actions = harness_count(h, MCP_ITEM_EXECUTOR);
	return actions;
}

#define INIT_LINE "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"," \
	"\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n"
#define CALL_LINE "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
	"\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":1}}}\n"

static void
expect_stream_closes(const char *name, const char *bad, size_t bad_len)
{
	char stream[4096];
	size_t n = 0;
	struct harness h;

	memcpy(stream + n, INIT_LINE, strlen(INIT_LINE)), n += strlen(INIT_LINE);
	memcpy(stream + n, bad, bad_len), n += bad_len;
	memcpy(stream + n, CALL_LINE, strlen(CALL_LINE)), n += strlen(CALL_LINE);
	harness_start(&h, NULL);
	cr_assert_eq(run_stream(&h, stream, n, 256), 0, "%s", name);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 2, "%s: init + error",
	    name);
	/* initialize's "opened" and client events, then the rejection */
	cr_assert_eq(harness_count(&h, MCP_ITEM_AUDIT), 3, "%s", name);
	cr_assert(strstr(harness_line(&h, 1), "\"id\":null,\"error\":") != NULL,
	    "%s: %s", name, harness_line(&h, 1));
	cr_assert_eq(mcp_session_exit_status(h.s), 65, "%s", name);
	harness_end(&h);
}

#define BYTES(lit) (lit), sizeof(lit) - 1

Test(stream, every_stream_failure_closes_before_the_next_call)
{
	char longline[400];

	memset(longline, ' ', sizeof(longline));
	longline[sizeof(longline) - 1] = '\n';
	expect_stream_closes("debug line", BYTES("debug: hello\n"));
	expect_stream_closes("invalid UTF-8", BYTES("{\"jsonrpc\":\"2.0\","
	    "\"id\":1,\"method\":\"p\xc3\x28\"}\n"));
	expect_stream_closes("NUL", BYTES("{\"jsonrpc\":\"2.0\"\0}\n"));
	expect_stream_closes("over-long line", longline, sizeof(longline));
	expect_stream_closes("CR only line", BYTES("\r\n"));
}

Test(stream, truncated_json_then_end_of_input_is_one_error)
{
	static const char stream[] = INIT_LINE
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"get_item\",\"arguments\":{\"id\":1}}";
	struct harness h;

	harness_start(&h, NULL);
	cr_assert_eq(run_stream(&h, stream, sizeof(stream) - 1, 1024), 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 2);
	cr_assert(strstr(harness_line(&h, 1), "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32700,") == harness_line(&h, 1));
	harness_end(&h);
}

Test(stream, one_complete_valid_request_executes_exactly_once)
{
	static const char stream[] = INIT_LINE
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	    CALL_LINE;
	struct harness h;

	harness_start(&h, NULL);
	cr_assert_eq(run_stream(&h, stream, sizeof(stream) - 1, 1024), 1);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1, "only initialize "
	    "is answered until the result comes");
	cr_assert_not(mcp_session_should_close(h.s));
	harness_end(&h);
}
