/*
 * Helpers of the loader: typed member readers that report problems where
 * they are (see load_ctx.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/utf8.h"
#include "policy/load_ctx.h"

#define LOAD_PATH_MAX 512
#define LOAD_MESSAGE_MAX 640

/* A member name printed bare when it is plain, quoted otherwise. */
static void
path_segment(const cJSON *node, const struct json_location *parent,
    const struct json_location *self, char *buf, size_t size)
{
	char q[LOAD_QUOTE_MAX * 6 + 8];

	if (cJSON_IsArray(parent->node)) {
		snprintf(buf, size, "[%zu]", self->index);
		return;
	}
	if (ctx_name_matches(node->string, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
	    64)) {
		snprintf(buf, size, "%s%s", parent->parent == SIZE_MAX ? "" :
		    ".", node->string);
		return;
	}
	ctx_quote(node->string, q, sizeof(q));
	snprintf(buf, size, "[%s]", q);
}

/* "tools[0].params.id"; "" for the root. */
static void
path_of(const struct load_ctx *ctx, const struct json_location *l,
    char *buf, size_t size)
{
	char seg[LOAD_QUOTE_MAX * 6 + 16];
	const struct json_location *parent;
	size_t seglen, cur = 0;

	buf[0] = '\0';
	while (l != NULL && l->parent != SIZE_MAX) {
		parent = &ctx->locs.items[l->parent];
		path_segment(l->node, parent, l, seg, sizeof(seg));
		seglen = strlen(seg);
		if (seglen + cur + 1 > size)
			break;		/* too deep: the innermost part is kept */
		memmove(buf + seglen, buf, cur + 1);
		memcpy(buf, seg, seglen);
		cur += seglen;
		l = parent;
	}
}

static void
ctx_report(struct load_ctx *ctx, enum policy_diag_severity severity,
    const struct json_location *at, unsigned line, unsigned col,
    const char *fmt, va_list ap)
{
	char path[LOAD_PATH_MAX], text[LOAD_MESSAGE_MAX];
	char message[LOAD_PATH_MAX + LOAD_MESSAGE_MAX + 2];

	path_of(ctx, at, path, sizeof(path));
	vsnprintf(text, sizeof(text), fmt, ap);
	if (snprintf(message, sizeof(message), "%s%s%s", path,
	    path[0] ? ": " : "", text) < 0)
		return;
	policy_diags_add(ctx->diags, severity, ctx->name, line, col, message);
}

void
ctx_error(struct load_ctx *ctx, const cJSON *node, const char *fmt, ...)
{
	const struct json_location *l = json_locations_find(&ctx->locs, node);
	va_list ap;

	va_start(ap, fmt);
	ctx_report(ctx, POLICY_DIAG_ERROR, l, l ? l->line : 1, l ? l->col : 1,
	    fmt, ap);
	va_end(ap);
}

void
ctx_warn(struct load_ctx *ctx, const cJSON *node, const char *fmt, ...)
{
	const struct json_location *l = json_locations_find(&ctx->locs, node);
	va_list ap;

	va_start(ap, fmt);
	ctx_report(ctx, POLICY_DIAG_WARNING, l, l ? l->line : 1,
	    l ? l->col : 1, fmt, ap);
	va_end(ap);
}

void
ctx_error_key(struct load_ctx *ctx, const cJSON *node, const char *fmt, ...)
{
	const struct json_location *l = json_locations_find(&ctx->locs, node);
	const struct json_location *parent = NULL;
	va_list ap;

	if (l != NULL && l->parent != SIZE_MAX)
		parent = &ctx->locs.items[l->parent];
	va_start(ap, fmt);
	ctx_report(ctx, POLICY_DIAG_ERROR, parent, l ? l->key_line : 1,
	    l ? l->key_col : 1, fmt, ap);
	va_end(ap);
}

/* Length of the UTF-8 sequence that starts with byte c (input is valid). */
static size_t
utf8_seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c < 0xe0)
		return 2;
	return c < 0xf0 ? 3 : 4;
}

/*
 * Invisible and direction-changing characters (zero-width, bidi
 * embeddings, overrides and isolates, line and paragraph separators, BOM):
 * shown escaped, so a message reads as the bytes it names.  Returns the
 * code point, or 0 for any other character.
 */
static unsigned
quote_invisible(const unsigned char *p)
{
	unsigned cp;

	if ((p[0] != 0xe2 && p[0] != 0xef) || p[1] == 0 || p[2] == 0)
		return 0;
	cp = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
	if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
		return cp;
	return 0;
}

