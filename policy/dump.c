/*
 * The effective policy as JSON (policy/dump.h).  Each section is built
 * from the loaded structs, never from the text, so what is printed is
 * what sp acts on.  cJSON reports allocation failures by returning NULL
 * from each add; one check of the whole tree's parts at the end would
 * miss them, so every builder passes its failure up.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "policy/buf.h"
#include "policy/dump.h"
#include "policy/load.h"

static const char *const credential_types[] = {
	[CREDENTIAL_BEARER] = "bearer", [CREDENTIAL_BASIC] = "basic",
	[CREDENTIAL_HEADER] = "header", [CREDENTIAL_SSH_KEY] = "ssh-key",
};
static const char *const param_types[] = {
	[PARAM_STRING] = "string", [PARAM_INTEGER] = "integer",
	[PARAM_BOOLEAN] = "boolean", [PARAM_DECIMAL] = "decimal",
};
static const char *const audit_modes[] = {
	[PARAM_AUDIT_SHAPE] = "shape", [PARAM_AUDIT_VALUE] = "value",
	[PARAM_AUDIT_MASK4] = "mask4",
};

static bool
add_str(cJSON *o, const char *key, const char *s)
{
	return s == NULL || cJSON_AddStringToObject(o, key, s) != NULL;
}

static bool
add_num(cJSON *o, const char *key, double n)
{
	return cJSON_AddNumberToObject(o, key, n) != NULL;
}

static bool
add_bool(cJSON *o, const char *key, bool b)
{
	return cJSON_AddBoolToObject(o, key, b) != NULL;
}

/* child added to o under key; false (child freed) when it cannot be. */
static bool
add_child(cJSON *o, const char *key, cJSON *child)
{
	if (child == NULL)
		return false;
	if (key == NULL ? cJSON_AddItemToArray(o, child) :
	    cJSON_AddItemToObject(o, key, child))
		return true;
	cJSON_Delete(child);
	return false;
}

/* A template written back as the policy writes it: {param}, {{, }}. */
static char *
template_text(const struct policy_tool *tool, const struct policy_template *t)
{
	struct policy_buf b;
	const struct policy_template_part *p;
	size_t i, j, len;
	char *s;

	policy_buf_init(&b, POLICY_TEXT_MAX);
	for (i = 0; i < t->part_count; i++) {
		p = &t->parts[i];
		if (p->is_param) {
			policy_buf_printf(&b, "{%s}",
			    tool->params[p->param_index].name);
			continue;
		}
		for (j = 0; j < p->literal_len; j++) {
			if (p->literal[j] == '{' || p->literal[j] == '}')
				policy_buf_append_byte(&b, p->literal[j]);
			policy_buf_append_byte(&b, p->literal[j]);
		}
	}
	if (b.failed) {
		policy_buf_free(&b);
		return NULL;
	}
	if ((s = policy_buf_steal(&b, &len)) == NULL)
		s = strdup("");		/* an empty template held nothing */
	return s;
}

static bool
add_template(cJSON *o, const char *key, const struct policy_tool *tool,
    const struct policy_template *t)
{
	char *s = template_text(tool, t);
	bool ok;

	if (s == NULL)
		return false;
	ok = key == NULL ? add_child(o, NULL, cJSON_CreateString(s)) :
	    add_str(o, key, s);
	free(s);
	return ok;
}

static bool
add_ids(cJSON *o, const char *key, const uint32_t *ids, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	if (!add_child(o, key, a))
		return false;
	for (i = 0; i < n; i++)
		if (!add_child(a, NULL, cJSON_CreateNumber(ids[i])))
			return false;
	return true;
}

/* A decimal's minor units as the digits and point the policy writes. */
static bool
add_decimal(cJSON *o, const char *key, int64_t minor, unsigned scale)
{
	char text[48];
	uint64_t mag = minor < 0 ? 0 - (uint64_t)minor : (uint64_t)minor;
	uint64_t unit = 1;
	unsigned i;

	for (i = 0; i < scale; i++)
		unit *= 10;
	if (scale == 0)
		snprintf(text, sizeof(text), "%s%" PRIu64, minor < 0 ? "-" : "",
		    mag);
	else
		snprintf(text, sizeof(text), "%s%" PRIu64 ".%0*" PRIu64,
		    minor < 0 ? "-" : "", mag / unit, (int)scale, mag % unit);
	return add_str(o, key, text);
}

