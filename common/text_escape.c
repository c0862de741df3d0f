/*
 * Text a human decides on, escaped (common/text_escape.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/text_escape.h"
#include "common/utf8.h"

struct text_escape_range {
	uint32_t first, last;
};

/* Sorted; see the header for what each group is. */
static const struct text_escape_range text_escape_hidden[] = {
	{ 0x0000, 0x001f }, { 0x007f, 0x00a0 }, { 0x00ad, 0x00ad },
	{ 0x034f, 0x034f }, { 0x0600, 0x0605 }, { 0x061c, 0x061c },
	{ 0x06dd, 0x06dd }, { 0x070f, 0x070f }, { 0x0890, 0x0891 },
	{ 0x08e2, 0x08e2 }, { 0x115f, 0x1160 }, { 0x1680, 0x1680 },
	{ 0x17b4, 0x17b5 }, { 0x180b, 0x180f }, { 0x2000, 0x200f },
	{ 0x2028, 0x202f }, { 0x205f, 0x206f }, { 0x2126, 0x2126 },
	{ 0x212a, 0x212b }, { 0x2800, 0x2800 }, { 0x3000, 0x3000 },
	{ 0x3164, 0x3164 }, { 0xe000, 0xf8ff }, { 0xfdd0, 0xfdef },
	{ 0xfe00, 0xfe0f }, { 0xfeff, 0xfeff }, { 0xff01, 0xff60 },
	{ 0xffa0, 0xffa0 }, { 0xffe0, 0xffe6 }, { 0xfff9, 0xfffb },
	{ 0x110bd, 0x110bd }, { 0x110cd, 0x110cd }, { 0x13430, 0x1343f },
	{ 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0x1d400, 0x1d7ff },
	{ 0xe0000, 0xe0fff }, { 0xf0000, 0x10ffff },
};

bool
text_escape_hides(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(text_escape_hidden) /
	    sizeof(text_escape_hidden[0]), mid;

	/* U+xFFFE and U+xFFFF of every plane: noncharacters */
	if ((cp & 0xfffe) == 0xfffe)
		return true;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp < text_escape_hidden[mid].first)
			hi = mid;
		else if (cp > text_escape_hidden[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

size_t
text_escape_next(const uint8_t *s, size_t n, unsigned flags,
    char out[TEXT_ESCAPE_MAX], size_t *out_len, size_t *chars)
{
	uint32_t cp;
	size_t len;
	int w;

	if (utf8_decode(s, n, &cp, &len) != UTF8_OK) {
		w = snprintf(out, TEXT_ESCAPE_MAX, "\\x{%02X}", s[0]);
		len = 1;
	} else if (text_escape_hides(cp))
		w = snprintf(out, TEXT_ESCAPE_MAX, "\\u{%04" PRIX32 "}", cp);
	else if (cp == '\\' && (flags & TEXT_ESCAPE_BACKSLASH))
		w = snprintf(out, TEXT_ESCAPE_MAX, "\\\\");
	else {
		memcpy(out, s, len);
		out[len] = '\0';
		*out_len = len;
		*chars = 1;
		return len;
	}
	*out_len = (size_t)w;
	*chars = (size_t)w;
	return len;
}
