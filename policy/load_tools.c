/*
 * The "tools" array: each tool names its target, its scope, its params,
 * and one action template (http or ssh, matching the target's type).  Every
 * placeholder must name a param and every param must be used.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/expand.h"
#include "policy/load_template.h"

#define BODY_DEPTH_MAX 16
#define ARGV_MAX 256
#define PATH_LITERAL_CHARS LOAD_LOWER LOAD_DIGIT "ABCDEFGHIJKLMNOPQRSTUVWXYZ" \
	"-._~!$&'()*+,;=:@/%{}"

static void free_body(struct policy_body *b);

/* True when http.method is there and one of ours. */
static bool
http_method(struct load_ctx *ctx, const cJSON *http, struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, http, "method", true);

	if (m == NULL)
		return false;
	if (cJSON_IsString(m) &&
	    http_method_parse(m->valuestring, &tool->http.method))
		return true;
	ctx_error(ctx, m, "must be GET, HEAD, POST, PUT, PATCH or DELETE");
	return false;
}

static bool
path_is_hex(char c)
{
	return c != '\0' && strchr(LOAD_DIGIT "abcdefABCDEF", c) != NULL;
}

/*
 * Servers percent-decode the path, so a literal '%' is allowed only as
 * %XX, and never as an encoded dot (%2e): otherwise a value next to it
 * could supply the hex digits ("%{a}" with a = "2e") or finish a dot
 * segment ("%2e{v}" with v = "."), and the request would leave the path.
 * Values themselves are always encoded ('%' becomes %25), and query and
 * header literals are never decoded, so only the path needs this.
 */
static const char *
path_percent_problem(const char *path)
{
	const char *p;

	for (p = path; (p = strchr(p, '%')) != NULL; p++) {
		if (!path_is_hex(p[1]) || !path_is_hex(p[2]))
			return "has a '%' not followed by two hex digits (a "
			    "placeholder cannot supply them)";
		if (p[1] == '2' && (p[2] == 'e' || p[2] == 'E'))
			return "has an encoded dot %2e; write '.' (and no "
			    "'.' or '..' segment)";
	}
	return NULL;
}

static void
http_path(struct load_ctx *ctx, const cJSON *http, struct template_use *use,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, http, "path", true);
	const char *s, *why;

	if (m == NULL)
		return;
	if (!cJSON_IsString(m) || m->valuestring[0] != '/') {
		ctx_error(ctx, m, "must be a string starting with '/'");
		return;
	}
	for (s = m->valuestring; *s != '\0'; s++)
		if (strchr(PATH_LITERAL_CHARS, *s) == NULL) {
			ctx_error(ctx, m, "has a character not allowed in a URL "
			    "path (a query goes in \"query\")");
			return;
		}
	if (load_path_has_dot_segment(m->valuestring)) {
		ctx_error(ctx, m, "has a '.' or '..' segment");
		return;
	}
	if ((why = path_percent_problem(m->valuestring)) != NULL) {
		ctx_error(ctx, m, "%s", why);
		return;
	}
	use->optional_ok = false;
	load_template(ctx, m, use, &tool->http.path);
}

/* "query" or "headers": literal names, template values. */
static void
http_pairs(struct load_ctx *ctx, const cJSON *http, const char *key,
    struct template_use *use, struct policy_name_template **out, size_t *count)
{
	const cJSON *all = ctx_member(ctx, http, key, false), *e;
	bool headers = strcmp(key, "headers") == 0;
	char q[LOAD_QUOTE_SIZE];
	const char *s;

	if (all == NULL || !ctx_require_object(ctx, all))
		return;
	if ((*out = calloc((size_t)cJSON_GetArraySize(all) + 1, sizeof(**out)))
	    == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, all) {
		ctx_quote(e->string, q, sizeof(q));
		if (headers && !load_header_name_ok(e->string))
			ctx_error_key(ctx, e, "%s is not a header name a policy may "
			    "set", q);
		else if (!headers && (e->string[0] == '\0' ||
		    strpbrk(e->string, "&=#{}") != NULL))
			ctx_error_key(ctx, e, "bad query name %s", q);
		if (!cJSON_IsString(e)) {
			ctx_error(ctx, e, "must be a string");
			continue;
		}
		for (s = e->valuestring; headers && *s != '\0'; s++)
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				break;
		if (headers && *s != '\0') {
			ctx_error(ctx, e, "a header value cannot hold control "
			    "characters");
			continue;
		}
		(*out)[*count].name = ctx_strdup(ctx, e->string);
		use->optional_ok = true;
		load_template(ctx, e, use, &(*out)[(*count)++].value);
	}
}

