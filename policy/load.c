/*
 * policy_load(): the top level of the policy file, server, limits, audit
 * and profiles; credentials, targets and tools live in their own files.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/log.h"
#include "policy/load_ctx.h"

struct member_order {
	const cJSON *node;
	size_t order;
};

static int
compare_members(const void *a, const void *b)
{
	const struct member_order *x = a, *y = b;
	int c = strcmp(x->node->string, y->node->string);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* cJSON keeps duplicate members and finds the first: refuse them all. */
static void
check_duplicate_keys(struct load_ctx *ctx, const cJSON *node)
{
	struct member_order *m;
	const cJSON *c;
	size_t n = 0, i;
	char q[LOAD_QUOTE_SIZE];

	for (c = node->child; c != NULL; c = c->next) {
		check_duplicate_keys(ctx, c);
		n++;
	}
	if (!cJSON_IsObject(node) || n < 2)
		return;
	if ((m = calloc(n, sizeof(*m))) == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	for (c = node->child, i = 0; c != NULL; c = c->next, i++) {
		m[i].node = c;
		m[i].order = i;
	}
	qsort(m, n, sizeof(*m), compare_members);
	for (i = 1; i < n; i++) {
		if (strcmp(m[i - 1].node->string, m[i].node->string) != 0)
			continue;
		ctx_quote(m[i].node->string, q, sizeof(q));
		ctx_error_key(ctx, m[i].node, "duplicate key %s", q);
	}
	free(m);
}

static void
load_version(struct load_ctx *ctx, const cJSON *root)
{
	const cJSON *v = ctx_member(ctx, root, "sallyport", true);
	int64_t version;

	if (v == NULL || !ctx_integer_value(ctx, v, 0, INT32_MAX, &version))
		return;
	if (version != 1) {
		ctx_error(ctx, v, "unsupported policy version %lld (this sp reads "
		    "version 1)", (long long)version);
		return;
	}
	ctx->policy->version = 1;
}

/* Sets *out to the index of the matching word, or reports the choices. */
static void
load_choice(struct load_ctx *ctx, const cJSON *obj, const char *key,
    const char *a, const char *b, int *out)
{
	const cJSON *m = ctx_member(ctx, obj, key, false);

	if (m == NULL)
		return;
	if (cJSON_IsString(m) && strcmp(m->valuestring, a) == 0)
		*out = 0;
	else if (cJSON_IsString(m) && strcmp(m->valuestring, b) == 0)
		*out = 1;
	else
		ctx_error(ctx, m, "must be \"%s\" or \"%s\"", a, b);
}

static void
load_server(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "name", "on_invalid", "sandbox",
	    "run_as", NULL };
	const cJSON *s = ctx_member(ctx, root, "server", false);
	const struct json_location *l;
	struct policy *p = ctx->policy;
	int on_invalid = 0, sandbox = 0;

	if (s == NULL || !ctx_require_object(ctx, s))
		return;
	ctx_known_keys(ctx, s, keys);
	if (ctx_string(ctx, s, "name", false, &p->server_name) &&
	    p->server_name != NULL && !ctx_name_matches(p->server_name, LOAD_LOWER LOAD_DIGIT
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", LOAD_LOWER LOAD_DIGIT
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-", 64))
		ctx_error(ctx, ctx_member(ctx, s, "name", false),
		    "must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
	load_choice(ctx, s, "on_invalid", "close", "reject", &on_invalid);
	load_choice(ctx, s, "sandbox", "required", "best-effort", &sandbox);
	p->on_invalid = on_invalid ? POLICY_ON_INVALID_REJECT :
	    POLICY_ON_INVALID_CLOSE;
	p->sandbox = sandbox ? POLICY_SANDBOX_BEST_EFFORT :
	    POLICY_SANDBOX_REQUIRED;
	if (ctx_string(ctx, s, "run_as", false, &p->run_as) &&
	    p->run_as != NULL && !ctx_name_matches(p->run_as, LOAD_LOWER "_",
	    LOAD_LOWER LOAD_DIGIT "_-", 32))
		ctx_error(ctx, ctx_member(ctx, s, "run_as", false),
		    "must be a user name matching ^[a-z_][a-z0-9_-]{0,31}$");
	if ((l = json_locations_find(&ctx->locs, ctx_member(ctx, s, "run_as",
	    false))) != NULL) {
		p->run_as_line = l->line;
		p->run_as_col = l->col;
	}
}

/* One limit: a JSON integer within [min, max]. */
static void
load_limit(struct load_ctx *ctx, const cJSON *l, const char *key,
    int64_t min, int64_t max, size_t *out)
{
	int64_t v;

	if (cJSON_GetObjectItemCaseSensitive(l, key) == NULL)
		return;
	v = (int64_t)*out;
	if (ctx_integer(ctx, l, key, min, max, &v))
		*out = (size_t)v;
}

static void
load_limits(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "max_frame_bytes", "max_inflight",
	    "calls_per_session", "result_max_chars", "call_timeout_ms",
	    "dedupe_ms", NULL };
	const cJSON *l = ctx_member(ctx, root, "limits", false);
	struct policy_limits *lim = &ctx->policy->limits;
	size_t timeout = lim->call_timeout_ms;

	if (l == NULL || !ctx_require_object(ctx, l))
		return;
	ctx_known_keys(ctx, l, keys);
	load_limit(ctx, l, "max_frame_bytes", 1024, 10 * 1024 * 1024,
	    &lim->max_frame_bytes);
	load_limit(ctx, l, "max_inflight", 1, 256, &lim->max_inflight);
	load_limit(ctx, l, "calls_per_session", 1, 1000000,
	    &lim->calls_per_session);
	/* A result travels in one record whose payload is at most
	 * RECORD_PAYLOAD_CAP bytes, i.e. 16384 characters of 4-byte UTF-8. */
	load_limit(ctx, l, "result_max_chars", 1024, 16384,
	    &lim->result_max_chars);
	load_limit(ctx, l, "call_timeout_ms", LOAD_TIMEOUT_MIN,
	    LOAD_TIMEOUT_MAX, &timeout);
	lim->call_timeout_ms = (uint32_t)timeout;
	timeout = lim->dedupe_ms;
	load_limit(ctx, l, "dedupe_ms", 0, 3600000, &timeout);
	lim->dedupe_ms = (uint32_t)timeout;
}

/* true, false or "all": nothing else, so a typo is not a silent "off". */
static void
load_audit_journal(struct load_ctx *ctx, const cJSON *a)
{
	const cJSON *j = ctx_member(ctx, a, "journal", false);
	struct policy *p = ctx->policy;

	p->audit_journal = POLICY_JOURNAL_ANCHORS;
	if (j == NULL)
		return;
	if (cJSON_IsBool(j))
		p->audit_journal = cJSON_IsTrue(j) ? POLICY_JOURNAL_ANCHORS :
		    POLICY_JOURNAL_OFF;
	else if (cJSON_IsString(j) && strcmp(j->valuestring, "all") == 0)
		p->audit_journal = POLICY_JOURNAL_ALL;
	else
		ctx_error(ctx, j, "must be true, false or \"all\"");
}

static void
load_audit(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "path", "key_file", "journal",
	    NULL };
	const cJSON *a = ctx_member(ctx, root, "audit", false);
	struct policy *p = ctx->policy;

	if (a == NULL || !ctx_require_object(ctx, a))
		return;
	ctx_known_keys(ctx, a, keys);
	if (ctx_path(ctx, a, "path", true, &p->audit_path))
		ctx_add_file(ctx, p->audit_path, ctx_member(ctx, a, "path",
		    false), POLICY_FILE_AUDIT_LOG);
	if (ctx_path(ctx, a, "key_file", false, &p->audit_key_file))
		ctx_add_file(ctx, p->audit_key_file,
		    ctx_member(ctx, a, "key_file", false), POLICY_FILE_AUDIT_KEY);
	load_audit_journal(ctx, a);
}

/* The pin's syntax only; the catalog code compares it. */
static void
load_catalog_pin(struct load_ctx *ctx, const cJSON *root)
{
	const cJSON *pin = ctx_member(ctx, root, "catalog_sha256", false);
	const struct json_location *l;
	struct policy *p = ctx->policy;

	if (pin == NULL)
		return;
	if (!cJSON_IsString(pin) || !hash_parse_hex_sha256(pin->valuestring,
	    strlen(pin->valuestring), p->catalog_pin)) {
		ctx_error(ctx, pin, "must be 64 hexadecimal digits (the "
		    "fingerprint printed by sp catalog)");
		return;
	}
	p->has_catalog_pin = true;
	if ((l = json_locations_find(&ctx->locs, pin)) != NULL) {
		p->catalog_pin_line = l->line;
		p->catalog_pin_col = l->col;
	}
}

/*
 * The profile loaded so far (this one included) whose match lists id as
 * a uid (key "uid") or a gid, or NULL.
 */
static const struct policy_profile *
id_owner(const struct policy *p, const char *key, uint32_t id)
{
	const struct policy_profile *pr;
	const uint32_t *ids;
	size_t i, j, n;

	for (i = 0; i < p->profile_count; i++) {
		pr = &p->profiles[i];
		ids = key[0] == 'u' ? pr->match_uids : pr->match_gids;
		n = key[0] == 'u' ? pr->match_uid_count : pr->match_gid_count;
		for (j = 0; j < n; j++)
			if (ids[j] == id)
				return pr;
	}
	return NULL;
}

/*
 * A list of uids or gids; each within uid_t without (uid_t)-1, and in no
 * other profile's list of the same kind: the peer's profile must not
 * depend on the order of the file (broker/peer.h).
 */
/* A profile's match id may stand in no other profile's list of the same
 * kind: the peer's profile must not depend on the order of the file
 * (broker/peer.h).  arg is the kind, "uid" or "gid". */
static bool
match_id_unowned(struct load_ctx *ctx, const cJSON *e, uint32_t id,
    void *arg)
{
	const char *key = arg;
	const struct policy_profile *other;
	char q[LOAD_QUOTE_SIZE];

	if ((other = id_owner(ctx->policy, key, id)) == NULL)
		return true;
	ctx_quote(other->name, q, sizeof(q));
	ctx_error(ctx, e, "%s %" PRIu32 " is already matched by profile %s; a "
	    "client must have one profile", key, id, q);
	return false;
}

static void
load_profile_match(struct load_ctx *ctx, const cJSON *prof,
    struct policy_profile *pr)
{
	static const char *const keys[] = { "uid", "gid", NULL };
	const cJSON *match = ctx_member(ctx, prof, "match", false);

	if (match == NULL || !ctx_require_object(ctx, match))
		return;
	ctx_known_keys(ctx, match, keys);
	ctx_id_list(ctx, match, "uid", &pr->match_uids, &pr->match_uid_count,
	    match_id_unowned, (void *)"uid");
	ctx_id_list(ctx, match, "gid", &pr->match_gids, &pr->match_gid_count,
	    match_id_unowned, (void *)"gid");
	/* An empty match would read as "no match": a profile for anyone. */
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(match,
	    "uid")) == 0 && cJSON_GetArraySize(
	    cJSON_GetObjectItemCaseSensitive(match, "gid")) == 0)
		ctx_error(ctx, match, "must list at least one uid or gid");
}

