#include "config.h"

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

#define CANARY 0xee

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
assert_encodes(const char *plain, const char *want)
{
	char out[32];

	cr_assert(base64_encode(plain, strlen(plain), out, sizeof(out)));
	cr_assert_str_eq(out, want);
}

static void
assert_decodes(const char *text, const char *want)
{
	uint8_t out[32];
	size_t n = 99;

	cr_assert(base64_decode(text, strlen(text), out, sizeof(out), &n),
	    "%s refused", text);
	cr_assert_eq(n, strlen(want));
	cr_assert_eq(memcmp(out, want, n), 0);
}

/*
 * Refused with *out_len 0; out holds nothing but the canary or wiped
 * zeros below the capacity given, and is untouched past it.
 */
static void
assert_refused_len(const char *text, size_t len)
{
	uint8_t out[64];
	size_t cap = 32, n = 99, i;

	memset(out, CANARY, sizeof(out));
	cr_assert_not(base64_decode(text, len, out, cap, &n),
	    "\"%.*s\" accepted", (int)len, text);
	cr_assert_eq(n, 0);
	for (i = 0; i < cap; i++)
		cr_assert(out[i] == CANARY || out[i] == 0,
		    "\"%.*s\": byte %zu left decoded", (int)len, text, i);
	for (; i < sizeof(out); i++)
		cr_assert_eq(out[i], CANARY, "\"%.*s\": byte %zu written",
		    (int)len, text, i);
}

static void
assert_refused(const char *text)
{
	assert_refused_len(text, strlen(text));
}

/* RFC 4648 section 10. */
Test(base64, rfc4648_vectors_both_ways)
{
	static const char *const pairs[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	size_t i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		assert_encodes(pairs[i][0], pairs[i][1]);
		assert_decodes(pairs[i][1], pairs[i][0]);
	}
}

Test(base64, text_with_quotes_newlines_and_multibyte_round_trips)
{
	assert_encodes("a\"b\n$(id)%2e%2e", "YSJiCiQoaWQpJTJlJTJl");
	assert_decodes("YSJiCiQoaWQpJTJlJTJl", "a\"b\n$(id)%2e%2e");
	assert_encodes("\xc3\xa9t\xc3\xa9 \xe2\x82\xac", "w6l0w6kg4oKs");
	assert_decodes("w6l0w6kg4oKs", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac");
}

/* Bytes from a fixed-seed xorshift, so every run sees the same data. */
static void
fill_random(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		p[i] = (uint8_t)seed;
	}
}

Test(base64, every_length_to_300_equals_libcrypto_and_round_trips)
{
	uint8_t src[300], back[300 + 8];
	char ours[BASE64_ENCODE_SIZE(300) + 8];
	unsigned char theirs[BASE64_ENCODE_SIZE(300)];
	size_t len, need, n;

	fill_random(src, sizeof(src), 2463534242u);
	for (len = 0; len <= sizeof(src); len++) {
		need = base64_encode_size(len);
		cr_assert_eq(need, BASE64_ENCODE_SIZE(len));
		memset(ours, CANARY, sizeof(ours));
		cr_assert(base64_encode(src, len, ours, need));
		cr_assert_eq((unsigned char)ours[need], CANARY);
		cr_assert_eq(EVP_EncodeBlock(theirs, src, (int)len),
		    (int)need - 1);
		cr_assert_str_eq(ours, (char *)theirs, "length %zu", len);

		memset(back, CANARY, sizeof(back));
		cr_assert(base64_decode(ours, need - 1, back, len, &n),
		    "length %zu not decoded into exactly %zu", len, len);
		cr_assert_eq(n, len);
		cr_assert_eq(memcmp(back, src, len), 0, "length %zu", len);
		cr_assert_eq(back[len], CANARY);
	}
}

Test(base64, encode_size_and_capacity)
{
	char out[16];

	cr_assert_eq(base64_encode_size(0), 1);
	cr_assert_eq(base64_encode_size(1), 5);
	cr_assert_eq(base64_encode_size(3), 5);
	cr_assert_eq(base64_encode_size(4), 9);
	cr_assert_eq(base64_encode_size(SIZE_MAX), 0);
	/* the largest length whose encoding and NUL still fit in a size_t */
	cr_assert_eq(base64_encode_size((SIZE_MAX - 1) / 4 * 3),
	    (SIZE_MAX - 1) / 4 * 4 + 1);
	cr_assert_eq(base64_encode_size((SIZE_MAX - 1) / 4 * 3 + 1), 0);

	memset(out, CANARY, sizeof(out));
	cr_assert_not(base64_encode("foob", 4, out, 8));
	for (size_t i = 0; i < sizeof(out); i++)
		cr_assert_eq((unsigned char)out[i], CANARY);
	cr_assert(base64_encode("foob", 4, out, 9));
	cr_assert_str_eq(out, "Zm9vYg==");
	cr_assert_not(base64_encode("", 0, out, 0));
	cr_assert(base64_encode("", 0, out, 1));
	cr_assert_str_eq(out, "");
}

/*
 * Padding is required and exact: a length that is not a multiple of four
 * is refused, so "Zg=" (one '=' short) and "Zg===" (one too many) both are.
 */