static void
load_body(struct load_ctx *ctx, const cJSON *node, struct template_use *use,
    struct policy_body *b, unsigned depth)
{
	const cJSON *c;
	const char *t;
	size_t len;

	if (depth > BODY_DEPTH_MAX) {
		ctx_error(ctx, node, "body nested deeper than %d", BODY_DEPTH_MAX);
		return;
	}
	if (node->string != NULL && depth > 0)
		b->key = ctx_strdup(ctx, node->string);
	if (cJSON_IsNull(node))
		b->kind = BODY_NULL;
	else if (cJSON_IsBool(node)) {
		b->kind = BODY_BOOL;
		b->boolean = cJSON_IsTrue(node);
	} else if (cJSON_IsNumber(node)) {
		b->kind = BODY_NUMBER;
		t = ctx_number_text(ctx, node, &len);
		if ((b->number_text = strndup(t, len)) == NULL)
			ctx_out_of_memory(ctx);
	} else if (cJSON_IsString(node)) {
		b->kind = BODY_STRING;
		use->optional_ok = true;
		load_template(ctx, node, use, &b->string);
	} else {
		b->kind = cJSON_IsArray(node) ? BODY_ARRAY : BODY_OBJECT;
		b->children = calloc((size_t)cJSON_GetArraySize(node) + 1,
		    sizeof(*b->children));
		if (b->children == NULL) {
			ctx_out_of_memory(ctx);
			return;
		}
		cJSON_ArrayForEach(c, node)
			load_body(ctx, c, use, &b->children[b->child_count++],
			    depth + 1);
	}
}

static void
load_http(struct load_ctx *ctx, const cJSON *http, struct template_use *use,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "method", "path", "query",
	    "headers", "body", NULL };
	const cJSON *body;
	bool have_method;

	tool->kind = TOOL_HTTP;
	if (!ctx_require_object(ctx, http))
		return;
	ctx_known_keys(ctx, http, keys);
	have_method = http_method(ctx, http, tool);
	http_path(ctx, http, use, tool);
	http_pairs(ctx, http, "query", use, &tool->http.query,
	    &tool->http.query_count);
	http_pairs(ctx, http, "headers", use, &tool->http.headers,
	    &tool->http.header_count);
	if ((body = ctx_member(ctx, http, "body", false)) == NULL)
		return;
	if (have_method && (tool->http.method == HTTP_METHOD_GET ||
	    tool->http.method == HTTP_METHOD_HEAD))
		ctx_error_key(ctx, body, "a %s request has no body",
		    http_method_name(tool->http.method));
	if ((tool->http.body = calloc(1, sizeof(*tool->http.body))) == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	load_body(ctx, body, use, tool->http.body, 0);
}

/* Whether a valid value of p can start with '-' (p not opted in). */
static bool
param_may_lead_dash(const struct policy_param *p)
{
	size_t i;

	if (p->allow_leading_dash || p->type == PARAM_BOOLEAN)
		return false;
	if (p->type != PARAM_STRING)
		return !(p->has_minimum && p->minimum >= 0);
	if (p->enum_count == 0)
		return true;
	for (i = 0; i < p->enum_count; i++)
		if (p->enum_values[i] != NULL && p->enum_values[i][0] == '-')
			return true;
	return false;
}

/*
 * A value that can start an element with '-' and no "--" before it: each
 * call with such a value is refused (expand_ssh_dash_check), so say it
 * now.  Leading placeholders that can be empty let the next one lead.
 */
