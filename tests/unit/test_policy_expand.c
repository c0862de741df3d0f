#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/json.h"
#include "policy/args.h"
#include "policy/constraint.h"
#include "policy/expand.h"
#include "policy/load.h"
#include "tests/unit/policy_fixture.h"

#define WHY_SIZE 256

static char *
encoded(const char *s)
{
	struct policy_buf b;

	policy_buf_init(&b, 4096);
	cr_assert(expand_percent_encode(s, strlen(s), &b));
	return policy_buf_steal(&b, NULL);
}

Test(expand, percent_encoding_keeps_only_unreserved)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "../etc/passwd", "..%2Fetc%2Fpasswd" },
		{ "%2e%2e", "%252e%252e" },
		{ "a b?c#d&e=f+g", "a%20b%3Fc%23d%26e%3Df%2Bg" },
		{ "\r\nX-Injected: 1", "%0D%0AX-Injected%3A%201" },
		{ "'; rm -rf /", "%27%3B%20rm%20-rf%20%2F" },
		{ "$(id)`id`", "%24%28id%29%60id%60" },
		{ "\xc3\xa9\xe6\x97\xa5", "%C3%A9%E6%97%A5" },
		{ "AZaz09-._~", "AZaz09-._~" },
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = encoded(cases[i].in);
		cr_assert_str_eq(s, cases[i].out);
		free(s);
	}
}

/* A tool whose path takes two strings: "/files/{dir}{leaf}/raw". */
static struct policy_param path_params[] = {
	{ .name = "dir", .type = PARAM_STRING, .required = true,
	  .max_length = 100 },
	{ .name = "leaf", .type = PARAM_STRING, .max_length = 100 },
};
static struct policy_template_part path_parts[] = {
	{ .literal = "/files/", .literal_len = 7 },
	{ .is_param = true, .param_index = 0 },
	{ .is_param = true, .param_index = 1 },
	{ .literal = "/raw", .literal_len = 4 },
};
static const struct policy_tool path_tool = {
	.name = "get_file", .kind = TOOL_HTTP,
	.http = { .method = HTTP_METHOD_GET, .path = { path_parts, 4 } },
	.params = path_params, .param_count = 2,
};

/* Expands path_tool's path; returns it or NULL with why filled. */
static char *
path_of(const char *dir, const char *leaf, char *why)
{
	struct value v[2] = { 0 };
	struct policy_buf b;
	char *s = NULL;

	cr_assert(fixture_set_string(&v[0], dir));
	if (leaf != NULL)
		cr_assert(fixture_set_string(&v[1], leaf));
	policy_buf_init(&b, 4096);
	if (expand_http_path(&path_tool, v, &b, why, WHY_SIZE))
		s = policy_buf_steal(&b, NULL);
	policy_buf_free(&b);
	value_free(&v[0]);
	value_free(&v[1]);
	return s;
}

Test(expand, a_path_value_stays_inside_its_segment)
{
	static const struct { const char *dir, *leaf, *out; } cases[] = {
		{ "../../admin", "", "/files/..%2F..%2Fadmin/raw" },
		{ "%2e%2e", "%2F", "/files/%252e%252e%252F/raw" },
		{ "a?b=1#frag", "", "/files/a%3Fb%3D1%23frag/raw" },
		{ "..", "x", "/files/..x/raw" },
		{ "\xe6\x97\xa5\xe6\x9c\xac", "\r\n", "/files/%E6%97%A5%E6%9C%AC%0D%0A/raw" },
	};
	char why[WHY_SIZE], *s;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = path_of(cases[i].dir, cases[i].leaf, why);
		cr_assert_not_null(s, "case %zu: %s", i, why);
		cr_assert_str_eq(s, cases[i].out);
		free(s);
	}
}

Test(expand, a_path_never_gets_a_dot_segment_or_an_empty_value)
{
	char why[WHY_SIZE];

	cr_assert_null(path_of("..", "", why));
	cr_assert_str_eq(why, "get_file: the path would hold a dot segment");
	cr_assert_null(path_of(".", "", why));
	cr_assert_null(path_of(".", ".", why), "two values that make '..'");
	cr_assert_null(path_of("", "", why));
	cr_assert_str_eq(why, "get_file: a value would leave a path segment "
	    "empty");
	cr_assert_null(path_of("", NULL, why));
	cr_assert_str_eq(why, "get_file: leaf is needed in the path");
}

