/*
 * policy_load(): one test per rule of DESIGN.md section 4, each asserting
 * the exact diagnostic and that it points at the offending text.  The
 * expected line:col is computed from where a unique needle sits in the
 * policy text, so a test states "this message, at this piece of text".
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/load.h"

#define HEAD "{\"sallyport\": 1,\n"
#define T_HTTP "\"targets\": {\"api\": {\"type\": \"http\", " \
	"\"base_url\": \"https://api.example.com\"}},\n"
#define TOOL_HEAD "\"tools\": [{\"name\": \"t\", \"description\": \"d\", " \
	"\"target\": \"api\", \"scope\": \"read\",\n"
/* A policy with one http tool whose action and params are given. */
#define TOOL(rest) HEAD T_HTTP TOOL_HEAD rest "}]}"
#define GET_ID "\"http\": {\"method\": \"GET\", \"path\": \"/items/{id}\"},\n"

/* 1-based line and code-point column of needle, which must be unique. */
static void
position_of(const char *text, const char *needle, unsigned *line,
    unsigned *col)
{
	const char *at = strstr(text, needle), *p;

	cr_assert_not_null(at, "needle %s not in the text", needle);
	cr_assert_null(strstr(at + 1, needle), "needle %s not unique", needle);
	*line = 1;
	*col = 1;
	for (p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)*p & 0xc0) != 0x80)
			(*col)++;
	}
}

static char *
joined(const struct policy_diags *d)
{
	size_t i, n = 1;
	char *s;

	for (i = 0; i < d->count; i++)
		n += strlen(d->items[i].text) + 1;
	s = calloc(1, n);
	for (i = 0; i < d->count; i++) {
		strcat(s, d->items[i].text);
		strcat(s, "\n");
	}
	return s;
}

static bool
has_line(const struct policy_diags *d, const char *want)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		if (strcmp(d->items[i].text, want) == 0)
			return true;
	return false;
}

/* The text is refused with want among its diagnostics, at needle. */
static void
expect_among(const char *text, const char *needle, const char *message)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	unsigned line, col;
	char want[1024], *all = joined(&d);

	position_of(text, needle, &line, &col);
	snprintf(want, sizeof(want), "t.json:%u:%u: %s", line, col, message);
	cr_assert_null(p, "policy accepted; want %s", want);
	cr_assert(has_line(&d, want), "want: %s\ngot:\n%s", want, all);
	free(all);
	policy_diags_free(&d);
}

/* As expect_among, and that diagnostic is the only one. */
static void
expect_only(const char *text, const char *needle, const char *message)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	char *all = joined(&d);

	cr_assert_null(p);
	cr_assert_eq(d.count, 1, "want one diagnostic, got:\n%s", all);
	free(all);
	policy_free(p);
	policy_diags_free(&d);
	expect_among(text, needle, message);
}

static struct policy *
load_ok(const char *text)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	char *all = joined(&d);

	cr_assert_not_null(p, "refused:\n%s", all);
	cr_assert_eq(d.count, 0, "diagnostics:\n%s", all);
	free(all);
	policy_diags_free(&d);
	return p;
}

Test(load_syntax, error_points_at_the_bad_character)
{
	expect_only("{\"sallyport\": 1,\n  \"tools\": [1,]\n}", "]",
	    "unexpected character");
	expect_only("{\"sallyport\": 1}\n{}", "{}",
	    "text after the end of the JSON value");
	expect_only("{\"sallyport\": 01}", "1}", "leading zero in number");
}

Test(load_syntax, raw_control_and_bad_utf8_and_nul_escape_refused)
{
	expect_only("{\"sallyport\": 1, \"x\": \"a\tb\"}", "\tb",
	    "control character in string");
	expect_only("{\"sallyport\": 1, \"x\": \"a\xc3(\"}", "\xc3(",
	    "invalid UTF-8 in string");
	expect_only("{\"sallyport\": 1, \"x\": \"a\\u0000\"}", "\"}",
	    "\\u0000 is not allowed");
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
	    "unknown key \"sallypor\"");
	expect_only(TOOL(GET_ID "\"params\": {\"id\": {\"type\": \"integer\", "
	    "\"maxLenght\": 3}}"), "\"maxLenght\"",
	    "tools[0].params.id: unknown key \"maxLenght\" for a integer param");
	expect_only("{\"sallyport\": 1, \"limits\": {\"max_inflightt\": 3}}",
	    "\"max_inflightt\"", "limits: unknown key \"max_inflightt\"");
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
	    "\"([a-z\"", "tools[0].params.s.pattern: pattern does not compile as "
	    "a POSIX extended regular expression: Unmatched [, [^, [:, [., or [=");
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

