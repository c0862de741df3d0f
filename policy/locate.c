/*
 * A strict, position-recording JSON scanner (see locate.h).  It decodes
 * nothing: cJSON builds the values; this pass only proves the text is
 * strict JSON and remembers where each value and member name begins.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/locate.h"

struct scanner {
	const unsigned char *text;
	size_t len;
	size_t pos;
	unsigned line, col;
	struct json_locations *out;
	size_t cap;
	struct json_syntax_error *err;
	bool failed;
};

static bool scan_value(struct scanner *, size_t, size_t, unsigned, unsigned,
    unsigned);

static bool
scan_fail(struct scanner *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return false;
	s->failed = true;
	s->err->line = s->line;
	s->err->col = s->col;
	va_start(ap, fmt);
	vsnprintf(s->err->message, sizeof(s->err->message), fmt, ap);
	va_end(ap);
	return false;
}

/* Moves over one byte; a column advances only at the start of a code point. */
static void
scan_advance(struct scanner *s)
{
	unsigned char c = s->text[s->pos++];

	if (c == '\n') {
		s->line++;
		s->col = 1;
	} else if ((c & 0xc0) != 0x80)
		s->col++;
}

static int
scan_peek(const struct scanner *s)
{
	return s->pos < s->len ? s->text[s->pos] : -1;
}