/*
 * Review F4, defence in depth: even a template the loader would refuse
 * ("/docs/%2e{v}/x") cannot produce a segment that decodes to "..".
 */
static struct policy_template_part dotted_parts[] = {
	{ .literal = "/docs/%2e", .literal_len = 9 },
	{ .is_param = true, .param_index = 0 },
	{ .literal = "/x", .literal_len = 2 },
};
static const struct policy_tool dotted_tool = {
	.name = "get_doc", .kind = TOOL_HTTP,
	.http = { .method = HTTP_METHOD_GET, .path = { dotted_parts, 3 } },
	.params = path_params, .param_count = 1,
};

static bool
dotted_path(const char *v, char *why)
{
	struct value val = { 0 };
	struct policy_buf b;
	bool ok;

	cr_assert(fixture_set_string(&val, v));
	policy_buf_init(&b, 4096);
	ok = expand_http_path(&dotted_tool, &val, &b, why, WHY_SIZE);
	policy_buf_free(&b);
	value_free(&val);
	return ok;
}

Test(expand, a_path_never_gets_an_encoded_dot_segment)
{
	char why[WHY_SIZE];

	cr_assert_not(dotted_path(".", why));
	cr_assert_str_eq(why, "get_doc: the path would hold a dot segment");
	cr_assert(dotted_path("a", why), "%s", why);
	cr_assert(dotted_path(".a", why), "%s", why);
	cr_assert(expand_segment_is_dots("%2E%2e", 6));
	cr_assert(expand_segment_is_dots(".%2E", 4));
	cr_assert(expand_segment_is_dots("%2e", 3));
	cr_assert_not(expand_segment_is_dots("%2e%2e%2e", 9));
	cr_assert_not(expand_segment_is_dots("%252e", 5));
	cr_assert_not(expand_segment_is_dots("", 0));
}

Test(expand, integer_path_value)
{
	struct value v = { .kind = VALUE_INTEGER, .u.integer = -42 };
	struct policy_buf b;
	char why[WHY_SIZE], *s;

	policy_buf_init(&b, 64);
	cr_assert(expand_http_path(fixture_tool(FIXTURE_GET_ITEM), &v, &b, why,
	    sizeof(why)));
	s = policy_buf_steal(&b, NULL);
	cr_assert_str_eq(s, "/items/-42");
	free(s);
}

/* create_item values: name, qty, price, color, code, urgent. */
static void
create_values(struct value v[6], const char *name, const char *color,
    const char *code)
{
	memset(v, 0, 6 * sizeof(*v));
	cr_assert(fixture_set_string(&v[0], name));
	v[1].kind = VALUE_INTEGER;
	v[1].u.integer = 3;
	v[2].kind = VALUE_DECIMAL;
	v[2].u.decimal_minor = 1250;
	if (color != NULL)
		cr_assert(fixture_set_string(&v[3], color));
	if (code != NULL)
		cr_assert(fixture_set_string(&v[4], code));
}

Test(expand, query_pairs_are_encoded_and_absent_ones_left_out)
{
	struct value v[6];
	struct policy_buf b;
	char why[WHY_SIZE], *s;

	create_values(v, "a b&c=d+e\n", "blue sky", NULL);
	policy_buf_init(&b, 4096);
	cr_assert(expand_http_query(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)));
	s = policy_buf_steal(&b, NULL);
	cr_assert_str_eq(s, "name=a%20b%26c%3Dd%2Be%0A&color%20tag=c%3Ablue%20sky");
	free(s);
	value_free(&v[3]);
	policy_buf_init(&b, 4096);
	cr_assert(expand_http_query(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)));
	s = policy_buf_steal(&b, NULL);
	cr_assert_str_eq(s, "name=a%20b%26c%3Dd%2Be%0A");
	free(s);
	value_array_free(NULL, 0);
	value_free(&v[0]);
}

