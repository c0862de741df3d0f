/*
 * The "credentials" and "targets" sections: where the secrets are (paths
 * only) and where actions go (an http base URL, or an ssh host whose key
 * is pinned).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "policy/load_ctx.h"

static const char *const credential_type_names[] = {
	[CREDENTIAL_BEARER] = "bearer", [CREDENTIAL_BASIC] = "basic",
	[CREDENTIAL_HEADER] = "header", [CREDENTIAL_SSH_KEY] = "ssh-key",
};

#define TOKEN_CHARS LOAD_LOWER LOAD_DIGIT "ABCDEFGHIJKLMNOPQRSTUVWXYZ" \
	"!#$%&'*+-.^_`|~"

/* Headers the HTTP layer owns; a policy may not set them. */
static const char *const reserved_headers[] = { "host", "content-length",
    "transfer-encoding", "connection", "authorization", NULL };

bool
load_header_name_ok(const char *name)
{
	const char *const *r;

	if (!ctx_name_matches(name, TOKEN_CHARS, TOKEN_CHARS, 128))
		return false;
	for (r = reserved_headers; *r != NULL; r++)
		if (strcasecmp(*r, name) == 0)
			return false;
	return true;
}

static bool
key_in(const char *key, const char *const *keys)
{
	for (; *keys != NULL; keys++)
		if (strcmp(*keys, key) == 0)
			return true;
	return false;
}

/*
 * Members must be common or of this kind; a member of another kind gets
 * its own message, anything else is unknown.
 */
static void
check_kind_keys(struct load_ctx *ctx, const cJSON *obj,
    const char *const *common, const char *const *mine,
    const char *const *all, const char *kind)
{
	const cJSON *m;
	char q[LOAD_QUOTE_SIZE], hint[64];
	struct ctx_near near;

	cJSON_ArrayForEach(m, obj) {
		if (key_in(m->string, common) || key_in(m->string, mine))
			continue;
		ctx_quote(m->string, q, sizeof(q));
		if (key_in(m->string, all)) {
			ctx_error_key(ctx, m, "%s does not apply to %s", q, kind);
			continue;
		}
		memset(&near, 0, sizeof(near));
		ctx_near_scan(&near, m->string, common);
		ctx_near_scan(&near, m->string, mine);
		ctx_near_hint(&near, hint, sizeof(hint));
		ctx_error_key(ctx, m, "unknown key %s%s", q, hint);
	}
}

static bool
credential_type(struct load_ctx *ctx, const cJSON *obj,
    enum policy_credential_type *out)
{
	const cJSON *t = ctx_member(ctx, obj, "type", true);
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	if (t == NULL)
		return false;
	for (i = 0; i < 4; i++)
		if (cJSON_IsString(t) &&
		    strcmp(t->valuestring, credential_type_names[i]) == 0) {
			*out = (enum policy_credential_type)i;
			return true;
		}
	ctx_quote(cJSON_IsString(t) ? t->valuestring : "", q, sizeof(q));
	ctx_error(ctx, t, "unknown credential type %s (bearer, basic, header, "
	    "ssh-key)", q);
	return false;
}

static void
secret_path(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required, char **out)
{
	if (ctx_path(ctx, obj, key, required, out))
		ctx_add_file(ctx, *out, ctx_member(ctx, obj, key, false),
		    POLICY_FILE_SECRET);
}

static void
load_credential(struct load_ctx *ctx, const cJSON *obj,
    struct policy_credential *c)
{
	static const char *const common[] = { "type", NULL };
	static const char *const by_file[] = { "file", NULL };
	static const char *const by_header[] = { "file", "header_name", NULL };
	static const char *const by_key[] = { "private_key", "public_key",
	    "passphrase_file", NULL };
	static const char *const all[] = { "file", "header_name",
	    "private_key", "public_key", "passphrase_file", NULL };
	const cJSON *h;
	char kind[48];

