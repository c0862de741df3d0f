/*
 * The 2026-07-28 era beside 2025-11-25 (docs/design.md section 5), the
 * "opened" audit event that keeps a probe out of the audit log (section
 * 6), and progress on calls in flight: raw frames into a session with no
 * processes (tests/unit/session_fixture.h).
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tests/unit/session_fixture.h"

#define VERSION_KEY "io.modelcontextprotocol/protocolVersion"
#define CAPS_KEY "io.modelcontextprotocol/clientCapabilities"
#define META "\"_meta\":{\"" VERSION_KEY "\":\"2026-07-28\",\"" CAPS_KEY \
	"\":{}}"

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

TestSuite(modern, .init = setup, .fini = teardown);
TestSuite(opened, .init = setup, .fini = teardown);
TestSuite(progress, .init = setup, .fini = teardown);

static cJSON *
line_json(size_t n)
{
	cJSON *j = cJSON_Parse(harness_line(&h, n));

	cr_assert_not_null(j, "line %zu is JSON", n);
	return j;
}

static const cJSON *
member(const cJSON *j, const char *path)
{
	char buf[128], *save = NULL, *part;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part != NULL && j != NULL;
	    part = strtok_r(NULL, ".", &save))
		j = cJSON_GetObjectItemCaseSensitive(j, part);
	return j;
}

/* The error code of line n, or 0 for a result. */
static int
error_code(size_t n)
{
	cJSON *j = line_json(n);
	const cJSON *c = member(j, "error.code");
	int code = cJSON_IsNumber(c) ? c->valueint : 0;

	cJSON_Delete(j);
	return code;
}

static void
feed_request(const char *id, const char *method, const char *params)
{
	char *f = NULL;

	cr_assert(asprintf(&f, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"%s\"%s%s}", id, method, params != NULL ? ",\"params\":" : "",
	    params != NULL ? params : "") > 0);
	harness_feed(&h, f);
	free(f);
}

/* A modern tools/call of get_item with an extra _meta member. */
static void
modern_call(const char *id, const char *item, const char *extra_meta)
{
	char *p = NULL;

	cr_assert(asprintf(&p, "{\"name\":\"get_item\",\"arguments\":{\"id\":"
	    "%s},\"_meta\":{\"" VERSION_KEY "\":\"2026-07-28\",\"" CAPS_KEY
	    "\":{}%s%s}}", item, extra_meta != NULL ? "," : "",
	    extra_meta != NULL ? extra_meta : "") > 0);
	feed_request(id, "tools/call", p);
	free(p);
}

Test(modern, discover_answers_versions_capabilities_and_server_info)
{
	const cJSON *v;
	cJSON *j;

	feed_request("\"d-1\"", "server/discover", "{" META "}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1);
	j = line_json(0);
	cr_assert_str_eq(member(j, "id")->valuestring, "d-1");
	cr_assert_str_eq(member(j, "result.resultType")->valuestring,
	    "complete");
	v = member(j, "result.supportedVersions");
	cr_assert(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3);
	cr_assert_str_eq(cJSON_GetArrayItem(v, 0)->valuestring, "2026-07-28");
	cr_assert(cJSON_IsFalse(member(j,
	    "result.capabilities.tools.listChanged")));
	cr_assert(cJSON_IsString(member(j, "result.instructions")));
	cr_assert(cJSON_IsNumber(member(j, "result.ttlMs")));
	cr_assert_str_eq(member(j, "result.cacheScope")->valuestring,
	    "private");
	v = cJSON_GetObjectItemCaseSensitive(member(j, "result._meta"),
	    "io.modelcontextprotocol/serverInfo");
	cr_assert_str_eq(member(v, "name")->valuestring, "test-gw");
	cr_assert_str_eq(member(v, "version")->valuestring, "0.1-test");
	cr_assert_null(member(j, "result.protocolVersion"));
	cJSON_Delete(j);
}

Test(modern, tools_list_carries_cache_hints_in_policy_order)
{
	const cJSON *tools;
	cJSON *j;
	int i;

	feed_request("1", "server/discover", "{" META "}");
	for (i = 0; i < 2; i++)	/* the same bytes each time */
		feed_request("2", "tools/list", "{" META "}");
	cr_assert_str_eq(harness_line(&h, 1), harness_line(&h, 2));
	j = line_json(1);
	cr_assert_str_eq(member(j, "result.resultType")->valuestring,
	    "complete");
	cr_assert_eq(member(j, "result.ttlMs")->valuedouble, 3600000.0);
	cr_assert_str_eq(member(j, "result.cacheScope")->valuestring,
	    "private");
	tools = member(j, "result.tools");
	/* profile "default" has scope read: get_item and echo_text, in the
	 * policy's order */
	cr_assert_eq(cJSON_GetArraySize(tools), 2);
	cr_assert_str_eq(member(cJSON_GetArrayItem(tools, 0), "name")->
	    valuestring, "get_item");
	cr_assert_str_eq(member(cJSON_GetArrayItem(tools, 1), "name")->
	    valuestring, "echo_text");
	cJSON_Delete(j);
}

Test(modern, a_first_request_with_meta_opens_the_modern_era)
{
	cJSON *j;

	feed_request("7", "tools/list", "{" META "}");
	j = line_json(0);
	cr_assert_str_eq(member(j, "result.resultType")->valuestring,
	    "complete", "no initialize needed");
	cJSON_Delete(j);
	modern_call("8", "5", NULL);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1);
}

