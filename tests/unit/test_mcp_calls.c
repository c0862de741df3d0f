#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/catalog.h"
#include "tests/unit/session_fixture.h"

static struct harness h;

static void
setup(void)
{
	harness_start(&h, NULL);
	harness_open(&h);
}

static void
teardown(void)
{
	harness_end(&h);
}

TestSuite(calls, .init = setup, .fini = teardown);

static void
call(const char *id, const char *tool, const char *args)
{
	char *f = harness_call_frame(id, tool, args);

	harness_feed(&h, f);
	free(f);
}

/* structuredContent of the n-th line, checked against its text block. */
static cJSON *
structured(size_t n, bool *is_error)
{
	cJSON *root = cJSON_Parse(harness_line(&h, n));
	cJSON *res, *sc, *text, *copy, *block;

	cr_assert_not_null(root);
	res = cJSON_GetObjectItemCaseSensitive(root, "result");
	sc = cJSON_DetachItemFromObjectCaseSensitive(res, "structuredContent");
	cr_assert_not_null(sc, "line %zu has structuredContent", n);
	block = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res,
	    "content"), 0);
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(block,
	    "type")->valuestring, "text");
	text = cJSON_GetObjectItemCaseSensitive(block, "text");
	copy = cJSON_Parse(text->valuestring);
	cr_assert(cJSON_Compare(copy, sc, true), "text block is the same JSON");
	cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(res,
	    "content")), 1);
	*is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res,
	    "isError"));
	cJSON_Delete(copy);
	cJSON_Delete(root);
	return sc;
}

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
sc_string(const cJSON *sc, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(sc, key);

	cr_assert(cJSON_IsString(v), "%s is a string", key);
	return v->valuestring;
}

/* structuredContent of the n-th line, an error result with this outcome;
 * the caller deletes it. */
static cJSON *
error_result(size_t n, const char *outcome)
{
	bool is_error = false;
	cJSON *sc = structured(n, &is_error);

	cr_assert(is_error, "line %zu is an error result", n);
	cr_assert_str_eq(sc_string(sc, "outcome"), outcome);
	return sc;
}

/* The session ends and a fresh one opens under limits. */
static void
harness_restart(const struct harness_limits *limits)
{
	harness_end(&h);
	harness_start(&h, limits);
	harness_open(&h);
}

static void
feed_result(uint64_t call_id, enum record_outcome outcome, uint32_t flags)
{
	struct record_result r;

	memset(&r, 0, sizeof(r));
	r.call_id = call_id;
	r.outcome = outcome;
	r.flags = flags;
	r.duration_us = 1500;
	cr_assert(mcp_session_handle_result(h.s, &r, &h.out));
}

