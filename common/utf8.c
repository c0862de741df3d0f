#include "config.h"

#include "common/utf8.h"

static bool
utf8_is_continuation(uint8_t b)
{
	return (b & 0xc0) == 0x80;
}

/* Sequence length announced by a lead byte; 0 if it cannot start one. */
static size_t
utf8_sequence_length(uint8_t lead)
{
	if (lead < 0x80)
		return 1;
	if (lead < 0xc0)
		return 0;
	if (lead < 0xe0)
		return 2;
	if (lead < 0xf0)
		return 3;
	if (lead < 0xf8)
		return 4;
	return 0;
}

/* The smallest code point each sequence length may carry. */
static uint32_t
utf8_minimum(size_t n)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };

	return min[n];
}

/*
 * Decodes the sequence at bytes[0..avail) whose lead announces n bytes.
 * Checks continuation bytes before the value, so a truncated or broken
 * sequence is reported as such rather than as overlong.
 */
static enum utf8_error
utf8_check_sequence(const uint8_t *bytes, size_t avail, size_t n,
    uint32_t *out)
{
	static const uint8_t lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp;
	size_t i;

	for (i = 1; i < n; i++) {
		if (i >= avail)
			return UTF8_TRUNCATED;
		if (!utf8_is_continuation(bytes[i]))
			return UTF8_MISSING_CONTINUATION;
	}
	cp = bytes[0] & lead_mask[n];
	for (i = 1; i < n; i++)
		cp = cp << 6 | (bytes[i] & 0x3f);
	if (cp < utf8_minimum(n))
		return UTF8_OVERLONG;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return UTF8_SURROGATE;
	if (cp > 0x10ffff)
		return UTF8_TOO_LARGE;
	*out = cp;
	return UTF8_OK;
}

/* Classifies a byte that cannot start a sequence. */
static enum utf8_error
utf8_bad_lead(uint8_t lead)
{
	if (lead < 0xc0)
		return UTF8_UNEXPECTED_CONTINUATION;
	/* F8..FF would start 5- and 6-byte forms, all beyond U+10FFFF. */
	return UTF8_TOO_LARGE;
}

enum utf8_error
utf8_decode(const uint8_t *bytes, size_t avail, uint32_t *cp, size_t *len)
{
	enum utf8_error error;
	size_t n;

	if (bytes[0] < 0x80) {
		*cp = bytes[0];
		*len = 1;
		return UTF8_OK;
	}
	if ((n = utf8_sequence_length(bytes[0])) == 0)
		return utf8_bad_lead(bytes[0]);
	if ((error = utf8_check_sequence(bytes, avail, n, cp)) == UTF8_OK)
		*len = n;
	return error;
}

enum utf8_error
utf8_validate(const uint8_t *bytes, size_t len, size_t *err_offset)
{
	enum utf8_error error;
	size_t pos = 0, n;
	uint32_t cp;

	while (pos < len) {
		if (bytes[pos] < 0x80) {
			pos++;
			continue;
		}
		if ((error = utf8_decode(bytes + pos, len - pos, &cp, &n)) !=
		    UTF8_OK) {
			if (err_offset != NULL)
				*err_offset = pos;
			return error;
		}
		pos += n;
	}
	return UTF8_OK;
}

size_t
utf8_encode(uint32_t cp, uint8_t out[UTF8_SEQUENCE_MAX])
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xc0 | cp >> 6);
		out[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xe0 | cp >> 12);
		out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | cp >> 18);
	out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

const char *
utf8_error_string(enum utf8_error error)
{
	switch (error) {
	case UTF8_OK:
		return "valid UTF-8";
	case UTF8_UNEXPECTED_CONTINUATION:
		return "UTF-8 continuation byte without a lead byte";
	case UTF8_MISSING_CONTINUATION:
		return "UTF-8 sequence missing a continuation byte";
	case UTF8_TRUNCATED:
		return "UTF-8 sequence truncated by the end of input";
	case UTF8_OVERLONG:
		return "overlong UTF-8 form";
	case UTF8_SURROGATE:
		return "UTF-8 encoded surrogate";
	case UTF8_TOO_LARGE:
		return "UTF-8 code point above U+10FFFF";
	}
	return "unknown UTF-8 error";
}

bool
utf8_count_code_points(const uint8_t *bytes, size_t len, size_t *count)
{
	size_t i, n = 0;

	if (utf8_validate(bytes, len, NULL) != UTF8_OK)
		return false;
	for (i = 0; i < len; i++)
		if (!utf8_is_continuation(bytes[i]))
			n++;
	*count = n;
	return true;
}
