#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/catalog.h"
#include "policy/load.h"
#include "tests/unit/policy_fixture.h"

static char *
render(const struct policy *p, int profile)
{
	size_t len = 0;
	char *s = policy_catalog_render(p, profile < 0 ? NULL :
	    &p->profiles[profile], &len);

	cr_assert_not_null(s);
	cr_assert_eq(len, strlen(s));
	return s;
}

static cJSON *
path(cJSON *root, const char *const *keys)
{
	for (; root != NULL && *keys != NULL; keys++)
		root = cJSON_IsArray(root) ? cJSON_GetArrayItem(root, atoi(*keys)) :
		    cJSON_GetObjectItemCaseSensitive(root, *keys);
	return root;
}

#define AT(root, ...) path((root), (const char *const[]){ __VA_ARGS__, NULL })

Test(catalog, a_reader_sees_exactly_its_tool_as_mcp_wants_it)
{
	char *s = render(fixture_policy(), FIXTURE_READER);

	cr_assert_str_eq(s, "{\"tools\":[{\"name\":\"get_item\","
	    "\"description\":\"Read one item by its id.\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"id\":"
	    "{\"type\":\"integer\",\"description\":\"Item id\",\"minimum\":1}},"
	    "\"required\":[\"id\"],\"additionalProperties\":false},"
	    "\"annotations\":{\"readOnlyHint\":true},"
	    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
	    "\"issuer\":{\"type\":\"string\"},\"outcome\":{\"type\":\"string\","
	    "\"enum\":[\"ok\",\"failed\",\"unknown\",\"denied\",\"invalid\"]},"
	    "\"message\":{\"type\":\"string\"},\"http\":{\"type\":\"object\","
	    "\"properties\":{\"status\":{\"type\":\"integer\"},\"content_type\":"
	    "{\"type\":\"string\"},\"body\":{},\"truncated\":{\"type\":"
	    "\"boolean\"}}}},\"required\":[\"issuer\",\"outcome\"]}}]}");
	free(s);
}

Test(catalog, string_integer_decimal_and_boolean_schemas)
{
	char *s = render(fixture_policy(), FIXTURE_WRITER);
	cJSON *root = cJSON_Parse(s), *t, *props;

	cr_assert_not_null(root);
	cr_assert_eq(cJSON_GetArraySize(AT(root, "tools")), 2);
	t = AT(root, "tools", "1");
	cr_assert_str_eq(AT(t, "name")->valuestring, "create_item");
	props = AT(t, "inputSchema", "properties");
	cr_assert_eq(AT(props, "name", "minLength")->valueint, 1);
	cr_assert_eq(AT(props, "name", "maxLength")->valueint, 80);
	cr_assert_eq(AT(props, "qty", "maximum")->valueint, 100);
	cr_assert_str_eq(AT(props, "price", "type")->valuestring, "string");
	cr_assert_str_eq(AT(props, "price", "pattern")->valuestring,
	    "^[0-9]+(\\.[0-9]{1,2})?$");
	cr_assert_str_eq(AT(props, "price", "description")->valuestring,
	    "Decimal string with at most 2 decimals, at least 0.00, at most "
	    "1000.00.");
	cr_assert_str_eq(AT(props, "color", "enum", "2")->valuestring, "blue sky");
	cr_assert_str_eq(AT(props, "code", "pattern")->valuestring,
	    "^([A-Z]{2}[0-9]+)$");
	cr_assert_null(AT(props, "code", "minLength"), "0 is not written");
	cr_assert_str_eq(AT(props, "urgent", "type")->valuestring, "boolean");
	cr_assert_eq(cJSON_GetArraySize(AT(t, "inputSchema", "required")), 2);
	cr_assert(cJSON_IsFalse(AT(t, "inputSchema", "additionalProperties")));
	cr_assert(cJSON_IsFalse(AT(t, "annotations", "readOnlyHint")));
	cr_assert(cJSON_IsFalse(AT(t, "annotations", "destructiveHint")));
	cr_assert(cJSON_IsFalse(AT(t, "annotations", "idempotentHint")));
	cJSON_Delete(root);
	free(s);
}