Test(calls, a_valid_call_sends_one_action_record)
{
	struct record_action a;
	uint8_t fp[HASH_SHA256_LEN];

	call("\"c-1\"", "get_item", "{\"id\":42}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	harness_action(&h, 0, &a);
	cr_assert_eq(a.tool_index, TOOL_GET_ITEM);
	cr_assert(policy_catalog_fingerprint(h.policy, fp));
	cr_assert_eq(memcmp(a.fingerprint, fp, sizeof(fp)), 0);
	cr_assert_eq(a.arg_count, 1);
	cr_assert_eq(a.args[0].kind, VALUE_INTEGER);
	cr_assert_eq(a.args[0].u.integer, 42);
	cr_assert_eq(mcp_session_inflight(h.s), 1);
	record_action_free(&a);
}

Test(calls, string_arguments_arrive_byte_for_byte)
{
	static const char text[] = "say \"hi\"\nthen $(reboot) `id` ../%2e%2e "
	    "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";
	struct record_action a;

	call("1", "echo_text", "{\"text\":\"say \\\"hi\\\"\\nthen $(reboot) "
	    "`id` ../%2e%2e \xc3\xa9\xe6\x97\xa5\\ud83d\\ude00\"}");
	harness_action(&h, 0, &a);
	cr_assert_eq(a.tool_index, TOOL_ECHO_TEXT);
	cr_assert_eq(a.args[0].kind, VALUE_STRING);
	cr_assert_eq(a.args[0].u.str.len, sizeof(text) - 1);
	cr_assert_eq(memcmp(a.args[0].u.str.ptr, text, sizeof(text) - 1), 0);
	record_action_free(&a);
}

Test(calls, arguments_as_a_json_string_are_parsed_once)
{
	struct record_action a;

	call("2", "get_item", "\"{\\\"id\\\":7}\"");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	harness_action(&h, 0, &a);
	cr_assert_eq(a.args[0].u.integer, 7);
	record_action_free(&a);
}

Test(calls, each_call_gets_its_own_call_id)
{
	struct record_action a, b;

	call("1", "get_item", "{\"id\":1}");
	call("\"1\"", "get_item", "{\"id\":2}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 2,
	    "\"1\" and 1 are different ids");
	harness_action(&h, 0, &a);
	harness_action(&h, 1, &b);
	cr_assert_neq(a.call_id, b.call_id);
	record_action_free(&a);
	record_action_free(&b);
}

Test(calls, unknown_tool_is_32602_listing_the_profile_tools)
{
	call("3", "drop_tables", "{}");
	cr_assert_str_eq(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"error\":{\"code\":-32602,\"message\":\"Invalid params: no such "
	    "tool; available tools: get_item, echo_text\",\"data\":{\"issuer\":"
	    "\"sallyport/test-gw\"}}}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert_not(mcp_session_should_close(h.s));
}

Test(calls, call_without_a_usable_name_is_32602)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":7}}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\"}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":[\"get_item\"]}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 3);
	cr_assert(strstr(harness_line(&h, 0), "-32602") != NULL);
	cr_assert(strstr(harness_line(&h, 1), "available tools: get_item, "
	    "echo_text") != NULL);
	cr_assert(strstr(harness_line(&h, 2), "\"id\":6,\"error\":{\"code\":"
	    "-32602") != NULL);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
}

static void
expect_invalid(const char *tool, const char *args, const char *needle)
{
	struct record_audit_event ev;
	cJSON *sc;

	harness_clear(&h);
	call("\"bad\"", tool, args);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0, "%s", args);
	sc = error_result(0, "invalid");
	cr_assert_str_eq(sc_string(sc, "issuer"), "sallyport/test-gw");
	cr_assert(strstr(sc_string(sc, "message"), needle) != NULL,
	    "%s: message %s", args, sc_string(sc, "message"));
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "invalid-arguments");
	record_audit_event_free(&ev);
	cJSON_Delete(sc);
}

Test(calls, bad_arguments_are_an_invalid_result_and_no_record)
{
	expect_invalid("get_item", "{\"id\":\"1; $(reboot)\"}", "id");
	expect_invalid("get_item", "{\"id\":0}", "id");
	expect_invalid("get_item", "{}", "id");
	expect_invalid("get_item", "{\"id\":1,\"x\\\"y\\n\":2}", "Invalid "
	    "arguments for get_item");
	expect_invalid("get_item", "[1]", "get_item");
	expect_invalid("echo_text", "{\"text\":\"\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\",\"text2\":1}", "text2");
}

/* Review F2 and F3: input the contract calls malformed never runs. */
Test(calls, strict_json_and_exact_integers_inside_arguments)
{
	expect_invalid("get_item", "\"\\ufeff\\u0001{\\\"id\\\":012}"
	    "\\u0002\"", "arguments: must be an object; the string given is "
	    "not strict JSON");
	expect_invalid("get_item", "\"{\\\"id\\\": 5.}\"", "not strict JSON");
	expect_invalid("get_item", "\"{\\\"id\\\":7,\\\"id\\\":7}\"",
	    "not strict JSON");
	expect_invalid("get_item", "{\"id\":9007199254740993}",
	    "id: must be a whole number");
	expect_invalid("get_item", "{\"id\":0.99999999999999999}",
	    "id: must be a whole number");
}

Test(calls, a_tool_outside_the_profile_is_denied_naming_the_scope)
{
	struct record_audit_event ev;
	cJSON *sc;

	call("8", "create_item", "{\"name\":\"x\",\"qty\":2}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	sc = error_result(0, "denied");
	cr_assert_str_eq(sc_string(sc, "message"), "create_item needs scope "
	    "\"write\", which profile \"default\" does not grant");
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "scope-denied");
	record_audit_event_free(&ev);
	cJSON_Delete(sc);
}

