/*
 * The cases from the article Sallyport grew from, run through the whole
 * wire layer (frame reader, strict JSON, JSON-RPC) as the frontend does.
 */
#include "config.h"

#include <string.h>

#include <criterion/criterion.h>

#include "tests/unit/wire_pipeline.h"

#define MAX_EVENTS 16
#define LIMIT 256

#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

static void
assert_request(const struct wire_event *ev, uint64_t number, const char *id,
    const char *method)
{
	cr_assert_eq(ev->frame, FRAME_OK, "frame %llu: %s",
	    (unsigned long long)number, ev->reason);
	cr_assert_eq(ev->number, number);
	cr_assert_eq(ev->kind, JSONRPC_REQUEST, "frame %llu: %s",
	    (unsigned long long)number, ev->reason);
	cr_assert_str_eq(ev->id, id);
	cr_assert_str_eq(ev->method, method);
}

static void
assert_answered(const struct wire_event *ev, uint64_t number, int code,
    const char *id)
{
	cr_assert_eq(ev->frame, FRAME_OK);
	cr_assert_eq(ev->number, number);
	cr_assert_eq(ev->kind, JSONRPC_INVALID, "frame %llu accepted",
	    (unsigned long long)number);
	cr_assert_eq(ev->code, code, "frame %llu: %s",
	    (unsigned long long)number, ev->reason);
	cr_assert_str_eq(ev->id, id);
}

Test(article, debug_line_before_a_valid_request)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str("DEBUG: server starting (pid 4242)\n" PING "\n",
	    0, LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 2);
	assert_answered(&ev[0], 1, JSONRPC_PARSE_ERROR, "null");
	cr_assert_eq(ev[0].json_offset, 0);
	assert_request(&ev[1], 2, "1", "ping");
	cr_assert_eq(ev[1].offset, 34);
	wire_events_free(ev, n);
}

Test(article, valid_request_followed_by_a_banner_on_the_same_line)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str(PING "Server ready on stdio\n", 0, LIMIT, ev,
	    MAX_EVENTS);

	cr_assert_eq(n, 1);
	assert_answered(&ev[0], 1, JSONRPC_PARSE_ERROR, "null");
	cr_assert_eq(ev[0].json_offset, strlen(PING));
	wire_events_free(ev, n);
}

Test(article, truncated_json_then_end_of_input)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str(PING "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"meth",
	    0, LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 2);
	assert_request(&ev[0], 1, "1", "ping");
	cr_assert_eq(ev[1].frame, FRAME_TRUNCATED);
	cr_assert_eq(ev[1].number, 2);
	cr_assert_eq(ev[1].offset, strlen(PING) + 1);
	cr_assert_null(ev[1].id);	/* never parsed, never echoed */
	wire_events_free(ev, n);
}

Test(article, truncated_json_then_newline)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str("{\"jsonrpc\":\"2.0\",\"id\":2,\n", 0, LIMIT,
	    ev, MAX_EVENTS);

	cr_assert_eq(n, 1);
	assert_answered(&ev[0], 1, JSONRPC_PARSE_ERROR, "null");
	wire_events_free(ev, n);
}

Test(article, two_objects_joined_without_a_newline)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str(PING PING "\n", 0, LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 1);
	assert_answered(&ev[0], 1, JSONRPC_PARSE_ERROR, "null");
	cr_assert_eq(ev[0].json_offset, strlen(PING));
	wire_events_free(ev, n);
}

Test(article, valid_method_with_malformed_params)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str(
	    "{\"jsonrpc\":\"2.0\",\"id\":\"c-7\",\"method\":\"tools/call\","
	    "\"params\":\"{\\\"name\\\":\\\"get_item\\\"}\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",}}\n", 0, LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 2);
	assert_answered(&ev[0], 1, JSONRPC_INVALID_REQUEST, "\"c-7\"");
	assert_answered(&ev[1], 2, JSONRPC_PARSE_ERROR, "null");
	wire_events_free(ev, n);
}

Test(article, null_message)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str("null\n", 0, LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 1);
	assert_answered(&ev[0], 1, JSONRPC_INVALID_REQUEST, "null");
	wire_events_free(ev, n);
}

Test(article, jsonrpc_1_0)
{
	struct wire_event ev[MAX_EVENTS];
	size_t n = wire_run_str(
	    "{\"jsonrpc\":\"1.0\",\"id\":0,\"method\":\"initialize\"}\n", 0,
	    LIMIT, ev, MAX_EVENTS);

	cr_assert_eq(n, 1);
	assert_answered(&ev[0], 1, JSONRPC_INVALID_REQUEST, "0");
	wire_events_free(ev, n);
}

Test(article, over_long_line_then_a_valid_one)
{
	char text[2 * LIMIT];
	struct wire_event ev[MAX_EVENTS];
	size_t n;

	memset(text, 0, sizeof(text));
	memset(text, '[', LIMIT + 40);
	strcat(text, "\n" PING "\n");
	n = wire_run_str(text, 0, LIMIT, ev, MAX_EVENTS);
	cr_assert_eq(n, 2);
	cr_assert_eq(ev[0].frame, FRAME_TOO_LONG);
	cr_assert_eq(ev[0].error_offset, LIMIT);
	assert_request(&ev[1], 2, "1", "ping");
	cr_assert_eq(ev[1].offset, LIMIT + 41);
	wire_events_free(ev, n);
}

static const char session[] =
	"DEBUG: hello\n"
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	"\"params\":{\"clientInfo\":{\"name\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}}}\r\n"
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	PING "Server ready\n"
	"null\n"
	"{\"jsonrpc\":\"1.0\",\"id\":\"x\",\"method\":\"ping\"}\n"
	"{\"jsonrpc\":\"2.0\",\"id\":\"$() %2e%2e\",\"method\":\"tools/list\"}\n"
	"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"a\":1,";

Test(article, one_byte_at_a_time_gives_the_same_result_as_one_feed)
{
	struct wire_event whole[MAX_EVENTS], bytewise[MAX_EVENTS];
	size_t n, m, i;

	n = wire_run_str(session, 0, LIMIT, whole, MAX_EVENTS);
	m = wire_run_str(session, 1, LIMIT, bytewise, MAX_EVENTS);
	cr_assert_eq(n, 8);
	assert_request(&whole[1], 2, "0", "initialize");
	cr_assert_eq(whole[2].kind, JSONRPC_NOTIFICATION);
	assert_request(&whole[6], 7, "\"$() %2e%2e\"", "tools/list");
	cr_assert_eq(whole[7].frame, FRAME_TRUNCATED);
	cr_assert_eq(m, n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(bytewise[i].frame, whole[i].frame);
		cr_assert_eq(bytewise[i].number, whole[i].number);
		cr_assert_eq(bytewise[i].offset, whole[i].offset);
		cr_assert_eq(bytewise[i].error_offset, whole[i].error_offset);
		cr_assert_eq(bytewise[i].kind, whole[i].kind);
		cr_assert_eq(bytewise[i].code, whole[i].code);
		cr_assert_eq(bytewise[i].reason, whole[i].reason);
		if (whole[i].id != NULL)
			cr_assert_str_eq(bytewise[i].id, whole[i].id);
		if (whole[i].method != NULL)
			cr_assert_str_eq(bytewise[i].method, whole[i].method);
	}
	wire_events_free(whole, n);
	wire_events_free(bytewise, m);
}