static void
ssh_dash_warning(struct load_ctx *ctx, const cJSON *e,
    const struct policy_tool *tool, const struct policy_template *t)
{
	const struct policy_param *p;
	size_t i;

	for (i = 0; i < t->part_count; i++) {
		if (!t->parts[i].is_param)
			return;
		p = &tool->params[t->parts[i].param_index];
		if (param_may_lead_dash(p))
			ctx_warn(ctx, e, "a value of {%s} may start with '-' and "
			    "no \"--\" element comes before it: such calls are "
			    "refused (put \"--\" before it, or set "
			    "\"allow_leading_dash\": true on the param)", p->name);
		if (p->type != PARAM_STRING || p->min_length > 0)
			return;
	}
}

static void
load_ssh(struct load_ctx *ctx, const cJSON *ssh, struct template_use *use,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "argv", NULL };
	const cJSON *argv, *e;
	bool options_end = false;
	int n;

	tool->kind = TOOL_SSH;
	if (!ctx_require_object(ctx, ssh))
		return;
	ctx_known_keys(ctx, ssh, keys);
	if ((argv = ctx_member(ctx, ssh, "argv", true)) == NULL)
		return;
	n = cJSON_IsArray(argv) ? cJSON_GetArraySize(argv) : 0;
	if (n < 1 || n > ARGV_MAX) {
		ctx_error(ctx, argv, "must be an array of 1 to %d strings",
		    ARGV_MAX);
		return;
	}
	if ((tool->ssh.argv = calloc((size_t)n, sizeof(*tool->ssh.argv))) ==
	    NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	use->optional_ok = false;
	cJSON_ArrayForEach(e, argv) {
		if (!cJSON_IsString(e)) {
			ctx_error(ctx, e, "must be a string");
			continue;
		}
		load_template(ctx, e, use, &tool->ssh.argv[tool->ssh.argc]);
		if (e == argv->child &&
		    template_has_placeholder(&tool->ssh.argv[0]))
			ctx_error(ctx, e, "the command (argv[0]) cannot hold a "
			    "placeholder");
		else if (e != argv->child && !options_end)
			ssh_dash_warning(ctx, e, tool,
			    &tool->ssh.argv[tool->ssh.argc]);
		options_end = options_end || (e != argv->child &&
		    expand_is_end_of_options(&tool->ssh.argv[tool->ssh.argc]));
		tool->ssh.argc++;
	}
}

static void
tool_name(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool,
    size_t index)
{
	const cJSON *m = ctx_member(ctx, obj, "name", true);
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	if (m == NULL)
		return;
	if (!cJSON_IsString(m)) {
		ctx_error(ctx, m, "must be a string");
		return;
	}
	ctx_quote(m->valuestring, q, sizeof(q));
	if (!ctx_name_matches(m->valuestring, LOAD_LOWER, LOAD_LOWER LOAD_DIGIT
	    "_", POLICY_NAME_MAX)) {
		ctx_error(ctx, m, "bad tool name %s (want ^[a-z][a-z0-9_]{0,63}$)",
		    q);
		return;
	}
	for (i = 0; i < index; i++)
		if (ctx->policy->tools[i].name != NULL &&
		    strcmp(ctx->policy->tools[i].name, m->valuestring) == 0) {
			ctx_error(ctx, m, "duplicate tool name %s (also tools[%zu])",
			    q, i);
			return;
		}
	tool->name = ctx_strdup(ctx, m->valuestring);
}

static void
tool_description(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "description", true);
	size_t n;

	if (m == NULL || !ctx_string(ctx, obj, "description", true,
	    &tool->description))
		return;
	if (tool->description[strspn(tool->description, " \t\n\r")] == '\0')
		ctx_error(ctx, m, "description is empty");
	else if ((n = ctx_utf8_count(tool->description)) >
	    POLICY_DESCRIPTION_MAX)
		ctx_error(ctx, m, "description is %zu characters; at most %d", n,
		    POLICY_DESCRIPTION_MAX);
}

/* What a client shows a person instead of the name: optional, short. */
static void
tool_title(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "title", false);
	size_t n;

	if (m == NULL || !ctx_string(ctx, obj, "title", false, &tool->title))
		return;
	if (tool->title[strspn(tool->title, " \t\n\r")] == '\0')
		ctx_error(ctx, m, "title is empty");
	else if ((n = ctx_utf8_count(tool->title)) > POLICY_TITLE_MAX)
		ctx_error(ctx, m, "title is %zu characters; at most %d", n,
		    POLICY_TITLE_MAX);
}

