#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "policy/args.h"
#include "policy/constraint.h"
#include "tests/unit/policy_fixture.h"

/* The tree the frontend would see: json_parse_frame keeps number tokens. */
static cJSON *
strict_tree(const char *json)
{
	struct json_doc doc;
	struct json_error jerr;
	cJSON *root;

	cr_assert(json_parse_frame((const uint8_t *)json, strlen(json),
	    JSON_DEPTH_DEFAULT, &doc, &jerr), "test JSON %s: %s", json,
	    jerr.reason);
	root = doc.root;
	doc.root = NULL;
	return root;
}

/* Validates JSON text; returns the report text on failure, NULL on success. */
static char *
validate_text(int t, const char *json, struct value **out)
{
	struct args_error_report err = { 0 };
	cJSON *args = strict_tree(json);
	char *text = NULL;
	struct value *values = NULL;

	cr_assert_not_null(args, "test JSON does not parse: %s", json);
	if (!policy_args_validate(fixture_tool(t), args, &values, &err)) {
		cr_assert_null(values);
		cr_assert_gt(err.count, 0);
		text = args_error_report_text(&err, fixture_tool(t)->name);
		cr_assert_not_null(text);
	} else
		cr_assert_eq(err.count, 0);
	if (out != NULL)
		*out = values;
	else
		value_array_free(values, fixture_tool(t)->param_count);
	args_error_report_free(&err);
	cJSON_Delete(args);
	return text;
}

/* A number item as json_parse_frame builds it, token and all. */
static cJSON *
number_with_token(double d, const char *token)
{
	cJSON *n = cJSON_CreateNumber(d);

	n->valuestring = strdup(token);
	cr_assert_not_null(n->valuestring);
	return n;
}

static void
assert_refused(int t, const char *json, const char *needle)
{
	char *text = validate_text(t, json, NULL);

	cr_assert_not_null(text, "accepted: %s", json);
	cr_assert_not_null(strstr(text, needle), "for %s: no \"%s\" in: %s",
	    json, needle, text);
	free(text);
}

static void
assert_accepted(int t, const char *json)
{
	char *text = validate_text(t, json, NULL);

	cr_assert_null(text, "refused %s: %s", json, text ? text : "");
}