	if (!ctx_require_object(ctx, obj) || !credential_type(ctx, obj, &c->type)) {
		if (cJSON_IsObject(obj))
			check_kind_keys(ctx, obj, common, all, all, "");
		return;
	}
	snprintf(kind, sizeof(kind), "a credential of type %s",
	    credential_type_names[c->type]);
	check_kind_keys(ctx, obj, common, c->type == CREDENTIAL_SSH_KEY ?
	    by_key : c->type == CREDENTIAL_HEADER ? by_header : by_file, all,
	    kind);
	if (c->type == CREDENTIAL_SSH_KEY) {
		secret_path(ctx, obj, "private_key", true, &c->private_key);
		if (ctx_path(ctx, obj, "public_key", false, &c->public_key))
			ctx_add_file(ctx, c->public_key, ctx_member(ctx, obj,
			    "public_key", false), POLICY_FILE_PUBLIC_KEY);
		secret_path(ctx, obj, "passphrase_file", false,
		    &c->passphrase_file);
		return;
	}
	secret_path(ctx, obj, "file", true, &c->file);
	if (c->type != CREDENTIAL_HEADER)
		return;
	if (ctx_string(ctx, obj, "header_name", true, &c->header_name) &&
	    !load_header_name_ok(c->header_name)) {
		h = ctx_member(ctx, obj, "header_name", false);
		ctx_error(ctx, h, "must be an HTTP header name other than Host, "
		    "Content-Length, Transfer-Encoding, Connection, "
		    "Authorization");
	}
}

/* Names entries of an object section; a bad name is reported at its key. */
static void
check_entry_name(struct load_ctx *ctx, const cJSON *entry, const char *what)
{
	char q[LOAD_QUOTE_SIZE];

	if (ctx_name_matches(entry->string, LOAD_ENTRY_FIRST, LOAD_ENTRY_REST,
	    POLICY_NAME_MAX))
		return;
	ctx_quote(entry->string, q, sizeof(q));
	ctx_error_key(ctx, entry, "bad %s name %s (want "
	    "^[a-z0-9][a-z0-9_.-]{0,63}$)", what, q);
}

void
load_credentials(struct load_ctx *ctx, const cJSON *root)
{
	const cJSON *all = ctx_member(ctx, root, "credentials", false), *e;
	struct policy *p = ctx->policy;
	struct policy_credential *c;

	if (all == NULL || !ctx_require_object(ctx, all))
		return;
	p->credentials = calloc((size_t)cJSON_GetArraySize(all) + 1,
	    sizeof(*p->credentials));
	if (p->credentials == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, all) {
		check_entry_name(ctx, e, "credential");
		c = &p->credentials[p->credential_count++];
		c->name = ctx_strdup(ctx, e->string);
		c->type = LOAD_CREDENTIAL_UNTYPED;
		load_credential(ctx, e, c);
	}
}

void
load_free_credential(struct policy_credential *c)
{
	free(c->name);
	free(c->file);
	free(c->header_name);
	free(c->private_key);
	free(c->public_key);
	free(c->passphrase_file);
}

void
load_free_target(struct policy_target *t)
{
	free(t->name);
	free(t->base_url);
	free(t->scheme);
	free(t->host);
	free(t->base_path);
	free(t->ca_file);
	free(t->user);
	free(t->known_hosts);
}

/* The target's credential, which must exist and be of a fitting type. */
static void
target_credential(struct load_ctx *ctx, const cJSON *obj,
    struct policy_target *t)
{
	const cJSON *ref = ctx_member(ctx, obj, "credential",
	    t->type == TARGET_SSH);
	const struct policy_credential *c;
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	if (ref == NULL)
		return;
	if (!cJSON_IsString(ref)) {
		ctx_error(ctx, ref, "must be the name of a credential");
		return;
	}
	ctx_quote(ref->valuestring, q, sizeof(q));
	for (i = 0; i < ctx->policy->credential_count; i++)
		if (strcmp(ctx->policy->credentials[i].name, ref->valuestring) == 0)
			break;
	if (i == ctx->policy->credential_count) {
		ctx_error(ctx, ref, "no credential named %s", q);
		return;
	}
	c = &ctx->policy->credentials[i];
	t->has_credential = true;
	t->credential_index = i;
	if (c->type == LOAD_CREDENTIAL_UNTYPED)
		return;		/* its own error is reported */
	if (t->type == TARGET_SSH && c->type != CREDENTIAL_SSH_KEY)
		ctx_error(ctx, ref, "credential %s is of type %s; an ssh target "
		    "needs an ssh-key", q, credential_type_names[c->type]);
	else if (t->type == TARGET_HTTP && c->type == CREDENTIAL_SSH_KEY)
		ctx_error(ctx, ref, "credential %s is an ssh-key; an http "
		    "target needs bearer, basic or header", q);
}

