/*
 * The catalog's canonical form, hashed into its fingerprint: a sequence of
 * netstring-like items "<tag><length>:<bytes>," so no choice of names or
 * descriptions can make two different catalogs serialize alike.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/buf.h"
#include "policy/catalog.h"

#define CANON_MAX (64u * 1024 * 1024)
#define CANON_VERSION "sallyport-catalog-2"

static void
canon_put(struct policy_buf *b, char tag, const char *bytes, size_t len)
{
	policy_buf_printf(b, "%c%zu:", tag, len);
	policy_buf_append(b, bytes, len);
	policy_buf_append_byte(b, ',');
}

static void
canon_str(struct policy_buf *b, char tag, const char *s)
{
	if (s == NULL)
		canon_put(b, '-', "", 0);
	else
		canon_put(b, tag, s, strlen(s));
}

static void
canon_int(struct policy_buf *b, char tag, int64_t n)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRId64, n);
	canon_str(b, tag, text);
}

static void
canon_template(struct policy_buf *b, const struct policy_tool *tool,
    const struct policy_template *t)
{
	size_t i;

	canon_int(b, 'T', (int64_t)t->part_count);
	for (i = 0; i < t->part_count; i++) {
		if (t->parts[i].is_param)
			canon_str(b, 'P',
			    tool->params[t->parts[i].param_index].name);
		else
			canon_put(b, 'L', t->parts[i].literal,
			    t->parts[i].literal_len);
	}
}

static int
canon_member_cmp(const void *a, const void *b)
{
	const struct policy_body *ma = *(const void *const *)a;
	const struct policy_body *mb = *(const void *const *)b;

	return strcmp(ma->key, mb->key);
}

static int
canon_pair_cmp(const void *a, const void *b)
{
	const struct policy_name_template *pa = *(const void *const *)a;
	const struct policy_name_template *pb = *(const void *const *)b;

	return strcmp(pa->name, pb->name);
}

/*
 * Pointers to n elements of size bytes from base, sorted with cmp when
 * sort is set: members of a JSON object in the file have no order.
 * Caller frees; NULL on allocation failure (n > 0).
 */