Test(catalog, ssh_tools_promise_an_ssh_result)
{
	char *s = render(fixture_policy(), FIXTURE_OPS);
	cJSON *root = cJSON_Parse(s), *t = AT(root, "tools", "0");

	cr_assert_str_eq(AT(t, "name")->valuestring, "run_echo");
	cr_assert_not_null(AT(t, "outputSchema", "properties", "ssh",
	    "properties", "exit_status"));
	cr_assert_null(AT(t, "outputSchema", "properties", "http"));
	cr_assert(cJSON_IsTrue(AT(t, "annotations", "destructiveHint")));
	cr_assert_eq(cJSON_GetArraySize(AT(t, "inputSchema", "required")), 1,
	    "only a is required");
	cJSON_Delete(root);
	free(s);
}

Test(catalog, no_scope_or_no_profile_sees_nothing)
{
	char *s = render(fixture_policy(), FIXTURE_NOBODY);

	cr_assert_str_eq(s, "{\"tools\":[]}");
	free(s);
	s = render(fixture_policy(), -1);
	cr_assert_str_eq(s, "{\"tools\":[]}");
	free(s);
}

/* A shallow copy of the fixture whose tools can be changed. */
struct policy_copy {
	struct policy policy;
	struct policy_tool tools[3];
	struct policy_param params[6];
};

static void
copy_fixture(struct policy_copy *c)
{
	struct policy *f = fixture_policy();

	c->policy = *f;
	memcpy(c->tools, f->tools, sizeof(c->tools));
	memcpy(c->params, f->tools[FIXTURE_CREATE_ITEM].params,
	    sizeof(c->params));
	c->tools[FIXTURE_CREATE_ITEM].params = c->params;
	c->policy.tools = c->tools;
}

static void
fingerprint(const struct policy *p, uint8_t out[HASH_SHA256_LEN])
{
	cr_assert(policy_catalog_fingerprint(p, out));
}

static void
assert_fingerprint_differs(const struct policy_copy *c, const char *what)
{
	uint8_t a[HASH_SHA256_LEN], b[HASH_SHA256_LEN];

	fingerprint(fixture_policy(), a);
	fingerprint(&c->policy, b);
	cr_assert_neq(memcmp(a, b, sizeof(a)), 0, "same fingerprint after %s",
	    what);
}

Test(catalog, fingerprint_is_stable_and_catches_every_change)
{
	uint8_t a[HASH_SHA256_LEN], b[HASH_SHA256_LEN];
	struct policy_copy c;
	struct policy_target targets[2];
	struct policy_name_template header;

	fingerprint(fixture_policy(), a);
	fingerprint(fixture_policy(), b);
	cr_assert_eq(memcmp(a, b, sizeof(a)), 0);

	copy_fixture(&c);
	c.tools[0].description = "Read one item by its id!";
	assert_fingerprint_differs(&c, "a one-character description change");
	copy_fixture(&c);
	c.tools[2].mutating = false;
	assert_fingerprint_differs(&c, "mutating");
	copy_fixture(&c);
	c.tools[1].confirm = false;
	assert_fingerprint_differs(&c, "confirm");
	copy_fixture(&c);
	c.tools[1].confirm_spec.timeout_s = 121;
	assert_fingerprint_differs(&c, "confirm.timeout_s");
	copy_fixture(&c);
	c.tools[1].confirm_spec.retype = 1;
	assert_fingerprint_differs(&c, "confirm.retype");
	copy_fixture(&c);
	c.tools[1].confirm_spec.has_message = true;
	c.tools[1].confirm_spec.message = c.tools[1].http.path;
	assert_fingerprint_differs(&c, "confirm.message");
	copy_fixture(&c);
	c.tools[0].scope = "write";
	assert_fingerprint_differs(&c, "scope");
	copy_fixture(&c);
	c.params[0].max_length = 81;
	assert_fingerprint_differs(&c, "maxLength");
	copy_fixture(&c);
	c.params[3].enum_count = 2;
	assert_fingerprint_differs(&c, "an enum value");
	copy_fixture(&c);
	c.tools[1].http.method = HTTP_METHOD_PUT;
	assert_fingerprint_differs(&c, "the method");
	copy_fixture(&c);
	c.tools[1].http.header_count = 0;
	assert_fingerprint_differs(&c, "a header");
	copy_fixture(&c);
	header = c.tools[1].http.headers[0];
	header.name = "X-Other";
	c.tools[1].http.headers = &header;
	assert_fingerprint_differs(&c, "a header name");
	copy_fixture(&c);
	c.tools[2].ssh.argc = 3;
	assert_fingerprint_differs(&c, "an argv element");
	copy_fixture(&c);
	memcpy(targets, c.policy.targets, sizeof(targets));
	targets[0].base_url = "https://api.example.org";
	c.policy.targets = targets;
	assert_fingerprint_differs(&c, "the target's base URL");
}

