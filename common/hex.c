/*
 * Reading hex digits (common/hex.h).
 */
#include "config.h"

#include "common/hex.h"

static int
hex_digit_value(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
hex_decode_uint(const uint8_t *p, size_t n, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;
	int d;

	if (n > HEX_UINT_DIGITS_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if ((d = hex_digit_value(p[i])) < 0)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return true;
}

bool
hex_decode_bytes(const char *hex, uint8_t *out, size_t len)
{
	uint32_t v;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!hex_decode_uint((const uint8_t *)hex + 2 * i, 2, &v))
			return false;
		out[i] = (uint8_t)v;
	}
	return true;
}

bool
hex_is_lowercase(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (hex_digit_value((uint8_t)s[i]) < 0 ||
		    (s[i] >= 'A' && s[i] <= 'F'))
			return false;
	return true;
}