Test(calls, a_duplicate_in_flight_id_is_refused)
{
	call("\"dup\"", "get_item", "{\"id\":1}");
	call("\"dup\"", "get_item", "{\"id\":2}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	cr_assert_str_eq(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":"
	    "\"dup\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request: "
	    "this id is already in flight\",\"data\":{\"issuer\":"
	    "\"sallyport/test-gw\"}}}");
	harness_clear(&h);
	feed_result(1, RECORD_OUTCOME_OK, RESULT_STARTED);
	call("\"dup\"", "get_item", "{\"id\":3}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1,
	    "answered ids may be used again");
}

Test(calls, results_may_come_out_of_order)
{
	bool is_error = true;
	cJSON *sc;

	call("10", "get_item", "{\"id\":1}");
	call("\"ten\"", "get_item", "{\"id\":2}");
	harness_clear(&h);
	feed_result(2, RECORD_OUTCOME_OK, RESULT_STARTED);
	feed_result(1, RECORD_OUTCOME_FAILED, 0);
	cr_assert(starts_with(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":"
	    "\"ten\","));
	cr_assert(starts_with(harness_line(&h, 1),
	    "{\"jsonrpc\":\"2.0\",\"id\":10,"));
	sc = structured(0, &is_error);
	cr_assert_not(is_error);
	cr_assert_str_eq(sc_string(sc, "outcome"), "ok");
	cJSON_Delete(sc);
	sc = error_result(1, "failed");
	cJSON_Delete(sc);
	cr_assert_eq(mcp_session_inflight(h.s), 0);
}

Test(calls, a_result_for_no_call_in_flight_says_nothing)
{
	feed_result(99, RECORD_OUTCOME_OK, 0);
	cr_assert_eq(h.out.count, 0);
}

static void
cancel(const char *request_id)
{
	char *f = NULL;

	cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%s,"
	    "\"reason\":\"user \\\"stop\\\"\"}}", request_id) > 0);
	harness_feed(&h, f);
	free(f);
}

static void
check_cancel_record(size_t n, uint64_t call_id)
{
	const struct mcp_item *it = harness_item(&h, MCP_ITEM_EXECUTOR, n);
	struct record_cancel c;

	cr_assert_not_null(it);
	cr_assert_eq(record_cancel_decode(it->data, it->len, &c), RECORD_OK);
	cr_assert_eq(c.call_id, call_id);
}

static void
check_cancellation_audit(size_t n, uint64_t call_id, bool started)
{
	struct record_audit_event ev;

	harness_audit(&h, n, &ev);
	cr_assert_eq(ev.kind, RECORD_AUDIT_CANCELLATION);
	cr_assert_eq(ev.call_id, call_id);
	cr_assert_eq(ev.tool_index, TOOL_GET_ITEM);
	cr_assert_eq((ev.flags & AUDIT_STARTED) != 0, started);
	record_audit_event_free(&ev);
}

Test(calls, a_lost_client_cancels_what_runs_and_starts_nothing)
{
	static const struct harness_limits two = { "close", 2, 200, 16000 };

	harness_restart(&two);
	call("1", "get_item", "{\"id\":1}");
	call("2", "get_item", "{\"id\":2}");
	cancel("2");
	call("3", "get_item", "{\"id\":3}");	/* waits for a slot */
	harness_clear(&h);
	cr_assert(mcp_session_client_lost(h.s, &h.out));
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1,
	    "one cancel: call 2 was cancelled already");
	check_cancel_record(0, 1);
	cr_assert(mcp_session_should_close(h.s));
	cr_assert_eq(mcp_session_exit_status(h.s), MCP_EXIT_CLIENT_GONE);
	cr_assert_not(mcp_session_may_read(h.s, 0));
	harness_clear(&h);
	feed_result(1, RECORD_OUTCOME_UNKNOWN, RESULT_STARTED |
	    RESULT_REQUEST_SENT);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0, "nobody to answer");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0,
	    "the waiting call never starts");
	check_cancellation_audit(0, 1, true);
	feed_result(2, RECORD_OUTCOME_FAILED, 0);
	cr_assert_eq(mcp_session_inflight(h.s), 0);
	harness_clear(&h);
	call("4", "get_item", "{\"id\":4}");
	cr_assert_eq(h.out.count, 0, "no frame is handled any more");
}

Test(calls, a_lost_client_keeps_an_earlier_exit_status)
{
	harness_feed(&h, "{\"jsonrpc\": \xc3\xa9}");	/* on_invalid close */
	cr_assert_eq(mcp_session_exit_status(h.s), MCP_EXIT_MALFORMED);
	cr_assert(mcp_session_client_lost(h.s, &h.out));
	cr_assert_eq(mcp_session_exit_status(h.s), MCP_EXIT_MALFORMED);
}