void
ctx_quote(const char *s, char *buf, size_t size)
{
	size_t o = 0, n, cps = 0;
	unsigned char c;

	if (size < 8)
		return;
	buf[o++] = '"';
	while (*s != '\0' && o + 12 < size) {
		if (cps++ == LOAD_QUOTE_MAX) {
			o += (size_t)snprintf(buf + o, size - o, "...");
			break;
		}
		c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\%c", c);
		else if (c == '\n')
			o += (size_t)snprintf(buf + o, size - o, "\\n");
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\u%04x", c);
		else if (quote_invisible((const unsigned char *)s) != 0) {
			o += (size_t)snprintf(buf + o, size - o, "\\u%04x",
			    quote_invisible((const unsigned char *)s));
			s += 3;
			continue;
		} else {
			n = utf8_seq_len(c);
			memcpy(buf + o, s, n);
			o += n;
			s += n;
			continue;
		}
		s++;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

size_t
ctx_utf8_count(const char *s)
{
	size_t len = strlen(s), n;

	/* Policy text passed the strict scanner; if it were not valid UTF-8,
	 * its byte count is an upper bound that keeps length limits safe. */
	if (!utf8_count_code_points((const uint8_t *)s, len, &n))
		return len;
	return n;
}

/* Keys longer than this are no near miss of any key the loader knows. */
#define NEAR_KEY_MAX 40
#define NEAR_DIST_MAX 2

/* Edit distance with adjacent transpositions (optimal string alignment). */
static unsigned
near_distance(const char *a, const char *b)
{
	unsigned d[NEAR_KEY_MAX + 1][NEAR_KEY_MAX + 1], best;
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > NEAR_KEY_MAX || lb > NEAR_KEY_MAX)
		return UINT_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

void
ctx_near_scan(struct ctx_near *n, const char *key, const char *const *known)
{
	unsigned dist;

	for (; *known != NULL; known++) {
		dist = near_distance(key, *known);
		/* "id" is no near miss of "ab": two edits there is all */
		if (dist > NEAR_DIST_MAX || dist >= strlen(*known))
			continue;
		if (n->best == NULL || dist < n->dist) {
			n->best = *known;
			n->dist = dist;
			n->tie = false;
		} else if (dist == n->dist && strcmp(*known, n->best) != 0)
			n->tie = true;
	}
}

void
ctx_near_hint(const struct ctx_near *n, char *buf, size_t size)
{
	if (n->best == NULL || n->tie)
		buf[0] = '\0';
	else
		snprintf(buf, size, "; did you mean \"%s\"?", n->best);
}

bool
ctx_known_keys(struct load_ctx *ctx, const cJSON *obj,
    const char *const *allowed)
{
	const cJSON *m;
	const char *const *a;
	char q[LOAD_QUOTE_MAX * 6 + 8], hint[NEAR_KEY_MAX + 24];
	struct ctx_near near;
	bool ok = true;

	cJSON_ArrayForEach(m, obj) {
		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, m->string) == 0)
				break;
		if (*a != NULL)
			continue;
		memset(&near, 0, sizeof(near));
		ctx_near_scan(&near, m->string, allowed);
		ctx_near_hint(&near, hint, sizeof(hint));
		ctx_quote(m->string, q, sizeof(q));
		ctx_error_key(ctx, m, "unknown key %s%s", q, hint);
		ok = false;
	}
	return ok;
}

bool
ctx_require_object(struct load_ctx *ctx, const cJSON *node)
{
	if (cJSON_IsObject(node))
		return true;
	ctx_error(ctx, node, "must be an object");
	return false;
}

const cJSON *
ctx_member(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (m == NULL && required)
		ctx_error(ctx, obj, "missing \"%s\"", key);
	return m;
}

void
ctx_out_of_memory(struct load_ctx *ctx)
{
	log_error("out of memory");
	policy_diags_add(ctx->diags, POLICY_DIAG_ERROR, ctx->name, 1, 1,
	    "out of memory while loading the policy");
}

char *
ctx_strdup(struct load_ctx *ctx, const char *s)
{
	char *d = strdup(s);

	if (d == NULL)
		ctx_out_of_memory(ctx);
	return d;
}

bool
ctx_string(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required, char **out)
{
	const cJSON *m = ctx_member(ctx, obj, key, required);

	if (m == NULL)
		return !required;
	if (!cJSON_IsString(m)) {
		ctx_error(ctx, m, "must be a string");
		return false;
	}
	free(*out);
	*out = ctx_strdup(ctx, m->valuestring);
	return *out != NULL;
}