Test(load_targets, https_unless_loopback)
{
	struct policy *p;

	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"http://api.example.com\"}}}", "\"http://",
	    "targets.api.base_url: uses http:// for a host that is not "
	    "loopback; use https://");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"http://128.0.0.1\"}}}", "\"http://",
	    "targets.api.base_url: uses http:// for a host that is not "
	    "loopback; use https://");
	p = load_ok(HEAD "\"targets\": {\"a\": {\"type\": \"http\", \"base_url\": "
	    "\"http://127.9.0.1:8080/v1/\"}, \"b\": {\"type\": \"http\", "
	    "\"base_url\": \"http://[::1]\"}, \"c\": {\"type\": \"http\", "
	    "\"base_url\": \"http://localhost\"}, \"d\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com\"}}}");
	cr_assert_str_eq(p->targets[0].host, "127.9.0.1");
	cr_assert_eq(p->targets[0].port, 8080);
	cr_assert_str_eq(p->targets[0].base_path, "/v1");
	cr_assert(p->targets[0].allow_loopback);
	cr_assert_str_eq(p->targets[1].host, "::1");
	cr_assert_eq(p->targets[1].port, 80);
	cr_assert_str_eq(p->targets[2].scheme, "http");
	cr_assert_eq(p->targets[3].port, 443);
	cr_assert_not(p->targets[3].allow_loopback);
	policy_free(p);
}

Test(load_targets, base_url_has_no_userinfo_query_fragment)
{
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://u:p@api.example.com\"}}}", "\"https://",
	    "targets.api.base_url: must not hold user information (put secrets "
	    "in a credential)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com/x?a=1\"}}}", "\"https://",
	    "targets.api.base_url: must not have a query or a fragment");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com#f\"}}}", "\"https://",
	    "targets.api.base_url: must not have a query or a fragment");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com:70000\"}}}", "\"https://",
	    "targets.api.base_url: has a bad port (1 to 65535)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"ftp://api.example.com\"}}}", "\"ftp://",
	    "targets.api.base_url: must start with https:// (or http:// for a "
	    "loopback host)");
	expect_only(HEAD "\"targets\": {\"api\": {\"type\": \"http\", "
	    "\"base_url\": \"https://api.example.com/a/../b\"}}}", "\"https://",
	    "targets.api.base_url: has a '.' or '..' segment");
}

#define SSH_HEAD HEAD "\"credentials\": {\"k\": {\"type\": \"ssh-key\", " \
	"\"private_key\": \"/k\"}},\n\"targets\": {\"web\": {\"type\": \"ssh\", " \
	"\"host\": \"web1.example.com\", \"user\": \"ops\", \"credential\": \"k\""

Test(load_targets, ssh_host_key_required_in_one_form)
{
	struct policy *p;

	expect_only(SSH_HEAD "}}}", "{\"type\": \"ssh\"", "targets.web: an ssh "
	    "target needs \"known_hosts\" or \"host_key_sha256\": host keys are "
	    "always verified");
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\", \"host_key_sha256\": "
	    "\"SHA256:x\"}}}", "\"host_key_sha256\"", "targets.web: give "
	    "\"known_hosts\" or \"host_key_sha256\", not both");
	expect_only(SSH_HEAD ", \"host_key_sha256\": \"SHA256:abc\"}}}",
	    "\"SHA256:abc\"", "targets.web.host_key_sha256: must be \"SHA256:\" "
	    "and 43 base64 characters (as ssh-keygen -l prints) or 64 hex digits");
	/* 43 characters whose last one carries bits past the 32 bytes. */
	expect_only(SSH_HEAD ", \"host_key_sha256\": "
	    "\"SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa1\"}}}",
	    "\"SHA256:ung", "targets.web.host_key_sha256: must be \"SHA256:\" "
	    "and 43 base64 characters (as ssh-keygen -l prints) or 64 hex digits");
	expect_only(SSH_HEAD ", \"known_hosts\": \"/kh\", "
	    "\"strict_host_key_checking\": false}}}", "\"strict_host_key_checking\"",
	    "targets.web: unknown key \"strict_host_key_checking\"");
	/* The OpenSSH form and hex name the same digest. */
	p = load_ok(SSH_HEAD ", \"host_key_sha256\": "
	    "\"SHA256:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0\"}, "
	    "\"w2\": {\"type\": \"ssh\", \"host\": \"10.0.0.2\", \"user\": \"ops\", "
	    "\"credential\": \"k\", \"host_key_sha256\": "
	    "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}}");
	cr_assert(p->targets[0].has_host_key_sha256);
	cr_assert_eq(memcmp(p->targets[0].host_key_sha256,
	    p->targets[1].host_key_sha256, 32), 0);
	cr_assert_eq(p->targets[0].port, 22);
	policy_free(p);
}