/* Code points in one line of text. */
static size_t
chars_of(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static void
assert_lines_short(const char *text)
{
	const char *line = text, *nl;

	for (; line != NULL; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		cr_assert_leq(chars_of(line, nl ? (size_t)(nl - line) :
		    strlen(line)), ARGS_ERROR_LINE_MAX, "long line in: %s", text);
	}
}

Test(args, typed_values_come_out_of_a_valid_object)
{
	struct value *v = NULL;
	const char *json = "{\"name\":\"a \\\"b\\\"\\n$(id) \xc3\xa9\xe6\x97\xa5\","
	    "\"qty\":42,\"price\":\"12.5\",\"urgent\":true,\"code\":\"AB12\"}";

	cr_assert_null(validate_text(FIXTURE_CREATE_ITEM, json, &v));
	cr_assert_eq(v[0].kind, VALUE_STRING);
	cr_assert_str_eq(v[0].u.str.ptr, "a \"b\"\n$(id) \xc3\xa9\xe6\x97\xa5");
	cr_assert_eq(v[0].u.str.len, strlen(v[0].u.str.ptr));
	cr_assert_eq(v[1].kind, VALUE_INTEGER);
	cr_assert_eq(v[1].u.integer, 42);
	cr_assert_eq(v[2].kind, VALUE_DECIMAL);
	cr_assert_eq(v[2].u.decimal_minor, 1250);
	cr_assert_eq(v[3].kind, VALUE_ABSENT, "optional color not given");
	cr_assert_eq(v[4].kind, VALUE_STRING);
	cr_assert_eq(v[5].kind, VALUE_BOOLEAN);
	cr_assert(v[5].u.boolean);
	value_array_free(v, 6);
}

Test(args, a_string_holding_an_object_is_parsed_once)
{
	struct value *v = NULL;

	cr_assert_null(validate_text(FIXTURE_GET_ITEM, "\"{\\\"id\\\": 7}\"", &v));
	cr_assert_eq(v[0].u.integer, 7);
	value_array_free(v, 1);
	assert_refused(FIXTURE_GET_ITEM, "\"\\\"{\\\\\\\"id\\\\\\\": 7}\\\"\"",
	    "arguments: must be an object; a string was given that holds a string");
	assert_refused(FIXTURE_GET_ITEM, "\"{\\\"id\\\": 7} x\"",
	    "is not strict JSON");
	assert_refused(FIXTURE_GET_ITEM, "\"[1,2]\"", "that holds an array");
	assert_refused(FIXTURE_GET_ITEM, "\"{\\\"id\\\": \\\"\\\\u0000\\\"}\"",
	    "is not strict JSON (\\u0000 in string");
}

/* Review F3: the value is read from the token, never rounded. */
Test(args, integers_are_read_as_written_not_through_a_double)
{
	static const char *bad[] = {
		"{\"id\":9007199254740992}",		/* 2^53 */
		"{\"id\":9007199254740993}",		/* 2^53+1, rounds to 2^53 */
		"{\"id\":-9007199254740993}",
		"{\"id\":0.99999999999999999}",	/* rounds to 1 */
		"{\"id\":1.00000000000000001}",	/* rounds to 1 */
		"{\"id\":123456789012345678901234567890}",
		"{\"id\":1e2}", "{\"id\":100E0}", "{\"id\":5.10}",
	};
	struct value *v = NULL;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(FIXTURE_GET_ITEM, bad[i],
		    "id: must be a whole number");
	cr_assert_null(validate_text(FIXTURE_GET_ITEM,
	    "{\"id\":9007199254740991}", &v));
	cr_assert_eq(v[0].u.integer, INT64_C(9007199254740991));
	value_array_free(v, 1);
	cr_assert_null(validate_text(FIXTURE_GET_ITEM, "{\"id\":42.000}", &v));
	cr_assert_eq(v[0].u.integer, 42);
	value_array_free(v, 1);
}

/* Review F2: a string-held object meets the same strict parser. */
Test(args, a_string_holding_an_object_is_parsed_strictly)
{
	static const char *bad[] = {
		"\"\\ufeff{\\\"id\\\":7}\"",		/* BOM */
		"\"\\u0001{\\\"id\\\":7}\\u0002\"",	/* controls */
		"\"{\\\"id\\\":012}\"",			/* leading zero */
		"\"{\\\"id\\\":5.}\"",			/* empty fraction */
		"\"{\\\"id\\\":7,\\\"id\\\":8}\"",	/* duplicate key */
		"\"{\\\"id\\\":7} x\"",			/* trailing bytes */
		"\"{\\\"id\\\":7}\\u000b\"",		/* VT as space */
		"\"{\\\"id\\\":\\\"\\\\u0000\\\"}\"",	/* \\u0000 */
	};
	char deep[300];
	size_t i, used;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(FIXTURE_GET_ITEM, bad[i],
		    "arguments: must be an object; the string given is not "
		    "strict JSON");
	/* An object holding 64 arrays: one level over the frame's bound. */
	used = (size_t)snprintf(deep, sizeof(deep), "\"{\\\"id\\\":");
	for (i = 0; i < 64; i++)
		deep[used++] = '[';
	deep[used++] = '7';
	for (i = 0; i < 64; i++)
		deep[used++] = ']';
	snprintf(deep + used, sizeof(deep) - used, "}\"");
	assert_refused(FIXTURE_GET_ITEM, deep, "nesting");
}

Test(args, anything_else_than_an_object_is_refused_by_name)
{
	assert_refused(FIXTURE_GET_ITEM, "7", "arguments: must be an object, not a number");
	assert_refused(FIXTURE_GET_ITEM, "null", "arguments: must be an object, not null");
	assert_refused(FIXTURE_GET_ITEM, "true", "not a boolean");
	assert_refused(FIXTURE_GET_ITEM, "[{\"id\":1}]",
	    "must be an object, not an array of 1 items");
}

Test(args, missing_arguments_count_as_an_empty_object)
{
	struct args_error_report err = { 0 };
	struct value *v = NULL;
	char *text;

	cr_assert_not(policy_args_validate(fixture_tool(FIXTURE_GET_ITEM), NULL, &v, &err));
	text = args_error_report_text(&err, "get_item");
	cr_assert_str_eq(text, "Invalid arguments for get_item; nothing was run.\n"
	    "id: is required");
	free(text);
	args_error_report_free(&err);
}

Test(args, unknown_and_missing_properties_are_refused)
{
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":1,\"ID\":2}",
	    "ID: unknown property; known: id");
	assert_refused(FIXTURE_CREATE_ITEM, "{\"name\":\"x\"}", "qty: is required");
	assert_accepted(FIXTURE_CREATE_ITEM, "{\"name\":\"x\",\"qty\":1}");
}

