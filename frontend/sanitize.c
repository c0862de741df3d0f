#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/utf8.h"
#include "frontend/sanitize.h"

#define SANITIZE_MARKER_MAX 96

/* A growing byte string; the capacity is fixed by the caller up front. */
struct sanitize_out {
	char *p;
	size_t len;
};

static const char *const sanitize_role_tags[] = {
	"system", "important", "instruction", "instructions", "prompt",
	"assistant", "user", "human", "developer", "tool_call", "tool_calls",
	"tool_result", "function_call", "function_calls", NULL,
};

/* Llama-style markers, matched as written (case-insensitively). */
static const char *const sanitize_literal_markers[] = {
	"<<SYS>>", "<</SYS>>", "[INST]", "[/INST]", NULL,
};

/*
 * The code point at s (n > 0 bytes left) and its length, or U+FFFD and 1
 * for a byte that does not start a valid sequence (common/utf8.h).
 */
static size_t
sanitize_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t len;

	if (utf8_decode(s, n, cp, &len) == UTF8_OK)
		return len;
	*cp = 0xfffd;
	return 1;
}

/* Format, filler and selector characters that render as nothing. */
static bool
sanitize_is_invisible(uint32_t cp)
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
sanitize_is_hidden(uint32_t cp)
{
	if (cp == '\n' || cp == '\t')
		return false;
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    sanitize_is_invisible(cp);
}

/*
 * Full-width ASCII (U+FF01..U+FF5E, U+FF1C is '<') reads as ASCII to a
 * model, so it becomes ASCII before tags are matched.
 */
static uint32_t
sanitize_fold(uint32_t cp)
{
	if (sanitize_is_hidden(cp))
		return ' ';
	if (cp >= 0xff01 && cp <= 0xff5e)
		return cp - 0xfee0;
	return cp;
}

static void
sanitize_put_cp(struct sanitize_out *o, uint32_t cp)
{
	o->len += utf8_encode(cp, (uint8_t *)o->p + o->len);
}

/*
 * Into o (capacity 3 * len + 1): valid UTF-8 with every hidden character
 * a space and full-width ASCII folded.  An invalid byte grows to the 3
 * bytes of U+FFFD, hence the 3 (folding only shrinks).
 */
static void
sanitize_clean_chars(const uint8_t *s, size_t len, struct sanitize_out *o)
{
	size_t i = 0;
	uint32_t cp;

	while (i < len) {
		i += sanitize_decode(s + i, len - i, &cp);
		sanitize_put_cp(o, sanitize_fold(cp));
	}
	o->p[o->len] = '\0';
}

/* A role word, or one followed by '-' or '_' and more ("system-reminder"). */
static bool
sanitize_is_role_name(const char *name, size_t len)
{
	size_t i, w;

	for (i = 0; sanitize_role_tags[i] != NULL; i++) {
		w = strlen(sanitize_role_tags[i]);
		if (w > len || strncasecmp(sanitize_role_tags[i], name, w) != 0)
			continue;
		if (w == len || name[w] == '-' || name[w] == '_')
			return true;
	}
	return false;
}

static bool
sanitize_is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Length of a literal marker at s ("<<SYS>>", "[INST]"), or 0. */
static size_t
sanitize_literal_marker_len(const char *s, size_t n)
{
	size_t i, w;

	for (i = 0; sanitize_literal_markers[i] != NULL; i++) {
		w = strlen(sanitize_literal_markers[i]);
		if (w <= n && strncasecmp(sanitize_literal_markers[i], s, w) == 0)
			return w;
	}
	return 0;
}

/* Length of a chat-template marker "<|name|>" at s, or 0. */
static size_t
sanitize_marker_len(const char *s, size_t n)
{
	size_t j = 2;

	if (n < 5 || s[0] != '<' || s[1] != '|')
		return sanitize_literal_marker_len(s, n);
	while (j < n && j < 2 + 32 && sanitize_is_name_char(s[j]))
		j++;
	if (j == 2 || j + 1 >= n || s[j] != '|' || s[j + 1] != '>')
		return 0;
	return j + 2;
}

static bool
sanitize_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Length of a role tag at s ("<system>", "</ USER>", "<\tsystem>",
 * "<tool_call x='y'>"), or 0.  A role name whose '>' is not found within
 * SANITIZE_TAG_ATTR_MAX bytes (or before another '<' or the end) sets
 * *neutralise: the caller then writes a space for the '<', so no tag can
 * survive by being long or unterminated.
 */