bool
ctx_bool(struct load_ctx *ctx, const cJSON *obj, const char *key, bool *out)
{
	const cJSON *m = ctx_member(ctx, obj, key, false);

	if (m == NULL)
		return true;
	if (!cJSON_IsBool(m)) {
		ctx_error(ctx, m, "must be true or false");
		return false;
	}
	*out = cJSON_IsTrue(m);
	return true;
}

const char *
ctx_number_text(struct load_ctx *ctx, const cJSON *node, size_t *len)
{
	const struct json_location *l = json_locations_find(&ctx->locs, node);
	size_t end;

	if (l == NULL) {
		*len = 0;
		return "";
	}
	for (end = l->offset; end < ctx->len &&
	    strchr("-+.eE0123456789", ctx->text[end]) != NULL &&
	    ctx->text[end] != '\0'; end++)
		;
	*len = end - l->offset;
	return ctx->text + l->offset;
}

/* Parses the token as written, so 1.0, 1e3 and 2^63 are all refused. */
bool
ctx_integer_value(struct load_ctx *ctx, const cJSON *node, int64_t min,
    int64_t max, int64_t *out)
{
	char buf[32], *end;
	const char *t;
	size_t len;
	long long v;

	if (!cJSON_IsNumber(node)) {
		ctx_error(ctx, node, "must be an integer");
		return false;
	}
	t = ctx_number_text(ctx, node, &len);
	if (len >= sizeof(buf) || memchr(t, '.', len) || memchr(t, 'e', len) ||
	    memchr(t, 'E', len)) {
		ctx_error(ctx, node, "must be an integer, not %.*s",
		    (int)(len > 24 ? 24 : len), t);
		return false;
	}
	memcpy(buf, t, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max) {
		ctx_error(ctx, node, "must be between %lld and %lld",
		    (long long)min, (long long)max);
		return false;
	}
	*out = v;
	return true;
}

bool
ctx_integer(struct load_ctx *ctx, const cJSON *obj, const char *key,
    int64_t min, int64_t max, int64_t *out)
{
	const cJSON *m = ctx_member(ctx, obj, key, false);

	if (m == NULL)
		return true;
	return ctx_integer_value(ctx, m, min, max, out);
}

bool
ctx_path(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required, char **out)
{
	const cJSON *m = ctx_member(ctx, obj, key, required);

	if (m == NULL)
		return !required;
	if (!cJSON_IsString(m) || m->valuestring[0] != '/') {
		ctx_error(ctx, m, "must be an absolute path");
		return false;
	}
	free(*out);
	*out = ctx_strdup(ctx, m->valuestring);
	return *out != NULL;
}

bool
ctx_add_file(struct load_ctx *ctx, const char *path, const cJSON *node,
    enum policy_file_kind kind)
{
	struct policy *p = ctx->policy;
	const struct json_location *l = json_locations_find(&ctx->locs, node);
	struct policy_file *grown;
	size_t ncap;

	if (path == NULL)
		return true;
	if (p->file_count == ctx->file_cap) {
		ncap = ctx->file_cap ? ctx->file_cap * 2 : 8;
		grown = reallocarray(p->files, ncap, sizeof(*grown));
		if (grown == NULL) {
			ctx_out_of_memory(ctx);
			return false;
		}
		p->files = grown;
		ctx->file_cap = ncap;
	}
	p->files[p->file_count].path = path;
	p->files[p->file_count].kind = kind;
	p->files[p->file_count].line = l ? l->line : 1;
	p->files[p->file_count].col = l ? l->col : 1;
	p->file_count++;
	return true;
}

bool
ctx_name_matches(const char *s, const char *first, const char *rest,
    size_t max)
{
	size_t n;

	if (s == NULL || s[0] == '\0' || strchr(first, s[0]) == NULL)
		return false;
	for (n = 1; s[n] != '\0'; n++)
		if (n >= max || strchr(rest, s[n]) == NULL)
			return false;
	return true;
}

void
ctx_id_list(struct load_ctx *ctx, const cJSON *obj, const char *key,
    uint32_t **out, size_t *count, ctx_id_admit admit, void *arg)
{
	const cJSON *list = ctx_member(ctx, obj, key, false), *e;
	int64_t v;

	if (list == NULL)
		return;
	if (!cJSON_IsArray(list)) {
		ctx_error(ctx, list, "must be an array of ids");
		return;
	}
	*out = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(**out));
	if (*out == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, list)
		if (ctx_integer_value(ctx, e, 0, UINT32_MAX - 1, &v) &&
		    (admit == NULL || admit(ctx, e, (uint32_t)v, arg)))
			(*out)[(*count)++] = (uint32_t)v;
}