static void
scan_space(struct scanner *s)
{
	int c;

	while ((c = scan_peek(s)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		scan_advance(s);
}

static bool
scan_record(struct scanner *s, size_t parent, size_t index, unsigned key_line,
    unsigned key_col)
{
	struct json_location *l, *grown;
	size_t ncap;

	if (s->out->count >= JSON_LOCATE_MAX_VALUES)
		return scan_fail(s, "more than %d values", JSON_LOCATE_MAX_VALUES);
	if (s->out->count == s->cap) {
		ncap = s->cap ? s->cap * 2 : 64;
		grown = reallocarray(s->out->items, ncap, sizeof(*grown));
		if (grown == NULL) {
			log_error("out of memory");
			return scan_fail(s, "out of memory");
		}
		s->out->items = grown;
		s->cap = ncap;
	}
	l = &s->out->items[s->out->count++];
	memset(l, 0, sizeof(*l));
	l->parent = parent;
	l->index = index;
	l->offset = s->pos;
	l->line = s->line;
	l->col = s->col;
	l->key_line = key_line;
	l->key_col = key_col;
	return true;
}

/* Length of a valid UTF-8 sequence at the scanner, or 0. */
static size_t
scan_utf8_length(const struct scanner *s)
{
	const unsigned char *p = s->text + s->pos;
	size_t left = s->len - s->pos, n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int
scan_hex4(struct scanner *s, unsigned *v)
{
	int i, c;

	*v = 0;
	for (i = 0; i < 4; i++) {
		c = scan_peek(s);
		if (c >= '0' && c <= '9')
			*v = *v * 16 + (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v = *v * 16 + (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v = *v * 16 + (unsigned)(c - 'A' + 10);
		else
			return scan_fail(s, "bad \\u escape");
		scan_advance(s);
	}
	return true;
}

/* A \u escape after the "\u"; surrogates must pair, U+0000 is refused. */
static bool
scan_unicode_escape(struct scanner *s)
{
	unsigned hi, lo;

	if (!scan_hex4(s, &hi))
		return false;
	if (hi == 0)
		return scan_fail(s, "\\u0000 is not allowed");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return scan_fail(s, "unpaired surrogate escape");
	if (hi < 0xd800 || hi > 0xdbff)
		return true;
	if (scan_peek(s) != '\\')
		return scan_fail(s, "unpaired surrogate escape");
	scan_advance(s);
	if (scan_peek(s) != 'u')
		return scan_fail(s, "unpaired surrogate escape");
	scan_advance(s);
	if (!scan_hex4(s, &lo))
		return false;
	if (lo < 0xdc00 || lo > 0xdfff)
		return scan_fail(s, "unpaired surrogate escape");
	return true;
}

static bool
scan_escape(struct scanner *s)
{
	int c = scan_peek(s);

	if (c < 0 || strchr("\"\\/bfnrtu", c) == NULL || c == 0)
		return scan_fail(s, "bad escape in string");
	scan_advance(s);
	return c == 'u' ? scan_unicode_escape(s) : true;
}

static bool
scan_string(struct scanner *s)
{
	int c;
	size_t n;

	scan_advance(s);	/* the opening quote */
	for (;;) {
		c = scan_peek(s);
		if (c < 0)
			return scan_fail(s, "unterminated string");
		if (c == '"') {
			scan_advance(s);
			return true;
		}
		if (c < 0x20)
			return scan_fail(s, "control character in string");
		if (c == '\\') {
			scan_advance(s);
			if (!scan_escape(s))
				return false;
			continue;
		}
		if ((n = scan_utf8_length(s)) == 0)
			return scan_fail(s, "invalid UTF-8 in string");
		while (n-- > 0)
			scan_advance(s);
	}
}

static bool
scan_digits(struct scanner *s)
{
	int c;
	bool any = false;

	while ((c = scan_peek(s)) >= '0' && c <= '9') {
		scan_advance(s);
		any = true;
	}
	return any ? true : scan_fail(s, "bad number");
}

/* RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool
scan_number(struct scanner *s)
{
	int c;

	if (scan_peek(s) == '-')
		scan_advance(s);
	c = scan_peek(s);
	if (c == '0') {
		scan_advance(s);
		c = scan_peek(s);
		if (c >= '0' && c <= '9')
			return scan_fail(s, "leading zero in number");
	} else if (!scan_digits(s))
		return false;
	if (scan_peek(s) == '.') {
		scan_advance(s);
		if (!scan_digits(s))
			return false;
	}
	c = scan_peek(s);
	if (c == 'e' || c == 'E') {
		scan_advance(s);
		c = scan_peek(s);
		if (c == '+' || c == '-')
			scan_advance(s);
		if (!scan_digits(s))
			return false;
	}
	return true;
}

static bool
scan_literal(struct scanner *s, const char *word)
{
	size_t n = strlen(word), i;

	if (s->len - s->pos < n || memcmp(s->text + s->pos, word, n) != 0)
		return scan_fail(s, "unexpected character");
	for (i = 0; i < n; i++)
		scan_advance(s);
	return true;
}

static bool
scan_object(struct scanner *s, size_t self, unsigned depth)
{
	size_t index = 0;
	unsigned kline, kcol;

	scan_advance(s);
	scan_space(s);
	if (scan_peek(s) == '}') {
		scan_advance(s);
		return true;
	}
	for (;;) {
		scan_space(s);
		if (scan_peek(s) != '"')
			return scan_fail(s, "expected a member name");
		kline = s->line;
		kcol = s->col;
		if (!scan_string(s))
			return false;
		scan_space(s);
		if (scan_peek(s) != ':')
			return scan_fail(s, "expected ':'");
		scan_advance(s);
		if (!scan_value(s, self, index++, kline, kcol, depth + 1))
			return false;
		scan_space(s);
		if (scan_peek(s) == '}') {
			scan_advance(s);
			return true;
		}
		if (scan_peek(s) != ',')
			return scan_fail(s, "expected ',' or '}'");
		scan_advance(s);
	}
}

static bool
scan_array(struct scanner *s, size_t self, unsigned depth)
{
	size_t index = 0;

	scan_advance(s);
	scan_space(s);
	if (scan_peek(s) == ']') {
		scan_advance(s);
		return true;
	}
	for (;;) {
		if (!scan_value(s, self, index++, 0, 0, depth + 1))
			return false;
		scan_space(s);
		if (scan_peek(s) == ']') {
			scan_advance(s);
			return true;
		}
		if (scan_peek(s) != ',')
			return scan_fail(s, "expected ',' or ']'");
		scan_advance(s);
	}
}

static bool
scan_value(struct scanner *s, size_t parent, size_t index, unsigned kline,
    unsigned kcol, unsigned depth)
{
	size_t self;
	int c;

	if (depth > JSON_LOCATE_MAX_DEPTH)
		return scan_fail(s, "nested deeper than %d", JSON_LOCATE_MAX_DEPTH);
	scan_space(s);
	self = s->out->count;
	if (!scan_record(s, parent, index, kline, kcol))
		return false;
	c = scan_peek(s);
	if (c == '{')
		return scan_object(s, self, depth);
	if (c == '[')
		return scan_array(s, self, depth);
	if (c == '"')
		return scan_string(s);
	if (c == '-' || (c >= '0' && c <= '9'))
		return scan_number(s);
	if (c == 't')
		return scan_literal(s, "true");
	if (c == 'f')
		return scan_literal(s, "false");
	if (c == 'n')
		return scan_literal(s, "null");
	return scan_fail(s, c < 0 ? "unexpected end of text" :
	    "unexpected character");
}

bool
json_locations_scan(const char *text, size_t len, struct json_locations *out,
    struct json_syntax_error *err)
{
	struct scanner s = {
		.text = (const unsigned char *)text, .len = len, .line = 1,
		.col = 1, .out = out, .err = err,
	};

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	if (scan_value(&s, SIZE_MAX, 0, 0, 0, 0)) {
		scan_space(&s);
		if (s.pos != s.len)
			scan_fail(&s, "text after the end of the JSON value");
	}
	if (s.failed) {
		json_locations_free(out);
		return false;
	}
	return true;
}

static bool
bind_node(struct json_locations *locs, size_t *next, const cJSON *node)
{
	const cJSON *child;

	if (*next >= locs->count)
		return false;
	locs->items[(*next)++].node = node;
	for (child = node->child; child != NULL; child = child->next)
		if (!bind_node(locs, next, child))
			return false;
	return true;
}

static int
compare_by_node(const void *a, const void *b, void *arg)
{
	const struct json_locations *locs = arg;
	uintptr_t x = (uintptr_t)locs->items[*(const size_t *)a].node;
	uintptr_t y = (uintptr_t)locs->items[*(const size_t *)b].node;

	return x < y ? -1 : x > y;
}

bool
json_locations_bind(struct json_locations *locs, const cJSON *root)
{
	size_t next = 0, i;

	if (!bind_node(locs, &next, root) || next != locs->count) {
		log_error("scanner and cJSON disagree on the document shape");
		return false;
	}
	free(locs->by_node);
	locs->by_node = reallocarray(NULL, locs->count, sizeof(size_t));
	if (locs->by_node == NULL) {
		log_error("out of memory");
		return false;
	}
	for (i = 0; i < locs->count; i++)
		locs->by_node[i] = i;
	qsort_r(locs->by_node, locs->count, sizeof(size_t), compare_by_node,
	    locs);
	return true;
}

const struct json_location *
json_locations_find(const struct json_locations *locs, const cJSON *node)
{
	size_t lo = 0, hi = locs->count, mid;
	const struct json_location *l;

	if (locs->by_node == NULL)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		l = &locs->items[locs->by_node[mid]];
		if (l->node == node)
			return l;
		if ((uintptr_t)l->node < (uintptr_t)node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
json_locations_free(struct json_locations *locs)
{
	free(locs->items);
	free(locs->by_node);
	memset(locs, 0, sizeof(*locs));
}