/*
 * Reordering the "params" object in a policy file reorders param_count
 * entries and every template's param_index; the fingerprint stays.
 */
/* A title is shown as the tool's title, between name and description. */
Test(catalog, a_title_is_listed_and_fingerprinted)
{
	struct policy_copy c;
	char *s;
	cJSON *root;

	copy_fixture(&c);
	c.tools[0].title = "Read \"one\" item \xc3\xa9";
	s = render(&c.policy, FIXTURE_READER);
	cr_assert_not_null(strstr(s, "{\"name\":\"get_item\",\"title\":"
	    "\"Read \\\"one\\\" item \xc3\xa9\",\"description\":"), "%s", s);
	root = cJSON_Parse(s);
	cr_assert_str_eq(AT(root, "tools", "0", "title")->valuestring,
	    "Read \"one\" item \xc3\xa9");
	cJSON_Delete(root);
	free(s);
	assert_fingerprint_differs(&c, "a title");
}

/* Letting a value lead an argv element with '-' changes what may run. */
Test(catalog, allow_leading_dash_is_fingerprinted)
{
	struct policy_copy c;

	copy_fixture(&c);
	c.params[0].allow_leading_dash = true;
	assert_fingerprint_differs(&c, "allow_leading_dash");
}

Test(catalog, fingerprint_ignores_param_order)
{
	uint8_t a[HASH_SHA256_LEN], b[HASH_SHA256_LEN];
	struct policy_param swapped[2];
	struct policy_template_part argv_a = { .is_param = true, .param_index = 1 };
	struct policy_template_part argv_b[3];
	struct policy_template argv[4];
	struct policy_copy c;
	const struct policy_tool *echo = &fixture_policy()->tools[FIXTURE_RUN_ECHO];

	copy_fixture(&c);
	swapped[0] = echo->params[1];
	swapped[1] = echo->params[0];
	memcpy(argv, echo->ssh.argv, sizeof(argv));
	memcpy(argv_b, echo->ssh.argv[3].parts, sizeof(argv_b));
	argv_b[1].param_index = 0;
	argv[2].parts = &argv_a;
	argv[3].parts = argv_b;
	c.tools[FIXTURE_RUN_ECHO].params = swapped;
	c.tools[FIXTURE_RUN_ECHO].ssh.argv = argv;
	fingerprint(fixture_policy(), a);
	fingerprint(&c.policy, b);
	cr_assert_eq(memcmp(a, b, sizeof(a)), 0);

	argv_b[1].param_index = 1;	/* now x{a}y: a real change */
	fingerprint(&c.policy, b);
	cr_assert_neq(memcmp(a, b, sizeof(a)), 0);
}