/* The target must exist; returns its type, or -1 when unknown. */
static int
tool_target(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "target", true);
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	if (m == NULL)
		return -1;
	if (!cJSON_IsString(m)) {
		ctx_error(ctx, m, "must be the name of a target");
		return -1;
	}
	for (i = 0; i < ctx->policy->target_count; i++)
		if (strcmp(ctx->policy->targets[i].name, m->valuestring) == 0) {
			tool->target_index = i;
			if (ctx->policy->targets[i].type == LOAD_TARGET_UNTYPED)
				return -1;
			return (int)ctx->policy->targets[i].type;
		}
	ctx_quote(m->valuestring, q, sizeof(q));
	ctx_error(ctx, m, "no target named %s", q);
	return -1;
}

static void
tool_scope(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "scope", true);
	char q[LOAD_QUOTE_SIZE];

	if (m == NULL || !ctx_string(ctx, obj, "scope", true, &tool->scope))
		return;
	if (ctx_name_matches(tool->scope, LOAD_LOWER, LOAD_SCOPE_REST,
	    POLICY_NAME_MAX))
		return;
	ctx_quote(tool->scope, q, sizeof(q));
	if (strchr(tool->scope, '*') != NULL)
		ctx_error(ctx, m, "%s: there is no wildcard scope", q);
	else
		ctx_error(ctx, m, "bad scope name %s (want ^[a-z][a-z0-9_.:-]{0,63}$)",
	    q);
}

/* The opt-in means something only in ssh.argv: elsewhere it is refused. */
static void
http_no_dash_optin(struct load_ctx *ctx, const cJSON *obj)
{
	const cJSON *params = ctx_member(ctx, obj, "params", false), *e, *m;

	cJSON_ArrayForEach(e, params) {
		if (!cJSON_IsObject(e) ||
		    (m = ctx_member(ctx, e, "allow_leading_dash", false)) == NULL)
			continue;
		ctx_error_key(ctx, m, "\"allow_leading_dash\" applies only to a "
		    "param of an ssh tool");
	}
}

/* Exactly one action, of the target's kind. */
static void
tool_action(struct load_ctx *ctx, const cJSON *obj, int target_type,
    struct template_use *use, struct policy_tool *tool)
{
	const cJSON *http = ctx_member(ctx, obj, "http", false);
	const cJSON *ssh = ctx_member(ctx, obj, "ssh", false);

	if (http != NULL && ssh != NULL) {
		ctx_error_key(ctx, ssh, "a tool has \"http\" or \"ssh\", not both");
		return;
	}
	if (http == NULL && ssh == NULL) {
		ctx_error(ctx, obj, "missing \"http\" or \"ssh\"");
		return;
	}
	if (target_type == TARGET_SSH && http != NULL)
		ctx_error_key(ctx, http, "the target is an ssh target; use \"ssh\"");
	else if (target_type == TARGET_HTTP && ssh != NULL)
		ctx_error_key(ctx, ssh, "the target is an http target; use "
		    "\"http\"");
	else if (http != NULL) {
		load_http(ctx, http, use, tool);
		http_no_dash_optin(ctx, obj);
	} else
		load_ssh(ctx, ssh, use, tool);
}

static void
tool_flags(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool)
{
	int64_t timeout = 0;
	const cJSON *m;

	ctx_bool(ctx, obj, "mutating", &tool->mutating);
	if (ctx_bool(ctx, obj, "idempotent", &tool->idempotent) &&
	    tool->idempotent && !tool->mutating) {
		m = ctx_member(ctx, obj, "idempotent", false);
		ctx_error_key(ctx, m, "\"idempotent\" applies only to a mutating "
		    "tool");
	}
	if (ctx_bool(ctx, obj, "destructive", &tool->destructive) &&
	    tool->destructive && !tool->mutating) {
		m = ctx_member(ctx, obj, "destructive", false);
		ctx_error_key(ctx, m, "\"destructive\" applies only to a mutating "
		    "tool");
	}
	if (ctx_integer(ctx, obj, "timeout_ms", LOAD_TIMEOUT_MIN,
	    LOAD_TIMEOUT_MAX, &timeout))
		tool->timeout_ms = (uint32_t)timeout;
}

