#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/hash.h"
#include "policy/catalog.h"
#include "tests/unit/session_fixture.h"

#define ISSUER_DATA "\"data\":{\"issuer\":\"sallyport/test-gw\"}"

static struct harness h;

static void
setup(void)
{
	harness_start(&h, NULL);
}

static void
teardown(void)
{
	harness_end(&h);
}

TestSuite(lifecycle, .init = setup, .fini = teardown);

static cJSON *
parse_line(const char *line)
{
	cJSON *j = cJSON_Parse(line);

	cr_assert_not_null(j, "line is JSON: %s", line);
	return j;
}

static const char *
result_string(const cJSON *root, const char *key)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "result");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);

	cr_assert(cJSON_IsString(v), "result.%s is a string", key);
	return v->valuestring;
}

static void
initialize_with(const char *version, const char *want)
{
	char *f = NULL;
	cJSON *j;

	cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
	    "\"capabilities\":{}}}", version) > 0);
	harness_feed(&h, f);
	free(f);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	j = parse_line(harness_line(&h, 0));
	cr_assert_str_eq(result_string(j, "protocolVersion"), want);
	cJSON_Delete(j);
}

Test(lifecycle, initialize_answers_capabilities_and_server_info)
{
	static const char want[] = "{\"jsonrpc\":\"2.0\",\"id\":0,"
	    "\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
	    "{\"tools\":{\"listChanged\":false}},\"serverInfo\":{\"name\":"
	    "\"test-gw\",\"version\":\"0.1-test\"},\"instructions\":\"";
	const char *line;

	initialize_with("2025-11-25", "2025-11-25");
	line = harness_line(&h, 0);
	cr_assert(strncmp(line, want, strlen(want)) == 0, "got %s", line);
}

Test(lifecycle, previous_version_is_kept)
{
	initialize_with("2025-06-18", "2025-06-18");
}

Test(lifecycle, other_versions_get_the_latest)
{
	initialize_with("2024-11-05", "2025-11-25");
}

Test(lifecycle, unsupported_batching_version_gets_the_latest)
{
	initialize_with("2025-03-26", "2025-11-25");
}

Test(lifecycle, initialize_without_version_is_invalid_params)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":20251125}}");
	cr_assert(strstr(harness_line(&h, 0), "\"code\":-32602") != NULL);
	harness_clear(&h);
	initialize_with("2025-11-25", "2025-11-25");
}

Test(lifecycle, ping_before_initialize_is_answered)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	cr_assert_str_eq(harness_line(&h, 0),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
}

Test(lifecycle, requests_before_initialize_are_refused)
{
	char *call = harness_call_frame("2", "get_item", "{\"id\":5}");

	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	harness_feed(&h, call);
	free(call);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 2);
	cr_assert_str_eq(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"error\":{\"code\":-32600,\"message\":\"Invalid Request: send "
	    "initialize first\"," ISSUER_DATA "}}");
	cr_assert(strstr(harness_line(&h, 1), "\"id\":2,\"error\":"
	    "{\"code\":-32600,") != NULL);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert_not(mcp_session_should_close(h.s));
}

Test(lifecycle, second_initialize_is_refused_and_session_goes_on)
{
	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
	cr_assert_str_eq(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"error\":{\"code\":-32600,\"message\":\"Invalid Request: the "
	    "session is already initialized\"," ISSUER_DATA "}}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}");
	cr_assert_str_eq(harness_line(&h, 1),
	    "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}");
}

Test(lifecycle, unknown_methods_get_32601_before_and_after_initialize)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/list\"}");
	cr_assert(strstr(harness_line(&h, 0), "\"id\":1,\"error\":"
	    "{\"code\":-32601,") != NULL);
	harness_clear(&h);
	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":"
	    "\"prompts/get\",\"params\":{}}");
	cr_assert_str_eq(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":"
	    "\"x\",\"error\":{\"code\":-32601,\"message\":\"Method not "
	    "found\"," ISSUER_DATA "}}");
}

