/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written here so that
 * sp does not link libcrypto; lowercase hex; a constant-time compare.
 * All functions are pure: the caller owns every buffer and context.
 */
#ifndef SP_COMMON_HASH_H
#define SP_COMMON_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_SHA256_LEN 32
#define HASH_SHA256_HEX_LEN 64	/* without the terminating NUL */
#define HASH_SHA256_BLOCK_LEN 64

/* Streaming state; lives wherever the caller puts it (stack is fine). */
struct hash_sha256_ctx {
	uint32_t state[8];
	uint64_t total_len;		/* bytes fed so far */
	uint8_t block[HASH_SHA256_BLOCK_LEN];
	size_t block_len;		/* bytes of block[] in use, < 64 */
};

void hash_sha256_init(struct hash_sha256_ctx *ctx);
void hash_sha256_update(struct hash_sha256_ctx *ctx, const void *data,
    size_t len);
/* Writes the digest and zeroes ctx; init it again before reuse. */
void hash_sha256_final(struct hash_sha256_ctx *ctx,
    uint8_t out[HASH_SHA256_LEN]);

void hash_sha256(const void *data, size_t len, uint8_t out[HASH_SHA256_LEN]);

/*
 * Any key length.  Always true: the bool stays from the libcrypto days so
 * that callers keep checking it.  Key-derived state is zeroed on return.
 */
bool hash_hmac_sha256(const void *key, size_t key_len, const void *data,
    size_t len, uint8_t out[HASH_SHA256_LEN]);

/* true if a and b hold the same len bytes; time depends only on len. */
bool hash_equal_ct(const void *a, const void *b, size_t len);

/* Writes 2*len hex digits and a NUL into out (size at least 2*len+1). */
void hash_hex(const uint8_t *bytes, size_t len, char *out);

/* Parses exactly 64 hex digits (either case); false otherwise. */
bool hash_parse_hex_sha256(const char *hex, size_t hex_len,
    uint8_t out[HASH_SHA256_LEN]);

#endif
