/*
 * A bounded byte buffer with typed put/get functions, in the manner of
 * OpenSSH's sshbuf.  Numbers are big-endian; a byte string is a u32 length
 * followed by that many bytes.
 *
 * A buffer is either a writer (it owns storage that grows up to a hard
 * maximum fixed at init) or a reader (a view over bytes the caller owns and
 * keeps alive; it is never written to).  Both are read from the front: each
 * successful get consumes what it returned.
 *
 * Every function returns RECORD_OK or an error and, on error, leaves the buffer
 * exactly as it was: nothing consumed, nothing appended, no output written.
 * Getters never read past the end; string getters check the declared length
 * against the caller's maximum before allocating or touching the bytes.
 *
 * Ownership: struct buf is caller-allocated (usually on the stack); a writer
 * owns buf->wdata until buf_free().  Strings returned by buf_get_string() and
 * buf_get_cstring() are heap copies the caller frees with free(3);
 * buf_get_string_view() returns a pointer into the buffer, valid until the
 * buffer is written to or freed.
 */
#ifndef SP_COMMON_BUF_H
#define SP_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/record_error.h"

struct buf {
	const uint8_t *rdata;	/* what getters read: wdata, or the caller's */
	uint8_t *wdata;		/* writer's storage (owned); NULL for a reader */
	size_t len;		/* bytes held, read or not */
	size_t off;		/* bytes already consumed, <= len */
	size_t cap;		/* bytes allocated at wdata */
	size_t max;		/* len never exceeds this */
	bool readonly;		/* a reader: puts are refused */
};

/* An empty writer that will hold at most max bytes; allocates nothing yet. */
void buf_init_writer(struct buf *b, size_t max);

/* A reader over len bytes at data; data must outlive b. */
void buf_init_reader(struct buf *b, const void *data, size_t len);

/* Zeroes and frees a writer's storage; a reader forgets its view. */
void buf_free(struct buf *b);

/* The unread bytes and their count. */
const uint8_t *buf_ptr(const struct buf *b);
size_t buf_len(const struct buf *b);

enum record_error buf_put_u8(struct buf *b, uint8_t v);
enum record_error buf_put_u16(struct buf *b, uint16_t v);
enum record_error buf_put_u32(struct buf *b, uint32_t v);
enum record_error buf_put_u64(struct buf *b, uint64_t v);
/* len bytes as they are, with no length prefix (fixed-size fields). */
enum record_error buf_put_raw(struct buf *b, const void *data, size_t len);
/* u32 length, then the bytes; data may be NULL when len is 0. */
enum record_error buf_put_string(struct buf *b, const void *data, size_t len);

enum record_error buf_get_u8(struct buf *b, uint8_t *v);
enum record_error buf_get_u16(struct buf *b, uint16_t *v);
enum record_error buf_get_u32(struct buf *b, uint32_t *v);
enum record_error buf_get_u64(struct buf *b, uint64_t *v);
/* Exactly len bytes into out (fixed-size fields). */
enum record_error buf_get_raw(struct buf *b, void *out, size_t len);

/*
 * A length-prefixed string of at most max bytes, borrowed: *data points
 * into b (NULL when the length is 0).  Any byte value is allowed.
 */
enum record_error buf_get_string_view(struct buf *b, size_t max,
    const uint8_t **data, size_t *len);

/*
 * A length-prefixed string of at most max bytes, copied to the heap with a
 * NUL appended (not counted in *len); any byte value is allowed inside.
 * The caller frees *data.
 */
enum record_error buf_get_string(struct buf *b, size_t max, uint8_t **data,
    size_t *len);

/*
 * Like buf_get_string() but a NUL inside is RECORD_ERR_CHAR, so *data is a C
 * string of exactly *len bytes.  The caller frees *data.
 */
enum record_error buf_get_cstring(struct buf *b, size_t max, char **data,
    size_t *len);

#endif
