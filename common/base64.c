/*
 * RFC 4648 base64.  The decoder is deliberately strict: sp decodes only
 * what it or OpenSSH wrote, so anything non-canonical is a sign of
 * corruption or tampering rather than something to be lenient about.
 * Nothing here logs: a refusal is an answer, and the caller knows what
 * the text was and says so.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "common/base64.h"

static const char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
base64_encode_size(size_t len)
{
	size_t groups = len / 3 + (len % 3 != 0);

	if (groups > (SIZE_MAX - 1) / 4)
		return 0;
	return groups * 4 + 1;
}

/* Encodes n (1 to 3) bytes as four characters, '=' for the missing. */
static void
base64_encode_group(const uint8_t *in, size_t n, char out[4])
{
	uint32_t v = (uint32_t)in[0] << 16;

	if (n > 1)
		v |= (uint32_t)in[1] << 8;
	if (n > 2)
		v |= in[2];
	out[0] = base64_alphabet[v >> 18];
	out[1] = base64_alphabet[v >> 12 & 0x3f];
	out[2] = n > 1 ? base64_alphabet[v >> 6 & 0x3f] : '=';
	out[3] = n > 2 ? base64_alphabet[v & 0x3f] : '=';
}

bool
base64_encode(const void *src, size_t len, char *out, size_t cap)
{
	const uint8_t *in = src;
	size_t need = base64_encode_size(len), i, o = 0;

	if (need == 0 || cap < need)
		return false;
	for (i = 0; i < len; i += 3, o += 4)
		base64_encode_group(in + i, len - i < 3 ? len - i : 3, out + o);
	out[o] = '\0';
	return true;
}

/* The 6-bit value of one alphabet character, or -1. */
static int
base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Number of '=' ending src: 0, 1 or 2 (a third is caught as a bad char). */
static size_t
base64_padding(const char *src, size_t len)
{
	size_t pad = 0;

	while (pad < 2 && pad < len && src[len - 1 - pad] == '=')
		pad++;
	return pad;
}

/*
 * Decodes one group of four characters, of which the last pad are '=',
 * into 3 - pad bytes.  Refuses other characters and bits set beyond the
 * last byte (those would make a second spelling of the same bytes).
 */
static bool
base64_decode_group(const char in[4], size_t pad, uint8_t out[3])
{
	uint32_t v = 0;
	size_t i;
	int c;

	for (i = 0; i < 4 - pad; i++) {
		if ((c = base64_value(in[i])) < 0)
			return false;
		v = v << 6 | (uint32_t)c;
	}
	v <<= 6 * pad;
	if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0))
		return false;
	out[0] = (uint8_t)(v >> 16);
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)v;
	return true;
}

bool
base64_decode(const char *src, size_t len, void *out, size_t cap,
    size_t *out_len)
{
	uint8_t *o = out, group[3];
	size_t pad, group_pad, i, n = 0;
	bool ok = true;

	*out_len = 0;
	if (len % 4 != 0)
		return false;
	pad = base64_padding(src, len);
	if (len / 4 * 3 - pad > cap)
		return false;
	for (i = 0; ok && i < len; i += 4) {
		group_pad = i + 4 == len ? pad : 0;
		if ((ok = base64_decode_group(src + i, group_pad, group))) {
			memcpy(o + n, group, 3 - group_pad);
			n += 3 - group_pad;
		}
	}
	explicit_bzero(group, sizeof(group));
	if (!ok && n > 0)
		explicit_bzero(out, n);	/* no half-decoded secret left */
	if (ok)
		*out_len = n;
	return ok;
}

void
base64_to_url(char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '+')
			s[i] = '-';
		else if (s[i] == '/')
			s[i] = '_';
}
