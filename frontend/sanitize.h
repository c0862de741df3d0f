/*
 * External text is data: every string that came from a target (an HTTP
 * body, a header value, SSH output, an executor message quoting a target)
 * passes sanitize_external_text() once on its way into a result, so a
 * target cannot speak to the model with the voice of a system prompt.
 *
 * First the text is folded (common/text_fold.h: invalid UTF-8, control
 * and invisible characters, full-width ASCII, role tags, code fences;
 * the one implementation, which the executor applies too before it looks
 * for a credential).  Then:
 * - The text is cut after max_chars characters (code points, never inside
 *   a UTF-8 sequence), and a cut, here or earlier by the executor, is
 *   said in an explicit marker at the end:
 *   "[external text cut: shown 500 of 8123 characters]", or, when the
 *   executor had already cut the bytes, "... shown 500 characters of
 *   5242880 bytes]".
 *
 * Ownership: out->text is heap memory the caller releases with
 * sanitized_free().
 */
#ifndef SP_FRONTEND_SANITIZE_H
#define SP_FRONTEND_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SANITIZE_MAX_CHARS_CAP 65536	/* whatever the caller asks */

struct sanitized {
	char *text;		/* NUL-terminated UTF-8, marker included */
	size_t len;		/* bytes, without the NUL */
	size_t shown_chars;	/* characters of target text kept */
	size_t total_chars;	/* after cleaning, before the cut */
	bool cut;		/* something was left out, here or before */
};

/*
 * Cleans len bytes of target text; total_bytes is how many the target
 * sent (>= len; larger when the executor kept only the first len).
 * Returns false, with *out zeroed, only when memory runs out.
 */
bool sanitize_external_text(const uint8_t *bytes, size_t len,
    uint64_t total_bytes, size_t max_chars, struct sanitized *out);

/* Frees out->text and zeroes *out; NULL is allowed. */
void sanitized_free(struct sanitized *out);

#endif
