/*
 * policy_load(): syntax, keys, references, tools, params and templates;
 * one test per rule, each asserting the exact diagnostic at its place.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/policy_load_expect.h"

Test(load_syntax, error_points_at_the_bad_character)
{
	expect_only("{\"sallyport\": 1,\n  \"tools\": [1,]\n}", "]",
	    "unexpected character");
	expect_only("{\"sallyport\": 1}\n{}", "{}",
	    "trailing characters after the value");
	expect_only("{\"sallyport\": 01}", "01}", "number with a leading zero");
}

Test(load_syntax, raw_control_and_bad_utf8_and_nul_escape_refused)
{
	expect_only("{\"sallyport\": 1, \"x\": \"a\tb\"}", "\tb",
	    "raw control character in string");
	expect_only("{\"sallyport\": 1, \"x\": \"a\xc3(\"}", "\xc3(",
	    "UTF-8 sequence missing a continuation byte");
	expect_only("{\"sallyport\": 1, \"x\": \"a\\u0000\"}", "\\u0000",
	    "\\u0000 in string");
}

Test(load_keys, duplicate_key_refused_at_second_occurrence)
{
	expect_only("{\"sallyport\": 1,\n \"server\": {\"name\": \"a\", "
	    "\"name\" : \"b\"}}", "\"name\" :",
	    "server: duplicate key \"name\"");
}

Test(load_keys, unknown_keys_anywhere)
{
	expect_only("{\"sallyport\": 1, \"sallypor\": 1}", "\"sallypor\"",
	    "unknown key \"sallypor\"; did you mean \"sallyport\"?");
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\", "
	    "\"maxLenght\": 3}}"), "\"maxLenght\"",
	    "tools[0].params.id: unknown key \"maxLenght\" for a integer param");
	expect_only("{\"sallyport\": 1, \"limits\": {\"max_inflightt\": 3}}",
	    "\"max_inflightt\"", "limits: unknown key \"max_inflightt\"; "
	    "did you mean \"max_inflight\"?");
	/* two keys as near: no guess; a type's keys are not another's */
	expect_only("{\"sallyport\": 1, \"limits\": {\"max_\": 3}}",
	    "\"max_\"", "limits: unknown key \"max_\"");
}

Test(load_version, required_and_must_be_1)
{
	expect_only("{\"server\": {}}", "{\"server\"", "missing \"sallyport\"");
	expect_only("{\"sallyport\": 2}", "2",
	    "sallyport: unsupported policy version 2 (this sp reads version 1)");
	expect_only("{\"sallyport\": 1.0}", "1.0",
	    "sallyport: must be an integer, not 1.0");
}

Test(load_refs, target_credential_must_resolve)
{
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://a.example\", \"credential\": \"tokn\"}}}",
	    "\"tokn\"", "targets.api.credential: no credential named \"tokn\"");
}

Test(load_refs, tool_target_must_resolve)
{
	expect_only(HEAD T_HTTP "\"tools\": [{\"name\": \"t\", \"description\": "
	    "\"d\", \"target\": \"apj\", \"scope\": \"read\", \"http\": "
	    "{\"method\": \"GET\", \"path\": \"/\"}}]}", "\"apj\"",
	    "tools[0].target: no target named \"apj\"");
}

Test(load_refs, placeholder_must_name_a_param)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/items/{idd}\"}"), "\"/items",
	    "tools[0].http.path: placeholder {idd} names no param of this tool");
}

Test(load_refs, every_param_must_be_used)
{
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\"}, "
	    "\"qty\": {\"type\": \"integer\"}}"), "\"qty\"",
	    "tools[0].params: param \"qty\" is used by no placeholder");
}

