/*
 * Strict UTF-8 (RFC 3629): the only encoding accepted on the wire.
 *
 * Decisions: overlong forms (including C0/C1 leads), UTF-16 surrogates
 * (U+D800..U+DFFF encoded directly), code points above U+10FFFF (including
 * F5..FF leads), a continuation byte where a sequence should start, a lead
 * byte not followed by enough continuation bytes, and a sequence cut by the
 * end of the buffer are each refused with their own reason.  The offset
 * reported is that of the first byte of the offending sequence.  NUL is
 * valid UTF-8; refusing it is the caller's business (frame, json).
 *
 * All functions are pure; the caller owns every buffer.
 */
#ifndef SP_COMMON_UTF8_H
#define SP_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum utf8_error {
	UTF8_OK = 0,
	UTF8_UNEXPECTED_CONTINUATION,	/* 80..BF where a sequence starts */
	UTF8_MISSING_CONTINUATION,	/* lead byte followed by a non-continuation */
	UTF8_TRUNCATED,			/* sequence cut by the end of the buffer */
	UTF8_OVERLONG,			/* code point encoded with too many bytes */
	UTF8_SURROGATE,			/* U+D800..U+DFFF */
	UTF8_TOO_LARGE,			/* above U+10FFFF */
};

/*
 * Checks len bytes.  On failure returns the reason and, if err_offset is
 * not NULL, stores the offset of the offending sequence there.
 */
enum utf8_error utf8_validate(const uint8_t *bytes, size_t len,
    size_t *err_offset);

#define UTF8_SEQUENCE_MAX 4	/* bytes of the longest sequence */

/*
 * Decodes the one sequence at bytes[0..avail) (avail > 0), under the
 * same rules: on UTF8_OK stores its code point in *cp and its length in
 * *len; on failure leaves both untouched.
 */
enum utf8_error utf8_decode(const uint8_t *bytes, size_t avail, uint32_t *cp,
    size_t *len);

/*
 * Writes cp (at most U+10FFFF, not a surrogate: the caller's to ensure)
 * as UTF-8 into out; returns how many bytes it wrote.
 */
size_t utf8_encode(uint32_t cp, uint8_t out[UTF8_SEQUENCE_MAX]);

/* A short fixed phrase for an error (static storage). */
const char *utf8_error_string(enum utf8_error error);

/*
 * Counts code points (what the policy calls characters) in valid UTF-8;
 * false, with *count untouched, if the bytes are not valid.
 */
bool utf8_count_code_points(const uint8_t *bytes, size_t len, size_t *count);

#endif
