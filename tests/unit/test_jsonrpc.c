#include "config.h"

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/jsonrpc.h"
#include "tests/unit/wire_pipeline.h"

/* One classified message and the JSON text its id would be echoed as. */
struct classified {
	struct jsonrpc_message msg;
	struct json_doc doc;
	char id[128];
};

static void
classify(const char *text, struct classified *c)
{
	struct json_error err;
	struct wire_shown shown;
	char *id;

	cr_assert(json_parse_frame((const uint8_t *)text, strlen(text),
	    JSON_DEPTH_DEFAULT, &c->doc, &err), "JSON refused %s: %s",
	    wire_show_str(&shown, text), err.reason);
	jsonrpc_classify(&c->doc, &c->msg);
	id = jsonrpc_id_render(&c->msg.id);
	cr_assert_not_null(id);
	cr_assert_lt(strlen(id), sizeof(c->id));
	strcpy(c->id, id);
	cJSON_free(id);
}

static void
release(struct classified *c)
{
	jsonrpc_message_free(&c->msg);
	json_doc_free(&c->doc);
}

static void
assert_kind(const char *text, enum jsonrpc_kind kind, const char *id)
{
	struct classified c;
	struct wire_shown shown;
	const char *shown_text = wire_show_str(&shown, text);

	classify(text, &c);
	cr_assert_eq(c.msg.kind, kind, "%s: kind %d (%s), want %d",
	    shown_text, c.msg.kind, c.msg.reason, kind);
	cr_assert_str_eq(c.id, id, "%s", shown_text);
	release(&c);
}

/* Invalid, with code -32600, echoing id (JSON text). */
static void
assert_invalid(const char *text, const char *id)
{
	struct classified c;
	struct wire_shown shown;
	const char *shown_text = wire_show_str(&shown, text);

	classify(text, &c);
	cr_assert_eq(c.msg.kind, JSONRPC_INVALID, "accepted %s", shown_text);
	cr_assert_eq(c.msg.error_code, JSONRPC_INVALID_REQUEST, "%s",
	    shown_text);
	cr_assert_not_null(c.msg.reason);
	cr_assert_str_eq(c.id, id, "%s", shown_text);
	cr_assert_null(c.msg.method);
	release(&c);
}

Test(jsonrpc, request)
{
	struct classified c;

	classify("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\"}}", &c);
	cr_assert_eq(c.msg.kind, JSONRPC_REQUEST);
	cr_assert_str_eq(c.msg.method, "tools/call");
	cr_assert(cJSON_IsObject(c.msg.params));
	cr_assert_eq(c.msg.id.kind, JSONRPC_ID_INTEGER);
	cr_assert_eq(c.msg.id.integer, 12);
	cr_assert_str_eq(c.id, "12");
	release(&c);
}

Test(jsonrpc, notification_has_no_id)
{
	struct classified c;

	classify("{\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\"}",
	    &c);
	cr_assert_eq(c.msg.kind, JSONRPC_NOTIFICATION);
	cr_assert_eq(c.msg.id.kind, JSONRPC_ID_NULL);
	cr_assert_null(c.msg.params);
	release(&c);
}

Test(jsonrpc, jsonrpc_must_be_exactly_2_0)
{
	assert_invalid("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", "3");
	assert_invalid("{\"jsonrpc\":2.0,\"id\":3,\"method\":\"ping\"}", "3");
	assert_invalid("{\"jsonrpc\":\"2.0 \",\"id\":\"a\",\"method\":\"ping\"}",
	    "\"a\"");
	assert_invalid("{\"jsonrpc\":\"2\",\"method\":\"ping\"}", "null");
	assert_invalid("{\"id\":3,\"method\":\"ping\"}", "3");
	assert_invalid("{\"JSONRPC\":\"2.0\",\"id\":3,\"method\":\"ping\"}", "3");
}

Test(jsonrpc, string_and_integer_ids_are_different)
{
	struct classified a, b;

	classify("{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"ping\"}", &a);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &b);
	cr_assert_eq(a.msg.kind, JSONRPC_REQUEST);
	cr_assert_eq(b.msg.kind, JSONRPC_REQUEST);
	cr_assert_str_eq(a.id, "\"1\"");
	cr_assert_str_eq(b.id, "1");
	cr_assert_not(jsonrpc_id_equal(&a.msg.id, &b.msg.id));
	release(&a);
	release(&b);
}

Test(jsonrpc, integer_ids_within_2_53)
{
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}",
	    JSONRPC_REQUEST, "0");
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":-17,\"method\":\"m\"}",
	    JSONRPC_REQUEST, "-17");
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,"
	    "\"method\":\"m\"}", JSONRPC_REQUEST, "9007199254740991");
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,"
	    "\"method\":\"m\"}", JSONRPC_REQUEST, "-9007199254740991");
	/* refused, but readable: the error echoes them as written */
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,"
	    "\"method\":\"m\"}", "9007199254740992");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740993,"
	    "\"method\":\"m\"}", "-9007199254740993");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,"
	    "\"method\":\"m\"}", "12345678901234567890123");
	/* longer than any id text kept: unknown, so null */
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":1234567890123456789012345"
	    "67890123456789,\"method\":\"m\"}", "null");
}

Test(jsonrpc, ids_that_are_not_strings_or_integers)
{
	/* numbers are echoed as written, so the client's request settles */
	static const char *const numbers[] = {
		"1.0", "1e0", "1.5", "-0", "1E2", "-2.5e-3",
	};
	static const char *const bad[] = {
		"true", "false", "{}", "[1]", "{\"id\":1}",
	};
	char text[128];
	size_t i;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		snprintf(text, sizeof(text),
		    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"m\"}",
		    numbers[i]);
		assert_invalid(text, numbers[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
		    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"m\"}", bad[i]);
		assert_invalid(text, "null");
	}
}

