#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy/pattern.h"
#include "tests/unit/policy_fixture.h"

#define LIT(s) { .literal = (char *)(s), .literal_len = sizeof(s) - 1 }
#define PARAM(i) { .is_param = true, .param_index = (i) }

static struct policy_param get_item_params[] = {
	{ .name = "id", .description = "Item id", .type = PARAM_INTEGER,
	  .required = true, .has_minimum = true, .minimum = 1 },
};

static char *colors[] = { "red", "green", "blue sky" };

static struct policy_param create_item_params[] = {
	{ .name = "name", .type = PARAM_STRING, .required = true,
	  .min_length = 1, .max_length = 80 },
	{ .name = "qty", .type = PARAM_INTEGER, .required = true,
	  .has_minimum = true, .minimum = 1, .has_maximum = true,
	  .maximum = 100 },
	{ .name = "price", .type = PARAM_DECIMAL, .scale = 2,
	  .has_minimum = true, .minimum = 0, .has_maximum = true,
	  .maximum = 100000 },
	{ .name = "color", .type = PARAM_STRING, .max_length = 16,
	  .enum_values = colors, .enum_count = 3 },
	{ .name = "code", .type = PARAM_STRING, .max_length = 12,
	  .pattern = "[A-Z]{2}[0-9]+" },
	{ .name = "urgent", .type = PARAM_BOOLEAN },
};

static struct policy_param run_echo_params[] = {
	{ .name = "a", .type = PARAM_STRING, .required = true,
	  .max_length = 4096 },
	{ .name = "b", .type = PARAM_STRING, .max_length = 4096 },
};

static struct policy_template_part get_item_path[] = {
	LIT("/items/"), PARAM(0),
};

static struct policy_template_part create_item_path[] = { LIT("/items") };
static struct policy_template_part q_name[] = { PARAM(0) };
static struct policy_template_part q_color[] = { LIT("c:"), PARAM(3) };
static struct policy_template_part h_code[] = { LIT("code "), PARAM(4) };

static struct policy_name_template create_item_query[] = {
	{ .name = "name", .value = { q_name, 1 } },
	{ .name = "color tag", .value = { q_color, 2 } },
};

static struct policy_name_template create_item_headers[] = {
	{ .name = "X-Code", .value = { h_code, 2 } },
};

static struct policy_template_part b_name[] = { PARAM(0) };
static struct policy_template_part b_qty[] = { PARAM(1) };
static struct policy_template_part b_price[] = { PARAM(2) };
static struct policy_template_part b_urgent[] = { PARAM(5) };
static struct policy_template_part b_note[] = {
	LIT("order \"for\" "), PARAM(0), LIT(" x"), PARAM(1),
};
static struct policy_template_part b_lit[] = { LIT("fixed") };

static struct policy_body create_item_tags[] = {
	{ .kind = BODY_STRING, .string = { b_lit, 1 } },
	{ .kind = BODY_NUMBER, .number_text = "7" },
	{ .kind = BODY_NULL },
};

static struct policy_body create_item_members[] = {
	{ .kind = BODY_STRING, .key = "name", .string = { b_name, 1 } },
	{ .kind = BODY_STRING, .key = "qty", .string = { b_qty, 1 } },
	{ .kind = BODY_STRING, .key = "price", .string = { b_price, 1 } },
	{ .kind = BODY_STRING, .key = "urgent", .string = { b_urgent, 1 } },
	{ .kind = BODY_STRING, .key = "note", .string = { b_note, 4 } },
	{ .kind = BODY_BOOL, .key = "draft", .boolean = false },
	{ .kind = BODY_ARRAY, .key = "tags", .children = create_item_tags,
	  .child_count = 3 },
};

static struct policy_body create_item_body = {
	.kind = BODY_OBJECT, .children = create_item_members, .child_count = 7,
};

static struct policy_template_part a_printf[] = { LIT("printf") };
static struct policy_template_part a_format[] = { LIT("%s\\n") };
static struct policy_template_part a_a[] = { PARAM(0) };
static struct policy_template_part a_b[] = { LIT("x"), PARAM(1), LIT("y") };

static struct policy_template run_echo_argv[] = {
	{ a_printf, 1 }, { a_format, 1 }, { a_a, 1 }, { a_b, 3 },
};

static struct policy_tool tools[] = {
	{ .name = "get_item", .description = "Read one item by its id.",
	  .target_index = 0, .scope = "read", .idempotent = true,
	  .kind = TOOL_HTTP,
	  .http = { .method = HTTP_METHOD_GET, .path = { get_item_path, 2 } },
	  .params = get_item_params, .param_count = 1 },
	{ .name = "create_item", .description = "Create an item.",
	  .target_index = 0, .scope = "write", .mutating = true,
	  .confirm = true,
	  .confirm_spec = { .retype = POLICY_CONFIRM_NO_RETYPE,
	    .timeout_s = POLICY_CONFIRM_TIMEOUT_DEFAULT },
	  .kind = TOOL_HTTP,
	  .http = { .method = HTTP_METHOD_POST, .path = { create_item_path, 1 },
	    .query = create_item_query, .query_count = 2,
	    .headers = create_item_headers, .header_count = 1,
	    .body = &create_item_body },
	  .params = create_item_params, .param_count = 6 },
	{ .name = "run_echo", .description = "Echo two words on web1.",
	  .target_index = 1, .scope = "ops", .mutating = true,
	  .destructive = true, .kind = TOOL_SSH,
	  .ssh = { .argv = run_echo_argv, .argc = 4 },
	  .params = run_echo_params, .param_count = 2 },
};

static struct policy_target targets[] = {
	{ .name = "api", .type = TARGET_HTTP,
	  .base_url = "https://api.example.com", .scheme = "https",
	  .host = "api.example.com", .port = 443, .base_path = "" },
	{ .name = "web1", .type = TARGET_SSH, .host = "web1.example.com",
	  .port = 22, .user = "ops", .known_hosts = "/etc/known_hosts" },
};

static char *scopes_read[] = { "read" };
static char *scopes_write[] = { "read", "write" };
static char *scopes_ops[] = { "ops" };

static struct policy_profile profiles[] = {
	{ .name = "reader", .scopes = scopes_read, .scope_count = 1 },
	{ .name = "writer", .scopes = scopes_write, .scope_count = 2 },
	{ .name = "nobody", .scopes = NULL, .scope_count = 0 },
	{ .name = "ops", .scopes = scopes_ops, .scope_count = 1 },
};

static struct policy fixture = {
	.version = 1, .server_name = "fixture",
	.targets = targets, .target_count = 2,
	.tools = tools, .tool_count = 3,
	.profiles = profiles, .profile_count = 4,
};

struct policy *
fixture_policy(void)
{
	static bool compiled;
	struct policy_param *code = &create_item_params[4];
	char why[256];

	if (!compiled) {
		if (!pattern_compile(code->pattern, &code->pattern_re, why,
		    sizeof(why)))
			abort();
		compiled = true;
	}
	return &fixture;
}

const struct policy_tool *
fixture_tool(int i)
{
	return &fixture_policy()->tools[i];
}

bool
fixture_set_string(struct value *v, const char *s)
{
	value_free(v);
	return value_set_string(v, s, strlen(s));
}
