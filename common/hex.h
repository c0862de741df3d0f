/*
 * Hexadecimal digits, either case, as JSON's \uXXXX escapes, percent
 * escapes and digests carry them.  The one reader of them; lowercase
 * hex is written by hash_hex() (common/hash.h).
 *
 * All functions are pure; the caller owns every buffer.
 */
#ifndef SP_COMMON_HEX_H
#define SP_COMMON_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEX_UINT_DIGITS_MAX 8	/* what a uint32_t holds */

/*
 * Reads the n hex digits at p (n <= HEX_UINT_DIGITS_MAX) into *out;
 * false, with *out untouched, when one of them is not a hex digit.
 * Stops at the first byte that is not one, so a NUL ends a short input.
 */
bool hex_decode_uint(const uint8_t *p, size_t n, uint32_t *out);

/*
 * Reads the 2 * len hex digits at hex into len bytes at out; false when
 * one is not a hex digit (out may then hold some bytes).
 */
bool hex_decode_bytes(const char *hex, uint8_t *out, size_t len);

/* Whether s[0..len) is all lowercase hex digits, as hash_hex() writes. */
bool hex_is_lowercase(const char *s, size_t len);

#endif
