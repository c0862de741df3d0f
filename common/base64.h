/*
 * Strict base64 of RFC 4648 section 4: standard alphabet, '=' padding
 * required.  Decoding accepts only the canonical encoding of some bytes:
 * no whitespace, no NUL, no missing or extra '=', no non-zero bits after
 * the last byte.  So "Zg==" decodes to "f" while "Zg=", "Zg===", "Zh=="
 * and "Zg==\n" are refused.
 * Pure functions: the caller owns every buffer, says how large the output
 * buffer is (nothing is ever written at or past it), and logs refusals.
 */
#ifndef SP_COMMON_BASE64_H
#define SP_COMMON_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* Encoded size of n bytes with its NUL, for constant n (array sizes). */
#define BASE64_ENCODE_SIZE(n) (((n) + 2) / 3 * 4 + 1)

/* Buffer size base64_encode needs for len bytes, NUL included; 0 if
 * that does not fit in a size_t. */
size_t base64_encode_size(size_t len);

/*
 * Writes the encoding of src[0..len) and a NUL into out.  false, with
 * nothing written, if cap is below base64_encode_size(len).
 */
bool base64_encode(const void *src, size_t len, char *out, size_t cap);

/*
 * Rewrites len characters of an encoding into the URL-safe alphabet of
 * RFC 4648 section 5 ('-' for '+', '_' for '/'), in place; '=' is kept.
 */
void base64_to_url(char *s, size_t len);

/*
 * Decodes src[0..len) (no NUL needed) into out and sets *out_len.  false
 * if src is not canonical base64 or the decoded bytes exceed cap; then
 * *out_len is 0 and whatever was written into out has been zeroed.
 * len / 4 * 3 bytes of capacity always suffice.
 */
bool base64_decode(const char *src, size_t len, void *out, size_t cap,
    size_t *out_len);

#endif
