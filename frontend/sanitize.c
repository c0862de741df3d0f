#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_fold.h"
#include "frontend/sanitize.h"

#define SANITIZE_MARKER_MAX 96

/* A growing byte string; the capacity is fixed by the caller up front. */
struct sanitize_out {
	char *p;
	size_t len;
};

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
	struct sanitize_out a;

	memset(out, 0, sizeof(*out));
	if (max_chars > SANITIZE_MAX_CHARS_CAP)
		max_chars = SANITIZE_MAX_CHARS_CAP;
	if ((a.p = text_fold(bytes, len, SANITIZE_MARKER_MAX, &a.len)) == NULL)
		return false;
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