static void
tool_unused_params(struct load_ctx *ctx, const cJSON *obj,
    const struct policy_tool *tool, const bool *used)
{
	const cJSON *params = ctx_member(ctx, obj, "params", false), *e;
	char q[LOAD_QUOTE_SIZE];
	size_t i = 0;

	cJSON_ArrayForEach(e, params) {
		if (i < tool->param_count && !used[i]) {
			ctx_quote(e->string, q, sizeof(q));
			ctx_error_key(ctx, e, "param %s is used by no placeholder",
			    q);
		}
		i++;
	}
}

static void
load_tool(struct load_ctx *ctx, const cJSON *obj, size_t index)
{
	static const char *const keys[] = { "name", "title", "description",
	    "target",
	    "scope", "mutating", "confirm", "idempotent", "destructive",
	    "timeout_ms", "params", "http", "ssh", "limits", "idempotency",
	    NULL };
	struct policy_tool *tool = &ctx->policy->tools[index];
	struct template_use use = { .tool = tool };
	int target_type;
	size_t before;

	if (!ctx_require_object(ctx, obj))
		return;
	ctx_known_keys(ctx, obj, keys);
	tool_name(ctx, obj, tool, index);
	tool_title(ctx, obj, tool);
	tool_description(ctx, obj, tool);
	target_type = tool_target(ctx, obj, tool);
	tool_scope(ctx, obj, tool);
	tool_flags(ctx, obj, tool);
	if (!load_params(ctx, obj, tool))
		return;
	load_confirm(ctx, obj, tool);
	load_tool_limits(ctx, obj, tool);
	if ((use.used = calloc(tool->param_count + 1, sizeof(bool))) == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	before = ctx->diags->errors;
	tool_action(ctx, obj, target_type, &use, tool);
	/* A broken action hides its placeholders: no "unused" noise then. */
	if (ctx->diags->errors == before)
		tool_unused_params(ctx, obj, tool, use.used);
	free(use.used);
	load_tool_idempotency(ctx, obj, tool);
}

void
load_tools(struct load_ctx *ctx, const cJSON *root)
{
	const cJSON *all = ctx_member(ctx, root, "tools", false), *e;
	struct policy *p = ctx->policy;

	if (all == NULL)
		return;
	if (!cJSON_IsArray(all)) {
		ctx_error(ctx, all, "must be an array of tools");
		return;
	}
	p->tools = calloc((size_t)cJSON_GetArraySize(all) + 1, sizeof(*p->tools));
	if (p->tools == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, all)
		load_tool(ctx, e, p->tool_count++);
}

static void
free_body(struct policy_body *b)
{
	size_t i;

	for (i = 0; i < b->child_count; i++)
		free_body(&b->children[i]);
	free(b->children);
	free(b->number_text);
	free(b->key);
	template_free(&b->string);
}

static void
free_pairs(struct policy_name_template *pairs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(pairs[i].name);
		template_free(&pairs[i].value);
	}
	free(pairs);
}

void
load_free_tool(struct policy_tool *t)
{
	size_t i;

	free(t->name);
	free(t->title);
	free(t->description);
	free(t->scope);
	template_free(&t->http.path);
	free_pairs(t->http.query, t->http.query_count);
	free_pairs(t->http.headers, t->http.header_count);
	if (t->http.body != NULL)
		free_body(t->http.body);
	free(t->http.body);
	for (i = 0; i < t->ssh.argc; i++)
		template_free(&t->ssh.argv[i]);
	free(t->ssh.argv);
	for (i = 0; i < t->param_count; i++)
		load_free_param(&t->params[i]);
	free(t->params);
	template_free(&t->confirm_spec.message);
	free(t->confirm_spec.approver_uids);
	free(t->confirm_spec.approver_gids);
	free(t->limits.max_distinct);
	free(t->idem_header);
}