static bool
header_of(const char *code, char **out, bool *omitted, char *why)
{
	struct value v[6];
	struct policy_buf b;
	bool ok;

	create_values(v, "n", NULL, code);
	policy_buf_init(&b, 4096);
	ok = expand_http_header(fixture_tool(FIXTURE_CREATE_ITEM), 0, v, &b, omitted,
	    why, WHY_SIZE);
	*out = ok ? policy_buf_steal(&b, NULL) : NULL;
	policy_buf_free(&b);
	value_free(&v[0]);
	value_free(&v[4]);
	return ok;
}

Test(expand, header_values_refuse_every_control_character)
{
	const char *bad[] = { "\r\nX-Injected: 1", "a\nb", "a\rb", "a\tb",
	    "a\x7f", "\x1b[31m" };
	char why[WHY_SIZE], *s;
	bool omitted;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_not(header_of(bad[i], &s, &omitted, why), "case %zu", i);
		cr_assert_str_eq(why, "create_item: header X-Code would hold a "
		    "control character");
	}
	cr_assert(header_of("AB12 \"$(id)\" \xc3\xa9", &s, &omitted, why));
	cr_assert_not(omitted);
	cr_assert_str_eq(s, "code AB12 \"$(id)\" \xc3\xa9");
	free(s);
	cr_assert(header_of(NULL, &s, &omitted, why));
	cr_assert(omitted, "absent value leaves the header out");
	cr_assert_str_eq(s, "");
	free(s);
}

Test(expand, a_string_with_nul_is_refused_everywhere)
{
	struct value v[6];
	struct policy_buf b;
	char why[WHY_SIZE];
	bool omitted;

	create_values(v, "n", NULL, NULL);
	cr_assert(value_set_string(&v[4], "AB\0rm", 5));
	policy_buf_init(&b, 4096);
	cr_assert_not(expand_http_header(fixture_tool(FIXTURE_CREATE_ITEM), 0, v, &b,
	    &omitted, why, sizeof(why)));
	cr_assert_str_eq(why, "create_item: code cannot be expanded here");
	policy_buf_free(&b);
	value_free(&v[0]);
	cr_assert(value_set_string(&v[0], "x\0y", 3));
	policy_buf_init(&b, 4096);
	cr_assert_not(expand_http_body(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)));
	policy_buf_free(&b);
	policy_buf_init(&b, 4096);
	cr_assert_not(expand_shell_quote("a\0b", 3, &b));
	policy_buf_free(&b);
	value_free(&v[0]);
	value_free(&v[4]);
}

Test(expand, body_placeholders_take_their_json_type)
{
	struct value v[6];
	struct policy_buf b;
	char why[WHY_SIZE], *s;
	cJSON *doc;

	create_values(v, "he said \"hi\"\n$(id)\\ \xe6\x97\xa5\x01", NULL, NULL);
	v[5].kind = VALUE_BOOLEAN;
	v[5].u.boolean = true;
	policy_buf_init(&b, 4096);
	cr_assert(expand_http_body(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)), "%s", why);
	s = policy_buf_steal(&b, NULL);
	cr_assert_str_eq(s, "{\"name\":\"he said \\\"hi\\\"\\n$(id)\\\\ "
	    "\xe6\x97\xa5\\u0001\",\"qty\":3,\"price\":\"12.50\",\"urgent\":true,"
	    "\"note\":\"order \\\"for\\\" he said \\\"hi\\\"\\n$(id)\\\\ "
	    "\xe6\x97\xa5\\u0001 x3\",\"draft\":false,\"tags\":[\"fixed\",7,null]}");
	doc = cJSON_Parse(s);
	cr_assert_not_null(doc, "the body is JSON");
	cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(doc, "name")->valuestring,
	    "he said \"hi\"\n$(id)\\ \xe6\x97\xa5\x01");
	cJSON_Delete(doc);
	free(s);
	v[5].kind = VALUE_ABSENT;
	v[2].kind = VALUE_ABSENT;
	policy_buf_init(&b, 4096);
	cr_assert(expand_http_body(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)));
	cr_assert_null(strstr(b.data, "\"price\""), "absent member left out: %s",
	    b.data);
	cr_assert_null(strstr(b.data, "\"urgent\""), "%s", b.data);
	policy_buf_free(&b);
	value_free(&v[0]);
}