Test(load_tools, name_syntax)
{
	char text[1024], name[80];

	expect_only(HEAD T_HTTP "\"tools\": [{\"name\": \"Get-Item\", "
	    "\"description\": \"d\", \"target\": \"api\", \"scope\": \"r\", "
	    "\"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}", "\"Get-Item\"",
	    "tools[0].name: bad tool name \"Get-Item\" (want "
	    "^[a-z][a-z0-9_]{0,63}$)");
	memset(name, 'a', 65);
	name[65] = '\0';
	snprintf(text, sizeof(text), HEAD T_HTTP "\"tools\": [{\"name\": "
	    "\"%s\", \"description\": \"d\", \"target\": \"api\", \"scope\": "
	    "\"r\", \"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}", name);
	expect_only(text, "\"aaaa", "tools[0].name: bad tool name "
	    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" (want "
	    "^[a-z][a-z0-9_]{0,63}$)");
	name[64] = '\0';
	snprintf(text, sizeof(text), HEAD T_HTTP "\"tools\": [{\"name\": "
	    "\"%s\", \"description\": \"d\", \"target\": \"api\", \"scope\": "
	    "\"r\", \"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}", name);
	policy_free(load_ok(text));
}

Test(load_tools, duplicate_name)
{
	expect_only(HEAD T_HTTP "\"tools\": [\n"
	    "{\"name\": \"t\", \"description\": \"d\", \"target\": \"api\", "
	    "\"scope\": \"r\", \"http\": {\"method\": \"GET\", \"path\": \"/\"}},\n"
	    "{\"name\": \"t\" , \"description\": \"d\", \"target\": \"api\", "
	    "\"scope\": \"r\", \"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}",
	    "\"t\" ,", "tools[1].name: duplicate tool name \"t\" (also tools[0])");
}

/* 61 two-byte characters: too long; 60 fine; empty refused; optional. */
Test(load_tools, title_bounds)
{
	char text[4096], title[256];
	struct policy *p;
	size_t i;

	for (i = 0; i < 61; i++)
		memcpy(title + 2 * i, "\xc3\xa9", 2);
	title[2 * 61] = '\0';
	snprintf(text, sizeof(text), TOOL("\"title\": \"%s\", " GET_ID
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"), title);
	expect_only(text, "\"\xc3\xa9", "tools[0].title: title is 61 "
	    "characters; at most 60");
	expect_only(TOOL("\"title\": \" \", " GET_ID "\"params\": {\"id\": "
	    "{\"type\": \"integer\"}}"), "\" \"", "tools[0].title: title is "
	    "empty");
	expect_only(TOOL("\"title\": 7, " GET_ID "\"params\": {\"id\": "
	    "{\"type\": \"integer\"}}"), "7,", "tools[0].title: must be a "
	    "string");
	title[2 * 60] = '\0';
	snprintf(text, sizeof(text), TOOL("\"title\": \"%s\", " GET_ID
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"), title);
	p = load_ok(text);
	cr_assert_str_eq(p->tools[0].title, title);
	policy_free(p);
	p = load_ok(TOOL(GET_ID "\"params\": {\"id\": {\"type\": "
	    "\"integer\"}}"));
	cr_assert_null(p->tools[0].title);
	policy_free(p);
}

/* 461 two-byte characters: too long; 460: fine (code points, not bytes). */
Test(load_tools, description_missing_empty_or_too_long)
{
	char text[4096], desc[1024];
	size_t i;

	expect_only(HEAD T_HTTP "\"tools\": [{\"name\": \"t\", \"target\": "
	    "\"api\", \"scope\": \"r\", \"http\": {\"method\": \"GET\", "
	    "\"path\": \"/\"}}]}", "{\"name\"", "tools[0]: missing \"description\"");
	expect_only(HEAD T_HTTP "\"tools\": [{\"name\": \"t\", \"description\": "
	    "\" \\n\", \"target\": \"api\", \"scope\": \"r\", \"http\": "
	    "{\"method\": \"GET\", \"path\": \"/\"}}]}", "\" \\n\"",
	    "tools[0].description: description is empty");
	for (i = 0; i < 461; i++)
		memcpy(desc + 2 * i, "\xc3\xa9", 2);
	desc[2 * 461] = '\0';
	snprintf(text, sizeof(text), HEAD T_HTTP "\"tools\": [{\"name\": \"t\", "
	    "\"description\": \"%s\", \"target\": \"api\", \"scope\": \"r\", "
	    "\"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}", desc);
	expect_only(text, "\"\xc3\xa9", "tools[0].description: description is "
	    "461 characters; at most 460");
	desc[2 * 460] = '\0';
	snprintf(text, sizeof(text), HEAD T_HTTP "\"tools\": [{\"name\": \"t\", "
	    "\"description\": \"%s\", \"target\": \"api\", \"scope\": \"r\", "
	    "\"http\": {\"method\": \"GET\", \"path\": \"/\"}}]}", desc);
	policy_free(load_ok(text));
}

Test(load_params, string_bounds_default_and_order)
{
	struct policy *p = load_ok(TOOL("\"http\": {\"method\": \"GET\", "
	    "\"path\": \"/{s}\"}, \"params\": {\"s\": {\"type\": \"string\"}}"));

	cr_assert_eq(p->tools[0].params[0].max_length, 1024);
	cr_assert_eq(p->tools[0].params[0].min_length, 0);
	cr_assert(p->tools[0].params[0].required);
	policy_free(p);
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"minLength\": 9, "
	    "\"maxLength\": 3}}"), "9,",
	    "tools[0].params.s.minLength: minLength 9 is greater than maxLength 3");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"maxLength\": 0}}"), "0}",
	    "tools[0].params.s.maxLength: must be between 1 and 65536");
}