/* Each envelope fault: its code, and no record for the executor. */
static void
expect_refused(const char *params, int code)
{
	harness_clear(&h);
	feed_request("\"x\"", "tools/call", params);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0, "%s", params);
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 1, "%s", params);
	cr_assert_eq(error_code(0), code, "%s: %s", params,
	    harness_line(&h, 0));
}

Test(modern, every_request_needs_its_envelope)
{
	static const char args[] = "\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":3}";

	feed_request("0", "server/discover", "{" META "}");
	expect_refused(NULL, -32602);
	expect_refused("{" "\"name\":\"get_item\"}", -32602);
	expect_refused("{" "\"name\":\"get_item\",\"_meta\":[]}", -32602);
	expect_refused("{\"_meta\":{\"" CAPS_KEY "\":{}},\"name\":"
	    "\"get_item\"}", -32602);
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":20260728,\"" CAPS_KEY
	    "\":{}},\"name\":\"get_item\"}", -32602);
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":\"2026-07-28\"},"
	    "\"name\":\"get_item\"}", -32602);
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":\"2026-07-28\",\""
	    CAPS_KEY "\":\"all\"},\"name\":\"get_item\"}", -32602);
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":\"2025-11-25\",\""
	    CAPS_KEY "\":{}}," "\"name\":\"get_item\"}", -32022);
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":\"2026-07-29\",\""
	    CAPS_KEY "\":{}}," "\"name\":\"get_item\"}", -32022);
	/* far too long to be a version: malformed, not echoed */
	expect_refused("{\"_meta\":{\"" VERSION_KEY "\":\"2026-07-28-"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"" CAPS_KEY "\":{}},"
	    "\"name\":\"get_item\"}", -32602);
	harness_clear(&h);
	modern_call("\"ok\"", "3", NULL);
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1, "%s", args);
}

Test(modern, unsupported_version_names_the_supported_list)
{
	const cJSON *list;
	cJSON *j;

	feed_request("1", "server/discover", "{\"_meta\":{\"" VERSION_KEY
	    "\":\"2027-01-01 \\\"$(x)\\\"\",\"" CAPS_KEY "\":{}}}");
	j = line_json(0);
	cr_assert_eq(member(j, "error.code")->valueint, -32022);
	list = member(j, "error.data.supported");
	/* what server/discover offers, in its order */
	cr_assert(cJSON_IsArray(list) && cJSON_GetArraySize(list) == 3);
	cr_assert_str_eq(cJSON_GetArrayItem(list, 0)->valuestring,
	    "2026-07-28");
	cr_assert_str_eq(cJSON_GetArrayItem(list, 1)->valuestring,
	    "2025-11-25");
	cr_assert_str_eq(cJSON_GetArrayItem(list, 2)->valuestring,
	    "2025-06-18");
	cr_assert_str_eq(member(j, "error.data.requested")->valuestring,
	    "2027-01-01 \"$(x)\"");
	cr_assert_str_eq(member(j, "error.data.issuer")->valuestring,
	    "sallyport/test-gw");
	cJSON_Delete(j);
}