Test(args, integers_are_whole_numbers_within_2_pow_53)
{
	assert_accepted(FIXTURE_GET_ITEM, "{\"id\":9007199254740991}");
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":9007199254740994}",
	    "id: must be a whole number between -(2^53-1) and 2^53-1");
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":1.5}", "id: must be a whole number");
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":\"5\"}",
	    "id: must be an integer, not a string");
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":true}", "not a boolean");
	assert_refused(FIXTURE_GET_ITEM, "{\"id\":0}", "id: must be at least 1");
	assert_refused(FIXTURE_CREATE_ITEM, "{\"name\":\"x\",\"qty\":101}",
	    "qty: must be at most 100");
}

Test(args, booleans_are_true_or_false_only)
{
	const char *bad[] = { "1", "0", "\"true\"", "null" };
	char json[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json),
		    "{\"name\":\"x\",\"qty\":1,\"urgent\":%s}", bad[i]);
		assert_refused(FIXTURE_CREATE_ITEM, json,
		    "urgent: must be true or false");
	}
	assert_accepted(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"urgent\":false}");
}

Test(args, decimals_are_digit_strings_within_scale)
{
	const char *bad[] = { "\"1e2\"", "\"12.345\"", "\"-\"", "\".5\"",
	    "\"5.\"", "\"+5\"", "\"1,5\"", "\" 5\"", "\"99999999999999999999\"" };
	const char *good[] = { "\"0\"", "\"12\"", "\"12.5\"", "\"999.99\"",
	    "\"1000.00\"" };
	struct value *v = NULL;
	char json[96];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json),
		    "{\"name\":\"x\",\"qty\":1,\"price\":%s}", bad[i]);
		assert_refused(FIXTURE_CREATE_ITEM, json,
		    "price: must be digits with at most 2 decimals");
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(json, sizeof(json),
		    "{\"name\":\"x\",\"qty\":1,\"price\":%s}", good[i]);
		assert_accepted(FIXTURE_CREATE_ITEM, json);
	}
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"price\":12.5}",
	    "price: must be a string of digits with at most 2 decimals like "
	    "\"12.50\", not a number");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"price\":\"1000.01\"}",
	    "price: must be at most 1000.00");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"price\":\"-0.01\"}",
	    "price: must be at least 0.00");
	cr_assert_null(validate_text(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"price\":\"7.05\"}", &v));
	cr_assert_eq(v[2].u.decimal_minor, 705);
	value_array_free(v, 6);
}

Test(args, string_lengths_count_code_points)
{
	char json[512], name[400];
	size_t i;

	/* 80 two-byte characters are 160 bytes, and fit maxLength 80. */
	for (i = 0; i < 80; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);
	name[160] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"%s\",\"qty\":1}", name);
	assert_accepted(FIXTURE_CREATE_ITEM, json);
	snprintf(json, sizeof(json), "{\"name\":\"%s\xc3\xa9\",\"qty\":1}", name);
	assert_refused(FIXTURE_CREATE_ITEM, json,
	    "name: must be at most 80 characters long, not 81");
	assert_refused(FIXTURE_CREATE_ITEM, "{\"name\":\"\",\"qty\":1}",
	    "name: must be at least 1 characters long, not 0");
}

Test(args, pattern_must_match_the_whole_value)
{
	assert_accepted(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"code\":\"AB123\"}");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"code\":\"xAB123\"}",
	    "code: must match the pattern [A-Z]{2}[0-9]+");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"code\":\"AB123;\"}", "must match");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"code\":\"AB1\\n\"}", "must match");
}