Test(calls, cancel_sends_a_cancel_record_and_no_response_ever)
{
	call("11", "get_item", "{\"id\":1}");
	call("12", "get_item", "{\"id\":2}");
	harness_clear(&h);
	cancel("\"11\"");
	cr_assert_eq(h.out.count, 0, "\"11\" is not 11");
	cancel("11");
	cr_assert_eq(h.out.count, 1);
	check_cancel_record(0, 1);
	harness_clear(&h);
	cancel("11");
	cr_assert_eq(h.out.count, 0, "a second cancel sends nothing");
	feed_result(1, RECORD_OUTCOME_OK, RESULT_STARTED | RESULT_REQUEST_SENT);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0, "late result dropped");
	check_cancellation_audit(0, 1, true);
	harness_clear(&h);
	cancel("12");
	feed_result(2, RECORD_OUTCOME_FAILED, 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0);
	check_cancellation_audit(0, 2, false);
	cr_assert_eq(mcp_session_inflight(h.s), 0);
}

Test(calls, a_cancelled_id_may_be_used_again_at_once)
{
	call("5", "get_item", "{\"id\":1}");
	cancel("5");
	call("5", "get_item", "{\"id\":2}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 3);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 0);
	harness_clear(&h);
	feed_result(2, RECORD_OUTCOME_OK, RESULT_STARTED);
	cr_assert(starts_with(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":5,"));
	feed_result(1, RECORD_OUTCOME_OK, RESULT_STARTED);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
}

Test(calls, losing_the_executor_answers_unknown_for_each_call)
{
	bool is_error = false;
	cJSON *sc;

	call("1", "get_item", "{\"id\":1}");
	call("\"two\"", "echo_text", "{\"text\":\"x\"}");
	call("3", "get_item", "{\"id\":3}");
	cancel("3");
	harness_clear(&h);
	cr_assert(mcp_session_executor_lost(h.s, &h.out));
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 2);
	cr_assert_eq(harness_count(&h, MCP_ITEM_AUDIT), 1);
	check_cancellation_audit(0, 3, true);
	sc = error_result(0, "unknown");
	cr_assert(strstr(sc_string(sc, "message"), "check get_item's effect "
	    "before retrying") != NULL);
	cJSON_Delete(sc);
	sc = structured(1, &is_error);
	cr_assert(strstr(sc_string(sc, "message"), "check echo_text's effect")
	    != NULL);
	cJSON_Delete(sc);
	cr_assert(strstr(harness_line(&h, 1), "\"id\":\"two\",") != NULL);
	cr_assert(mcp_session_should_close(h.s));
	cr_assert_eq(mcp_session_exit_status(h.s), 70);
	cr_assert_eq(mcp_session_inflight(h.s), 0);
}

Test(calls, backpressure_stops_reading_over_the_output_bound)
{
	cr_assert(mcp_session_may_read(h.s, 0));
	cr_assert(mcp_session_may_read(h.s, MCP_OUTPUT_QUEUE_BOUND));
	cr_assert_not(mcp_session_may_read(h.s, MCP_OUTPUT_QUEUE_BOUND + 1));
}

/*
 * A full table stops reading only at the next tools/call, which waits
 * (no record, no answer) until a result frees a slot; a cancel and a ping
 * before it are handled at once.  Reading on a full table used to stop,
 * and the cancel of a running call waited for that call to end.
 */
Test(limits, max_inflight_defers_the_next_call_not_cancel_or_ping)
{
	static const struct harness_limits two = { "close", 2, 200, 16000 };
	struct record_action a;

	harness_restart(&two);
	call("1", "get_item", "{\"id\":1}");
	call("\"2\"", "get_item", "{\"id\":2}");
	cr_assert(mcp_session_may_read(h.s, 0), "2 in flight: still reading");
	harness_clear(&h);
	cancel("1");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":-7,\"method\":\"ping\"}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	check_cancel_record(0, 1);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	cr_assert_str_eq(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":-7,\"result\":{}}");
	harness_clear(&h);
	call("3", "get_item", "{\"id\":3}");
	cr_assert_eq(h.out.count, 0, "the third call waits, unanswered");
	cr_assert_not(mcp_session_may_read(h.s, 0), "a call waits: stop");
	cr_assert_eq(mcp_session_inflight(h.s), 2);
	feed_result(2, RECORD_OUTCOME_OK, RESULT_STARTED);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	cr_assert(starts_with(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"2\","));
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	harness_action(&h, 0, &a);
	cr_assert_eq(a.call_id, 3);
	cr_assert_eq(a.args[0].u.integer, 3);
	record_action_free(&a);
	cr_assert(mcp_session_may_read(h.s, 0));
	cr_assert_eq(mcp_session_inflight(h.s), 2);
	harness_clear(&h);
	feed_result(3, RECORD_OUTCOME_OK, 0);
	cr_assert(starts_with(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":3,"));
}

