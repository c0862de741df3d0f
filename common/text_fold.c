/*
 * Folding target text (common/text_fold.h).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/text_fold.h"
#include "common/utf8.h"

/* A growing byte string; the capacity is fixed by the caller up front. */
struct fold_out {
	char *p;
	size_t len;
};

static const char *const fold_role_tags[] = {
	"system", "important", "instruction", "instructions", "prompt",
	"assistant", "user", "human", "developer", "tool_call", "tool_calls",
	"tool_result", "function_call", "function_calls", NULL,
};

/* Llama-style markers, matched as written (case-insensitively). */
static const char *const fold_literal_markers[] = {
	"<<SYS>>", "<</SYS>>", "[INST]", "[/INST]", NULL,
};

/*
 * The code point at s (n > 0 bytes left) and its length, or U+FFFD and 1
 * for a byte that does not start a valid sequence (common/utf8.h).
 */
static size_t
fold_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t len;

	if (utf8_decode(s, n, cp, &len) == UTF8_OK)
		return len;
	*cp = 0xfffd;
	return 1;
}

/* Format, filler and selector characters that render as nothing. */
static bool
fold_is_invisible(uint32_t cp)
{
	return cp == 0x00ad || cp == 0x034f || cp == 0x061c ||
	    cp == 0x115f || cp == 0x1160 || cp == 0x17b4 || cp == 0x17b5 ||
	    (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200f) ||
	    cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff ||
	    cp == 0xffa0 || (cp >= 0xfff9 && cp <= 0xfffb) ||
	    (cp >= 0xe0000 && cp <= 0xe007f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

static bool
fold_is_hidden(uint32_t cp)
{
	if (cp == '\n' || cp == '\t')
		return false;
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    fold_is_invisible(cp);
}

/*
 * Full-width ASCII (U+FF01..U+FF5E, U+FF1C is '<') reads as ASCII to a
 * model, so it becomes ASCII before tags are matched.
 */
static uint32_t
fold_char(uint32_t cp)
{
	if (fold_is_hidden(cp))
		return ' ';
	if (cp >= 0xff01 && cp <= 0xff5e)
		return cp - 0xfee0;
	return cp;
}

static void
fold_put_cp(struct fold_out *o, uint32_t cp)
{
	o->len += utf8_encode(cp, (uint8_t *)o->p + o->len);
}

/*
 * Into o (capacity 3 * len + 1): valid UTF-8 with every hidden character
 * a space and full-width ASCII folded.  An invalid byte grows to the 3
 * bytes of U+FFFD, hence the 3 (folding only shrinks).
 */
static void
fold_clean_chars(const uint8_t *s, size_t len, struct fold_out *o)
{
	size_t i = 0;
	uint32_t cp;

	while (i < len) {
		i += fold_decode(s + i, len - i, &cp);
		fold_put_cp(o, fold_char(cp));
	}
	o->p[o->len] = '\0';
}

/* A role word, or one followed by '-' or '_' and more ("system-reminder"). */
static bool
fold_is_role_name(const char *name, size_t len)
{
	size_t i, w;

	for (i = 0; fold_role_tags[i] != NULL; i++) {
		w = strlen(fold_role_tags[i]);
		if (w > len || strncasecmp(fold_role_tags[i], name, w) != 0)
			continue;
		if (w == len || name[w] == '-' || name[w] == '_')
			return true;
	}
	return false;
}

static bool
fold_is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Length of a literal marker at s ("<<SYS>>", "[INST]"), or 0. */
static size_t
fold_literal_marker_len(const char *s, size_t n)
{
	size_t i, w;

	for (i = 0; fold_literal_markers[i] != NULL; i++) {
		w = strlen(fold_literal_markers[i]);
		if (w <= n && strncasecmp(fold_literal_markers[i], s, w) == 0)
			return w;
	}
	return 0;
}

/* Length of a chat-template marker "<|name|>" at s, or 0. */
static size_t
fold_marker_len(const char *s, size_t n)
{
	size_t j = 2;

	if (n < 5 || s[0] != '<' || s[1] != '|')
		return fold_literal_marker_len(s, n);
	while (j < n && j < 2 + 32 && fold_is_name_char(s[j]))
		j++;
	if (j == 2 || j + 1 >= n || s[j] != '|' || s[j + 1] != '>')
		return 0;
	return j + 2;
}

static bool
fold_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Length of a role tag at s ("<system>", "</ USER>", "<\tsystem>",
 * "<tool_call x='y'>"), or 0.  A role name whose '>' is not found within
 * TEXT_FOLD_TAG_ATTR_MAX bytes (or before another '<' or the end) sets
 * *neutralise: the caller then writes a space for the '<', so no tag can
 * survive by being long or unterminated.
 */
static size_t
fold_tag_len(const char *s, size_t n, bool *neutralise)
{
	size_t j = 1, name;

	*neutralise = false;
	if (n < 2 || s[0] != '<')
		return 0;
	while (j < n && (fold_is_space(s[j]) || s[j] == '/'))
		j++;
	name = j;
	while (j < n && j < TEXT_FOLD_TAG_ATTR_MAX &&
	    fold_is_name_char(s[j]))
		j++;
	if (!fold_is_role_name(s + name, j - name))
		return 0;
	if (j < n && s[j] != '>' && s[j] != '/' && !fold_is_space(s[j]))
		return 0;
	while (j < n && j < TEXT_FOLD_TAG_ATTR_MAX && s[j] != '>' && s[j] != '<')
		j++;
	if (j >= n || s[j] != '>') {
		*neutralise = true;
		return 0;
	}
	return j + 1;
}

/* One removal pass from in to o (capacity in_len + 1); true if it removed. */
static bool
fold_strip_tags_once(const char *in, size_t in_len,
    struct fold_out *o)
{
	size_t i = 0, skip;
	bool removed = false, neutralise = false;

	o->len = 0;
	while (i < in_len) {
		skip = 0;
		if (in[i] == '<' || in[i] == '[') {
			skip = fold_marker_len(in + i, in_len - i);
			if (skip == 0)
				skip = fold_tag_len(in + i, in_len - i,
				    &neutralise);
		}
		if (skip > 0 || neutralise) {
			removed = true;
			i += skip;
			if (neutralise) {
				o->p[o->len++] = ' ';
				i++;
				neutralise = false;
			}
			continue;
		}
		o->p[o->len++] = in[i++];
	}
	o->p[o->len] = '\0';
	return removed;
}

/*
 * Removes role tags from *a, using b (same capacity) as scratch; the
 * result ends in *a.
 */
static void
fold_strip_tags(struct fold_out *a, struct fold_out *b)
{
	struct fold_out t;
	unsigned pass;
	bool removed = true;
	size_t i;

	for (pass = 0; pass < TEXT_FOLD_TAG_PASSES && removed; pass++) {
		removed = fold_strip_tags_once(a->p, a->len, b);
		t = *a, *a = *b, *b = t;
	}
	if (!removed)
		return;
	for (i = 0; i < a->len; i++)
		if (a->p[i] == '<')
			a->p[i] = ' ';
}

/* Folds runs of three or more '`' or '~' into one, in place. */
static void
fold_fences(struct fold_out *o)
{
	size_t i = 0, w = 0, run;
	char c;

	while (i < o->len) {
		c = o->p[i];
		if (c != '`' && c != '~') {
			o->p[w++] = o->p[i++];
			continue;
		}
		for (run = 0; i + run < o->len && o->p[i + run] == c; run++)
			;
		if (run >= 3)
			o->p[w++] = c;
		else
			memmove(o->p + w, o->p + i, run), w += run;
		i += run;
	}
	o->len = w;
	o->p[w] = '\0';
}

char *
text_fold(const uint8_t *s, size_t len, size_t room, size_t *out_len)
{
	struct fold_out a = { NULL, 0 }, b = { NULL, 0 };
	size_t cap;

	*out_len = 0;
	if (len > TEXT_FOLD_IN_MAX || room > 4096) {
		log_error("text of %zu bytes is too large to fold", len);
		return NULL;
	}
	cap = 3 * len + room + 1;
	a.p = malloc(cap);
	b.p = malloc(cap);
	if (a.p == NULL || b.p == NULL) {
		log_error("out of memory folding %zu bytes", len);
		free(a.p);
		free(b.p);
		return NULL;
	}
	fold_clean_chars(s, len, &a);
	fold_strip_tags(&a, &b);
	free(b.p);
	fold_fences(&a);
	*out_len = a.len;
	return a.p;
}