static cJSON *
dump_body(const struct policy_tool *tool, const struct policy_body *body)
{
	cJSON *o;
	size_t i;
	char *s;

	switch (body->kind) {
	case BODY_NULL:
		return cJSON_CreateNull();
	case BODY_BOOL:
		return cJSON_CreateBool(body->boolean);
	case BODY_NUMBER:
		return cJSON_CreateRaw(body->number_text);
	case BODY_STRING:
		if ((s = template_text(tool, &body->string)) == NULL)
			return NULL;
		o = cJSON_CreateString(s);
		free(s);
		return o;
	default:
		break;
	}
	o = body->kind == BODY_ARRAY ? cJSON_CreateArray() : cJSON_CreateObject();
	for (i = 0; o != NULL && i < body->child_count; i++)
		if (!add_child(o, body->kind == BODY_ARRAY ? NULL :
		    body->children[i].key, dump_body(tool, &body->children[i]))) {
			cJSON_Delete(o);
			return NULL;
		}
	return o;
}

static bool
add_pairs(cJSON *http, const char *key, const struct policy_tool *tool,
    const struct policy_name_template *pairs, size_t n)
{
	cJSON *o;
	size_t i;

	if (n == 0)
		return true;
	if (!add_child(http, key, o = cJSON_CreateObject()))
		return false;
	for (i = 0; i < n; i++)
		if (!add_template(o, pairs[i].name, tool, &pairs[i].value))
			return false;
	return true;
}

static bool
dump_action(cJSON *t, const struct policy_tool *tool)
{
	cJSON *a = cJSON_CreateObject(), *argv;
	size_t i;

	if (tool->kind == TOOL_SSH) {
		if (!add_child(t, "ssh", a) ||
		    !add_child(a, "argv", argv = cJSON_CreateArray()))
			return false;
		for (i = 0; i < tool->ssh.argc; i++)
			if (!add_template(argv, NULL, tool, &tool->ssh.argv[i]))
				return false;
		return true;
	}
	return add_child(t, "http", a) &&
	    add_str(a, "method", http_method_name(tool->http.method)) &&
	    add_template(a, "path", tool, &tool->http.path) &&
	    add_pairs(a, "query", tool, tool->http.query,
	    tool->http.query_count) &&
	    add_pairs(a, "headers", tool, tool->http.headers,
	    tool->http.header_count) &&
	    (tool->http.body == NULL ||
	    add_child(a, "body", dump_body(tool, tool->http.body)));
}

static bool
dump_param(cJSON *params, const struct policy_param *p, bool ssh)
{
	cJSON *o = cJSON_CreateObject(), *e;
	size_t i;
	bool ok;

	if (!add_child(params, p->name, o) ||
	    !add_str(o, "type", param_types[p->type]) ||
	    !add_str(o, "description", p->description) ||
	    !add_bool(o, "required", p->required) ||
	    !add_str(o, "audit", audit_modes[p->audit]))
		return false;
	if (p->type == PARAM_STRING) {
		if (!add_num(o, "minLength", (double)p->min_length) ||
		    !add_num(o, "maxLength", (double)p->max_length) ||
		    !add_str(o, "pattern", p->pattern))
			return false;
		if (p->enum_values != NULL) {
			if (!add_child(o, "enum", e = cJSON_CreateArray()))
				return false;
			for (i = 0; i < p->enum_count; i++)
				if (!add_child(e, NULL,
				    cJSON_CreateString(p->enum_values[i])))
					return false;
		}
	}
	ok = true;
	if (p->type == PARAM_INTEGER)
		ok = (!p->has_minimum || add_num(o, "minimum",
		    (double)p->minimum)) && (!p->has_maximum ||
		    add_num(o, "maximum", (double)p->maximum));
	if (p->type == PARAM_DECIMAL)
		ok = add_num(o, "scale", p->scale) && (!p->has_minimum ||
		    add_decimal(o, "minimum", p->minimum, p->scale)) &&
		    (!p->has_maximum || add_decimal(o, "maximum", p->maximum,
		    p->scale));
	if (ok && ssh && (p->type == PARAM_STRING || p->type == PARAM_INTEGER))
		ok = add_bool(o, "allow_leading_dash", p->allow_leading_dash);
	return ok;
}

static bool
dump_confirm(cJSON *t, const struct policy_tool *tool)
{
	const struct policy_confirm *c = &tool->confirm_spec;
	cJSON *o, *ap;

	if (!tool->confirm)
		return add_bool(t, "confirm", false);
	if (!add_child(t, "confirm", o = cJSON_CreateObject()) ||
	    (c->has_message && !add_template(o, "message", tool,
	    &c->message)) ||
	    (c->retype != POLICY_CONFIRM_NO_RETYPE && !add_str(o, "retype",
	    tool->params[c->retype].name)) ||
	    !add_str(o, "via", c->via_operator ? "operator" : "client") ||
	    !add_num(o, "timeout_s", c->timeout_s))
		return false;
	if (!c->via_operator)
		return true;
	return add_child(o, "approvers", ap = cJSON_CreateObject()) &&
	    add_ids(ap, "uid", c->approver_uids, c->approver_uid_count) &&
	    add_ids(ap, "gid", c->approver_gids, c->approver_gid_count) &&
	    add_bool(o, "others_only", c->others_only);
}

