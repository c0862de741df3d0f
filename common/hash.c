#include "config.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "common/hash.h"

void
hash_sha256(const void *data, size_t len, uint8_t out[HASH_SHA256_LEN])
{
	SHA256(data, len, out);
}

bool
hash_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
    uint8_t out[HASH_SHA256_LEN])
{
	unsigned int out_len = 0;

	if (key_len > INT32_MAX)
		return false;
	if (HMAC(EVP_sha256(), key, (int)key_len, data, len, out, &out_len) == NULL)
		return false;
	return out_len == HASH_SHA256_LEN;
}

void
hash_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

static int
hash_hex_digit(char c)
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
hash_parse_hex_sha256(const char *hex, size_t hex_len,
    uint8_t out[HASH_SHA256_LEN])
{
	size_t i;

	if (hex_len != HASH_SHA256_HEX_LEN)
		return false;
	for (i = 0; i < HASH_SHA256_LEN; i++) {
		int hi = hash_hex_digit(hex[2 * i]);
		int lo = hash_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}