Test(base64, refuses_missing_extra_and_misplaced_padding)
{
	assert_refused("Zg");
	assert_refused("Zg=");
	assert_refused("Zg===");
	assert_refused("Zm9vYg=");
	assert_refused("Zm9vYg===");
	assert_refused("====");
	assert_refused("Z===");
	assert_refused("=Zg=");
	assert_refused("Zg=a");
	assert_refused("Zg==Zg==");
	assert_refused("Zm8=Zm9v");
	/* the bytes just past len would complete a group: never read */
	for (size_t len = 1; len < 8; len++)
		if (len != 4)
			assert_refused_len("Zm9vYmFyZg==", len);
}

/* A second spelling of the same bytes would defeat comparing encodings. */
Test(base64, refuses_non_zero_trailing_bits)
{
	char two[] = "Z?==", one[] = "Zm?=";
	uint8_t out[4];
	size_t i, n;
	bool ok;

	assert_refused("Zh==");
	assert_refused("Zm9=");
	assert_refused("Zm9vYh==");
	for (i = 0; i < 64; i++) {
		two[1] = alphabet[i];
		ok = base64_decode(two, 4, out, sizeof(out), &n);
		cr_assert_eq(ok, (i & 0x0f) == 0, "%s", two);
		one[2] = alphabet[i];
		ok = base64_decode(one, 4, out, sizeof(out), &n);
		cr_assert_eq(ok, (i & 0x03) == 0, "%s", one);
	}
}

Test(base64, refuses_every_byte_outside_the_alphabet)
{
	char text[4];
	int c;

	for (c = 0; c < 256; c++) {
		if (c == '=' || (c != 0 && strchr(alphabet, c) != NULL))
			continue;
		memcpy(text, "Zm9v", 4);
		text[c % 4] = (char)c;
		assert_refused_len(text, 4);
		memcpy(text, "Zg==", 4);
		text[1] = (char)c;
		assert_refused_len(text, 4);
	}
	assert_refused("Z!==");
	assert_refused("Zm9v Yg==");
	assert_refused("Zm9v\nYg==");
	assert_refused("Zm9vYg==\n");
	assert_refused(" Zm9vYg==");
	assert_refused("Zm9\xc3\xa9YmFy");
	assert_refused("Zm9v-_8=");		/* base64url is another alphabet */
	assert_refused_len("Zg\0=", 4);
	assert_refused_len("Zm9v\0\0\0\0", 8);
}

Test(base64, capacity_too_small_writes_nothing)
{
	uint8_t out[8];
	size_t n = 99;

	assert_decodes("Zm9vYmFy", "foobar");
	memset(out, CANARY, sizeof(out));
	cr_assert_not(base64_decode("Zm9vYmFy", 8, out, 5, &n));
	cr_assert_eq(n, 0);
	for (size_t i = 0; i < sizeof(out); i++)
		cr_assert_eq(out[i], CANARY);
	/* "foob" is 4 bytes although 8 characters could hold 6 */
	cr_assert(base64_decode("Zm9vYg==", 8, out, 4, &n));
	cr_assert_eq(n, 4);
	cr_assert_eq(memcmp(out, "foob", 4), 0);
	cr_assert_eq(out[4], CANARY);
	memset(out, CANARY, sizeof(out));
	cr_assert_not(base64_decode("Zm9vYg==", 8, out, 3, &n));
	cr_assert_eq(out[0], CANARY);
	cr_assert(base64_decode("", 0, NULL, 0, &n));
	cr_assert_eq(n, 0);
}

/* Groups decoded before a bad one are wiped, not left half-decoded. */
Test(base64, refusal_after_good_groups_zeroes_what_was_written)
{
	uint8_t out[12];
	size_t n = 99, i;

	memset(out, CANARY, sizeof(out));
	cr_assert_not(base64_decode("c2VjcmV0!x==", 12, out, 9, &n));
	cr_assert_eq(n, 0);
	for (i = 0; i < 6; i++)
		cr_assert_eq(out[i], 0, "byte %zu not wiped", i);
	for (; i < sizeof(out); i++)
		cr_assert_eq(out[i], CANARY, "byte %zu written", i);
}

/*
 * Canonical means exactly one spelling: over every four-character text
 * drawn from a set of boundary characters (alphabet edges, '=', bits that
 * matter for padding, and characters just outside the alphabet), whatever
 * decodes re-encodes to the very same text.
 */
Test(base64, every_accepted_text_re_encodes_to_itself)
{
	static const char set[] = "AZaz09+/=BgwQh!-_ \n\0\x80";
	const size_t k = sizeof(set) - 1;
	char text[4], again[BASE64_ENCODE_SIZE(3)];
	uint8_t out[3];
	size_t idx, i, n, accepted = 0;

	for (idx = 0; idx < k * k * k * k; idx++) {
		for (i = 0, n = idx; i < 4; i++, n /= k)
			text[i] = set[n % k];
		if (!base64_decode(text, 4, out, sizeof(out), &n))
			continue;
		accepted++;
		cr_assert(base64_encode(out, n, again, sizeof(again)));
		cr_assert_eq(memcmp(again, text, 4), 0, "%.4s decoded but "
		    "encodes as %s", text, again);
	}
	/*
	 * 13 of set are in the alphabet: 13^4 texts without '=', 13 * 13 * 5
	 * ending "?=" with ? in A0Qgw (low two bits clear) and 13 * 4 ending
	 * "?==" with ? in AQgw (low four bits clear).
	 */
	cr_assert_eq(accepted, 13 * 13 * 13 * 13 + 13 * 13 * 5 + 13 * 4);
}