static size_t
sanitize_tag_len(const char *s, size_t n, bool *neutralise)
{
	size_t j = 1, name;

	*neutralise = false;
	if (n < 2 || s[0] != '<')
		return 0;
	while (j < n && (sanitize_is_space(s[j]) || s[j] == '/'))
		j++;
	name = j;
	while (j < n && j < SANITIZE_TAG_ATTR_MAX &&
	    sanitize_is_name_char(s[j]))
		j++;
	if (!sanitize_is_role_name(s + name, j - name))
		return 0;
	if (j < n && s[j] != '>' && s[j] != '/' && !sanitize_is_space(s[j]))
		return 0;
	while (j < n && j < SANITIZE_TAG_ATTR_MAX && s[j] != '>' && s[j] != '<')
		j++;
	if (j >= n || s[j] != '>') {
		*neutralise = true;
		return 0;
	}
	return j + 1;
}

/* One removal pass from in to o (capacity in_len + 1); true if it removed. */
static bool
sanitize_strip_tags_once(const char *in, size_t in_len,
    struct sanitize_out *o)
{
	size_t i = 0, skip;
	bool removed = false, neutralise = false;

	o->len = 0;
	while (i < in_len) {
		skip = 0;
		if (in[i] == '<' || in[i] == '[') {
			skip = sanitize_marker_len(in + i, in_len - i);
			if (skip == 0)
				skip = sanitize_tag_len(in + i, in_len - i,
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
sanitize_strip_tags(struct sanitize_out *a, struct sanitize_out *b)
{
	struct sanitize_out t;
	unsigned pass;
	bool removed = true;
	size_t i;

	for (pass = 0; pass < SANITIZE_TAG_PASSES && removed; pass++) {
		removed = sanitize_strip_tags_once(a->p, a->len, b);
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
sanitize_fold_fences(struct sanitize_out *o)
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

/* Byte offset after max_chars code points of valid UTF-8, and the count. */
static size_t
sanitize_cut_point(const char *s, size_t len, size_t max_chars,
    size_t *chars_before, size_t *total_chars)
{
	size_t i, chars = 0, cut = len;

	*chars_before = 0;
	for (i = 0; i < len; i++) {
		if (((uint8_t)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == max_chars && cut == len) {
			cut = i;
			*chars_before = chars;
		}
		chars++;
	}
	if (cut == len)
		*chars_before = chars;
	*total_chars = chars;
	return cut;
}

static void
sanitize_add_marker(struct sanitize_out *o, const struct sanitized *out,
    uint64_t total_bytes, bool executor_cut)
{
	int n;

	if (executor_cut)
		n = snprintf(o->p + o->len, SANITIZE_MARKER_MAX,
		    "\n[external text cut: shown %zu characters of %" PRIu64
		    " bytes]", out->shown_chars, total_bytes);
	else
		n = snprintf(o->p + o->len, SANITIZE_MARKER_MAX,
		    "\n[external text cut: shown %zu of %zu characters]",
		    out->shown_chars, out->total_chars);
	if (n > 0 && n < SANITIZE_MARKER_MAX)
		o->len += (size_t)n;
}

static void
sanitize_finish(struct sanitize_out *o, size_t max_chars,
    uint64_t total_bytes, bool executor_cut, struct sanitized *out)
{
	size_t cut;

	cut = sanitize_cut_point(o->p, o->len, max_chars, &out->shown_chars,
	    &out->total_chars);
	out->cut = executor_cut || cut < o->len;
	o->len = cut;
	if (out->cut)
		sanitize_add_marker(o, out, total_bytes, executor_cut);
	o->p[o->len] = '\0';
	out->text = o->p;
	out->len = o->len;
}

bool
sanitize_external_text(const uint8_t *bytes, size_t len,
    uint64_t total_bytes, size_t max_chars, struct sanitized *out)
{
	struct sanitize_out a = { NULL, 0 }, b = { NULL, 0 };
	size_t cap;

	memset(out, 0, sizeof(*out));
	if (max_chars > SANITIZE_MAX_CHARS_CAP)
		max_chars = SANITIZE_MAX_CHARS_CAP;
	if (len > (SIZE_MAX - SANITIZE_MARKER_MAX - 1) / 3) {
		log_error("text of %zu bytes is too large", len);
		return false;
	}
	cap = 3 * len + SANITIZE_MARKER_MAX + 1;
	a.p = malloc(cap);
	b.p = malloc(cap);
	if (a.p == NULL || b.p == NULL) {
		log_error("out of memory for %zu bytes", cap);
		free(a.p);
		free(b.p);
		return false;
	}
	sanitize_clean_chars(bytes, len, &a);
	sanitize_strip_tags(&a, &b);
	free(b.p);
	sanitize_fold_fences(&a);
	sanitize_finish(&a, max_chars, total_bytes, total_bytes > len, out);
	return true;
}

void
sanitized_free(struct sanitized *out)
{
	if (out == NULL)
		return;
	free(out->text);
	memset(out, 0, sizeof(*out));
}
