/*
 * SHA-256 and HMAC-SHA-256 (OpenSSL libcrypto), and lowercase hex.
 * All functions are pure: the caller owns every buffer.
 */
#ifndef SP_COMMON_HASH_H
#define SP_COMMON_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_SHA256_LEN 32
#define HASH_SHA256_HEX_LEN 64	/* without the terminating NUL */

void hash_sha256(const void *data, size_t len, uint8_t out[HASH_SHA256_LEN]);

/* false only if libcrypto fails (it does not for sane inputs). */
bool hash_hmac_sha256(const void *key, size_t key_len, const void *data,
    size_t len, uint8_t out[HASH_SHA256_LEN]);

/* Writes 2*len hex digits and a NUL into out (size at least 2*len+1). */
void hash_hex(const uint8_t *bytes, size_t len, char *out);

/* Parses exactly 64 hex digits (either case); false otherwise. */
bool hash_parse_hex_sha256(const char *hex, size_t hex_len,
    uint8_t out[HASH_SHA256_LEN]);

#endif