Test(expand, a_buffer_limit_fails_instead_of_cutting)
{
	struct value v[6];
	struct policy_buf b;
	char why[WHY_SIZE];

	create_values(v, "0123456789", NULL, NULL);
	policy_buf_init(&b, 40);
	cr_assert_not(expand_http_body(fixture_tool(FIXTURE_CREATE_ITEM), v, &b, why,
	    sizeof(why)));
	cr_assert_str_eq(why, "create_item: body is too long");
	cr_assert_null(policy_buf_steal(&b, NULL));
	value_free(&v[0]);
}

/*
 * The whole path a call takes, on a policy the loader built: arguments
 * JSON -> values -> executor re-check -> expansion.
 */
static const char pipeline_policy[] =
	"{\"sallyport\": 1,\n"
	" \"credentials\": {\"key\": {\"type\": \"ssh-key\",\n"
	"   \"private_key\": \"/nonexistent/id_ed25519\"}},\n"
	" \"targets\": {\n"
	"  \"api\": {\"type\": \"http\", \"base_url\": \"https://api.example.com/v1\"},\n"
	"  \"box\": {\"type\": \"ssh\", \"host\": \"box.example.com\", \"user\": \"ops\",\n"
	"          \"credential\": \"key\","
	"          \"known_hosts\": \"/etc/sallyport/known_hosts\"}},\n"
	" \"tools\": [\n"
	"  {\"name\": \"put_note\", \"description\": \"Store a note.\",\n"
	"   \"target\": \"api\", \"scope\": \"write\", \"mutating\": true,\n"
	"   \"http\": {\"method\": \"PUT\", \"path\": \"/notes/{title}/v{rev}\",\n"
	"     \"query\": {\"tag\": \"{tag}\", \"lit\": \"a b\"},\n"
	"     \"headers\": {\"X-Note\": \"note {title}\"},\n"
	"     \"body\": {\"text\": \"{text}\", \"rev\": \"{rev}\", \"price\": \"{price}\",\n"
	"       \"pinned\": \"{pinned}\", \"label\": \"{{{title}}} r{rev}\", \"n\": [1, null]}},\n"
	"   \"params\": {\n"
	"    \"title\": {\"type\": \"string\", \"maxLength\": 64, \"pattern\": \"[^\\r\\n]*\"},\n"
	"    \"rev\": {\"type\": \"integer\", \"minimum\": 0},\n"
	"    \"tag\": {\"type\": \"string\", \"maxLength\": 20, \"required\": false},\n"
	"    \"text\": {\"type\": \"string\", \"maxLength\": 2000},\n"
	"    \"price\": {\"type\": \"decimal\", \"scale\": 2},\n"
	"    \"pinned\": {\"type\": \"boolean\", \"required\": false}}},\n"
	"  {\"name\": \"grep_log\", \"description\": \"Search a log.\",\n"
	"   \"target\": \"box\", \"scope\": \"read\",\n"
	"   \"ssh\": {\"argv\": [\"grep\", \"-F\", \"--\", \"{needle}\", \"/var/log/{file}.log\"]},\n"
	"   \"params\": {\"needle\": {\"type\": \"string\", \"maxLength\": 200},\n"
	"              \"file\": {\"type\": \"string\", \"enum\": [\"syslog\", \"auth\"]}}}],\n"
	" \"profiles\": {\"default\": {\"scopes\": [\"read\", \"write\"]}}}\n";

static struct policy *
pipeline_load(void)
{
	struct policy_diags diags = { 0 };
	struct policy *p;
	size_t i;

	p = policy_load("pipeline.json", pipeline_policy,
	    sizeof(pipeline_policy) - 1, &diags);
	for (i = 0; i < diags.count; i++)
		cr_log_error("%s", diags.items[i].text);
	cr_assert_not_null(p);
	policy_diags_free(&diags);
	return p;
}