Test(jsonrpc, null_id_refused_for_requests)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
	    "null");
}

Test(jsonrpc, string_id_echoes_exactly)
{
	struct classified c;
	struct json_doc back;
	struct json_error err;

	classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\n$() %2e%2e \\u00e9\xe2\x82\xac\","
	    "\"method\":\"ping\"}", &c);
	cr_assert_eq(c.msg.kind, JSONRPC_REQUEST);
	cr_assert_str_eq(c.msg.id.string, "a\"b\n$() %2e%2e \xc3\xa9\xe2\x82\xac");
	cr_assert_str_eq(c.id, "\"a\\\"b\\n$() %2e%2e \xc3\xa9\xe2\x82\xac\"");
	cr_assert(json_parse_frame((const uint8_t *)c.id, strlen(c.id), 4,
	    &back, &err));
	cr_assert_str_eq(back.root->valuestring, c.msg.id.string);
	json_doc_free(&back);
	release(&c);
}

Test(jsonrpc, empty_string_id_is_an_id)
{
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"m\"}",
	    JSONRPC_REQUEST, "\"\"");
}

Test(jsonrpc, method_must_be_a_string)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}", "4");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":null}", "4");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":4,\"Method\":\"ping\"}", "4");
}

Test(jsonrpc, params_object_or_array_when_present)
{
	assert_kind("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\","
	    "\"params\":[1,\"two\"]}", JSONRPC_REQUEST, "5");
	assert_kind("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{}}",
	    JSONRPC_NOTIFICATION, "null");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\","
	    "\"params\":\"{\\\"a\\\":1}\"}", "5");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\","
	    "\"params\":null}", "5");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\","
	    "\"params\":3}", "5");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":true}",
	    "null");
}

Test(jsonrpc, top_level_must_be_an_object)
{
	static const char *const bad[] = {
		"null", "1", "\"ping\"", "true", "[]",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i], "null");
}

Test(jsonrpc, batch_has_its_own_reason)
{
	struct classified c;

	classify("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &c);
	cr_assert_str_eq(c.msg.reason, "batch (JSON array) not supported");
	release(&c);
}

Test(jsonrpc, members_beyond_json_rpc_are_refused)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"m\","
	    "\"_meta\":{}}", "6");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"extra\":1}",
	    "null");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"m\","
	    "\"result\":{}}", "6");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},"
	    "\"method2\":1}", "6");
}

Test(jsonrpc, neither_method_nor_result)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":8}", "8");
	assert_invalid("{}", "null");
}

Test(jsonrpc, responses)
{
	struct classified c;

	classify("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{\"ok\":true}}",
	    &c);
	cr_assert_eq(c.msg.kind, JSONRPC_RESPONSE);
	cr_assert(cJSON_IsObject(c.msg.result));
	cr_assert_null(c.msg.error);
	release(&c);
	classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"Parse error\",\"data\":[1]}}", &c);
	cr_assert_eq(c.msg.kind, JSONRPC_RESPONSE);
	cr_assert(cJSON_IsObject(c.msg.error));
	cr_assert_str_eq(c.id, "null");
	release(&c);
}

Test(jsonrpc, response_result_xor_error)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":1,\"error\":"
	    "{\"code\":1,\"message\":\"m\"}}", "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"result\":1}", "null");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":1}", "null");
}

Test(jsonrpc, error_member_shape)
{
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":\"bad\"}", "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":\"1\","
	    "\"message\":\"m\"}}", "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":1.5,"
	    "\"message\":\"m\"}}", "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":1}}",
	    "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":1,"
	    "\"message\":\"m\",\"hint\":0}}", "9");
	assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":"
	    "4294967296,\"message\":\"m\"}}", "9");
}

Test(jsonrpc, unparsed_frame_is_a_parse_error)
{
	struct json_doc doc;
	struct jsonrpc_message msg;

	memset(&doc, 0, sizeof(doc));
	cr_assert_eq(jsonrpc_classify(&doc, &msg), JSONRPC_INVALID);
	cr_assert_eq(msg.error_code, JSONRPC_PARSE_ERROR);
	cr_assert_eq(msg.id.kind, JSONRPC_ID_NULL);
}

Test(jsonrpc, id_copy_and_equal)
{
	struct jsonrpc_id a = { .kind = JSONRPC_ID_STRING }, b, n, z;
	char s[] = "x\"y";

	a.string = s;
	a.string_len = 3;
	cr_assert(jsonrpc_id_copy(&b, &a));
	cr_assert_neq(b.string, a.string);
	cr_assert(jsonrpc_id_equal(&a, &b));
	b.string[0] = 'X';
	cr_assert_not(jsonrpc_id_equal(&a, &b));
	jsonrpc_id_free(&b);
	cr_assert_null(b.string);
	n = (struct jsonrpc_id){ .kind = JSONRPC_ID_INTEGER, .integer = 0 };
	z = (struct jsonrpc_id){ .kind = JSONRPC_ID_NULL };
	cr_assert(jsonrpc_id_copy(&b, &n));
	cr_assert(jsonrpc_id_equal(&b, &n));
	cr_assert_not(jsonrpc_id_equal(&n, &z));
}

Test(jsonrpc, id_to_json_prints_integers_without_exponent)
{
	struct jsonrpc_id id = { .kind = JSONRPC_ID_INTEGER,
	    .integer = INT64_C(-9007199254740991) };
	char *text = jsonrpc_id_render(&id);

	cr_assert_str_eq(text, "-9007199254740991");
	cJSON_free(text);
}