static bool
scope_listed(const struct policy_profile *pr, const char *scope)
{
	size_t i;

	for (i = 0; i < pr->scope_count; i++)
		if (strcmp(pr->scopes[i], scope) == 0)
			return true;
	return false;
}

/* A list of scope names; [] grants nothing and there is no wildcard. */
static void
load_profile_scopes(struct load_ctx *ctx, const cJSON *prof,
    struct policy_profile *pr)
{
	const cJSON *list = ctx_member(ctx, prof, "scopes", true), *e;
	char q[LOAD_QUOTE_SIZE];

	if (list == NULL)
		return;
	if (!cJSON_IsArray(list)) {
		ctx_error(ctx, list, "must be an array of scope names");
		return;
	}
	pr->scopes = calloc((size_t)cJSON_GetArraySize(list) + 1,
	    sizeof(*pr->scopes));
	if (pr->scopes == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, list) {
		if (!cJSON_IsString(e)) {
			ctx_error(ctx, e, "must be a scope name");
			continue;
		}
		ctx_quote(e->valuestring, q, sizeof(q));
		if (strchr(e->valuestring, '*') != NULL)
			ctx_error(ctx, e, "%s: there is no wildcard scope; list "
			    "each scope", q);
		else if (!ctx_name_matches(e->valuestring, LOAD_LOWER,
		    LOAD_SCOPE_REST, POLICY_NAME_MAX))
			ctx_error(ctx, e, "bad scope name %s (want "
			    "^[a-z][a-z0-9_.:-]{0,63}$)", q);
		else if (scope_listed(pr, e->valuestring))
			ctx_error(ctx, e, "scope %s is listed twice", q);
		else if ((pr->scopes[pr->scope_count] =
		    ctx_strdup(ctx, e->valuestring)) != NULL)
			pr->scope_count++;
	}
}

