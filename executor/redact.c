/*
 * Withholding credentials from results (executor/redact.h).
 *
 * Each form is matched on its own, decoding one unit of input at a time
 * and comparing its bytes with the needle's: mixing forms in one match
 * would need backtracking (a literal '%' or an escape?), and a reflecting
 * target applies one encoding to a whole value.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/hash.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/text_fold.h"
#include "common/utf8.h"
#include "executor/redact.h"

enum redact_form {
	FORM_RAW, FORM_PERCENT, FORM_PERCENT2, FORM_JSON, FORM_HTML,
	FORM_COUNT
};

/* Longest entity read: "&#1114111;", "&NewLine;". */
#define REDACT_ENTITY_MAX	10

/* One unit of input: the bytes it stands for. */
struct redact_unit {
	uint8_t b[UTF8_SEQUENCE_MAX];
	size_t n;		/* bytes it stands for */
	size_t used;		/* input bytes it takes */
	bool plus;		/* a '+', which a query may mean as ' ' */
};

/* HTML's names for ASCII characters (compared case-insensitively). */
static const struct {
	const char *name;
	char c;
} redact_entities[] = {
	{ "tab", '\t' }, { "newline", '\n' }, { "excl", '!' },
	{ "quot", '"' }, { "num", '#' }, { "dollar", '$' },
	{ "percnt", '%' }, { "amp", '&' }, { "apos", '\'' },
	{ "lpar", '(' }, { "rpar", ')' }, { "ast", '*' }, { "midast", '*' },
	{ "plus", '+' }, { "comma", ',' }, { "period", '.' },
	{ "sol", '/' }, { "colon", ':' }, { "semi", ';' }, { "lt", '<' },
	{ "equals", '=' }, { "gt", '>' }, { "quest", '?' },
	{ "commat", '@' }, { "lsqb", '[' }, { "lbrack", '[' },
	{ "bsol", '\\' }, { "rsqb", ']' }, { "rbrack", ']' },
	{ "hat", '^' }, { "lowbar", '_' }, { "grave", '`' },
	{ "lcub", '{' }, { "lbrace", '{' }, { "verbar", '|' },
	{ "vert", '|' }, { "rcub", '}' }, { "rbrace", '}' },
};

static uint8_t
redact_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/*
 * Lowercase of the cased letters a target's case change reaches in one
 * step and the same number of bytes: ASCII, Latin-1, Greek, Cyrillic.
 */
static uint32_t
redact_lower_cp(uint32_t cp)
{
	if ((cp >= 'A' && cp <= 'Z') || (cp >= 0xc0 && cp <= 0xde &&
	    cp != 0xd7) || (cp >= 0x391 && cp <= 0x3a9 && cp != 0x3a2) ||
	    (cp >= 0x410 && cp <= 0x42f))
		return cp + 0x20;
	if (cp >= 0x400 && cp <= 0x40f)
		return cp + 0x50;
	return cp;
}

/* s lowercased in place as above; bytes that are no UTF-8 stay. */
static void
redact_lower_text(uint8_t *s, size_t len)
{
	uint8_t b[UTF8_SEQUENCE_MAX];
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		if (utf8_decode(s + i, len - i, &cp, &n) != UTF8_OK) {
			i++;
			continue;
		}
		if (utf8_encode(redact_lower_cp(cp), b) == n)
			memcpy(s + i, b, n);
		i += n;
	}
}

static bool
redact_is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void
redact_literal(const uint8_t *p, struct redact_unit *u)
{
	u->b[0] = p[0];
	u->n = 1;
	u->used = 1;
}

/* "%XX", and with twice "%25XX" first; a '%' without hex is itself. */
static void
redact_unit_percent(const uint8_t *p, size_t avail, bool twice,
    struct redact_unit *u)
{
	uint32_t v;