Test(load_credentials, types_and_their_keys)
{
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"token\", "
	    "\"file\": \"/f\"}}}", "\"token\"", "credentials.c.type: unknown "
	    "credential type \"token\" (bearer, basic, header, ssh-key)");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"header\", "
	    "\"file\": \"/f\"}}}", "{\"type\": \"header\"",
	    "credentials.c: missing \"header_name\"");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"header\", "
	    "\"file\": \"/f\", \"header_name\": \"X Key\"}}}", "\"X Key\"",
	    "credentials.c.header_name: must be an HTTP header name other than "
	    "Host, Content-Length, Transfer-Encoding, Connection, Authorization");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"bearer\", "
	    "\"file\": \"/f\", \"private_key\": \"/k\"}}}", "\"private_key\"",
	    "credentials.c: \"private_key\" does not apply to a credential of "
	    "type bearer");
	expect_only(HEAD "\"credentials\": {\"c\": {\"type\": \"basic\", "
	    "\"file\": \"f\"}}}", "\"f\"", "credentials.c.file: must be an "
	    "absolute path");
}

Test(load_credentials, target_needs_a_fitting_type)
{
	expect_only(HEAD "\"credentials\": {\"b\": {\"type\": \"bearer\", "
	    "\"file\": \"/f\"}},\n\"targets\": {\"web\": {\"type\": \"ssh\", "
	    "\"host\": \"h\", \"user\": \"ops\", \"known_hosts\": \"/kh\", "
	    "\"credential\": \"b\"}}}", "\"b\"}}}", "targets.web.credential: "
	    "credential \"b\" is of type bearer; an ssh target needs an ssh-key");
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

Test(load_templates, get_has_no_body_and_action_fits_target)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/\", "
	    "\"body\": {}}"), "\"body\"", "tools[0].http: a GET request has no "
	    "body");
	expect_only(TOOL("\"ssh\": {\"argv\": [\"df\"]}"), "\"ssh\"",
	    "tools[0]: the target is an http target; use \"http\"");
}

Test(load_top, limits_server_and_pin)
{
	expect_only("{\"sallyport\": 1, \"limits\": {\"max_inflight\": 0}}", "0}",
	    "limits.max_inflight: must be between 1 and 256");
	expect_only("{\"sallyport\": 1, \"limits\": {\"call_timeout_ms\": "
	    "600001}}", "600001", "limits.call_timeout_ms: must be between 100 "
	    "and 600000");
	expect_only("{\"sallyport\": 1, \"server\": {\"on_invalid\": \"drop\"}}",
	    "\"drop\"", "server.on_invalid: must be \"close\" or \"reject\"");
	expect_only("{\"sallyport\": 1, \"server\": {\"sandbox\": \"off\"}}",
	    "\"off\"", "server.sandbox: must be \"required\" or \"best-effort\"");
	expect_only("{\"sallyport\": 1, \"catalog_sha256\": \"abc\"}", "\"abc\"",
	    "catalog_sha256: must be 64 hexadecimal digits (the fingerprint "
	    "printed by sp catalog)");
}

Test(load_top, settings_reach_the_struct)
{
	struct policy *p = load_ok("{\"sallyport\": 1, \"server\": {\"name\": "
	    "\"gw\", \"on_invalid\": \"reject\", \"sandbox\": \"best-effort\"}, "
	    "\"limits\": {\"max_inflight\": 3, \"call_timeout_ms\": 2500}, "
	    "\"catalog_sha256\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a"
	    "9cb410ff61f20015ad\"}");

	cr_assert_str_eq(p->server_name, "gw");
	cr_assert_eq(p->on_invalid, POLICY_ON_INVALID_REJECT);
	cr_assert_eq(p->sandbox, POLICY_SANDBOX_BEST_EFFORT);
	cr_assert_eq(p->limits.max_inflight, 3);
	cr_assert_eq(p->limits.call_timeout_ms, 2500);
	cr_assert_eq(p->limits.calls_per_session, 200);
	cr_assert(p->has_catalog_pin);
	cr_assert_eq(p->catalog_pin[0], 0xba);
	policy_free(p);
}

