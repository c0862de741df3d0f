#include "config.h"

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/hash_const.h"
#include "common/value.h"

Test(hash, sha256_of_abc_matches_fips_180_vector)
{
	uint8_t d[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];

	hash_sha256("abc", 3, d);
	hash_hex(d, sizeof(d), hex);
	cr_assert_str_eq(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(hash, hmac_matches_rfc4231_case_2)
{
	uint8_t d[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];
	const char *data = "what do ya want for nothing?";

	cr_assert(hash_hmac_sha256("Jefe", 4, data, strlen(data), d));
	hash_hex(d, sizeof(d), hex);
	cr_assert_str_eq(hex,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

Test(hash, parse_hex_roundtrip_and_refusals)
{
	uint8_t d[HASH_SHA256_LEN], back[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1];

	hash_sha256("x", 1, d);
	hash_hex(d, sizeof(d), hex);
	cr_assert(hash_parse_hex_sha256(hex, 64, back));
	cr_assert_eq(memcmp(d, back, sizeof(d)), 0);
	cr_assert_not(hash_parse_hex_sha256(hex, 63, back));
	hex[10] = 'g';
	cr_assert_not(hash_parse_hex_sha256(hex, 64, back));
}

static void
assert_digest_hex(const uint8_t *d, size_t len, const char *want)
{
	char hex[2 * HASH_SHA256_LEN + 1];

	hash_hex(d, len, hex);
	cr_assert_str_eq(hex, want);
}

static void
assert_sha256(const void *msg, size_t len, const char *want)
{
	uint8_t d[HASH_SHA256_LEN];

	hash_sha256(msg, len, d);
	assert_digest_hex(d, sizeof(d), want);
}

/* FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf"). */
Test(hash, sha256_matches_nist_vectors)
{
	const char *m448 =
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklm"
	    "ghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

	assert_sha256(NULL, 0,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_sha256("", 0,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	cr_assert_eq(strlen(m448) * 8, 448);
	assert_sha256(m448, strlen(m448),
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	cr_assert_eq(strlen(m896) * 8, 896);
	assert_sha256(m896, strlen(m896),
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* One million 'a', fed in chunks of sizes that straddle block edges. */
Test(hash, sha256_of_a_million_a_streamed_in_odd_chunks)
{
	static const size_t chunks[] = { 1, 7, 63, 64, 65, 127, 997, 4099 };
	size_t total = 1000000, done = 0, i = 0, n;
	struct hash_sha256_ctx ctx;
	uint8_t d[HASH_SHA256_LEN];
	char *a = malloc(total);

	cr_assert_not_null(a);
	memset(a, 'a', total);
	hash_sha256_init(&ctx);
	while (done < total) {
		n = chunks[i++ % (sizeof(chunks) / sizeof(chunks[0]))];
		if (n > total - done)
			n = total - done;
		hash_sha256_update(&ctx, a + done, n);
		done += n;
	}
	hash_sha256_final(&ctx, d);
	assert_digest_hex(d, sizeof(d),
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	assert_sha256(a, total,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void
fill_bytes(uint8_t *p, size_t len, uint8_t v)
{
	memset(p, v, len);
}

static void
assert_hmac(const void *key, size_t key_len, const char *data, size_t len,
    size_t out_len, const char *want)
{
	uint8_t d[HASH_SHA256_LEN];

	cr_assert(hash_hmac_sha256(key, key_len, data, len, d));
	assert_digest_hex(d, out_len, want);
}

/* RFC 4231 section 4, test cases 1 to 7 (case 5 is truncated to 128 bits). */
Test(hash, hmac_matches_rfc4231_cases_1_to_7)
{
	uint8_t key[131], data[50];
	size_t i;
	const char *t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	const char *t7 = "This is a test using a larger than block-size key "
	    "and a larger than block-size data. The key needs to be hashed "
	    "before being used by the HMAC algorithm.";

	fill_bytes(key, 20, 0x0b);
	assert_hmac(key, 20, "Hi There", 8, 32,
	    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	assert_hmac("Jefe", 4, "what do ya want for nothing?", 28, 32,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	fill_bytes(key, 20, 0xaa);
	fill_bytes(data, 50, 0xdd);
	assert_hmac(key, 20, (char *)data, 50, 32,
	    "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	for (i = 0; i < 25; i++)
		key[i] = (uint8_t)(i + 1);
	fill_bytes(data, 50, 0xcd);
	assert_hmac(key, 25, (char *)data, 50, 32,
	    "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
	fill_bytes(key, 20, 0x0c);
	assert_hmac(key, 20, "Test With Truncation", 20, 16,
	    "a3b6167473100ee06e0c796c2955552b");
	fill_bytes(key, 131, 0xaa);
	assert_hmac(key, 131, t6, strlen(t6), 32,
	    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	assert_hmac(key, 131, t7, strlen(t7), 32,
	    "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

/* splitmix64: a fixed seed gives the same bytes on every run. */
static uint64_t
test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ z >> 27) * 0x94d049bb133111ebULL;
	return z ^ z >> 31;
}

static uint8_t *
random_bytes(size_t len, uint64_t seed)
{
	uint8_t *p = malloc(len);
	size_t i;

	cr_assert_not_null(p);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)test_rand(&seed);
	return p;
}

Test(hash, sha256_equals_libcrypto_for_every_length_to_1100)
{
	uint8_t *msg = random_bytes(1100, 42);
	uint8_t ours[HASH_SHA256_LEN], theirs[SHA256_DIGEST_LENGTH];
	size_t len;

	for (len = 0; len <= 1100; len++) {
		hash_sha256(msg, len, ours);
		SHA256(msg, len, theirs);
		cr_assert_eq(memcmp(ours, theirs, sizeof(ours)), 0,
		    "length %zu differs", len);
	}
	free(msg);
}

Test(hash, hmac_equals_libcrypto_for_key_and_data_lengths)
{
	uint8_t *key = random_bytes(200, 7), *data = random_bytes(300, 9);
	uint8_t ours[HASH_SHA256_LEN], theirs[EVP_MAX_MD_SIZE];
	unsigned int theirs_len;
	size_t kl, dl;

	for (kl = 0; kl <= 200; kl++) {
		for (dl = 0; dl <= 300; dl += (kl % 5) + 3) {
			cr_assert(hash_hmac_sha256(key, kl, data, dl, ours));
			theirs_len = 0;
			cr_assert_not_null(HMAC(EVP_sha256(), key, (int)kl,
			    data, dl, theirs, &theirs_len));
			cr_assert_eq(theirs_len, HASH_SHA256_LEN);
			cr_assert_eq(memcmp(ours, theirs, sizeof(ours)), 0,
			    "key %zu data %zu differs", kl, dl);
		}
	}
	free(key);
	free(data);
}

/* Every split into three parts of a 300-byte message equals one-shot. */
Test(hash, incremental_equals_one_shot_at_every_split)
{
	uint8_t *msg = random_bytes(300, 1234);
	uint8_t whole[HASH_SHA256_LEN], parts[HASH_SHA256_LEN];
	struct hash_sha256_ctx ctx;
	size_t a, b;

	hash_sha256(msg, 300, whole);
	for (a = 0; a <= 300; a++) {
		for (b = a; b <= 300; b += 13) {
			hash_sha256_init(&ctx);
			hash_sha256_update(&ctx, msg, a);
			hash_sha256_update(&ctx, msg + a, b - a);
			hash_sha256_update(&ctx, msg + b, 300 - b);
			hash_sha256_final(&ctx, parts);
			cr_assert_eq(memcmp(whole, parts, sizeof(whole)), 0,
			    "split %zu/%zu differs", a, b);
		}
	}
	free(msg);
}

Test(hash, final_zeroes_the_context)
{
	struct hash_sha256_ctx ctx, zero;
	uint8_t d[HASH_SHA256_LEN];

	memset(&zero, 0, sizeof(zero));
	hash_sha256_init(&ctx);
	hash_sha256_update(&ctx, "secret \"key\" $(id)\n", 19);
	hash_sha256_final(&ctx, d);
	cr_assert_eq(memcmp(&ctx, &zero, sizeof(ctx)), 0);
}

/* Largest x with x^e <= v, by bisection on exact 128-bit integers. */
static unsigned __int128
integer_root(unsigned __int128 v, int e)
{
	unsigned __int128 lo = 0, hi = (unsigned __int128)1 << 40, mid, p;
	int i;

	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		for (p = 1, i = 0; i < e; i++)
			p *= mid;
		if (p <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void
first_primes(unsigned int *out, size_t n)
{
	unsigned int k, i, found = 0;

	for (k = 2; found < n; k++) {
		for (i = 0; i < found && k % out[i] != 0; i++)
			;
		if (i == found)
			out[found++] = k;
	}
}

/*
 * FIPS 180-4 4.2.2 and 5.3.3: the first 32 fractional bits of cbrt(p) are
 * floor(cbrt(p * 2^96)) mod 2^32, and of sqrt(p) floor(sqrt(p * 2^64)).
 */
Test(hash, constants_are_the_roots_of_the_first_primes)
{
	unsigned int primes[64];
	size_t i;

	first_primes(primes, 64);
	cr_assert_eq(primes[63], 311);
	for (i = 0; i < 64; i++)
		cr_assert_eq(hash_sha256_round_k[i], (uint32_t)integer_root(
		    (unsigned __int128)primes[i] << 96, 3), "K[%zu]", i);
	for (i = 0; i < 8; i++)
		cr_assert_eq(hash_sha256_initial_h[i], (uint32_t)integer_root(
		    (unsigned __int128)primes[i] << 64, 2), "H0[%zu]", i);
}

Test(hash, equal_ct_compares_every_byte)
{
	uint8_t a[33], b[33];
	size_t i;
	int bit;

	for (i = 0; i < sizeof(a); i++)
		a[i] = b[i] = (uint8_t)(0xa5 ^ i);
	cr_assert(hash_equal_ct(a, b, sizeof(a)));
	cr_assert(hash_equal_ct(a, b, 0));
	for (i = 0; i < sizeof(a); i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1u << bit);
			cr_assert_not(hash_equal_ct(a, b, sizeof(a)),
			    "byte %zu bit %d", i, bit);
			cr_assert(hash_equal_ct(a, b, i), "prefix %zu", i);
			b[i] ^= (uint8_t)(1u << bit);
		}
	}
}

Test(value, string_copy_is_owned_and_freed_to_absent)
{
	struct value v = { 0 };
	char src[] = "a\"b$(id)";

	cr_assert(value_set_string(&v, src, 3));
	src[0] = 'z';
	cr_assert_eq(v.kind, VALUE_STRING);
	cr_assert_eq(v.u.str.len, 3);
	cr_assert_str_eq(v.u.str.ptr, "a\"b");
	value_free(&v);
	cr_assert_eq(v.kind, VALUE_ABSENT);
	cr_assert_null(v.u.str.ptr);
}