	redact_literal(p, u);
	u->plus = p[0] == '+';
	if (p[0] != '%')
		return;
	if (twice && avail >= 5 && p[1] == '2' && p[2] == '5' &&
	    hex_decode_uint(p + 3, 2, &v)) {
		u->b[0] = (uint8_t)v;
		u->used = 5;
	} else if (avail >= 3 && hex_decode_uint(p + 1, 2, &v)) {
		u->b[0] = (uint8_t)v;
		u->used = 3;
		/* twice encoded, a query's '+' for a space is "%2B" */
		u->plus = twice && v == '+';
	}
}

/* "\uXXXX", or a surrogate pair of two; the caller saw "\u". */
static void
redact_unit_u(const uint8_t *p, size_t avail, struct redact_unit *u)
{
	uint32_t hi, lo;

	if (avail < 6 || !hex_decode_uint(p + 2, 4, &hi) ||
	    (hi >= 0xdc00 && hi <= 0xdfff))
		return;
	if (hi < 0xd800 || hi > 0xdbff) {
		u->n = utf8_encode(redact_lower_cp(hi), u->b);
		u->used = 6;
		return;
	}
	if (avail < 12 || p[6] != '\\' || p[7] != 'u' ||
	    !hex_decode_uint(p + 8, 4, &lo) || lo < 0xdc00 || lo > 0xdfff)
		return;
	u->n = utf8_encode(0x10000 + ((hi - 0xd800) << 10 | (lo - 0xdc00)),
	    u->b);
	u->used = 12;
}

/* A JSON string escape; a '\' that starts none is itself. */
static void
redact_unit_json(const uint8_t *p, size_t avail, struct redact_unit *u)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at;

	redact_literal(p, u);
	if (p[0] != '\\' || avail < 2)
		return;
	if (p[1] == 'u')
		redact_unit_u(p, avail, u);
	else if (p[1] != '\0' && (at = strchr(from, p[1])) != NULL) {
		u->b[0] = (uint8_t)to[at - from];
		u->used = 2;
	}
}

/* Digits of base (10 or 16) at p[0..avail), at most max of them. */
static size_t
redact_digits(const uint8_t *p, size_t avail, int base, size_t max)
{
	size_t n = 0;
	uint32_t v;

	while (n < avail && n < max && (base == 16 ?
	    hex_decode_uint(p + n, 1, &v) : (p[n] >= '0' && p[n] <= '9')))
		n++;
	return n;
}