Test(args, enum_membership_is_exact)
{
	assert_accepted(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"color\":\"blue sky\"}");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"color\":\"Red\"}",
	    "color: must be one of: \"red\", \"green\", \"blue sky\"");
	assert_refused(FIXTURE_CREATE_ITEM,
	    "{\"name\":\"x\",\"qty\":1,\"color\":\"blue\"}", "must be one of");
}

Test(args, invalid_utf8_in_a_string_is_refused)
{
	struct args_error_report err = { 0 };
	struct value *v = NULL;
	cJSON *args = cJSON_CreateObject();

	cJSON_AddStringToObject(args, "name", "ok\xc0\xaf");
	cJSON_AddItemToObject(args, "qty", number_with_token(3, "3"));
	cr_assert_not(policy_args_validate(fixture_tool(FIXTURE_CREATE_ITEM), args, &v,
	    &err));
	cr_assert_eq(err.count, 1);
	cr_assert_str_eq(err.errors[0].message,
	    "name: must be UTF-8 text without NUL characters");
	args_error_report_free(&err);
	cJSON_Delete(args);
}

Test(args, one_message_per_path_even_for_repeated_members)
{
	struct args_error_report err = { 0 };
	struct value *v = NULL;
	cJSON *args = cJSON_Parse("{\"id\":\"a\",\"id\":\"b\",\"x\":1,\"x\":2}");

	cr_assert_not(policy_args_validate(fixture_tool(FIXTURE_GET_ITEM), args, &v,
	    &err));
	cr_assert_eq(err.count, 2);
	cr_assert_str_eq(err.errors[0].message,
	    "id: must be an integer, not a string");
	cr_assert_str_eq(err.errors[1].path, "x");
	args_error_report_free(&err);
	cJSON_Delete(args);
	/* The strict parser refuses duplicate keys; args stands alone too. */
	args = cJSON_CreateObject();
	cJSON_AddItemToObject(args, "id", number_with_token(1, "1"));
	cJSON_AddItemToObject(args, "id", number_with_token(2, "2"));
	cr_assert_not(policy_args_validate(fixture_tool(FIXTURE_GET_ITEM), args, &v,
	    &err));
	cr_assert_eq(err.count, 1);
	cr_assert_str_eq(err.errors[0].message, "id: is given more than once");
	args_error_report_free(&err);
	cJSON_Delete(args);
}

/* The limit: 100 bad items cost at most 1,500 characters. */
Test(args, an_array_of_100_bad_items_costs_at_most_1500_chars)
{
	struct policy_buf_probe { char json[8192]; } p;
	size_t i, used;
	char *text;

	used = (size_t)snprintf(p.json, sizeof(p.json), "{\"name\":[");
	for (i = 0; i < 100; i++)
		used += (size_t)snprintf(p.json + used, sizeof(p.json) - used,
		    "%s{\"bad\\\"%zu\":\"$(id)\\n\"}", i ? "," : "", i);
	snprintf(p.json + used, sizeof(p.json) - used, "],\"qty\":[%s]}",
	    "1,2,3,4,5,6,7,8,9,10");
	text = validate_text(FIXTURE_CREATE_ITEM, p.json, NULL);
	cr_assert_not_null(strstr(text,
	    "name: must be a string, not an array of 100 items"), "%s", text);
	cr_assert_leq(chars_of(text, strlen(text)), 1500, "%s", text);
	free(text);

	used = (size_t)snprintf(p.json, sizeof(p.json), "[");
	for (i = 0; i < 100; i++)
		used += (size_t)snprintf(p.json + used, sizeof(p.json) - used,
		    "%s\"bad \\u00e9 %zu\"", i ? "," : "", i);
	snprintf(p.json + used, sizeof(p.json) - used, "]");
	text = validate_text(FIXTURE_CREATE_ITEM, p.json, NULL);
	cr_assert_str_eq(text, "Invalid arguments for create_item; nothing was "
	    "run.\narguments: must be an object, not an array of 100 items");
	free(text);
}

