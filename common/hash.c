/*
 * SHA-256 from FIPS 180-4 and HMAC from RFC 2104.  Written for clarity,
 * not speed: sp hashes audit lines and MCP frames, a few KiB at a time.
 */
#include "config.h"

#include <string.h>

#include "common/hash.h"
#include "common/hash_const.h"
#include "common/hex.h"

#define HMAC_IPAD 0x36
#define HMAC_OPAD 0x5c

/* FIPS 180-4 4.2.2; recomputed from the primes in tests/unit/test_hash.c */
const uint32_t hash_sha256_round_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* FIPS 180-4 5.3.3 */
const uint32_t hash_sha256_initial_h[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static uint32_t
rotr32(uint32_t x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static uint32_t
load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* FIPS 180-4 4.1.2, functions (4.2) to (4.7) */
static uint32_t
ch(uint32_t x, uint32_t y, uint32_t z)
{
	return (x & y) ^ (~x & z);
}

static uint32_t
maj(uint32_t x, uint32_t y, uint32_t z)
{
	return (x & y) ^ (x & z) ^ (y & z);
}

static uint32_t
big_sigma0(uint32_t x)
{
	return rotr32(x, 2) ^ rotr32(x, 13) ^ rotr32(x, 22);
}

static uint32_t
big_sigma1(uint32_t x)
{
	return rotr32(x, 6) ^ rotr32(x, 11) ^ rotr32(x, 25);
}

static uint32_t
small_sigma0(uint32_t x)
{
	return rotr32(x, 7) ^ rotr32(x, 18) ^ x >> 3;
}

static uint32_t
small_sigma1(uint32_t x)
{
	return rotr32(x, 17) ^ rotr32(x, 19) ^ x >> 10;
}

/* FIPS 180-4 6.2.2 step 1: the 64-word message schedule of one block. */
static void
sha256_schedule(uint32_t w[64], const uint8_t block[HASH_SHA256_BLOCK_LEN])
{
	int t;

	for (t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (t = 16; t < 64; t++)
		w[t] = small_sigma1(w[t - 2]) + w[t - 7] +
		    small_sigma0(w[t - 15]) + w[t - 16];
}

/* FIPS 180-4 6.2.2 steps 2-4: fold one block into the state. */
static void
sha256_compress(uint32_t state[8], const uint8_t block[HASH_SHA256_BLOCK_LEN])
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int t;

	sha256_schedule(w, block);
	a = state[0], b = state[1], c = state[2], d = state[3];
	e = state[4], f = state[5], g = state[6], h = state[7];
	for (t = 0; t < 64; t++) {
		t1 = h + big_sigma1(e) + ch(e, f, g) + hash_sha256_round_k[t] +
		    w[t];
		t2 = big_sigma0(a) + maj(a, b, c);
		h = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	state[0] += a, state[1] += b, state[2] += c, state[3] += d;
	state[4] += e, state[5] += f, state[6] += g, state[7] += h;
	/* the schedule of an HMAC key block is key material */
	explicit_bzero(w, sizeof(w));
}

void
hash_sha256_init(struct hash_sha256_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	memcpy(ctx->state, hash_sha256_initial_h, sizeof(ctx->state));
}

void
hash_sha256_update(struct hash_sha256_ctx *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t take;

	if (len == 0)
		return;		/* data may be NULL */
	ctx->total_len += len;
	if (ctx->block_len > 0) {
		take = HASH_SHA256_BLOCK_LEN - ctx->block_len;
		if (take > len)
			take = len;
		memcpy(ctx->block + ctx->block_len, p, take);
		ctx->block_len += take;
		p += take;
		len -= take;
		if (ctx->block_len < HASH_SHA256_BLOCK_LEN)
			return;
		sha256_compress(ctx->state, ctx->block);
		ctx->block_len = 0;
	}
	for (; len >= HASH_SHA256_BLOCK_LEN; len -= HASH_SHA256_BLOCK_LEN) {
		sha256_compress(ctx->state, p);
		p += HASH_SHA256_BLOCK_LEN;
	}
	memcpy(ctx->block, p, len);
	ctx->block_len = len;
}

/* FIPS 180-4 5.1.1: 0x80, zeros, then the length in bits, big-endian. */
static void
sha256_pad(struct hash_sha256_ctx *ctx)
{
	uint64_t bits = ctx->total_len * 8;
	size_t len_at = HASH_SHA256_BLOCK_LEN - 8;

	ctx->block[ctx->block_len++] = 0x80;
	if (ctx->block_len > len_at) {
		memset(ctx->block + ctx->block_len, 0,
		    HASH_SHA256_BLOCK_LEN - ctx->block_len);
		sha256_compress(ctx->state, ctx->block);
		ctx->block_len = 0;
	}
	memset(ctx->block + ctx->block_len, 0, len_at - ctx->block_len);
	store_be32(ctx->block + len_at, (uint32_t)(bits >> 32));
	store_be32(ctx->block + len_at + 4, (uint32_t)bits);
	sha256_compress(ctx->state, ctx->block);
}

void
hash_sha256_final(struct hash_sha256_ctx *ctx, uint8_t out[HASH_SHA256_LEN])
{
	int i;

	sha256_pad(ctx);
	for (i = 0; i < 8; i++)
		store_be32(out + 4 * i, ctx->state[i]);
	explicit_bzero(ctx, sizeof(*ctx));
}

void
hash_sha256(const void *data, size_t len, uint8_t out[HASH_SHA256_LEN])
{
	struct hash_sha256_ctx ctx;

	hash_sha256_init(&ctx);
	hash_sha256_update(&ctx, data, len);
	hash_sha256_final(&ctx, out);
}

/* RFC 2104: K0 is the key hashed if longer than a block, zero-padded. */
static void
hmac_key_block(const void *key, size_t key_len,
    uint8_t k0[HASH_SHA256_BLOCK_LEN])
{
	memset(k0, 0, HASH_SHA256_BLOCK_LEN);
	if (key_len > HASH_SHA256_BLOCK_LEN)
		hash_sha256(key, key_len, k0);
	else if (key_len > 0)
		memcpy(k0, key, key_len);
}

/* SHA-256((K0 ^ pad) || data) */
static void
hmac_pass(const uint8_t k0[HASH_SHA256_BLOCK_LEN], uint8_t pad_byte,
    const void *data, size_t len, uint8_t out[HASH_SHA256_LEN])
{
	uint8_t padded[HASH_SHA256_BLOCK_LEN];
	struct hash_sha256_ctx ctx;
	size_t i;

	for (i = 0; i < sizeof(padded); i++)
		padded[i] = k0[i] ^ pad_byte;
	hash_sha256_init(&ctx);
	hash_sha256_update(&ctx, padded, sizeof(padded));
	hash_sha256_update(&ctx, data, len);
	hash_sha256_final(&ctx, out);
	explicit_bzero(padded, sizeof(padded));
}

bool
hash_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
    uint8_t out[HASH_SHA256_LEN])
{
	uint8_t k0[HASH_SHA256_BLOCK_LEN], inner[HASH_SHA256_LEN];

	hmac_key_block(key, key_len, k0);
	hmac_pass(k0, HMAC_IPAD, data, len, inner);
	hmac_pass(k0, HMAC_OPAD, inner, sizeof(inner), out);
	explicit_bzero(k0, sizeof(k0));
	explicit_bzero(inner, sizeof(inner));
	return true;
}

bool
hash_equal_ct(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *pa = a, *pb = b;
	uint8_t diff = 0;
	size_t i;

	for (i = 0; i < len; i++)
		diff |= (uint8_t)(pa[i] ^ pb[i]);
	return diff == 0;
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

bool
hash_parse_hex_sha256(const char *hex, size_t hex_len,
    uint8_t out[HASH_SHA256_LEN])
{
	return hex_len == HASH_SHA256_HEX_LEN &&
	    hex_decode_bytes(hex, out, HASH_SHA256_LEN);
}