Test(load_profiles, scopes_and_match)
{
	struct policy *p;

	expect_only("{\"sallyport\": 1, \"profiles\": {\"p\": {\"scopes\": "
	    "[\"read\", \"*\"]}}}", "\"*\"", "profiles.p.scopes[1]: \"*\": there "
	    "is no wildcard scope; list each scope");
	expect_only("{\"sallyport\": 1, \"profiles\": {\"p\": {\"scopes\": [], "
	    "\"match\": {\"uid\": [-1]}}}}", "-1", "profiles.p.match.uid[0]: must "
	    "be between 0 and 4294967294");
	p = load_ok("{\"sallyport\": 1, \"profiles\": {\"none\": {\"scopes\": []},"
	    " \"ops\": {\"scopes\": [\"read\", \"write\"], \"match\": {\"uid\": "
	    "[1001, 0], \"gid\": [7]}}}}");
	cr_assert_eq(p->profile_count, 2);
	cr_assert_eq(p->profiles[0].scope_count, 0);
	cr_assert_eq(p->profiles[1].scope_count, 2);
	cr_assert_eq(p->profiles[1].match_uid_count, 2);
	cr_assert_eq(p->profiles[1].match_uids[0], 1001);
	cr_assert_eq(p->profiles[1].match_gids[0], 7);
	policy_free(p);
}

Test(load_all, every_problem_is_reported)
{
	const char *text = "{\"sallyport\": 1, \"x\": 1,\n"
	    "\"server\": {\"sandbox\": \"no\"},\n"
	    "\"targets\": {\"api\": {\"type\": \"http\", \"base_url\": "
	    "\"http://example.com\"}},\n"
	    "\"tools\": [{\"name\": \"T\", \"description\": \"d\", \"target\": "
	    "\"api\", \"scope\": \"r\", \"http\": {\"method\": \"GET\", "
	    "\"path\": \"/{nope}\"}}],\n"
	    "\"profiles\": {\"p\": {\"scopes\": [\"*\"]}}}";
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	char *all = joined(&d);

	cr_assert_null(p);
	cr_assert_eq(d.count, 6, "got:\n%s", all);
	cr_assert_eq(d.errors, 6);
	cr_assert(strstr(all, "t.json:1:18: unknown key \"x\"\n"), "%s", all);
	cr_assert(strstr(all, "t.json:2:23: server.sandbox:"), "%s", all);
	cr_assert(strstr(all, "t.json:3:49: targets.api.base_url:"), "%s", all);
	cr_assert(strstr(all, "t.json:4:20: tools[0].name:"), "%s", all);
	cr_assert(strstr(all, "t.json:4:110: tools[0].http.path:"), "%s", all);
	cr_assert(strstr(all, "t.json:5:31: profiles.p.scopes[0]:"), "%s", all);
	free(all);
	policy_diags_free(&d);
}

/* Quotes, newlines, $() and multibyte text stay inside one line. */
Test(load_all, hostile_values_keep_messages_on_one_line)
{
	const char *text = "{\"sallyport\": 1, \"a\\n\\\"b$(id)\\u001b[31m\xe2\x80\xae"
	    "\xc3\xa9\": 1}";
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("dir/\nx.json", text, strlen(text), &d);
	const char *s;

	cr_assert_null(p);
	cr_assert_eq(d.count, 1);
	for (s = d.items[0].text; *s != '\0'; s++)
		cr_assert((unsigned char)*s >= 0x20 && *s != 0x7f,
		    "control character in %s", d.items[0].text);
	cr_assert_str_eq(d.items[0].text, "dir/?x.json:1:18: unknown key "
	    "\"a\\n\\\"b$(id)\\u001b[31m\xe2\x80\xae\xc3\xa9\"");
	policy_diags_free(&d);
}

Test(load_all, design_example_loads_into_the_model)
{
	FILE *f;
	char path[4096], *text;
	long n;
	struct policy *p;
	const struct policy_tool *t;

	snprintf(path, sizeof(path), "%s/contrib/examples/design.json",
	    getenv("SP_SRCDIR") ? getenv("SP_SRCDIR") : ".");
	cr_assert_not_null(f = fopen(path, "r"), "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p = load_ok(text);
	cr_assert_eq(p->tool_count, 3);
	cr_assert_eq(p->target_count, 2);
	cr_assert_eq(p->secret_file_count, 2);
	t = &p->tools[1];
	cr_assert_str_eq(t->name, "create_item");
	cr_assert(t->mutating && t->confirm);
	cr_assert_eq(t->http.body->kind, BODY_OBJECT);
	cr_assert_eq(t->http.body->child_count, 2);
	cr_assert_str_eq(t->http.body->children[1].key, "qty");
	cr_assert_eq(t->http.body->children[1].string.part_count, 1);
	cr_assert(t->http.body->children[1].string.parts[0].is_param);
	t = &p->tools[2];
	cr_assert_eq(t->kind, TOOL_SSH);
	cr_assert_eq(t->ssh.argc, 3);
	cr_assert_eq(t->params[0].enum_count, 2);
	cr_assert_eq(p->targets[p->tools[2].target_index].type, TARGET_SSH);
	policy_free(p);
	free(text);
}