Test(load_params, pattern_must_compile)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"pattern\": \"([a-z\"}}"),
	    "\"([a-z\"", "tools[0].params.s.pattern: pattern does not compile at "
	    "offset 5: missing terminating ] for character class");
}

Test(load_params, enum_values_checked_against_constraints)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"maxLength\": 3, "
	    "\"enum\": [\"ab\", \"abcd\"]}}"), "\"abcd\"",
	    "tools[0].params.s.enum[1]: enum value \"abcd\" must be at most 3 "
	    "characters long, not 4");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"pattern\": \"[a-z]+\", "
	    "\"enum\": [\"ab\", \"ab1\"]}}"), "\"ab1\"",
	    "tools[0].params.s.enum[1]: enum value \"ab1\" must match the "
	    "pattern [a-z]+");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"enum\": [\"x\", "
	    "\"x\" ]}}"), "\"x\" ]",
	    "tools[0].params.s.enum[1]: enum value \"x\" is listed twice");
}

Test(load_params, integer_range_and_no_floats)
{
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\", "
	    "\"minimum\": 5, \"maximum\": 1}}"), "5,",
	    "tools[0].params.id.minimum: minimum is greater than maximum");
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\", "
	    "\"maximum\": 1e3}}"), "1e3",
	    "tools[0].params.id.maximum: must be an integer, not 1e3");
}

Test(load_params, decimal_scale_and_bounds)
{
	struct policy *p;
	const char *head = "\"http\": {\"method\": \"GET\", \"path\": \"/{d}\"}, ";
	char text[2048];

	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\", \"scale\": 2, \"minimum\": \"-1.5\", \"maximum\": 7}}"),
	    head);
	p = load_ok(text);
	cr_assert_eq(p->tools[0].params[0].minimum, -150);
	cr_assert_eq(p->tools[0].params[0].maximum, 700);
	cr_assert_eq(p->tools[0].params[0].scale, 2);
	policy_free(p);
	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\", \"scale\": 19}}"), head);
	expect_only(text, "19", "tools[0].params.d.scale: must be between 0 and 18");
	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\"}}"), head);
	expect_only(text, "{\"type\": \"decimal\"", "tools[0].params.d: missing "
	    "\"scale\"");
	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\", \"scale\": 2, \"minimum\": 1.5}}"), head);
	expect_only(text, "1.5", "tools[0].params.d.minimum: must be a decimal "
	    "string such as \"12.50\" (floats are refused)");
	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\", \"scale\": 2, \"minimum\": 1E2}}"), head);
	expect_only(text, "1E2", "tools[0].params.d.minimum: must be a decimal "
	    "string such as \"12.50\" (floats are refused)");
	snprintf(text, sizeof(text), TOOL("%s\"params\": {\"d\": {\"type\": "
	    "\"decimal\", \"scale\": 2, \"maximum\": \"1.234\"}}"), head);
	expect_only(text, "\"1.234\"", "tools[0].params.d.maximum: must be a "
	    "decimal with at most 2 digits after the point");
}