Test(catalog, the_pin_must_match)
{
	struct policy_copy c;
	char why[256], hex[HASH_SHA256_HEX_LEN + 1];

	copy_fixture(&c);
	cr_assert(policy_catalog_verify_pin(&c.policy, why, sizeof(why)),
	    "no pin, nothing to check");
	c.policy.has_catalog_pin = true;
	fingerprint(fixture_policy(), c.policy.catalog_pin);
	cr_assert(policy_catalog_verify_pin(&c.policy, why, sizeof(why)));
	c.tools[0].description = "Read one item by its id, and delete it.";
	cr_assert_not(policy_catalog_verify_pin(&c.policy, why, sizeof(why)));
	hash_hex(c.policy.catalog_pin, HASH_SHA256_LEN, hex);
	cr_assert_eq(strncmp(why, "catalog_sha256 is ", 18), 0, "%s", why);
	cr_assert_eq(strncmp(why + 18, hex, 64), 0, "%s", why);
	cr_assert_not_null(strstr(why, " but the catalog's fingerprint is "));
}

static struct policy_param wide_params[] = {
	{ .name = "n", .description = "a \"quoted\"\nline \xe6\x97\xa5 $(id)",
	  .type = PARAM_INTEGER, .required = true,
	  .has_minimum = true, .minimum = INT64_MIN,
	  .has_maximum = true, .maximum = INT64_MAX },
	{ .name = "d", .type = PARAM_DECIMAL, .scale = 0 },
};

Test(catalog, exact_bounds_and_escaped_text)
{
	struct policy_tool t = {
		.name = "wide", .description = "Tab\there \"and\" \xc3\xa9",
		.scope = "read", .kind = TOOL_HTTP, .params = wide_params,
		.param_count = 2,
	};
	struct policy_copy c;
	cJSON *root;
	char *s;

	copy_fixture(&c);
	c.policy.tools = &t;
	c.policy.tool_count = 1;
	s = render(&c.policy, FIXTURE_READER);
	cr_assert_not_null(strstr(s, "\"minimum\":-9223372036854775808,"
	    "\"maximum\":9223372036854775807"), "%s", s);
	cr_assert_not_null(strstr(s, "\"pattern\":\"^-?[0-9]+$\""), "%s", s);
	root = cJSON_Parse(s);
	cr_assert_not_null(root, "%s", s);
	cr_assert_str_eq(AT(root, "tools", "0", "description")->valuestring,
	    "Tab\there \"and\" \xc3\xa9");
	cr_assert_str_eq(AT(root, "tools", "0", "inputSchema", "properties",
	    "n", "description")->valuestring, wide_params[0].description);
	cJSON_Delete(root);
	free(s);
}

/*
 * Review F7: the pin covers where a call goes and with which secret, and
 * which profile sees what.  Each edit below is one substitution in the
 * loaded text; those in "moves" must change the fingerprint, those in
 * "same" (key order, set order, credential file paths) must not.
 */