static int
base64_value(char c)
{
	const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/";
	const char *p = c != '\0' ? strchr(alphabet, c) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

/* OpenSSH's "SHA256:" + 43 base64 characters (one optional '='). */
static bool
parse_openssh_fingerprint(const char *s, uint8_t out[HASH_SHA256_LEN])
{
	uint32_t acc = 0;
	size_t bits = 0, o = 0, i, n;
	int v;

	if (strncmp(s, "SHA256:", 7) != 0)
		return false;
	s += 7;
	n = strlen(s);
	if (n == 44 && s[43] == '=')
		n = 43;
	if (n != 43)
		return false;
	for (i = 0; i < n; i++) {
		if ((v = base64_value(s[i])) < 0)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
		acc &= (1u << bits) - 1;
	}
	return o == HASH_SHA256_LEN && acc == 0;
}

static void
target_host_key(struct load_ctx *ctx, const cJSON *obj,
    struct policy_target *t)
{
	const cJSON *kh = ctx_member(ctx, obj, "known_hosts", false);
	const cJSON *fp = ctx_member(ctx, obj, "host_key_sha256", false);

	if (kh == NULL && fp == NULL) {
		ctx_error(ctx, obj, "an ssh target needs \"known_hosts\" or "
		    "\"host_key_sha256\": host keys are always verified");
		return;
	}
	if (kh != NULL && fp != NULL) {
		ctx_error_key(ctx, fp, "give \"known_hosts\" or "
		    "\"host_key_sha256\", not both");
		return;
	}
	if (kh != NULL) {
		if (ctx_path(ctx, obj, "known_hosts", true, &t->known_hosts))
			ctx_add_file(ctx, t->known_hosts, kh,
			    POLICY_FILE_KNOWN_HOSTS);
		return;
	}
	if (!cJSON_IsString(fp) || (!parse_openssh_fingerprint(fp->valuestring,
	    t->host_key_sha256) && !hash_parse_hex_sha256(fp->valuestring,
	    strlen(fp->valuestring), t->host_key_sha256))) {
		ctx_error(ctx, fp, "must be \"SHA256:\" and 43 base64 characters "
		    "(as ssh-keygen -l prints) or 64 hex digits");
		return;
	}
	t->has_host_key_sha256 = true;
}

static void
load_ssh_target(struct load_ctx *ctx, const cJSON *obj,
    struct policy_target *t)
{
	const cJSON *m;
	int64_t port = 22;

	if (ctx_string(ctx, obj, "host", true, &t->host) && t->host != NULL &&
	    !ctx_name_matches(t->host, LOAD_LOWER LOAD_DIGIT ":", LOAD_LOWER
	    LOAD_DIGIT "-.:" "ABCDEF" "abcdef", 253)) {
		m = ctx_member(ctx, obj, "host", false);
		ctx_error(ctx, m, "must be a host name or an IP address");
	}
	ctx_integer(ctx, obj, "port", 1, 65535, &port);
	t->port = (uint16_t)port;
	if (ctx_string(ctx, obj, "user", true, &t->user) && t->user != NULL &&
	    !ctx_name_matches(t->user, LOAD_LOWER "_", LOAD_LOWER LOAD_DIGIT
	    "_.-", 32))
		ctx_error(ctx, ctx_member(ctx, obj, "user", false),
		    "must be a user name matching ^[a-z_][a-z0-9_.-]{0,31}$");
	target_host_key(ctx, obj, t);
}

static void
load_http_target(struct load_ctx *ctx, const cJSON *obj,
    struct policy_target *t)
{
	const cJSON *url = ctx_member(ctx, obj, "base_url", true);

	if (url != NULL && load_base_url(ctx, url, t))
		t->allow_loopback = load_host_is_loopback(t->host);
	if (ctx_path(ctx, obj, "ca_file", false, &t->ca_file))
		ctx_add_file(ctx, t->ca_file, ctx_member(ctx, obj, "ca_file",
		    false), POLICY_FILE_CA);
	ctx_bool(ctx, obj, "follow_redirects", &t->follow_redirects);
	ctx_bool(ctx, obj, "allow_private", &t->allow_private);
	ctx_bool(ctx, obj, "allow_loopback", &t->allow_loopback);
	ctx_bool(ctx, obj, "allow_link_local", &t->allow_link_local);
	ctx_bool(ctx, obj, "allow_metadata", &t->allow_metadata);
}

static bool
target_type(struct load_ctx *ctx, const cJSON *obj, struct policy_target *t)
{
	const cJSON *m = ctx_member(ctx, obj, "type", true);

	if (m == NULL)
		return false;
	if (cJSON_IsString(m) && strcmp(m->valuestring, "http") == 0)
		t->type = TARGET_HTTP;
	else if (cJSON_IsString(m) && strcmp(m->valuestring, "ssh") == 0)
		t->type = TARGET_SSH;
	else {
		ctx_error(ctx, m, "must be \"http\" or \"ssh\"");
		return false;
	}
	return true;
}

static void
load_target(struct load_ctx *ctx, const cJSON *obj, struct policy_target *t)
{
	static const char *const common[] = { "type", "credential",
	    "timeout_ms", NULL };
	static const char *const http[] = { "base_url", "ca_file",
	    "follow_redirects", "allow_private", "allow_loopback",
	    "allow_link_local", "allow_metadata", NULL };
	static const char *const ssh[] = { "host", "port", "user",
	    "known_hosts", "host_key_sha256", NULL };
	static const char *const all[] = { "base_url", "ca_file",
	    "follow_redirects", "allow_private", "allow_loopback",
	    "allow_link_local", "allow_metadata", "host", "port", "user",
	    "known_hosts", "host_key_sha256", NULL };
	int64_t timeout = 0;

	if (!ctx_require_object(ctx, obj))
		return;
	if (!target_type(ctx, obj, t)) {
		check_kind_keys(ctx, obj, common, all, all, "");
		return;
	}
	check_kind_keys(ctx, obj, common, t->type == TARGET_HTTP ? http : ssh,
	    all, t->type == TARGET_HTTP ? "an http target" : "an ssh target");
	if (ctx_integer(ctx, obj, "timeout_ms", LOAD_TIMEOUT_MIN,
	    LOAD_TIMEOUT_MAX, &timeout))
		t->timeout_ms = (uint32_t)timeout;
	if (t->type == TARGET_HTTP)
		load_http_target(ctx, obj, t);
	else
		load_ssh_target(ctx, obj, t);
	target_credential(ctx, obj, t);
}

void
load_targets(struct load_ctx *ctx, const cJSON *root)
{
	const cJSON *all = ctx_member(ctx, root, "targets", false), *e;
	struct policy *p = ctx->policy;
	struct policy_target *t;

	if (all == NULL || !ctx_require_object(ctx, all))
		return;
	p->targets = calloc((size_t)cJSON_GetArraySize(all) + 1,
	    sizeof(*p->targets));
	if (p->targets == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, all) {
		check_entry_name(ctx, e, "target");
		t = &p->targets[p->target_count++];
		t->name = ctx_strdup(ctx, e->string);
		t->type = LOAD_TARGET_UNTYPED;
		load_target(ctx, e, t);
	}
}