Test(load_params, key_of_another_type_refused)
{
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\", "
	    "\"pattern\": \"x\"}}"), "\"pattern\"",
	    "tools[0].params.id: unknown key \"pattern\" for a integer param");
}


Test(load_templates, brace_syntax)
{
	struct policy *p;

	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/a}/{id}\"}, \"params\": {\"id\": {\"type\": \"integer\"}}"),
	    "\"/a}", "tools[0].http.path: a lone '}' (write '}}' for a literal "
	    "brace)");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/{id}/{x\"}, \"params\": {\"id\": {\"type\": \"integer\"}}"),
	    "\"/{id}/{x", "tools[0].http.path: unclosed '{' (write '{{' for a "
	    "literal brace)");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/{}/{id}\"}, \"params\": {\"id\": {\"type\": \"integer\"}}"),
	    "\"/{}", "tools[0].http.path: a placeholder needs a param name "
	    "between '{' and '}' (write '{{' for a literal brace)");
	p = load_ok(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/{{x}}/{id}\"}, \"params\": {\"id\": {\"type\": \"integer\"}}"));
	cr_assert_eq(p->tools[0].http.path.part_count, 2);
	cr_assert_str_eq(p->tools[0].http.path.parts[0].literal, "/{x}/");
	cr_assert(p->tools[0].http.path.parts[1].is_param);
	policy_free(p);
}

Test(load_templates, optional_param_only_as_a_whole_value)
{
	struct policy *p;

	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/{id}\"}, \"params\": {\"id\": {\"type\": \"integer\", "
	    "\"required\": false}}"), "\"/{id}\"", "tools[0].http.path: optional "
	    "param \"id\" can only be a whole query value, header value or body "
	    "string");
	p = load_ok(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"query\": {\"q\": \"{id}\"}}, \"params\": {\"id\": {\"type\": "
	    "\"integer\", \"required\": false}}"));
	cr_assert_not(p->tools[0].params[0].required);
	cr_assert_str_eq(p->tools[0].http.query[0].name, "q");
	policy_free(p);
}

Test(load_templates, ssh_command_is_literal)
{
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\"}},\n\"tools\": [{\"name\": "
	    "\"t\", \"description\": \"d\", \"target\": \"web\", \"scope\": \"r\", "
	    "\"ssh\": {\"argv\": [\"{cmd}\", \"-h\"]}, \"params\": {\"cmd\": "
	    "{\"type\": \"string\", \"enum\": [\"df\"]}}}]}", "\"{cmd}\"",
	    "tools[0].ssh.argv[0]: the command (argv[0]) cannot hold a "
	    "placeholder");
}

/* Dot segments, plain or percent-encoded, anywhere in the literal path. */
Test(load_templates, path_has_no_dot_segments)
{
	static const char *const paths[] = { "/a/../b", "/a/..", "/./a",
	    "/a/%2e%2e/b", "/a/%2E.", "/x/.%2e" };
	char text[1024], needle[64];
	size_t i;
	struct policy *p;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(needle, sizeof(needle), "\"%s\"", paths[i]);
		snprintf(text, sizeof(text), TOOL("\"http\": {\"method\": \"GET\", "
		    "\"path\": \"%s\"}"), paths[i]);
		expect_only(text, needle, "tools[0].http.path: has a '.' or "
		    "'..' segment");
	}
	p = load_ok(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/a..b/.well-known/%2F%2Fx\"}"));
	policy_free(p);
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com/v1/%2E%2e\"}}}", "\"https://",
	    "targets.api.base_url: has a '.' or '..' segment");
}

