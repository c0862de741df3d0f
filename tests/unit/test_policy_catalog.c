#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/catalog.h"
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
	c.tools[0].scope = "write";
	assert_fingerprint_differs(&c, "scope");
	copy_fixture(&c);
	c.params[0].max_length = 81;
	assert_fingerprint_differs(&c, "maxLength");
	copy_fixture(&c);
	c.params[3].enum_count = 2;
	assert_fingerprint_differs(&c, "an enum value");
	copy_fixture(&c);
	c.tools[1].http.method = "PUT";
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