static bool
dump_tool_limits(cJSON *t, const struct policy_tool *tool)
{
	cJSON *l, *md;
	size_t i;

	/* 0 is "none", which the policy says by leaving the key out */
	if (!tool->limits.any)
		return true;
	if (!add_child(t, "limits", l = cJSON_CreateObject()) ||
	    (tool->limits.min_interval_ms != 0 && !add_num(l,
	    "min_interval_ms", tool->limits.min_interval_ms)) ||
	    (tool->limits.per_day != 0 && !add_num(l, "per_day",
	    tool->limits.per_day)))
		return false;
	if (tool->limits.max_distinct == NULL)
		return true;
	if (!add_child(l, "max_distinct", md = cJSON_CreateObject()))
		return false;
	for (i = 0; i < tool->param_count; i++)
		if (tool->limits.max_distinct[i] != 0 && !add_num(md,
		    tool->params[i].name, tool->limits.max_distinct[i]))
			return false;
	return true;
}

static bool
dump_tool(cJSON *tools, const struct policy *p, const struct policy_tool *tool)
{
	cJSON *t = cJSON_CreateObject(), *params, *idem;
	size_t i;

	if (!add_child(tools, NULL, t) || !add_str(t, "name", tool->name) ||
	    !add_str(t, "title", tool->title) ||
	    !add_str(t, "description", tool->description) ||
	    !add_str(t, "target", p->targets[tool->target_index].name) ||
	    !add_str(t, "scope", tool->scope) ||
	    !add_bool(t, "mutating", tool->mutating) ||
	    (tool->mutating && (!add_bool(t, "idempotent", tool->idempotent) ||
	    !add_bool(t, "destructive", tool->destructive))) ||
	    !dump_confirm(t, tool) ||
	    (tool->timeout_ms != 0 && !add_num(t, "timeout_ms",
	    tool->timeout_ms)) ||
	    !add_child(t, "params", params = cJSON_CreateObject()))
		return false;
	for (i = 0; i < tool->param_count; i++)
		if (!dump_param(params, &tool->params[i],
		    tool->kind == TOOL_SSH))
			return false;
	if (!dump_action(t, tool) || !dump_tool_limits(t, tool))
		return false;
	if (tool->idem_window_s == 0)
		return true;
	return add_child(t, "idempotency", idem = cJSON_CreateObject()) &&
	    add_num(idem, "window_s", tool->idem_window_s) &&
	    add_str(idem, "header", tool->idem_header);
}

static bool
dump_credential(cJSON *all, const struct policy_credential *c)
{
	cJSON *o = cJSON_CreateObject();

	return add_child(all, c->name, o) &&
	    add_str(o, "type", credential_types[c->type]) &&
	    add_str(o, "file", c->file) &&
	    add_str(o, "header_name", c->header_name) &&
	    add_str(o, "private_key", c->private_key) &&
	    add_str(o, "public_key", c->public_key) &&
	    add_str(o, "passphrase_file", c->passphrase_file);
}

static bool
dump_target(cJSON *all, const struct policy *p, const struct policy_target *t)
{
	cJSON *o = cJSON_CreateObject();
	char hex[HASH_SHA256_HEX_LEN + 1];

	if (!add_child(all, t->name, o) ||
	    !add_str(o, "type", t->type == TARGET_SSH ? "ssh" : "http") ||
	    (t->has_credential && !add_str(o, "credential",
	    p->credentials[t->credential_index].name)) ||
	    (t->timeout_ms != 0 && !add_num(o, "timeout_ms", t->timeout_ms)))
		return false;
	if (t->type == TARGET_HTTP)
		return add_str(o, "base_url", t->base_url) &&
		    add_str(o, "ca_file", t->ca_file) &&
		    add_bool(o, "follow_redirects", t->follow_redirects) &&
		    add_bool(o, "allow_private", t->allow_private) &&
		    add_bool(o, "allow_loopback", t->allow_loopback) &&
		    add_bool(o, "allow_link_local", t->allow_link_local) &&
		    add_bool(o, "allow_metadata", t->allow_metadata);
	if (t->has_host_key_sha256)
		hash_hex(t->host_key_sha256, HASH_SHA256_LEN, hex);
	return add_str(o, "host", t->host) && add_num(o, "port", t->port) &&
	    add_str(o, "user", t->user) &&
	    add_str(o, "known_hosts", t->known_hosts) &&
	    (!t->has_host_key_sha256 || add_str(o, "host_key_sha256", hex));
}