Test(load_templates, get_has_no_body_and_action_fits_target)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"body\": {}}"), "\"body\"", "tools[0].http: a GET request has no "
	    "body");
	expect_only(TOOL("\"ssh\": {\"argv\": [\"df\"]}"), "\"ssh\"",
	    "tools[0]: the target is an http target; use \"http\"");
}

Test(load_tools, action_members)
{
	expect_only(TOOL("\"http\": {\"method\": \"TRACE\", \"path\": \"/\"}"),
	    "\"TRACE\"", "tools[0].http.method: must be GET, HEAD, POST, PUT, "
	    "PATCH or DELETE");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"headers\": {\"Host\": \"evil.example\"}}"), "\"Host\"",
	    "tools[0].http.headers: \"Host\" is not a header name a policy may "
	    "set");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"headers\": {\"X-A\": \"a\\r\\nX-Injected: 1\"}}"), "\"a\\r",
	    "tools[0].http.headers.X-A: a header value cannot hold control "
	    "characters");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"query\": {\"a=b\": \"c\"}}"), "\"a=b\"",
	    "tools[0].http.query: bad query name \"a=b\"");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\"}, "
	    "\"ssh\": {\"argv\": [\"df\"]}"), "\"ssh\"",
	    "tools[0]: a tool has \"http\" or \"ssh\", not both");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\"}, "
	    "\"idempotent\": true"), "\"idempotent\"",
	    "tools[0]: \"idempotent\" applies only to a mutating tool");
	expect_among(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\"}, "
	    "\"params\": {\"Id\": {\"type\": \"integer\"}}"), "\"Id\"",
	    "tools[0].params: bad param name \"Id\" (want ^[a-z][a-z0-9_]{0,63}$)");
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\"}},\n\"tools\": "
	    "[{\"name\": \"t\", \"description\": \"d\", \"target\": \"web\", "
	    "\"scope\": \"r\", \"ssh\": {\"argv\": []}}]}", "[]",
	    "tools[0].ssh.argv: must be an array of 1 to 256 strings");
}


/*
 * Review F4: a literal '%' in a path only as %XX, never %2e, so a value
 * next to it cannot finish an encoded dot segment ("%{a}%{b}" with "2e").
 */
#define NOT_HEX "has a '%' not followed by two hex digits (a placeholder " \
	"cannot supply them)"
#define ENCODED_DOT "has an encoded dot %2e; write '.' (and no '.' or '..' " \
	"segment)"

Test(load_templates, path_percent_only_as_hex_pairs_and_never_a_dot)
{
	static const char *const bad[][2] = {
		{ "/files/%{a}/raw", NOT_HEX },
		{ "/files/%2{a}/raw", NOT_HEX },
		{ "/files/{a}%", NOT_HEX },
		{ "/files/%zz{a}", NOT_HEX },
		{ "/docs/%2e{a}/x", ENCODED_DOT },
		{ "/docs/{a}%2E", ENCODED_DOT },
		{ "/a..b/.well-known/%2e%2ex{a}", ENCODED_DOT },
	};
	char text[1024], path[64], want[256];
	struct policy *p;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "\"%s\"", bad[i][0]);
		snprintf(text, sizeof(text), TOOL("\"http\": {\"method\": "
		    "\"GET\", \"path\": %s}, \"params\": {\"a\": {\"type\": "
		    "\"string\"}}"), path);
		snprintf(want, sizeof(want), "tools[0].http.path: %s",
		    bad[i][1]);
		expect_among(text, path, want);
	}
	p = load_ok(TOOL("\"http\": {\"method\": \"GET\", \"path\": "
	    "\"/a%2Fb/%C3%A9{a}%41\"}, \"params\": {\"a\": {\"type\": "
	    "\"string\"}}"));
	cr_assert_str_eq(p->tools[0].http.path.parts[0].literal,
	    "/a%2Fb/%C3%A9");
	policy_free(p);
}