static void
load_profiles(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "scopes", "match", NULL };
	const cJSON *all = ctx_member(ctx, root, "profiles", false), *prof;
	struct policy *p = ctx->policy;
	struct policy_profile *pr;
	char q[LOAD_QUOTE_SIZE];

	if (all == NULL || !ctx_require_object(ctx, all))
		return;
	p->profiles = calloc((size_t)cJSON_GetArraySize(all) + 1,
	    sizeof(*p->profiles));
	if (p->profiles == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(prof, all) {
		if (!ctx_name_matches(prof->string, LOAD_ENTRY_FIRST,
		    LOAD_ENTRY_REST, POLICY_NAME_MAX)) {
			ctx_quote(prof->string, q, sizeof(q));
			ctx_error_key(ctx, prof, "bad profile name %s (want "
			    "^[a-z0-9][a-z0-9_.-]{0,63}$)", q);
		}
		pr = &p->profiles[p->profile_count++];
		pr->name = ctx_strdup(ctx, prof->string);
		if (!ctx_require_object(ctx, prof))
			continue;
		ctx_known_keys(ctx, prof, keys);
		load_profile_scopes(ctx, prof, pr);
		load_profile_match(ctx, prof, pr);
	}
}

/*
 * Where limits that outlive a session are kept (state/state_dir.h).  Its
 * line and column are kept for the start-up checks (policy/startcheck.h).
 */
