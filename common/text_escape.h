/*
 * Text a human decides on, shown as the bytes are: the confirmation
 * question (policy/confirm_message.h) and what sp approve --list prints.
 * Nothing is folded or dropped; a character that does not show what it
 * is becomes its code point, written \u{XXXX} (upper-case hex, at least
 * four digits: \u{000A}, \u{202E}, \u{FF41}, \u{E0075}).  An invalid
 * byte (never in a validated value) becomes \x{NN}.
 *
 * Shown escaped (text_escape_hides):
 * - controls: C0 (line feed and tab too), DEL, C1;
 * - format characters (Unicode Cf): soft hyphen, Arabic number signs,
 *   zero-width U+200B..U+200D, the bidi marks, embeddings, overrides and
 *   isolates U+200E, U+200F, U+061C, U+202A..U+202E, U+2066..U+2069,
 *   invisible operators U+2060..U+2064, deprecated U+206A..U+206F, BOM
 *   U+FEFF, interlinear annotations U+FFF9..U+FFFB, and the rest of Cf
 *   up to the tag characters (U+E0000..U+E0FFF, variation selectors
 *   supplement included);
 * - other characters that render as nothing: combining grapheme joiner,
 *   Hangul and Braille fillers, Khmer U+17B4/U+17B5, Mongolian
 *   selectors, variation selectors U+FE00..U+FE0F;
 * - separators other than the ASCII space: U+00A0, U+1680,
 *   U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000;
 * - look-alikes of ASCII: full-width forms U+FF01..U+FF60 and
 *   U+FFE0..U+FFE6, mathematical alphanumerics U+1D400..U+1D7FF, and
 *   the Ohm, Kelvin and Angstrom signs;
 * - noncharacters and private use.
 * Not covered: combining marks and letters of other scripts that look
 * like Latin ones (Cyrillic "а"): they show as themselves.
 *
 * With TEXT_ESCAPE_BACKSLASH a backslash is doubled, so a value that
 * spells "\u{202E}" reads differently from one that holds U+202E.
 *
 * All functions are pure; the caller owns every buffer.
 */
#ifndef SP_COMMON_TEXT_ESCAPE_H
#define SP_COMMON_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "\u{10FFFF}" and its NUL */
#define TEXT_ESCAPE_MAX 11
/* Flags of text_escape_next(). */
#define TEXT_ESCAPE_BACKSLASH 0x1

/* Whether cp is shown as \u{XXXX} rather than as itself. */
bool text_escape_hides(uint32_t cp);

/*
 * How the character at s (n > 0 bytes) is shown: written NUL-terminated
 * into out, its length in bytes in *out_len and in characters (a code
 * point shown as itself is one) in *chars.  Returns how many bytes of s
 * it stands for (at least 1).
 */
size_t text_escape_next(const uint8_t *s, size_t n, unsigned flags,
    char out[TEXT_ESCAPE_MAX], size_t *out_len, size_t *chars);

#endif
