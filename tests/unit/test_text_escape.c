#include "config.h"

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/text_escape.h"
#include "common/utf8.h"

/* How cp is shown, with flags. */
static const char *
shown(uint32_t cp, unsigned flags, char out[TEXT_ESCAPE_MAX])
{
	uint8_t s[UTF8_SEQUENCE_MAX];
	size_t n = utf8_encode(cp, s), out_len, chars;

	cr_assert_eq(text_escape_next(s, n, flags, out, &out_len, &chars), n);
	cr_assert_eq(out_len, strlen(out));
	return out;
}

Test(text_escape, hidden_characters_show_their_code_point)
{
	static const uint32_t hidden[] = {
		0x0000, 0x000a, 0x0009, 0x001b, 0x007f, 0x0080, 0x009b, 0x00a0,
		0x00ad, 0x061c, 0x180e, 0x200b, 0x200d, 0x200e, 0x2028, 0x202e,
		0x202f, 0x2060, 0x2066, 0x2069, 0x3000, 0xfe0f, 0xfeff, 0xff01,
		0xff41, 0xff60, 0xffe0, 0xfffe, 0x1d400, 0x1d7ff, 0x1fffe,
		0xe0001, 0xe0075, 0xe007f, 0xe0100, 0xe000, 0x10fffd, 0x212a,
	};
	char out[TEXT_ESCAPE_MAX], want[TEXT_ESCAPE_MAX];
	size_t i;

	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		snprintf(want, sizeof(want), "\\u{%04X}",
		    (unsigned)hidden[i]);
		cr_assert_str_eq(shown(hidden[i], 0, out), want);
		cr_assert(text_escape_hides(hidden[i]));
	}
	cr_assert_str_eq(shown(0x10ffff, 0, out), "\\u{10FFFF}",
	    "the longest escape fits");
}

Test(text_escape, visible_characters_show_as_themselves)
{
	static const uint32_t visible[] = {
		' ', 'a', '~', '{', 0x00a1, 0x00e9, 0x0416, 0x0430, 0x2010,
		0x2026, 0x20ac, 0x4e2d, 0xff61, 0xffe8, 0x1f600, 0x1d3ff,
		0x1d800, 0x2129, 0xe0fff + 1,
	};
	char out[TEXT_ESCAPE_MAX];
	uint8_t s[UTF8_SEQUENCE_MAX];
	size_t i, n;

	for (i = 0; i < sizeof(visible) / sizeof(visible[0]); i++) {
		n = utf8_encode(visible[i], s);
		cr_assert_not(text_escape_hides(visible[i]), "U+%04X",
		    (unsigned)visible[i]);
		cr_assert_eq(memcmp(shown(visible[i], 0, out), s, n), 0);
		cr_assert_eq(out[n], '\0');
	}
}

Test(text_escape, backslash_doubled_only_when_asked)
{
	char out[TEXT_ESCAPE_MAX];
	size_t out_len, chars;

	cr_assert_str_eq(shown('\\', 0, out), "\\");
	cr_assert_str_eq(shown('\\', TEXT_ESCAPE_BACKSLASH, out), "\\\\");
	(void)text_escape_next((const uint8_t *)"\\", 1, TEXT_ESCAPE_BACKSLASH,
	    out, &out_len, &chars);
	cr_assert_eq(chars, 2);
}

Test(text_escape, invalid_bytes_shown_one_by_one)
{
	char out[TEXT_ESCAPE_MAX];
	size_t out_len, chars;

	cr_assert_eq(text_escape_next((const uint8_t *)"\xff" "a", 2, 0, out,
	    &out_len, &chars), 1);
	cr_assert_str_eq(out, "\\x{FF}");
	cr_assert_eq(chars, 6);
	/* a sequence cut by the end: its lead byte alone */
	cr_assert_eq(text_escape_next((const uint8_t *)"\xe2\x80", 2, 0, out,
	    &out_len, &chars), 1);
	cr_assert_str_eq(out, "\\x{E2}");
	/* a C1 control encoded overlong (C0 80) is not U+0000 */
	cr_assert_eq(text_escape_next((const uint8_t *)"\xc0\x80", 2, 0, out,
	    &out_len, &chars), 1);
	cr_assert_str_eq(out, "\\x{C0}");
}

Test(text_escape, a_shown_character_counts_one)
{
	char out[TEXT_ESCAPE_MAX];
	size_t out_len, chars;

	cr_assert_eq(text_escape_next((const uint8_t *)"\xf0\x9f\x98\x80", 4,
	    0, out, &out_len, &chars), 4);
	cr_assert_eq(out_len, 4);
	cr_assert_eq(chars, 1);
	cr_assert_eq(text_escape_next((const uint8_t *)"\xef\xbd\x81", 3, 0,
	    out, &out_len, &chars), 3);
	cr_assert_str_eq(out, "\\u{FF41}");
	cr_assert_eq(chars, 8);
}