static void
load_state_dir(struct load_ctx *ctx, const cJSON *root)
{
	struct policy *p = ctx->policy;
	const cJSON *m = ctx_member(ctx, root, "state_dir", false);
	const struct json_location *l;

	if (m == NULL || !ctx_path(ctx, root, "state_dir", false,
	    &p->state_dir))
		return;
	if ((l = json_locations_find(&ctx->locs, m)) != NULL) {
		p->state_dir_line = l->line;
		p->state_dir_col = l->col;
	}
}

/*
 * The shared state of a fleet (docs/design.md section 9.2): the conninfo
 * is judged by state/pg.h at start (it needs libpq, which the policy
 * layer does not link); here only its shape.  Without libpq the key is
 * refused: accepted, it would change nothing.
 */
static void
load_state(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "postgres", "password_file",
	    NULL };
	struct policy *p = ctx->policy;
	const cJSON *m = ctx_member(ctx, root, "state", false);
	const struct json_location *l;

	if (m == NULL || !ctx_require_object(ctx, m))
		return;
#ifndef SP_HAVE_LIBPQ
	ctx_error(ctx, m, "\"state\" needs PostgreSQL, and this sp was "
	    "built without libpq (rebuild with libpq-dev installed); use "
	    "state_dir for one host");
	return;
#endif
	if ((l = json_locations_find(&ctx->locs, m)) != NULL) {
		p->state_line = l->line;
		p->state_col = l->col;
	}
	ctx_known_keys(ctx, m, keys);
	if (ctx_string(ctx, m, "postgres", true, &p->state_postgres) &&
	    p->state_postgres != NULL && (p->state_postgres[0] == '\0' ||
	    strlen(p->state_postgres) > POLICY_CONNINFO_MAX))
		ctx_error(ctx, ctx_member(ctx, m, "postgres", false),
		    "\"postgres\" must be a libpq connection string of 1 to "
		    "%d bytes, such as \"host=/run/postgresql dbname=sallyport\"",
		    POLICY_CONNINFO_MAX);
	(void)ctx_path(ctx, m, "password_file", false,
	    &p->state_password_file);
}

static void
load_toplevel(struct load_ctx *ctx, const cJSON *root)
{
	static const char *const keys[] = { "sallyport", "server", "limits",
	    "audit", "state_dir", "state", "strict_credentials",
	    "catalog_sha256",
	    "credentials", "targets", "tools", "profiles", NULL };
	struct policy *p = ctx->policy;

	ctx_known_keys(ctx, root, keys);
	load_version(ctx, root);
	load_server(ctx, root);
	load_limits(ctx, root);
	load_audit(ctx, root);
	load_state_dir(ctx, root);
	load_state(ctx, root);
	ctx_bool(ctx, root, "strict_credentials", &p->strict_credentials);
	load_catalog_pin(ctx, root);
	load_credentials(ctx, root);
	load_targets(ctx, root);
	load_tools(ctx, root);
	load_profiles(ctx, root);
}