#define PIN_BASE "{\"sallyport\": 1,\n" \
	"\"credentials\": {\"ro\": {\"type\": \"bearer\", \"file\": \"/c/ro\"},\n" \
	" \"rw\": {\"type\": \"bearer\", \"file\": \"/c/rw\"},\n" \
	" \"hd\": {\"type\": \"header\", \"file\": \"/c/hd\", " \
	"\"header_name\": \"X-Key\"},\n" \
	" \"k\": {\"type\": \"ssh-key\", \"private_key\": \"/c/k\"}},\n" \
	"\"targets\": {\"api\": {\"type\": \"http\", " \
	"\"base_url\": \"https://api.example.com:8443/v1\", " \
	"\"credential\": \"ro\", \"timeout_ms\": 5000, " \
	"\"follow_redirects\": false, \"allow_private\": false, " \
	"\"allow_loopback\": false, \"allow_link_local\": false, " \
	"\"allow_metadata\": false, \"ca_file\": \"/c/ca.pem\"},\n" \
	" \"api2\": {\"type\": \"http\", \"base_url\": " \
	"\"https://api2.example.com\", \"credential\": \"hd\"},\n" \
	" \"web\": {\"type\": \"ssh\", \"host\": \"web1.example.com\", " \
	"\"port\": 22, \"user\": \"ops\", \"credential\": \"k\", " \
	"\"known_hosts\": \"/c/kh\"},\n" \
	" \"db\": {\"type\": \"ssh\", \"host\": \"db1.example.com\", " \
	"\"user\": \"ops\", \"credential\": \"k\", \"host_key_sha256\": " \
	"\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}},\n" \
	"\"tools\": [{\"name\": \"get\", \"description\": \"d\", " \
	"\"target\": \"api\", \"scope\": \"read\", " \
	"\"http\": {\"method\": \"GET\", \"path\": \"/x\"}},\n" \
	" {\"name\": \"get2\", \"description\": \"d\", " \
	"\"target\": \"api2\", \"scope\": \"read\", " \
	"\"http\": {\"method\": \"GET\", \"path\": \"/y\"}},\n" \
	" {\"name\": \"up\", \"description\": \"d\", \"target\": \"web\", " \
	"\"scope\": \"ops\", \"ssh\": {\"argv\": [\"uptime\"]}},\n" \
	" {\"name\": \"df\", \"description\": \"d\", \"target\": \"db\", " \
	"\"scope\": \"ops\", \"ssh\": {\"argv\": [\"df\"]}}],\n" \
	"\"profiles\": {\"reader\": {\"scopes\": [\"read\"]},\n" \
	" \"oncall\": {\"scopes\": [\"read\", \"ops\"], " \
	"\"match\": {\"uid\": [1001, 1002], \"gid\": [50]}}}}"

struct pin_edit {
	const char *from, *to, *what;
};

static const struct pin_edit pin_moves[] = {
	{ ":8443/v1\"", ":8443/v2\"", "the base path" },
	{ ":8443/v1\"", ":9443/v1\"", "the HTTP port" },
	{ "https://api.example.com", "https://api.example.net", "the HTTP host" },
	{ "\"credential\": \"ro\"", "\"credential\": \"rw\"",
	  "the credential's name" },
	{ "\"credential\": \"ro\"", "\"credential\": \"hd\"",
	  "the credential's type" },
	{ "\"X-Key\"", "\"X-Api-Key\"", "the credential's header name" },
	{ "\"credential\": \"ro\", ", "", "whether a credential goes along" },
	{ "\"timeout_ms\": 5000", "\"timeout_ms\": 5001", "the target timeout" },
	{ "\"path\": \"/x\"}}", "\"path\": \"/x\"}, \"timeout_ms\": 100}",
	  "a tool's timeout" },
	{ "\"follow_redirects\": false", "\"follow_redirects\": true",
	  "follow_redirects" },
	{ "\"allow_private\": false", "\"allow_private\": true", "allow_private" },
	{ "\"allow_loopback\": false", "\"allow_loopback\": true",
	  "allow_loopback" },
	{ "\"allow_link_local\": false", "\"allow_link_local\": true",
	  "allow_link_local" },
	{ "\"allow_metadata\": false", "\"allow_metadata\": true",
	  "allow_metadata" },
	{ "/c/ca.pem", "/c/other-ca.pem", "the CA file" },
	{ "\"port\": 22,", "\"port\": 2222,", "the SSH port" },
	{ "web1.example.com", "web2.example.com", "the SSH host" },
	{ "\"user\": \"ops\", \"credential\": \"k\", \"known",
	  "\"user\": \"root\", \"credential\": \"k\", \"known", "the SSH user" },
	{ "/c/kh", "/c/kh2", "the known_hosts file" },
	{ "ba7816bf", "ca7816bf", "the host key digest" },
	{ "[\"read\", \"ops\"]", "[\"read\"]", "a profile losing a scope" },
	{ "\"scopes\": [\"read\"]}", "\"scopes\": [\"read\", \"ops\"]}",
	  "a profile gaining a scope" },
	{ "\"reader\"", "\"readers\"", "a profile's name" },
	{ "[1001, 1002]", "[1001, 1003]", "a matched uid" },
	{ "[50]", "[51]", "a matched gid" },
};