Test(modern, removed_and_unknown_methods_are_32601)
{
	static const char *const removed[] = { "initialize", "ping",
	    "logging/setLevel", "resources/list", "tasks/get" };
	size_t i;

	feed_request("0", "server/discover", "{" META "}");
	for (i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
		harness_clear(&h);
		feed_request("1", removed[i], "{\"protocolVersion\":"
		    "\"2025-11-25\",\"capabilities\":{},\"level\":\"debug\","
		    META "}");
		cr_assert_eq(error_code(0), -32601, "%s: %s", removed[i],
		    harness_line(&h, 0));
	}
}

Test(modern, tools_call_results_carry_result_type)
{
	struct record_result r;
	cJSON *j;

	modern_call("\"c\"", "9", NULL);
	memset(&r, 0, sizeof(r));
	r.call_id = 1;
	r.outcome = RECORD_OUTCOME_FAILED;
	cr_assert(mcp_session_handle_result(h.s, &r, &h.out));
	j = line_json(0);
	cr_assert_str_eq(member(j, "result.resultType")->valuestring,
	    "complete");
	cr_assert(cJSON_IsTrue(member(j, "result.isError")));
	cJSON_Delete(j);
	/* a refusal made by the session itself too */
	harness_clear(&h);
	modern_call("\"d\"", "\"not a number\"", NULL);
	j = line_json(0);
	cr_assert_str_eq(member(j, "result.resultType")->valuestring,
	    "complete");
	cr_assert_str_eq(member(j, "result.structuredContent.outcome")->
	    valuestring, "invalid");
	cJSON_Delete(j);
}

Test(modern, a_legacy_session_refuses_modern_methods_and_ignores_meta)
{
	cJSON *j;

	harness_open(&h);
	feed_request("1", "server/discover", "{" META "}");
	cr_assert_eq(error_code(0), -32601, "%s", harness_line(&h, 0));
	harness_clear(&h);
	feed_request("2", "tools/list", "{" META "}");
	j = line_json(0);
	cr_assert_null(member(j, "result.resultType"), "legacy shape");
	cr_assert_null(member(j, "result.ttlMs"));
	cJSON_Delete(j);
	harness_clear(&h);
	feed_request("3", "tools/call", "{\"name\":\"get_item\","
	    "\"arguments\":{\"id\":4}}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 1,
	    "no envelope needed after initialize");
}

Test(modern, a_modern_call_without_meta_before_any_era_reaches_nothing)
{
	feed_request("1", "tools/call", "{\"name\":\"get_item\","
	    "\"arguments\":{\"id\":4}}");
	cr_assert_eq(harness_count(&h, MCP_ITEM_EXECUTOR), 0);
	cr_assert_eq(error_code(0), -32600, "legacy: initialize first");
}

/* The number of "opened" events among the audit items. */
static size_t
opened_count(void)
{
	struct record_audit_event ev;
	size_t i, n = 0;

	for (i = 0; i < harness_count(&h, MCP_ITEM_AUDIT); i++) {
		harness_audit(&h, i, &ev);
		n += ev.kind == RECORD_AUDIT_OPENED;
		record_audit_event_free(&ev);
	}
	return n;
}

Test(opened, discover_and_ping_do_not_open_the_session)
{
	feed_request("1", "server/discover", "{" META "}");
	feed_request("2", "ping", NULL);
	feed_request("\"3\"", "server/discover", NULL);	/* -32602 */
	cr_assert_eq(harness_count(&h, MCP_ITEM_LINE), 3);
	cr_assert_eq(harness_count(&h, MCP_ITEM_AUDIT), 0);
	feed_request("4", "tools/list", "{" META "}");
	cr_assert_eq(opened_count(), 1);
	feed_request("5", "tools/list", "{" META "}");
	modern_call("6", "1", NULL);
	cr_assert_eq(opened_count(), 1, "once per session");
}