static const void **
canon_sorted(const void *base, size_t n, size_t size, bool sort,
    int (*cmp)(const void *, const void *))
{
	const void **v;
	size_t i;

	if ((v = calloc(n ? n : 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		v[i] = (const char *)base + i * size;
	if (sort && n > 1)
		qsort(v, n, sizeof(*v), cmp);
	return v;
}

static bool
canon_body(struct policy_buf *b, const struct policy_tool *tool,
    const struct policy_body *body)
{
	const void **kids;
	bool ok = true;
	size_t i;

	canon_int(b, 'B', body->kind);
	canon_str(b, 'k', body->key);
	if (body->kind == BODY_BOOL)
		canon_int(b, 'b', body->boolean);
	else if (body->kind == BODY_NUMBER)
		canon_str(b, 'n', body->number_text);
	else if (body->kind == BODY_STRING)
		canon_template(b, tool, &body->string);
	canon_int(b, 'c', (int64_t)body->child_count);
	kids = canon_sorted(body->children,
	    body->child_count, sizeof(*body->children),
	    body->kind == BODY_OBJECT, canon_member_cmp);
	if (kids == NULL)
		return false;
	for (i = 0; ok && i < body->child_count; i++)
		ok = canon_body(b, tool, kids[i]);
	free(kids);
	return ok;
}

/* Query parameters and headers are JSON objects in the file: by name. */
static bool
canon_pairs(struct policy_buf *b, const struct policy_tool *tool, char tag,
    const struct policy_name_template *pairs, size_t n)
{
	const struct policy_name_template *pair;
	const void **sorted;
	size_t i;

	canon_int(b, tag, (int64_t)n);
	sorted = canon_sorted(pairs, n,
	    sizeof(*pairs), true, canon_pair_cmp);
	if (sorted == NULL)
		return false;
	for (i = 0; i < n; i++) {
		pair = sorted[i];
		canon_str(b, 'n', pair->name);
		canon_template(b, tool, &pair->value);
	}
	free(sorted);
	return true;
}

static bool
canon_http(struct policy_buf *b, const struct policy_tool *tool)
{
	const struct policy_http_action *h = &tool->http;

	canon_str(b, 'm', http_method_name(h->method));
	canon_template(b, tool, &h->path);
	if (!canon_pairs(b, tool, 'q', h->query, h->query_count) ||
	    !canon_pairs(b, tool, 'h', h->headers, h->header_count))
		return false;
	return h->body == NULL || canon_body(b, tool, h->body);
}

static void
canon_ssh(struct policy_buf *b, const struct policy_tool *tool)
{
	size_t i;

	canon_int(b, 'a', (int64_t)tool->ssh.argc);
	for (i = 0; i < tool->ssh.argc; i++)
		canon_template(b, tool, &tool->ssh.argv[i]);
}

static void
canon_param(struct policy_buf *b, const struct policy_param *p)
{
	size_t i;

	canon_str(b, 'p', p->name);
	canon_str(b, 'd', p->description);
	canon_int(b, 't', p->type);
	canon_int(b, 'r', p->required);
	canon_int(b, 'l', (int64_t)p->min_length);
	canon_int(b, 'L', (int64_t)p->max_length);
	canon_str(b, 'x', p->pattern);
	canon_int(b, 'e', (int64_t)p->enum_count);
	for (i = 0; i < p->enum_count; i++)
		canon_str(b, 'v', p->enum_values[i]);
	canon_int(b, '<', p->has_minimum ? p->minimum : INT64_MIN);
	canon_int(b, '(', p->has_minimum);
	canon_int(b, '>', p->has_maximum ? p->maximum : INT64_MAX);
	canon_int(b, ')', p->has_maximum);
	canon_int(b, 's', p->scale);
	/* only when set, so fingerprints of policies without it stay */
	if (p->allow_leading_dash)
		canon_int(b, 'j', 1);
}

static int
canon_param_cmp(const void *a, const void *b)
{
	const struct policy_param *pa = *(const void *const *)a;
	const struct policy_param *pb = *(const void *const *)b;

	return strcmp(pa->name, pb->name);
}

/* Params by name: their order in the file's "params" object is not meaning. */
static bool
canon_params(struct policy_buf *b, const struct policy_tool *tool)
{
	const void **sorted;
	size_t i;

	canon_int(b, 'P', (int64_t)tool->param_count);
	sorted = canon_sorted(tool->params,
	    tool->param_count, sizeof(*tool->params), true, canon_param_cmp);
	if (sorted == NULL)
		return false;
	for (i = 0; i < tool->param_count; i++)
		canon_param(b, sorted[i]);
	free(sorted);
	return true;
}

/* Which secret goes along and how; its file paths may move freely. */
static void
canon_credential(struct policy_buf *b, const struct policy *policy,
    const struct policy_target *t)
{
	const struct policy_credential *c;

	if (!t->has_credential || t->credential_index >= policy->credential_count) {
		canon_int(b, 'R', 0);
		return;
	}
	c = &policy->credentials[t->credential_index];
	canon_int(b, 'R', 1);
	canon_str(b, 'r', c->name);
	canon_int(b, 'Y', c->type);
	canon_str(b, 'h', c->header_name);
}

static void
canon_http_target(struct policy_buf *b, const struct policy_target *t)
{
	canon_str(b, 'u', t->base_url);
	canon_str(b, 's', t->scheme);
	canon_str(b, 'H', t->host);
	canon_int(b, 'o', t->port);
	canon_str(b, 'b', t->base_path);
	canon_str(b, 'A', t->ca_file);
	canon_int(b, 'F', t->follow_redirects);
	canon_int(b, '1', t->allow_private);
	canon_int(b, '2', t->allow_loopback);
	canon_int(b, '3', t->allow_link_local);
	canon_int(b, '4', t->allow_metadata);
}

static void
canon_ssh_target(struct policy_buf *b, const struct policy_target *t)
{
	canon_str(b, 'U', t->user);
	canon_str(b, 'H', t->host);
	canon_int(b, 'o', t->port);
	canon_str(b, 'k', t->known_hosts);
	canon_int(b, 'Z', t->has_host_key_sha256);
	if (t->has_host_key_sha256)
		canon_put(b, 'z', (const char *)t->host_key_sha256,
		    sizeof(t->host_key_sha256));
}

static void
canon_target(struct policy_buf *b, const struct policy *policy,
    const struct policy_target *t)
{
	canon_str(b, 'g', t->name);
	canon_int(b, 'y', t->type);
	canon_int(b, 'w', t->timeout_ms);
	canon_credential(b, policy, t);
	if (t->type == TARGET_HTTP)
		canon_http_target(b, t);
	else
		canon_ssh_target(b, t);
}

static void
canon_confirm(struct policy_buf *b, const struct policy_tool *tool)
{
	const struct policy_confirm *c = &tool->confirm_spec;

	canon_int(b, 'Q', c->timeout_s);
	if (c->retype != POLICY_CONFIRM_NO_RETYPE)
		canon_str(b, 'R', tool->params[c->retype].name);
	if (c->has_message)
		canon_template(b, tool, &c->message);
	/* who may approve is the host's business, not the catalog's; that
	 * the client waits for an operator is the client's */
	if (c->via_operator)
		canon_int(b, 'P', 1);
}

static bool
canon_tool(struct policy_buf *b, const struct policy *policy,
    const struct policy_tool *tool)
{
	canon_str(b, 'N', tool->name);
	/* tagged only when set, so fingerprints of untitled tools stay */
	if (tool->title != NULL)
		canon_str(b, 'V', tool->title);
	canon_str(b, 'D', tool->description);
	canon_str(b, 'S', tool->scope);
	canon_int(b, 'M', tool->mutating);
	canon_int(b, 'C', tool->confirm);
	/* what the human is asked is part of the action: a changed
	 * question changes the fingerprint (only when confirm is set, so
	 * other tools keep theirs) */
	if (tool->confirm)
		canon_confirm(b, tool);
	canon_int(b, 'I', tool->idempotent);
	canon_int(b, 'X', tool->destructive);
	canon_int(b, 'O', tool->timeout_ms);
	if (tool->target_index < policy->target_count)
		canon_target(b, policy, &policy->targets[tool->target_index]);
	canon_int(b, 'K', tool->kind);
	if (tool->kind == TOOL_HTTP && !canon_http(b, tool))
		return false;
	if (tool->kind == TOOL_SSH)
		canon_ssh(b, tool);
	return canon_params(b, tool);
}

static int
canon_string_cmp(const void *a, const void *b)
{
	const char *const *sa = *(const void *const *)a;
	const char *const *sb = *(const void *const *)b;

	return strcmp(*sa, *sb);
}

static int
canon_id_cmp(const void *a, const void *b)
{
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;

	return ia < ib ? -1 : ia > ib;
}

/* A list of ids is a set: sorted, so its order in the file does not count. */
static bool
canon_ids(struct policy_buf *b, char tag, const uint32_t *ids, size_t n)
{
	uint32_t *sorted;
	size_t i;

	canon_int(b, tag, (int64_t)n);
	if ((sorted = calloc(n ? n : 1, sizeof(*sorted))) == NULL)
		return false;
	if (n > 0)
		memcpy(sorted, ids, n * sizeof(*ids));
	qsort(sorted, n, sizeof(*sorted), canon_id_cmp);
	for (i = 0; i < n; i++)
		canon_int(b, 'i', sorted[i]);
	free(sorted);
	return true;
}

static bool
canon_profile(struct policy_buf *b, const struct policy_profile *pr)
{
	const void **scopes;
	size_t i;

	canon_str(b, 'G', pr->name);
	canon_int(b, 'E', (int64_t)pr->scope_count);
	scopes = canon_sorted(pr->scopes, pr->scope_count,
	    sizeof(*pr->scopes), true, canon_string_cmp);
	if (scopes == NULL)
		return false;
	for (i = 0; i < pr->scope_count; i++)
		canon_str(b, 'e', *(const char *const *)scopes[i]);
	free(scopes);
	return canon_ids(b, 'W', pr->match_uids, pr->match_uid_count) &&
	    canon_ids(b, 'J', pr->match_gids, pr->match_gid_count);
}

static int
canon_profile_cmp(const void *a, const void *b)
{
	const struct policy_profile *pa = *(const void *const *)a;
	const struct policy_profile *pb = *(const void *const *)b;

	return strcmp(pa->name, pb->name);
}

/* "profiles" is an object in the file: by name. */
static bool
canon_profiles(struct policy_buf *b, const struct policy *policy)
{
	const void **sorted;
	bool ok = true;
	size_t i;

	canon_int(b, 'Q', (int64_t)policy->profile_count);
	sorted = canon_sorted(policy->profiles, policy->profile_count,
	    sizeof(*policy->profiles), true, canon_profile_cmp);
	if (sorted == NULL)
		return false;
	for (i = 0; ok && i < policy->profile_count; i++)
		ok = canon_profile(b, sorted[i]);
	free(sorted);
	return ok;
}

bool
policy_catalog_fingerprint(const struct policy *policy,
    uint8_t out[HASH_SHA256_LEN])
{
	struct policy_buf b;
	bool ok = true;
	size_t i;

	policy_buf_init(&b, CANON_MAX);
	canon_str(&b, 'V', CANON_VERSION);
	canon_int(&b, 'n', (int64_t)policy->tool_count);
	for (i = 0; ok && i < policy->tool_count; i++)
		ok = canon_tool(&b, policy, &policy->tools[i]);
	if (ok)
		ok = canon_profiles(&b, policy);
	if (!ok || b.failed) {
		log_error("canonical catalog does not fit (%zu bytes)", b.len);
		policy_buf_free(&b);
		return false;
	}
	hash_sha256(b.data, b.len, out);
	policy_buf_free(&b);
	return true;
}

bool
policy_catalog_verify_pin(const struct policy *policy, char *why,
    size_t why_size)
{
	uint8_t actual[HASH_SHA256_LEN];
	char want_hex[HASH_SHA256_HEX_LEN + 1], got_hex[HASH_SHA256_HEX_LEN + 1];

	if (!policy->has_catalog_pin)
		return true;
	if (!policy_catalog_fingerprint(policy, actual)) {
		snprintf(why, why_size, "the catalog fingerprint cannot be "
		    "computed");
		return false;
	}
	if (memcmp(actual, policy->catalog_pin, sizeof(actual)) == 0)
		return true;
	hash_hex(policy->catalog_pin, HASH_SHA256_LEN, want_hex);
	hash_hex(actual, HASH_SHA256_LEN, got_hex);
	snprintf(why, why_size, "catalog_sha256 is %s but the catalog's "
	    "fingerprint is %s", want_hex, got_hex);
	return false;
}