Test(args, hundred_unknown_members_show_ten_paths_and_the_rest_counted)
{
	char json[16384], *text, *line;
	size_t i, used, lines = 0;

	used = (size_t)snprintf(json, sizeof(json), "{");
	for (i = 0; i < 100; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
		    "%s\"k%03zu_%s\":1", i ? "," : "", i,
		    "\xe6\x97\xa5\xe6\x9c\xac\\n\\\"'; rm -rf / `id` %2e%2e/"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	snprintf(json + used, sizeof(json) - used, "}");
	text = validate_text(FIXTURE_GET_ITEM, json, NULL);
	for (line = text; (line = strchr(line, '\n')) != NULL; line++)
		lines++;
	cr_assert_eq(lines, 10 + 1, "%s", text);
	cr_assert_not_null(strstr(text, "\nand 91 more"), "%s", text);
	cr_assert_not_null(strstr(text, "\nk000_???????\"'; rm -rf / `id` %2e%2e/...: unknown"),
	    "member names are shown as printable ASCII: %s", text);
	cr_assert_null(strstr(text, "k010_"), "an 11th path shown: %s", text);
	cr_assert_leq(chars_of(text, strlen(text)), 1500);
	assert_lines_short(text);
	free(text);
}

Test(args, too_many_members_is_one_message)
{
	char json[8192], *text;
	size_t i, used;

	used = (size_t)snprintf(json, sizeof(json), "{");
	for (i = 0; i < ARGS_MEMBERS_MAX + 1; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
		    "%s\"m%zu\":1", i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "}");
	text = validate_text(FIXTURE_GET_ITEM, json, NULL);
	cr_assert_str_eq(text, "Invalid arguments for get_item; nothing was run."
	    "\narguments: has 257 properties; this tool takes at most 1");
	free(text);
}

static struct policy_param long_params[] = {
	{ .name = "a_parameter_whose_name_is_long_enough_to_fill_a_line_1",
	  .type = PARAM_BOOLEAN },
	{ .name = "a_parameter_whose_name_is_long_enough_to_fill_a_line_2",
	  .type = PARAM_BOOLEAN },
};

static const struct policy_tool long_tool = {
	.name = "long_names", .params = long_params, .param_count = 2,
};

Test(args, each_line_is_cut_at_120_characters_and_shown_safely)
{
	struct args_error_report err = { 0 };
	struct value *v = NULL;
	cJSON *args = cJSON_Parse("{\"\xe2\x80\xae\xe2\x80\xae 0123456789012"
	    "345678901234567890123456789XYZ\":1}");
	const char *m;
	size_t i;

	cr_assert_not(policy_args_validate(&long_tool, args, &v, &err));
	cr_assert_eq(err.count, 1);
	m = err.errors[0].message;
	cr_assert_eq(chars_of(m, strlen(m)), ARGS_ERROR_LINE_MAX, "%s", m);
	cr_assert_eq(strcmp(m + strlen(m) - 3, "..."), 0, "%s", m);
	cr_assert_eq(strncmp(m, "?????? 012345678901234567890123456789...: "
	    "unknown property; known: a_parameter_whose", 83), 0, "%s", m);
	for (i = 0; m[i] != '\0'; i++)
		cr_assert((unsigned char)m[i] >= 0x20 && (unsigned char)m[i] < 0x7f);
	args_error_report_free(&err);
	cJSON_Delete(args);
}

Test(constraint, utf8_is_strict_and_counted_in_code_points)
{
	static const struct { const char *s; size_t len; bool ok; size_t n; } cases[] = {
		{ "abc", 3, true, 3 },
		{ "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80", 9, true, 3 },
		{ "\xc0\xaf", 2, false, 0 },		/* overlong '/' */
		{ "\xe0\x80\xaf", 3, false, 0 },	/* overlong '/' */
		{ "\xed\xa0\x80", 3, false, 0 },	/* surrogate */
		{ "\xf4\x90\x80\x80", 4, false, 0 },	/* above U+10FFFF */
		{ "\xe6\x97", 2, false, 0 },		/* cut short */
		{ "a\0b", 3, false, 0 },		/* NUL */
		{ "\x80", 1, false, 0 },		/* lone continuation */
		{ "\xf0\x9f\x98\x41", 4, false, 0 },	/* bad continuation */
	};
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = 0;
		cr_assert_eq(constraint_utf8_count(cases[i].s, cases[i].len, &n),
		    cases[i].ok, "case %zu", i);
		if (cases[i].ok)
			cr_assert_eq(n, cases[i].n, "case %zu", i);
	}
}