static bool
dump_profile(cJSON *all, const struct policy_profile *pr)
{
	cJSON *o = cJSON_CreateObject(), *scopes, *m;
	size_t i;

	if (!add_child(all, pr->name, o) ||
	    !add_child(o, "scopes", scopes = cJSON_CreateArray()))
		return false;
	for (i = 0; i < pr->scope_count; i++)
		if (!add_child(scopes, NULL, cJSON_CreateString(pr->scopes[i])))
			return false;
	if (pr->match_uid_count == 0 && pr->match_gid_count == 0)
		return true;
	return add_child(o, "match", m = cJSON_CreateObject()) &&
	    (pr->match_uid_count == 0 || add_ids(m, "uid", pr->match_uids,
	    pr->match_uid_count)) &&
	    (pr->match_gid_count == 0 || add_ids(m, "gid", pr->match_gids,
	    pr->match_gid_count));
}

static bool
dump_top(cJSON *root, const struct policy *p)
{
	const struct policy_limits *l = &p->limits;
	cJSON *s = cJSON_CreateObject(), *lim, *a, *st;
	char hex[HASH_SHA256_HEX_LEN + 1];

	if (!add_num(root, "sallyport", p->version) ||
	    !add_child(root, "server", s) ||
	    !add_str(s, "name", p->server_name) ||
	    !add_str(s, "on_invalid", p->on_invalid ==
	    POLICY_ON_INVALID_REJECT ? "reject" : "close") ||
	    !add_str(s, "sandbox", p->sandbox == POLICY_SANDBOX_BEST_EFFORT ?
	    "best-effort" : "required") ||
	    !add_str(s, "run_as", p->run_as) ||
	    !add_child(root, "limits", lim = cJSON_CreateObject()) ||
	    !add_num(lim, "max_frame_bytes", (double)l->max_frame_bytes) ||
	    !add_num(lim, "max_inflight", (double)l->max_inflight) ||
	    !add_num(lim, "calls_per_session", (double)l->calls_per_session) ||
	    !add_num(lim, "result_max_chars", (double)l->result_max_chars) ||
	    !add_num(lim, "call_timeout_ms", l->call_timeout_ms) ||
	    !add_num(lim, "dedupe_ms", l->dedupe_ms) ||
	    !add_bool(root, "strict_credentials", p->strict_credentials) ||
	    !add_str(root, "state_dir", p->state_dir))
		return false;
	if (p->state_postgres != NULL && (!add_child(root, "state",
	    st = cJSON_CreateObject()) ||
	    !add_str(st, "postgres", p->state_postgres) ||
	    !add_str(st, "password_file", p->state_password_file)))
		return false;
	if (p->has_catalog_pin) {
		hash_hex(p->catalog_pin, HASH_SHA256_LEN, hex);
		if (!add_str(root, "catalog_sha256", hex))
			return false;
	}
	if (p->audit_path == NULL)
		return true;
	return add_child(root, "audit", a = cJSON_CreateObject()) &&
	    add_str(a, "path", p->audit_path) &&
	    add_str(a, "key_file", p->audit_key_file) &&
	    (p->audit_journal == POLICY_JOURNAL_ALL ? add_str(a, "journal",
	    "all") : add_bool(a, "journal", p->audit_journal ==
	    POLICY_JOURNAL_ANCHORS));
}

static bool
dump_sections(cJSON *root, const struct policy *p)
{
	cJSON *creds = cJSON_CreateObject(), *targets, *tools, *profiles;
	size_t i;

	if (!add_child(root, "credentials", creds))
		return false;
	for (i = 0; i < p->credential_count; i++)
		if (!dump_credential(creds, &p->credentials[i]))
			return false;
	if (!add_child(root, "targets", targets = cJSON_CreateObject()))
		return false;
	for (i = 0; i < p->target_count; i++)
		if (!dump_target(targets, p, &p->targets[i]))
			return false;
	if (!add_child(root, "tools", tools = cJSON_CreateArray()))
		return false;
	for (i = 0; i < p->tool_count; i++)
		if (!dump_tool(tools, p, &p->tools[i]))
			return false;
	if (!add_child(root, "profiles", profiles = cJSON_CreateObject()))
		return false;
	for (i = 0; i < p->profile_count; i++)
		if (!dump_profile(profiles, &p->profiles[i]))
			return false;
	return true;
}

cJSON *
policy_dump(const struct policy *p)
{
	cJSON *root = cJSON_CreateObject();

	if (root == NULL || !dump_top(root, p) || !dump_sections(root, p)) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