static void
free_profile(struct policy_profile *pr)
{
	size_t i;

	for (i = 0; i < pr->scope_count; i++)
		free(pr->scopes[i]);
	free(pr->scopes);
	free(pr->match_uids);
	free(pr->match_gids);
	free(pr->name);
}

void
policy_free(struct policy *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->credential_count; i++)
		load_free_credential(&p->credentials[i]);
	for (i = 0; i < p->target_count; i++)
		load_free_target(&p->targets[i]);
	for (i = 0; i < p->tool_count; i++)
		load_free_tool(&p->tools[i]);
	for (i = 0; i < p->profile_count; i++)
		free_profile(&p->profiles[i]);
	free(p->credentials);
	free(p->targets);
	free(p->tools);
	free(p->profiles);
	free(p->files);
	free(p->server_name);
	free(p->run_as);
	free(p->audit_path);
	free(p->state_dir);
	free(p->state_postgres);
	free(p->state_password_file);
	free(p->audit_key_file);
	free(p);
}

static struct policy *
policy_new(struct load_ctx *ctx)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		ctx_out_of_memory(ctx);
		return NULL;
	}
	p->on_invalid = POLICY_ON_INVALID_CLOSE;
	p->sandbox = POLICY_SANDBOX_REQUIRED;
	p->limits.max_frame_bytes = 1048576;
	p->limits.max_inflight = 16;
	p->limits.calls_per_session = 200;
	p->limits.result_max_chars = 16000;
	p->limits.call_timeout_ms = 30000;
	p->limits.dedupe_ms = 10000;
	return p;
}

/* "//", "/" "*" or "#" where the scanner stopped: a comment of another
 * language, which JSON has not. */
static bool
looks_like_comment(const struct load_ctx *ctx, size_t at)
{
	const char *t = ctx->text;

	if (at >= ctx->len)
		return false;
	return t[at] == '#' || (t[at] == '/' && at + 1 < ctx->len &&
	    (t[at + 1] == '/' || t[at + 1] == '*'));
}

/* Scans and parses; reports a syntax error at its place. */
static cJSON *
parse_text(struct load_ctx *ctx)
{
	struct json_syntax_error err;
	const char *end = NULL;
	cJSON *root;

	if (ctx->len > POLICY_TEXT_MAX) {
		policy_diags_add(ctx->diags, POLICY_DIAG_ERROR, ctx->name, 1, 1,
		    "policy is larger than 4 MiB");
		return NULL;
	}
	if (!json_locations_scan(ctx->text, ctx->len, &ctx->locs, &err)) {
		if (looks_like_comment(ctx, err.offset))
			snprintf(err.message, sizeof(err.message), "JSON has no "
			    "comments: write a \"comment\" member, a string");
		policy_diags_add(ctx->diags, POLICY_DIAG_ERROR, ctx->name,
		    err.line, err.col, err.message);
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(ctx->text, ctx->len, &end, false);
	if (root == NULL || !json_locations_bind(&ctx->locs, root)) {
		policy_diags_add(ctx->diags, POLICY_DIAG_ERROR, ctx->name, 1, 1,
		    "the JSON parser refused the text");
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

struct policy *
policy_load(const char *display_name, const char *bytes, size_t len,
    struct policy_diags *diags)
{
	struct load_ctx ctx = {
		.name = display_name, .text = bytes, .len = len, .diags = diags,
	};
	size_t errors_before = diags->errors, first = diags->count;
	cJSON *root, *comments = NULL;

	if ((ctx.policy = policy_new(&ctx)) == NULL)
		return NULL;
	if ((root = parse_text(&ctx)) != NULL) {
		check_duplicate_keys(&ctx, root);
		if ((comments = cJSON_CreateArray()) == NULL)
			ctx_out_of_memory(&ctx);
		else
			load_strip_comments(&ctx, root, comments);
		if (ctx_require_object(&ctx, root))
			load_toplevel(&ctx, root);
		if (diags->errors == errors_before &&
		    ctx.policy->server_name == NULL)
			ctx.policy->server_name = ctx_strdup(&ctx, "sallyport");
	}
	cJSON_Delete(comments);
	cJSON_Delete(root);
	json_locations_free(&ctx.locs);
	policy_diags_sort(diags, first);
	if (root == NULL || diags->errors != errors_before) {
		policy_free(ctx.policy);
		return NULL;
	}
	return ctx.policy;
}
