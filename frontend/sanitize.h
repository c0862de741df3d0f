/*
 * External text is data: every string that came from a target (an HTTP
 * body, a header value, SSH output, an executor message quoting a target)
 * passes sanitize_external_text() once on its way into a result, so a
 * target cannot speak to the model with the voice of a system prompt.
 *
 * Decisions, applied in this order:
 * - Bytes that are not UTF-8 become U+FFFD, one per offending byte.
 * - Control and invisible characters become a space: C0 except '\n' and
 *   '\t' (so '\r' too: it rewrites a terminal line), DEL, C1, soft hyphen
 *   U+00AD, combining grapheme joiner U+034F, Hangul fillers U+115F,
 *   U+1160, U+3164, U+FFA0, Khmer U+17B4, U+17B5, Mongolian U+180B..U+180F,
 *   zero-width U+200B..U+200D, U+2060, invisible operators U+2061..U+2064,
 *   U+FEFF, bidi controls U+202A..U+202E, U+2066..U+2069, U+200E, U+200F,
 *   U+061C, line and paragraph separators U+2028, U+2029, interlinear
 *   annotations U+FFF9..U+FFFB, variation selectors U+FE00..U+FE0F and
 *   U+E0100..U+E01EF, and the tag characters U+E0000..U+E007F.
 * - Full-width ASCII U+FF01..U+FF5E becomes ASCII (U+FF1C "system"
 *   U+FF1E is "<system>"), so it cannot dress a tag up.
 * - Role-like tags are removed, case-insensitively, opening or closing,
 *   with or without attributes, with any whitespace (space, tab, CR, LF)
 *   after '<' or '</': <system>, <important>, <instruction(s)>, <prompt>,
 *   <assistant>, <user>, <human>, <developer>, <tool_call(s)>,
 *   <tool_result>, <function_call(s)>, any of these followed by '-' or '_'
 *   and more (<system-reminder>, <system_prompt>), chat-template markers
 *   like <|im_start|>, and Llama's <<SYS>>, <</SYS>>, [INST], [/INST].  A
 *   role tag whose '>' is not within SANITIZE_TAG_ATTR_MAX bytes (long
 *   attributes, another '<' first, or the end of the text) keeps its text
 *   but its '<' becomes a space.  Removal can join the halves of a nested
 *   tag into a new one, so removal runs again, up to SANITIZE_TAG_PASSES
 *   times; if tags still appear after that, every remaining '<' becomes a
 *   space.
 * - A run of three or more backticks (or tildes) is folded into one, so a
 *   target cannot open or close a Markdown code fence.
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

#define SANITIZE_TAG_PASSES 4
#define SANITIZE_TAG_ATTR_MAX 512	/* bytes from '<' to '>' at most */
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