/* The executor ends while a call waits: it never left, so "failed". */
Test(limits, a_waiting_call_is_failed_when_the_executor_is_lost)
{
	static const struct harness_limits one = { "close", 1, 200, 16000 };
	cJSON *sc;

	harness_restart(&one);
	call("1", "get_item", "{\"id\":1}");
	call("\"w\\\"x\"", "get_item", "{\"id\":2}");
	harness_clear(&h);
	cr_assert(mcp_session_executor_lost(h.s, &h.out));
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 2);
	cr_assert(starts_with(harness_line(&h, 1),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"w\\\"x\","));
	sc = error_result(1, "failed");
	cJSON_Delete(sc);
	cr_assert_eq(mcp_session_exit_status(h.s), 70);
}

/* Only one call waits; one more, fed although may_read said no, is denied. */
Test(limits, a_second_waiting_call_is_denied_not_lost)
{
	static const struct harness_limits one = { "close", 1, 200, 16000 };
	struct record_action a;
	cJSON *sc;

	harness_restart(&one);
	call("1", "get_item", "{\"id\":1}");
	call("2", "get_item", "{\"id\":2}");
	cr_assert_not(mcp_session_may_read(h.s, 0));
	harness_clear(&h);
	call("3", "get_item", "{\"id\":3}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	sc = error_result(0, "denied");
	cr_assert(strstr(sc_string(sc, "message"), "1 calls are already "
	    "running") != NULL);
	cJSON_Delete(sc);
	harness_clear(&h);
	feed_result(1, RECORD_OUTCOME_OK, 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
	harness_action(&h, 0, &a);
	cr_assert_eq(a.args[0].u.integer, 2, "the waiting call is the one sent");
	record_action_free(&a);
}

/* Input ends (end of stream, SIGTERM) while a call waits: never sent. */
Test(limits, a_waiting_call_is_failed_when_input_ends)
{
	static const struct harness_limits one = { "close", 1, 200, 16000 };
	struct record_audit_event ev;
	cJSON *sc;

	harness_restart(&one);
	call("1", "get_item", "{\"id\":1}");
	call("\"z\u00e9\"", "get_item", "{\"id\":2}");
	harness_clear(&h);
	cr_assert(mcp_session_end_input(h.s, &h.out));
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	cr_assert(starts_with(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"z\u00e9\","));
	sc = error_result(0, "failed");
	cr_assert_str_eq(sc_string(sc, "message"), "the session ended before "
	    "this call was sent; it did not run");
	cJSON_Delete(sc);
	harness_audit(&h, 0, &ev);
	cr_assert_eq(ev.kind, RECORD_AUDIT_REJECTION);
	cr_assert_str_eq(ev.reason.ptr, "session-ended");
	record_audit_event_free(&ev);
	harness_clear(&h);
	cr_assert(mcp_session_end_input(h.s, &h.out), "a second time: nothing");
	feed_result(1, RECORD_OUTCOME_OK, 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0,
	    "the dropped call is not sent when the slot frees");
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	cr_assert_eq(mcp_session_inflight(h.s), 0);
}

Test(limits, calls_per_session_is_a_budget)
{
	static const struct harness_limits three = { "close", 4, 3, 16000 };
	struct record_audit_event ev;
	uint64_t i;
	cJSON *sc;

	harness_restart(&three);
	for (i = 1; i <= 3; i++) {
		call("1", "get_item", "{\"id\":1}");
		feed_result(i, RECORD_OUTCOME_OK, 0);
	}
	harness_clear(&h);
	call("1", "get_item", "{\"id\":1}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	sc = error_result(0, "denied");
	cr_assert_str_eq(sc_string(sc, "message"), "this session's budget of "
	    "3 calls is spent; start a new session");
	cJSON_Delete(sc);
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "budget-spent");
	record_audit_event_free(&ev);
}

Test(limits, refused_calls_spend_the_budget_too)
{
	static const struct harness_limits three = { "close", 4, 3, 16000 };
	struct record_audit_event ev;
	cJSON *sc;

	harness_restart(&three);
	call("1", "get_item", "{\"id\":\"$(id)\"}");	/* invalid */
	call("2", "create_item", "{\"name\":\"x\",\"qty\":2}"); /* scope */
	call("3", "no_such_tool", "{}");		/* -32602 */
	harness_clear(&h);
	call("4", "get_item", "{\"id\":1}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0,
	    "three refused calls spent a budget of three");
	sc = error_result(0, "denied");
	cr_assert_str_eq(sc_string(sc, "message"), "this session's budget of "
	    "3 calls is spent; start a new session");
	cJSON_Delete(sc);
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "budget-spent");
	record_audit_event_free(&ev);
	cr_assert_not(mcp_session_should_close(h.s));
}

Test(limits, calls_long_past_the_budget_close_the_session)
{
	static const struct harness_limits one = { "close", 4, 1, 16000 };
	int i;

	harness_restart(&one);
	call("0", "get_item", "{\"id\":1}");
	for (i = 1; i < MCP_OVER_BUDGET_MAX; i++)
		call("\"-x\"", "get_item", "{\"id\":1}");
	cr_assert_not(mcp_session_should_close(h.s), "%d past: still open",
	    MCP_OVER_BUDGET_MAX - 1);
	harness_clear(&h);
	call("\"-x\"", "get_item", "{\"id\":1}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1, "answered, then");
	cr_assert(mcp_session_should_close(h.s));
	cr_assert_eq(mcp_session_exit_status(h.s), MCP_EXIT_BUDGET);
	harness_clear(&h);
	call("\"-y\"", "get_item", "{\"id\":1}");
	cr_assert_eq(h.out.count, 0, "a closed session reads nothing more");
	cr_assert_eq(mcp_session_inflight(h.s), 1, "the first call still runs");
	feed_result(1, RECORD_OUTCOME_OK, 0);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1, "and is answered");
}

/* 40 tools with 60-character names: more than one message should list. */
static char *
many_tools_policy(void)
{
	char *text = NULL, *tools = calloc(40, 256), *p = tools;
	int i;

	for (i = 0; i < 40; i++)
		p += sprintf(p, "%s{\"name\":\"t%02d_%057d\",\"description\":"
		    "\"T.\",\"target\":\"api\",\"scope\":\"read\",\"http\":"
		    "{\"method\":\"GET\",\"path\":\"/\"}}", i ? "," : "", i, 0);
	cr_assert(asprintf(&text, "{\"sallyport\":1,\"server\":{\"name\":\"m\"},"
	    "\"credentials\":{\"tok\":{\"type\":\"bearer\",\"file\":\"/x\"}},"
	    "\"targets\":{\"api\":{\"type\":\"http\",\"base_url\":"
	    "\"http://127.0.0.1:1\",\"credential\":\"tok\"}},\"tools\":[%s],"
	    "\"profiles\":{\"default\":{\"scopes\":[\"read\"]}}}", tools) > 0);
	free(tools);
	return text;
}

Test(limits, the_list_of_tool_names_is_bounded)
{
	char *text = many_tools_policy();
	const char *line, *more;

	harness_end(&h);
	harness_start_policy(&h, text);
	free(text);
	harness_open(&h);
	call("1", "nope", "{}");
	line = harness_line(&h, 0);
	cr_assert_lt(strlen(line), 2048 + 256, "%zu bytes", strlen(line));
	cr_assert_not_null(strstr(line, "available tools: t00_"));
	cr_assert_null(strstr(line, "t39_"), "the last names are not shown");
	more = strstr(line, " and ");
	cr_assert_not_null(more);
	/* 2048 bytes hold the prefix and 31 names of 61 characters. */
	cr_assert_str_eq(more, " and 9 more\",\"data\":{\"issuer\":"
	    "\"sallyport/m\"}}}");
}

/* The n-th shape of ev, its compact JSON. */
static const char *
shape(const struct record_audit_event *ev, size_t n)
{
	cr_assert_gt(ev->shape_count, n);
	return ev->shapes[n].ptr;
}

Test(calls, a_refused_known_tool_names_method_tool_and_shapes_only)
{
	struct record_audit_event ev;
	size_t i;

	call("8", "create_item", "{\"zz-$(id)\":\"hidden-one\",\"name\":"
	    "\"SECRET-\xc3\xa9\\\"-$(reboot)\",\"qty\":2,\"-rf\":[1,2],"
	    "\"n\":1.5}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "scope-denied");
	cr_assert_str_eq(ev.method.ptr, "tools/call");
	cr_assert(ev.flags & AUDIT_HAS_TOOL);
	cr_assert_eq(ev.tool_index, 1, "create_item is the catalog's second");
	/* the params by the catalog's order, then what it does not declare */
	cr_assert_eq(ev.shape_count, 5);
	cr_assert_str_eq(shape(&ev, 0), "\"string(19)\"");
	cr_assert_str_eq(shape(&ev, 1), "\"integer\"");
	cr_assert_str_eq(shape(&ev, 2), "\"string(10)\"");
	cr_assert_str_eq(shape(&ev, 3), "\"array\"");
	cr_assert_str_eq(shape(&ev, 4), "\"number\"");
	for (i = 0; i < ev.shape_count; i++)
		cr_assert_null(strstr(ev.shapes[i].ptr, "SECRET"));
	record_audit_event_free(&ev);
}

Test(calls, invalid_arguments_name_the_tool_and_absent_params)
{
	struct record_audit_event ev;

	call("9", "get_item", "{}");
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "invalid-arguments");
	cr_assert(ev.flags & AUDIT_HAS_TOOL);
	cr_assert_eq(ev.tool_index, 0);
	cr_assert_eq(ev.shape_count, 1);
	cr_assert_str_eq(shape(&ev, 0), "\"absent\"");
	record_audit_event_free(&ev);
}

Test(calls, an_unknown_tool_is_a_rejection_without_a_tool)
{
	struct record_audit_event ev;

	call("10", "add_note", "{\"text\":\"private words\",\"n\":7}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert(strstr(harness_line(&h, 0), "-32602") != NULL);
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "unknown-tool");
	cr_assert_str_eq(ev.method.ptr, "tools/call");
	cr_assert_eq(ev.code, -32602);
	cr_assert_eq(ev.flags & AUDIT_HAS_TOOL, 0);
	cr_assert(ev.flags & AUDIT_HAS_SHA256);
	cr_assert_eq(ev.shape_count, 2);
	cr_assert_str_eq(shape(&ev, 0), "\"string(13)\"");
	cr_assert_str_eq(shape(&ev, 1), "\"integer\"");
	record_audit_event_free(&ev);

	/* no name at all: still refused, still audited */
	harness_clear(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":"
	    "\"tools/call\",\"params\":{\"arguments\":\"x\"}}");
	harness_audit(&h, 0, &ev);
	cr_assert_str_eq(ev.reason.ptr, "unknown-tool");
	cr_assert_eq(ev.shape_count, 1);
	cr_assert_str_eq(shape(&ev, 0), "\"string(1)\"");
	record_audit_event_free(&ev);
}

Test(calls, initialize_sends_the_client_record)
{
	struct record_audit_event ev;
	struct harness h2;

	harness_start(&h2, NULL);
	harness_feed(&h2, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"clientInfo\":{\"name\":\"claude\\u001b[2J\",\"version\":"
	    "\"2.1\"}}}");
	/* the session is opened (session-start), then the client is told */
	cr_assert_eq(harness_count(&h2, MCP_ITEM_AUDIT), 2);
	harness_audit(&h2, 1, &ev);
	cr_assert_eq(ev.kind, RECORD_AUDIT_CLIENT);
	cr_assert_str_eq(ev.method.ptr, "initialize");
	cr_assert_eq(ev.shape_count, RECORD_AUDIT_CLIENT_TEXTS);
	cr_assert_str_eq(ev.shapes[0].ptr, "claude\x1b[2J", "raw: the broker "
	    "sanitizes");
	cr_assert_str_eq(ev.shapes[1].ptr, "2.1");
	cr_assert_str_eq(ev.shapes[2].ptr, "2025-06-18");
	record_audit_event_free(&ev);
	harness_end(&h2);
}