/* "&#DDD;" or "&#xHH;" (the caller saw "&#"): the code point, or false. */
static bool
redact_entity_number(const uint8_t *p, size_t avail, uint32_t *cp,
    size_t *used)
{
	size_t at = 2, n;
	int base = 10;
	uint32_t v = 0;

	if (at < avail && (p[at] == 'x' || p[at] == 'X'))
		base = 16, at++;
	n = redact_digits(p + at, avail - at, base, base == 16 ? 6 : 7);
	if (n == 0 || at + n >= avail || p[at + n] != ';')
		return false;
	if (base == 16)
		(void)hex_decode_uint(p + at, n, &v);
	else
		v = (uint32_t)strtoul((const char *)p + at, NULL, 10);
	if (v == 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return false;
	*cp = v;
	*used = at + n + 1;
	return true;
}

/* "&name;" of an ASCII character; 0 when none. */
static size_t
redact_entity_name(const uint8_t *p, size_t avail, uint8_t *c)
{
	const uint8_t *semi;
	size_t n, i;

	semi = memchr(p, ';', avail < REDACT_ENTITY_MAX ? avail :
	    REDACT_ENTITY_MAX);
	if (semi == NULL || (n = (size_t)(semi - p - 1)) == 0)
		return 0;
	for (i = 0; i < sizeof(redact_entities) / sizeof(redact_entities[0]);
	    i++)
		if (strlen(redact_entities[i].name) == n &&
		    strncasecmp(redact_entities[i].name, (const char *)p + 1,
		    n) == 0) {
			*c = (uint8_t)redact_entities[i].c;
			return n + 2;
		}
	return 0;
}

/* An HTML character reference; a '&' that starts none is itself. */
static void
redact_unit_html(const uint8_t *p, size_t avail, struct redact_unit *u)
{
	uint32_t cp;
	size_t used;
	uint8_t c;

	redact_literal(p, u);
	if (p[0] != '&' || avail < 3)
		return;
	if (p[1] == '#') {
		if (redact_entity_number(p, avail, &cp, &used)) {
			u->n = utf8_encode(redact_lower_cp(cp), u->b);
			u->used = used;
		}
	} else if ((used = redact_entity_name(p, avail, &c)) > 0) {
		u->b[0] = c;
		u->used = used;
	}
}

static void
redact_unit(enum redact_form f, const uint8_t *p, size_t avail,
    struct redact_unit *u)
{
	memset(u, 0, sizeof(*u));
	if (f == FORM_PERCENT || f == FORM_PERCENT2)
		redact_unit_percent(p, avail, f == FORM_PERCENT2, u);
	else if (f == FORM_JSON)
		redact_unit_json(p, avail, u);
	else if (f == FORM_HTML)
		redact_unit_html(p, avail, u);
	else
		redact_literal(p, u);
}

/*
 * Whether byte b, after prev, is want once lowercased: a letter of two
 * bytes spelled by escapes of one byte each ("%C3%89"), whose lowercase
 * keeps its first byte.
 */
static bool
redact_byte_matches(uint8_t prev, uint8_t b, uint8_t want)
{
	uint8_t seq[2] = { prev, b }, low[UTF8_SEQUENCE_MAX];
	uint32_t cp;
	size_t n;

	if (redact_lower(b) == want)
		return true;
	if (utf8_decode(seq, 2, &cp, &n) != UTF8_OK || n != 2)
		return false;
	return utf8_encode(redact_lower_cp(cp), low) == 2 && low[0] == prev &&
	    low[1] == want;
}

static bool
redact_unit_matches(const struct redact_unit *u, const uint8_t *want,
    size_t left, uint8_t prev)
{
	size_t i;

	if (u->n > left)
		return false;
	for (i = 0; i < u->n; i++) {
		if (!redact_byte_matches(prev, u->b[i], want[i]))
			return false;
		prev = want[i];
	}
	return true;
}

/* Whether a unit stands for whitespace between two bytes of a needle. */
static bool
redact_unit_gap(const struct redact_unit *u, uint8_t want)
{
	if (u->plus && want == '+')
		return false;
	return u->plus || (u->n == 1 && redact_is_space(u->b[0]));
}

/* Whether in[0..len) begins with the needle in form f. */
static bool
redact_match_form(const uint8_t *in, size_t len, enum redact_form f,
    const struct redact_needle *nd)
{
	struct redact_unit u;
	size_t p = 0, q = 0, gap = 0;

	while (q < nd->len) {
		if (p >= len)
			return false;
		redact_unit(f, in + p, len - p, &u);
		if (q > 0 && redact_unit_gap(&u, nd->ptr[q])) {
			if ((gap += u.used) > REDACT_GAP_MAX)
				return false;
			p += u.used;
			continue;
		}
		if (!redact_unit_matches(&u, nd->ptr + q, nd->len - q,
		    q > 0 ? nd->ptr[q - 1] : 0))
			return false;
		p += u.used;
		q += u.n;
		gap = 0;
	}
	return true;
}

/* The byte an escape of form f starts with. */
static uint8_t
redact_escape(enum redact_form f)
{
	switch (f) {
	case FORM_PERCENT:
	case FORM_PERCENT2:
		return '%';
	case FORM_JSON:
		return '\\';
	case FORM_HTML:
		return '&';
	default:
		return 0;
	}
}

/*
 * in is lowercased.  A form matches only where its first unit is the
 * needle's first byte as it is (the needles that begin with in[0], in
 * every form) or an escape of that form (every needle, in that form).
 */
static bool
redact_found_at(const struct redact_set *set, const uint8_t *in, size_t len)
{
	size_t k;
	int f;

	for (k = set->first_at[in[0]]; k < set->first_at[in[0] + 1]; k++)
		for (f = 0; f < FORM_COUNT; f++)
			if (redact_match_form(in, len, f, &set->needles[k]))
				return true;
	for (f = 0; f < FORM_COUNT; f++) {
		if (in[0] != redact_escape(f))
			continue;
		for (k = 0; k < set->count; k++)
			if (set->needles[k].ptr[0] != in[0] &&
			    redact_match_form(in, len, f, &set->needles[k]))
				return true;
	}
	return false;
}

/* Searches a lowercased copy of in; *found. false when out of memory. */
static bool
redact_search(const struct redact_set *set, const uint8_t *in, size_t len,
    bool *found)
{
	uint8_t *low;
	size_t i;

	*found = false;
	if ((low = malloc(len + 1)) == NULL) {
		log_error("out of memory searching %zu bytes", len);
		return false;
	}
	memcpy(low, in, len);
	redact_lower_text(low, len);
	for (i = 0; i < len && !*found; i++)
		if (set->first[low[i]] && redact_found_at(set, low + i, len - i))
			*found = true;
	free(low);
	return true;
}

/* How much of the folded text may be shown (see redact.h). */
static size_t
redact_shown(const struct redact_set *set, const uint8_t *t, size_t len,
    bool complete, size_t out_max)
{
	size_t end = len;

	if (!complete)
		end = len > set->reach ? len - set->reach : 0;
	if (end > out_max)
		end = out_max;
	while (end > 0 && end < len && (t[end] & 0xc0) == 0x80)
		end--;
	return end;
}

bool
redact_text(const struct redact_set *set, const uint8_t *in, size_t len,
    bool complete, size_t out_max, struct redacted *out)
{
	static const struct redact_set none;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (set == NULL)
		set = &none;
	if ((out->data = (uint8_t *)text_fold(in, len, 0, &n)) == NULL)
		return false;
	out->folded_len = n;
	if (set->count > 0 && !redact_search(set, out->data, n,
	    &out->withheld)) {
		free(out->data);
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->len = redact_shown(set, out->data, n, complete, out_max);
	out->data[out->len] = '\0';
	return true;
}

bool
redact_withhold(struct redacted *r)
{
	char *m = strdup(REDACT_MARKER);

	if (m == NULL) {
		log_error("out of memory withholding a credential");
		return false;
	}
	free(r->data);
	r->data = (uint8_t *)m;
	r->len = r->folded_len = strlen(m);
	return true;
}

size_t
redact_pool_size(size_t len, bool variants)
{
	return variants ? 13 * len + 64 : len;
}

bool
redact_set_init(struct redact_set *set, size_t needles, size_t pool)
{
	memset(set, 0, sizeof(*set));
	if ((set->needles = calloc(needles + 1, sizeof(*set->needles))) ==
	    NULL || !secret_alloc(&set->pool, pool + 1)) {
		log_error("out of memory for the credentials' variants");
		redact_set_free(set);
		return false;
	}
	set->max = needles;
	/* where an encoded form's first unit starts */
	set->first['%'] = set->first['&'] = set->first['\\'] = true;
	return true;
}

/* Copies a needle into the pool, lowercase and without whitespace. */
static bool
redact_put_needle(struct redact_set *set, const uint8_t *s, size_t len)
{
	uint8_t *dst;
	size_t i, n = 0;

	if (set->count >= set->max ||
	    len > set->pool.len - 1 - set->pool_used)
		return false;
	dst = set->pool.ptr + set->pool_used;
	for (i = 0; i < len; i++)
		if (!redact_is_space(s[i]))
			dst[n++] = s[i];
	redact_lower_text(dst, n);
	if (n == 0)
		return true;
	set->needles[set->count].ptr = dst;
	set->needles[set->count].len = n;
	set->count++;
	set->pool_used += n;
	set->first[dst[0]] = true;
	if (n * REDACT_EXPANSION > set->reach)
		set->reach = n * REDACT_EXPANSION;
	return true;
}

/*
 * The base64 characters that s alone decides when shift bytes of
 * something else come before it: a base64 text holding s anywhere holds
 * one of the three.  scratch holds shift + n + base64_encode_size(n + 2).
 */
static bool
redact_put_base64(struct redact_set *set, const uint8_t *s, size_t n,
    size_t shift, bool url, uint8_t *scratch, size_t cap)
{
	size_t from = (8 * shift + 5) / 6, to = 8 * (shift + n) / 6;
	char *enc = (char *)scratch + shift + n;

	memset(scratch, 0, shift);
	memcpy(scratch + shift, s, n);
	if (!base64_encode(scratch, shift + n, enc, cap - shift - n))
		return false;
	if (url)
		base64_to_url(enc + from, to - from);
	return redact_put_needle(set, (const uint8_t *)enc + from, to - from);
}

/* base64 of s's base64, padded or not: what both begin with. */
static bool
redact_put_base64_twice(struct redact_set *set, const uint8_t *s, size_t n,
    uint8_t *scratch, size_t cap)
{
	size_t m = (8 * n + 5) / 6, size = base64_encode_size(n);
	char *enc = (char *)scratch, *enc2 = enc + size;

	if (size == 0 || !base64_encode(s, n, enc, cap) ||
	    !base64_encode(enc, m, enc2, cap - size))
		return false;
	return redact_put_needle(set, (const uint8_t *)enc2, 8 * m / 6);
}

static bool
redact_put_variants(struct redact_set *set, const uint8_t *s, size_t len,
    uint8_t *scratch, size_t cap)
{
	size_t shift;

	hash_hex(s, len, (char *)scratch);
	if (!redact_put_needle(set, scratch, 2 * len))
		return false;
	for (shift = 0; shift < 3; shift++)
		if (!redact_put_base64(set, s, len, shift, false, scratch,
		    cap) || !redact_put_base64(set, s, len, shift, true,
		    scratch, cap))
			return false;
	return redact_put_base64_twice(set, s, len, scratch, cap);
}

static int
redact_needle_cmp(const void *a, const void *b)
{
	const struct redact_needle *x = a, *y = b;

	return (int)x->ptr[0] - (int)y->ptr[0];
}

/* Needles sorted by their first byte, and where each byte's run starts. */
static void
redact_index(struct redact_set *set)
{
	size_t i, k = 0;

	qsort(set->needles, set->count, sizeof(*set->needles),
	    redact_needle_cmp);
	for (i = 0; i < 256; i++) {
		set->first_at[i] = k;
		while (k < set->count && set->needles[k].ptr[0] == i)
			k++;
	}
	set->first_at[256] = k;
}

bool
redact_set_add(struct redact_set *set, const uint8_t *s, size_t len,
    bool variants)
{
	struct secret scratch;
	size_t cap = 5 * len + 64;
	bool ok;

	if (len > REDACT_NEEDLE_MAX || !redact_put_needle(set, s, len))
		return false;
	ok = true;
	if (variants && len > 0) {
		if (!secret_alloc(&scratch, cap)) {
			log_error("out of memory for a credential's variants");
			return false;
		}
		ok = redact_put_variants(set, s, len, scratch.ptr, cap);
		secret_free(&scratch);
	}
	redact_index(set);
	return ok;
}

void
redact_set_free(struct redact_set *set)
{
	free(set->needles);
	secret_free(&set->pool);
	memset(set, 0, sizeof(*set));
}