Test(lifecycle, notifications_never_get_a_reply)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	    "initialized\"}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	    "whatever\",\"params\":{\"a\":1}}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	    "cancelled\",\"params\":{\"requestId\":77}}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":1}}}");
	cr_assert_eq(h.out.count, 0, "no line, no record, no audit");
}

Test(lifecycle, responses_from_the_client_are_ignored)
{
	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":-1,\"message\":\"m\"}}");
	cr_assert_eq(h.out.count, 0);
}

static void
expect_ping_echo(const char *id_text)
{
	char *f = NULL, *want = NULL;

	cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"ping\"}", id_text) > 0);
	cr_assert(asprintf(&want, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{}}", id_text) > 0);
	harness_clear(&h);
	harness_feed(&h, f);
	cr_assert_str_eq(harness_line(&h, 0), want);
	free(f);
	free(want);
}

Test(lifecycle, ids_are_echoed_with_their_type)
{
	expect_ping_echo("\"1\"");
	expect_ping_echo("1");
	expect_ping_echo("0");
	expect_ping_echo("-7");
	expect_ping_echo("9007199254740991");
	expect_ping_echo("-9007199254740991");
	expect_ping_echo("\"\"");
	expect_ping_echo("\"a\\\"b\\n$(id) %2e%2e \xc3\xa9\xe2\x82\xac\"");
}

/* A readable id that cannot serve is still echoed: the request settles. */
Test(lifecycle, unusable_number_ids_are_invalid_requests_echoing_the_id)
{
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1.5,"
	    "\"method\":\"ping\"}");
	cr_assert(strstr(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":"
	    "1.5,\"error\":{\"code\":-32600,") == harness_line(&h, 0), "%s",
	    harness_line(&h, 0));
}

/* No logging capability is declared, so setLevel is not a method here. */
Test(lifecycle, set_level_is_not_a_method)
{
	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":\"warning\"}}");
	cr_assert(strstr(harness_line(&h, 0), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"error\":{\"code\":-32601,") == harness_line(&h, 0), "%s",
	    harness_line(&h, 0));
	cr_assert_null(strstr(harness_line(&h, 0), "\"result\""));
}

/* No cursor is ever handed out, so none a client sends is valid. */
Test(lifecycle, tools_list_refuses_any_cursor)
{
	static const char *const cursors[] = { "\"x\"", "\"\"", "0", "null",
	    "\"-1 $(id) %2e%2e \\\"\\n \xc3\xa9\"" };
	size_t i;
	char *f = NULL;

	harness_open(&h);
	for (i = 0; i < sizeof(cursors) / sizeof(cursors[0]); i++) {
		cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"tools/list\",\"params\":{\"cursor\":%s}}",
		    i + 1, cursors[i]) > 0);
		harness_feed(&h, f);
		free(f);
		cr_assert(strstr(harness_line(&h, i), "\"error\":{\"code\":"
		    "-32602,") != NULL, "%s: %s", cursors[i],
		    harness_line(&h, i));
		cr_assert_null(strstr(harness_line(&h, i), "get_item"));
	}
}

Test(lifecycle, tools_list_is_the_profile_catalog)
{
	const struct policy_profile *p = &h.policy->profiles[0];
	char *catalog, *want = NULL;
	size_t len;

	harness_open(&h);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":"
	    "\"tools/list\",\"params\":{}}");
	catalog = policy_catalog_render(h.policy, p, &len);
	cr_assert(asprintf(&want, "{\"jsonrpc\":\"2.0\",\"id\":\"L\","
	    "\"result\":%s}", catalog) > 0);
	cr_assert_str_eq(harness_line(&h, 0), want);
	cr_assert(strstr(want, "\"get_item\"") != NULL);
	cr_assert(strstr(want, "\"echo_text\"") != NULL);
	cr_assert(strstr(want, "create_item") == NULL, "write is not granted");
	free(want);
	free(catalog);
}