/*
 * Issue 14 finding 3: a value that begins an ssh.argv element with '-'
 * is an option to the remote program; sp check warns where one can.
 */
#define SSH_TOOL(argv, params) SSH_HEAD ", \"known_hosts\": \"/kh\"}},\n" \
	"\"tools\": [{\"name\": \"t\", \"description\": \"d\", \"target\": " \
	"\"web\", \"scope\": \"r\",\n\"ssh\": {\"argv\": " argv "},\n" \
	"\"params\": " params "}]}"

static void
expect_warning(const char *text, const char *needle, int index,
    const char *param)
{
	char want[512], *all = load_warnings(text);
	unsigned line, col;

	text_position_of(text, needle, &line, &col);
	snprintf(want, sizeof(want), "t.json:%u:%u: warning: tools[0].ssh.argv"
	    "[%d]: a value of {%s} may start with '-' and no \"--\" element comes "
	    "before it: such calls are refused (put \"--\" before it, or set "
	    "\"allow_leading_dash\": true on the param)\n", line, col, index,
	    param);
	cr_assert_str_eq(all, want);
	free(all);
}

static void
expect_no_warning(const char *text)
{
	char *all = load_warnings(text);

	cr_assert_str_eq(all, "", "got: %s", all);
	free(all);
}

#define S_PARAM(extra) "{\"p\": {\"type\": \"string\"" extra "}}"
#define I_PARAM(extra) "{\"p\": {\"type\": \"integer\"" extra "}}"

Test(load_argv_dash, check_warns_of_a_placeholder_that_can_begin_an_option)
{
	expect_warning(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"pattern\": \"[A-Za-z0-9_./-]+\"")), "\"{p}\"", 1, "p");
	expect_warning(SSH_TOOL("[\"head\", \"-n\", \"{p}\"]", I_PARAM("")),
	    "\"{p}\"", 2, "p");
	expect_warning(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"enum\": [\"a\", \"-la\"]")), "\"{p}\"", 1, "p");
	expect_no_warning(SSH_TOOL("[\"ls\", \"--\", \"{p}\"]", S_PARAM("")));
	expect_no_warning(SSH_TOOL("[\"ls\", \"./{p}\"]", S_PARAM("")));
	expect_no_warning(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"allow_leading_dash\": true")));
	expect_no_warning(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"enum\": [\"a\", \"b-\"]")));
	expect_no_warning(SSH_TOOL("[\"head\", \"-n\", \"{p}\"]",
	    I_PARAM(", \"minimum\": 0")));
	expect_no_warning(SSH_TOOL("[\"ls\", \"{p}\"]",
	    "{\"p\": {\"type\": \"boolean\"}}"));
}

/* {a} may be empty, so {b} can lead; {c} has a minimum length. */
Test(load_argv_dash, an_empty_leading_value_lets_the_next_one_lead)
{
	const char *text = SSH_TOOL("[\"ls\", \"-l\", \"{a}{b}\", \"{c}{d}\"]",
	    "{\"a\": {\"type\": \"string\", \"enum\": [\"\", \"x\"]}, "
	    "\"b\": {\"type\": \"string\"}, "
	    "\"c\": {\"type\": \"string\", \"minLength\": 1, \"enum\": [\"x\"]}, "
	    "\"d\": {\"type\": \"string\"}}");
	char *all = load_warnings(text);

	cr_assert_not_null(strstr(all, "argv[2]: a value of {b} may start"),
	    "%s", all);
	cr_assert_null(strstr(all, "{a} may"), "%s", all);
	cr_assert_null(strstr(all, "{d} may"), "%s", all);
	free(all);
}