Test(opened, initialize_a_notification_or_bad_input_opens_it_first)
{
	struct record_audit_event ev;

	harness_open(&h);	/* initialize */
	cr_assert_eq(harness_count(&h, MCP_ITEM_AUDIT), 0, "cleared");
	harness_end(&h);
	harness_start(&h, NULL);
	feed_request("1", "ping", NULL);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	cr_assert_eq(opened_count(), 1);
	harness_end(&h);
	harness_start(&h, NULL);
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"id\":1,");
	cr_assert_eq(harness_count(&h, MCP_ITEM_AUDIT), 2);
	harness_audit(&h, 0, &ev);
	cr_assert_eq(ev.kind, RECORD_AUDIT_OPENED, "before the rejection");
	record_audit_event_free(&ev);
	harness_audit(&h, 1, &ev);
	cr_assert_eq(ev.kind, RECORD_AUDIT_REJECTION);
	record_audit_event_free(&ev);
}

/* Progress lines appended by one tick, parsed; count in *n. */
static cJSON **
tick(size_t *n)
{
	cJSON **lines;
	size_t i;

	harness_clear(&h);
	cr_assert(mcp_session_progress(h.s, &h.out));
	*n = harness_count(&h, MCP_ITEM_LINE);
	cr_assert_eq(h.out.count, *n, "progress is protocol lines only");
	lines = calloc(*n + 1, sizeof(*lines));
	for (i = 0; i < *n; i++) {
		lines[i] = line_json(i);
		cr_assert_str_eq(member(lines[i], "method")->valuestring,
		    "notifications/progress");
		cr_assert_null(member(lines[i], "id"));
	}
	return lines;
}

static void
free_lines(cJSON **lines, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_Delete(lines[i]);
	free(lines);
}

Test(progress, tokens_are_echoed_as_sent_with_increasing_values)
{
	const cJSON *tok;
	cJSON **l;
	size_t n, round;

	harness_open(&h);
	feed_request("1", "tools/call", "{\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":1},\"_meta\":{\"progressToken\":\"t \\\"1\\\" \\u00e9\"}}");
	feed_request("2", "tools/call", "{\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":2},\"_meta\":{\"progressToken\":-9007199254740991}}");
	feed_request("3", "tools/call", "{\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":3}}");
	feed_request("4", "tools/call", "{\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":4},\"_meta\":{\"progressToken\":1.5}}");
	cr_assert_eq(mcp_session_inflight(h.s), 4);
	for (round = 1; round <= 3; round++) {
		l = tick(&n);
		cr_assert_eq(n, 2, "only the calls with a usable token");
		tok = member(l[0], "params.progressToken");
		cr_assert(cJSON_IsString(tok));
		cr_assert_str_eq(tok->valuestring, "t \"1\" \xc3\xa9");
		cr_assert(strstr(harness_line(&h, 1), "\"progressToken\":"
		    "-9007199254740991,") != NULL, "%s", harness_line(&h, 1));
		cr_assert_eq(member(l[0], "params.progress")->valuedouble,
		    (double)round);
		cr_assert_eq(member(l[1], "params.progress")->valuedouble,
		    (double)round);
		free_lines(l, n);
	}
}

Test(progress, none_after_the_result_or_the_cancel)
{
	struct record_result r;
	cJSON **l;
	size_t n;

	modern_call("1", "1", "\"progressToken\":7");
	modern_call("2", "2", "\"progressToken\":8");
	l = tick(&n);
	cr_assert_eq(n, 2);
	free_lines(l, n);
	memset(&r, 0, sizeof(r));
	r.call_id = 1;
	r.outcome = RECORD_OUTCOME_OK;
	cr_assert(mcp_session_handle_result(h.s, &r, &h.out));
	harness_feed(&h, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":2}}");
	l = tick(&n);
	cr_assert_eq(n, 0, "answered and cancelled calls hear nothing");
	free_lines(l, n);
	cr_assert_eq(mcp_session_inflight(h.s), 1, "2 still runs, cancelled");
}
