/*
 * Field codecs shared by the files of the record codec (record.c,
 * record_action.c, record_result.c, record_audit.c).  Not for other
 * modules: they use common/record.h.
 *
 * Each put function appends one field or returns an error; each get
 * function reads one field into caller storage, allocating only what the
 * field owns (freed by the record's free function).
 */
#ifndef SP_COMMON_RECORD_FIELD_H
#define SP_COMMON_RECORD_FIELD_H

#include "common/buf.h"
#include "common/record.h"

/* Which characters a token may hold. */
enum record_alphabet {
	RECORD_ALPHABET_REASON,		/* [a-z0-9-] */
	RECORD_ALPHABET_SIGNAL,		/* [A-Z0-9] */
	RECORD_ALPHABET_METHOD,		/* [A-Za-z0-9/_-]: a JSON-RPC method */
};

/* The smaller of what the policy asked for and the absolute cap. */
size_t record_limit(size_t asked, size_t cap);

/*
 * Starts a record in a fresh writer (freed by record_end_encode()); the
 * writer's maximum is RECORD_MAX_BYTES.
 */
enum record_error record_begin_encode(struct buf *tmp, enum record_type type);

/*
 * Appends tmp to out when e is RECORD_OK, logs one line otherwise; frees
 * tmp either way and returns the final status.
 */
enum record_error record_end_encode(struct buf *tmp, struct buf *out,
    enum record_error e);

/* A reader over data positioned after a checked header of this type. */
enum record_error record_begin_decode(struct buf *in, const uint8_t *data,
    size_t len, enum record_type type);

/* RECORD_ERR_TRAILING unless every byte was consumed. */
enum record_error record_end_decode(const struct buf *in);

enum record_error record_put_text(struct buf *b, const struct record_text *t,
    size_t max);
enum record_error record_get_text(struct buf *in, size_t max,
    struct record_text *t);

enum record_error record_put_bytes(struct buf *b,
    const struct record_bytes *bytes, size_t max);
enum record_error record_get_bytes(struct buf *in, size_t max,
    struct record_bytes *bytes);

/* An empty token, or 1..RECORD_TOKEN_MAX bytes of the alphabet. */
enum record_error record_put_token(struct buf *b, const struct record_text *t,
    enum record_alphabet alphabet);
enum record_error record_get_token(struct buf *in, struct record_text *t,
    enum record_alphabet alphabet);

void record_text_free(struct record_text *t);
void record_bytes_free(struct record_bytes *bytes);

#endif
