/*
 * Folding target text into what a reader takes it for: the one
 * implementation of what the frontend's sanitizer changes in a target's
 * text (frontend/sanitize.h says each rule), shared with the executor,
 * which withholds a credential in exactly the text the client will see
 * (executor/redact.h).  Folding is idempotent: folding folded text
 * changes nothing, so the frontend's pass over what the executor folded
 * shows what the executor searched.
 *
 * Rules, in this order:
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
 *   role tag whose '>' is not within TEXT_FOLD_TAG_ATTR_MAX bytes (long
 *   attributes, another '<' first, or the end of the text) keeps its text
 *   but its '<' becomes a space.  Removal can join the halves of a nested
 *   tag into a new one, so removal runs again, up to TEXT_FOLD_TAG_PASSES
 *   times; if tags still appear after that, every remaining '<' becomes a
 *   space.
 * - A run of three or more backticks (or tildes) is folded into one, so a
 *   target cannot open or close a Markdown code fence.
 */
#ifndef SP_COMMON_TEXT_FOLD_H
#define SP_COMMON_TEXT_FOLD_H

#include <stddef.h>
#include <stdint.h>

#define TEXT_FOLD_TAG_PASSES 4
#define TEXT_FOLD_TAG_ATTR_MAX 512	/* bytes from '<' to '>' at most */
/* Inputs longer than this are refused (3 bytes out per byte in). */
#define TEXT_FOLD_IN_MAX ((SIZE_MAX - 4096) / 3)

/*
 * Folds s[0..len) into heap memory the caller frees with free(3), with
 * room bytes to spare after the text and its NUL (the sanitizer's cut
 * marker); *out_len is the folded length.  NULL, logged, when memory runs
 * out or len exceeds TEXT_FOLD_IN_MAX.
 */
char *text_fold(const uint8_t *s, size_t len, size_t room, size_t *out_len);

#endif