Test(constraint, decimals_format_with_their_scale)
{
	char out[32];

	constraint_format_decimal(-5, 2, out, sizeof(out));
	cr_assert_str_eq(out, "-0.05");
	constraint_format_decimal(123456, 3, out, sizeof(out));
	cr_assert_str_eq(out, "123.456");
	constraint_format_decimal(INT64_MIN, 0, out, sizeof(out));
	cr_assert_str_eq(out, "-9223372036854775808");
	constraint_format_decimal(INT64_MIN, 18, out, sizeof(out));
	cr_assert_str_eq(out, "-9.223372036854775808");
}

static void
values_refused(const struct value *v, size_t n, const char *needle)
{
	char reason[256];

	cr_assert_not(policy_values_check(fixture_tool(FIXTURE_CREATE_ITEM), v, n,
	    reason, sizeof(reason)));
	cr_assert_not_null(strstr(reason, needle), "%s", reason);
}

Test(constraint, executor_rechecks_typed_values_without_json)
{
	struct value v[6] = { 0 };
	char reason[256];

	cr_assert(value_set_string(&v[0], "widget", 6));
	v[1].kind = VALUE_INTEGER;
	v[1].u.integer = 5;
	cr_assert(policy_values_check(fixture_tool(FIXTURE_CREATE_ITEM), v, 6, reason,
	    sizeof(reason)));
	values_refused(v, 5, "create_item: 5 values for 6 params");
	v[1].u.integer = 500;
	values_refused(v, 6, "create_item: qty must be at most 100");
	v[1].kind = VALUE_DECIMAL;
	values_refused(v, 6, "create_item: qty has the wrong type");
	v[1].kind = VALUE_ABSENT;
	values_refused(v, 6, "create_item: qty is required");
	v[1].kind = VALUE_INTEGER;
	v[1].u.integer = 5;
	v[2].kind = VALUE_DECIMAL;
	v[2].u.decimal_minor = -1;
	values_refused(v, 6, "create_item: price must be at least 0.00");
	v[2].kind = VALUE_ABSENT;
	value_free(&v[0]);
	cr_assert(value_set_string(&v[0], "wid\0get", 7));
	values_refused(v, 6, "create_item: name must be UTF-8 text without NUL");
	value_free(&v[0]);
	cr_assert(value_set_string(&v[4], "AB12", 4));
	cr_assert(value_set_string(&v[0], "w", 1));
	cr_assert(policy_values_check(fixture_tool(FIXTURE_CREATE_ITEM), v, 6, reason,
	    sizeof(reason)));
	value_free(&v[4]);
	cr_assert(value_set_string(&v[4], "AB12\nrm", 7));
	values_refused(v, 6, "create_item: code must match the pattern");
	value_free(&v[0]);
	value_free(&v[4]);
}

/*
 * Issue 14 finding 3: run_echo's argv is printf, "%s\n", {a}, x{b}y; {a}
 * leads its element with no "--" before it, so a leading '-' is an
 * option to printf and the model gets invalid, naming a.
 */
Test(args, a_value_that_would_lead_an_argv_element_with_dash_is_refused)
{
	static const char *const dashes[] = { "-la", "-f/etc/shadow", "--",
	    "-", "-v\\nx", "-'$(id)'" };
	char json[128];
	size_t i;

	for (i = 0; i < sizeof(dashes) / sizeof(dashes[0]); i++) {
		snprintf(json, sizeof(json), "{\"a\":\"%s\"}", dashes[i]);
		assert_refused(FIXTURE_RUN_ECHO, json,
		    "a: must not start with '-' here: the command would read "
		    "it as an option");
	}
	assert_accepted(FIXTURE_RUN_ECHO, "{\"a\":\"la\",\"b\":\"-la\"}");
	assert_accepted(FIXTURE_RUN_ECHO, "{\"a\":\"\\u2013la\"}");
	assert_accepted(FIXTURE_RUN_ECHO, "{\"a\":\" -la\"}");
	assert_accepted(FIXTURE_RUN_ECHO, "{\"a\":\"la-\"}");
}