static const struct pin_edit pin_same[] = {
	{ "\"file\": \"/c/ro\"", "\"file\": \"/etc/sallyport/ro.token\"",
	  "a credential file path" },
	{ "\"private_key\": \"/c/k\"", "\"private_key\": \"/c/k2\"",
	  "a private key path" },
	{ "\"type\": \"http\", \"base_url\": \"https://api.example.com:8443/v1\", ",
	  "\"base_url\": \"https://api.example.com:8443/v1\", \"type\": \"http\", ",
	  "the order of a target's keys" },
	{ "[\"read\", \"ops\"]", "[\"ops\", \"read\"]", "the order of scopes" },
	{ "[1001, 1002], \"gid\": [50]", "[1002, 1001], \"gid\": [50]",
	  "the order of uids" },
	{ "\"match\": {\"uid\": [1001, 1002], \"gid\": [50]}",
	  "\"match\": {\"gid\": [50], \"uid\": [1001, 1002]}",
	  "the order of match keys" },
	{ "\"profiles\": {\"reader\": {\"scopes\": [\"read\"]},\n \"oncall\": "
	  "{\"scopes\": [\"read\", \"ops\"], \"match\": {\"uid\": [1001, 1002], "
	  "\"gid\": [50]}}}",
	  "\"profiles\": {\"oncall\": {\"scopes\": [\"read\", \"ops\"], "
	  "\"match\": {\"uid\": [1001, 1002], \"gid\": [50]}},\n \"reader\": "
	  "{\"scopes\": [\"read\"]}}", "the order of profiles" },
};

/* The fingerprint of PIN_BASE with e applied (NULL: as it is). */
static void
pin_fingerprint(const struct pin_edit *e, uint8_t out[HASH_SHA256_LEN])
{
	static const char base[] = PIN_BASE;
	char text[sizeof(base) + 256];
	const char *at = base;
	struct policy_diags d = { 0 };
	struct policy *p;
	size_t head;

	if (e != NULL) {
		cr_assert_not_null(at = strstr(base, e->from), "%s", e->what);
		head = (size_t)(at - base);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)head, base, e->to,
		    at + strlen(e->from));
	} else
		snprintf(text, sizeof(text), "%s", base);
	p = policy_load("t.json", text, strlen(text), &d);
	cr_assert_not_null(p, "%s: %s", e ? e->what : "base",
	    d.count ? d.items[0].text : "");
	cr_assert_eq(d.count, 0, "%s: %s", e ? e->what : "base", d.items[0].text);
	fingerprint(p, out);
	policy_free(p);
	policy_diags_free(&d);
}

Test(catalog, fingerprint_covers_targets_credentials_and_profiles)
{
	uint8_t base[HASH_SHA256_LEN], other[HASH_SHA256_LEN];
	size_t i;

	pin_fingerprint(NULL, base);
	for (i = 0; i < sizeof(pin_moves) / sizeof(pin_moves[0]); i++) {
		pin_fingerprint(&pin_moves[i], other);
		cr_expect_neq(memcmp(base, other, sizeof(base)), 0,
		    "same fingerprint with another %s", pin_moves[i].what);
	}
	for (i = 0; i < sizeof(pin_same) / sizeof(pin_same[0]); i++) {
		pin_fingerprint(&pin_same[i], other);
		cr_expect_eq(memcmp(base, other, sizeof(base)), 0,
		    "fingerprint changed with %s", pin_same[i].what);
	}
}