static struct value *
pipeline_values(const struct policy_tool *t, const char *json)
{
	struct args_error_report err = { 0 };
	struct value *v = NULL;
	char reason[256], *text;
	struct json_doc doc;
	struct json_error jerr;
	cJSON *args;

	/* As the frontend parses it: integers are read from their tokens. */
	cr_assert(json_parse_frame((const uint8_t *)json, strlen(json),
	    JSON_DEPTH_DEFAULT, &doc, &jerr), "%s: %s", json, jerr.reason);
	args = doc.root;
	doc.root = NULL;

	if (!policy_args_validate(t, args, &v, &err)) {
		text = args_error_report_text(&err, t->name);
		cr_assert_fail("%s", text);
	}
	cr_assert(policy_values_check(t, v, t->param_count, reason,
	    sizeof(reason)), "%s", reason);
	cJSON_Delete(args);
	return v;
}

typedef bool (*expander)(const struct policy_tool *, const struct value *,
    struct policy_buf *, char *, size_t);

static char *
pipeline_expand(expander fn, const struct policy_tool *t,
    const struct value *v)
{
	struct policy_buf b;
	char why[WHY_SIZE];

	policy_buf_init(&b, 65536);
	cr_assert(fn(t, v, &b, why, sizeof(why)), "%s", why);
	return policy_buf_steal(&b, NULL);
}

Test(expand, the_whole_pipeline_on_a_loaded_policy)
{
	struct policy *p = pipeline_load();
	const struct policy_tool *put = &p->tools[0], *grep = &p->tools[1];
	struct value *v;
	struct policy_buf b;
	char why[WHY_SIZE], *s;
	bool omitted;

	v = pipeline_values(put, "{\"title\": \"../a b\", \"rev\": 3, "
	    "\"text\": \"x\\\"y\\n$(id) \xe6\x97\xa5\", \"price\": \"0.5\"}");
	s = pipeline_expand(expand_http_path, put, v);
	cr_assert_str_eq(s, "/notes/..%2Fa%20b/v3");
	free(s);
	s = pipeline_expand(expand_http_query, put, v);
	cr_assert(strcmp(s, "lit=a%20b") == 0, "absent tag left out: %s", s);
	free(s);
	policy_buf_init(&b, 1024);
	cr_assert(expand_http_header(put, 0, v, &b, &omitted, why, sizeof(why)));
	cr_assert_str_eq(b.data, "note ../a b");
	policy_buf_free(&b);
	s = pipeline_expand(expand_http_body, put, v);
	cr_assert_str_eq(s, "{\"text\":\"x\\\"y\\n$(id) \xe6\x97\xa5\",\"rev\":3,"
	    "\"price\":\"0.50\",\"label\":\"{../a b} r3\",\"n\":[1,null]}");
	free(s);
	value_array_free(v, put->param_count);

	v = pipeline_values(grep, "\"{\\\"needle\\\": \\\"'; rm -rf / #\\\", "
	    "\\\"file\\\": \\\"auth\\\"}\"");
	s = pipeline_expand(expand_ssh_command, grep, v);
	cr_assert_str_eq(s, "'grep' '-F' '--' ''\\''; rm -rf / #' "
	    "'/var/log/auth.log'");
	free(s);
	value_array_free(v, grep->param_count);
	policy_free(p);
}

Test(buf, the_maximum_is_exact_and_a_failure_sticks)
{
	struct policy_buf b;
	size_t len = 0;
	char *s;

	policy_buf_init(&b, 5);
	cr_assert(policy_buf_append(&b, "abc", 3));
	cr_assert(policy_buf_printf(&b, "%d", 42));
	cr_assert_eq(b.len, 5);
	cr_assert_not(policy_buf_append_byte(&b, 'x'), "one past the maximum");
	cr_assert_not(policy_buf_append(&b, "", 0), "failed stays failed");
	cr_assert_null(policy_buf_steal(&b, &len));
	cr_assert_null(b.data);

	policy_buf_init(&b, 1000);
	cr_assert(policy_buf_append_str(&b, "\xe6\x97\xa5"));
	s = policy_buf_steal(&b, &len);
	cr_assert_str_eq(s, "\xe6\x97\xa5");
	cr_assert_eq(len, 3);
	free(s);
	policy_buf_init(&b, 10);
	s = policy_buf_steal(&b, &len);
	cr_assert_str_eq(s, "", "an empty buffer steals as an empty string");
	cr_assert_eq(len, 0);
	free(s);
}