Test(load_argv_dash, allow_leading_dash_is_for_ssh_params_only)
{
	struct policy *p = load_ok(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"allow_leading_dash\": true")));

	cr_assert(p->tools[0].params[0].allow_leading_dash);
	policy_free(p);
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{p}\"}, "
	    "\"params\": {\"p\": {\"type\": \"string\", "
	    "\"allow_leading_dash\": true}}"), "\"allow_leading_dash\"",
	    "tools[0].params.p: \"allow_leading_dash\" applies only to a param "
	    "of an ssh tool");
	expect_only(SSH_TOOL("[\"ls\", \"{p}\"]", "{\"p\": {\"type\": "
	    "\"boolean\", \"allow_leading_dash\": true}}"),
	    "\"allow_leading_dash\"", "tools[0].params.p: unknown key "
	    "\"allow_leading_dash\" for a boolean param");
	expect_among(SSH_TOOL("[\"ls\", \"{p}\"]", S_PARAM(
	    ", \"allow_leading_dash\": 1")), "1}",
	    "tools[0].params.p.allow_leading_dash: must be true or false");
}

/* A tool's limits (state/limits.h): each key, its range, its param. */
Test(load_tools, limits_keys_ranges_and_params)
{
	struct policy *p;

	p = load_ok(TOOL(GET_ID "\"limits\": {\"min_interval_ms\": 5000, "
	    "\"per_day\": 50, \"max_distinct\": {\"id\": 10}},\n"
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"));
	cr_assert_eq(p->tools[0].limits.min_interval_ms, 5000);
	cr_assert_eq(p->tools[0].limits.per_day, 50);
	cr_assert_eq(p->tools[0].limits.max_distinct[0], 10);
	cr_assert(p->tools[0].limits.any);
	cr_assert_eq(p->limits.dedupe_ms, 10000);
	policy_free(p);
	p = load_ok(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\"}}"));
	cr_assert_not(p->tools[0].limits.any);
	cr_assert_null(p->tools[0].limits.max_distinct);
	policy_free(p);
	expect_only(TOOL(GET_ID "\"limits\": {\"max_distinct\": {\"idx\": 3}},\n"
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"), "\"idx\"",
	    "tools[0].limits.max_distinct: \"idx\" is not a param of this "
	    "tool");
	expect_among(TOOL(GET_ID "\"limits\": {\"per_day\": 0},\n"
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"), "0}",
	    "tools[0].limits.per_day: must be between 1 and 1000000");
	expect_among(TOOL(GET_ID "\"limits\": {\"per_hour\": 3},\n"
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"), "\"per_hour\"",
	    "tools[0].limits: unknown key \"per_hour\"");
}

/* idempotency: mutating tools only, a window, a header the request lacks. */
Test(load_tools, idempotency_window_and_header)
{
	struct policy *p;

	p = load_ok(TOOL("\"mutating\": true, \"idempotency\": {\"window_s\": "
	    "60, \"header\": \"Idempotency-Key\"}, " GET_ID
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"));
	cr_assert_eq(p->tools[0].idem_window_s, 60);
	cr_assert_str_eq(p->tools[0].idem_header, "Idempotency-Key");
	policy_free(p);
	expect_only(TOOL("\"idempotency\": {\"window_s\": 60}, " GET_ID
	    "\"params\": {\"id\": {\"type\": \"integer\"}}"),
	    "\"idempotency\"", "tools[0]: \"idempotency\" applies only to a "
	    "mutating tool");
	expect_only(TOOL("\"mutating\": true, \"idempotency\": {\"header\": "
	    "\"X-Key\"}, " GET_ID "\"params\": {\"id\": {\"type\": "
	    "\"integer\"}}"), "{\"header\"", "tools[0].idempotency: missing "
	    "\"window_s\"");
	expect_only(TOOL("\"mutating\": true, \"idempotency\": {\"window_s\": "
	    "60, \"header\": \"Authorization\"}, " GET_ID "\"params\": "
	    "{\"id\": {\"type\": \"integer\"}}"), "\"Authorization\"",
	    "tools[0].idempotency.header: must be a header name the policy "
	    "may set");
}
