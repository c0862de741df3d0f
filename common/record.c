/*
 * The record codec's frame: header, field helpers, and the small records
 * (hello, cancel, audit ack).  Layout in common/record.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/record.h"
#include "common/record_field.h"

void
record_limits_default(struct record_limits *limits)
{
	limits->max_args = RECORD_ARGS_CAP;
	limits->max_arg_bytes = RECORD_ARG_BYTES_CAP;
	limits->max_payload_bytes = RECORD_PAYLOAD_CAP;
	limits->max_text_bytes = RECORD_TEXT_CAP;
}

const char *
record_error_str(enum record_error e)
{
	switch (e) {
	case RECORD_OK:
		return "ok";
	case RECORD_ERR_SHORT:
		return "record ends inside a field";
	case RECORD_ERR_TRAILING:
		return "bytes after the last field";
	case RECORD_ERR_VERSION:
		return "unknown protocol version";
	case RECORD_ERR_TYPE:
		return "unknown or unexpected record type";
	case RECORD_ERR_RANGE:
		return "field value out of range";
	case RECORD_ERR_TOO_LONG:
		return "length or count above its limit";
	case RECORD_ERR_CHAR:
		return "forbidden character in a string";
	case RECORD_ERR_INCONSISTENT:
		return "fields contradict each other";
	case RECORD_ERR_NOMEM:
		return "out of memory";
	case RECORD_ERR_READONLY:
		return "write to a read-only buffer";
	}
	return "unknown record error";
}

static const struct {
	const char *name;
	const char *program;
} record_roles[] = {
	[RECORD_ROLE_BROKER] = { "broker", "sp" },
	[RECORD_ROLE_FRONTEND] = { "frontend", "sp-frontend" },
	[RECORD_ROLE_EXECUTOR] = { "executor", "sp-executor" },
};

static bool
record_role_valid(unsigned role)
{
	return role >= RECORD_ROLE_BROKER && role <= RECORD_ROLE_EXECUTOR;
}

const char *
record_role_name(enum record_role role)
{
	return record_role_valid(role) ? record_roles[role].name : "unknown";
}

const char *
record_role_program(enum record_role role)
{
	return record_role_valid(role) ? record_roles[role].program : NULL;
}

size_t
record_limit(size_t asked, size_t cap)
{
	return asked < cap ? asked : cap;
}

static bool
record_type_known(uint16_t type)
{
	return type >= RECORD_HELLO && type <= RECORD_TYPE_LAST;
}

enum record_error
record_peek(const uint8_t *data, size_t len, uint16_t *version,
    enum record_type *type)
{
	struct buf in;
	uint16_t v, t;

	buf_init_reader(&in, data, len);
	if (buf_get_u16(&in, &v) != RECORD_OK || buf_get_u16(&in, &t) != RECORD_OK)
		return RECORD_ERR_SHORT;
	if (version != NULL)
		*version = v;
	if (v != RECORD_VERSION)
		return RECORD_ERR_VERSION;
	if (!record_type_known(t))
		return RECORD_ERR_TYPE;
	if (len > RECORD_MAX_BYTES)
		return RECORD_ERR_TOO_LONG;
	if (type != NULL)
		*type = (enum record_type)t;
	return RECORD_OK;
}

enum record_error
record_begin_encode(struct buf *tmp, enum record_type type)
{
	enum record_error e;

	buf_init_writer(tmp, RECORD_MAX_BYTES);
	if ((e = buf_put_u16(tmp, RECORD_VERSION)) != RECORD_OK ||
	    (e = buf_put_u16(tmp, (uint16_t)type)) != RECORD_OK)
		return e;
	return RECORD_OK;
}

enum record_error
record_end_encode(struct buf *tmp, struct buf *out, enum record_error e)
{
	if (e == RECORD_OK)
		e = buf_put_raw(out, buf_ptr(tmp), buf_len(tmp));
	buf_free(tmp);
	if (e != RECORD_OK)
		log_error("a record could not be encoded: %s",
		    record_error_str(e));
	return e;
}

enum record_error
record_begin_decode(struct buf *in, const uint8_t *data, size_t len,
    enum record_type type)
{
	uint8_t header[RECORD_HEADER_LEN];
	enum record_type found;
	enum record_error e;

	if ((e = record_peek(data, len, NULL, &found)) != RECORD_OK)
		return e;
	if (found != type)
		return RECORD_ERR_TYPE;
	buf_init_reader(in, data, len);
	return buf_get_raw(in, header, sizeof(header));
}

enum record_error
record_end_decode(const struct buf *in)
{
	return buf_len(in) == 0 ? RECORD_OK : RECORD_ERR_TRAILING;
}

enum record_error
record_put_text(struct buf *b, const struct record_text *t, size_t max)
{
	if (t->len > max)
		return RECORD_ERR_TOO_LONG;
	if (t->len > 0 && memchr(t->ptr, '\0', t->len) != NULL)
		return RECORD_ERR_CHAR;
	return buf_put_string(b, t->ptr, t->len);
}

enum record_error
record_get_text(struct buf *in, size_t max, struct record_text *t)
{
	return buf_get_cstring(in, max, &t->ptr, &t->len);
}

enum record_error
record_put_bytes(struct buf *b, const struct record_bytes *bytes, size_t max)
{
	if (bytes->len > max)
		return RECORD_ERR_TOO_LONG;
	return buf_put_string(b, bytes->ptr, bytes->len);
}

enum record_error
record_get_bytes(struct buf *in, size_t max, struct record_bytes *bytes)
{
	return buf_get_string(in, max, &bytes->ptr,
	    &bytes->len);
}

static bool
record_token_char(unsigned char c, enum record_alphabet alphabet)
{
	if (c >= '0' && c <= '9')
		return true;
	if (alphabet == RECORD_ALPHABET_SIGNAL)
		return c >= 'A' && c <= 'Z';
	if (alphabet == RECORD_ALPHABET_METHOD &&
	    ((c >= 'A' && c <= 'Z') || c == '/' || c == '_'))
		return true;
	return (c >= 'a' && c <= 'z') || c == '-';
}

static enum record_error
record_token_check(const struct record_text *t, enum record_alphabet alphabet)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (!record_token_char((unsigned char)t->ptr[i], alphabet))
			return RECORD_ERR_CHAR;
	return RECORD_OK;
}

enum record_error
record_put_token(struct buf *b, const struct record_text *t,
    enum record_alphabet alphabet)
{
	enum record_error e;

	if (t->len > RECORD_TOKEN_MAX)
		return RECORD_ERR_TOO_LONG;
	if ((e = record_token_check(t, alphabet)) != RECORD_OK)
		return e;
	return buf_put_string(b, t->ptr, t->len);
}

enum record_error
record_get_token(struct buf *in, struct record_text *t,
    enum record_alphabet alphabet)
{
	enum record_error e;

	if ((e = record_get_text(in, RECORD_TOKEN_MAX, t)) != RECORD_OK)
		return e;
	if ((e = record_token_check(t, alphabet)) != RECORD_OK)
		record_text_free(t);
	return e;
}

void
record_text_free(struct record_text *t)
{
	free(t->ptr);
	t->ptr = NULL;
	t->len = 0;
}

void
record_bytes_free(struct record_bytes *bytes)
{
	free(bytes->ptr);
	bytes->ptr = NULL;
	bytes->len = 0;
}

enum record_error
record_hello_encode(const struct record_hello *in, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_HELLO)) == RECORD_OK) {
		if (!record_role_valid(in->role))
			e = RECORD_ERR_RANGE;
		else if ((e = buf_put_u8(&tmp,
		    (uint8_t)in->role)) == RECORD_OK)
			e = buf_put_raw(&tmp, in->fingerprint,
			    HASH_SHA256_LEN);
	}
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_hello_decode(const uint8_t *data, size_t len, struct record_hello *out)
{
	struct buf in;
	uint8_t role;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_HELLO)) != RECORD_OK)
		return e;
	if ((e = buf_get_u8(&in, &role)) != RECORD_OK ||
	    (e = buf_get_raw(&in, out->fingerprint,
	    HASH_SHA256_LEN)) != RECORD_OK)
		goto fail;
	if (!record_role_valid(role)) {
		e = RECORD_ERR_RANGE;
		goto fail;
	}
	out->role = (enum record_role)role;
	if ((e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
fail:
	memset(out, 0, sizeof(*out));
	return e;
}

enum record_error
record_cancel_encode(const struct record_cancel *in, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_CANCEL)) == RECORD_OK)
		e = buf_put_u64(&tmp, in->call_id);
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_cancel_decode(const uint8_t *data, size_t len, struct record_cancel *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_CANCEL)) != RECORD_OK)
		return e;
	if ((e = buf_get_u64(&in, &out->call_id)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	memset(out, 0, sizeof(*out));
	return e;
}

static bool
record_ack_status_valid(unsigned status)
{
	return status >= RECORD_AUDIT_WRITTEN &&
	    status <= RECORD_AUDIT_REPLAY;
}

/* Only a refusal says why, and only a duplicate names another call. */
static enum record_error
record_ack_check(const struct record_audit_ack *a)
{
	bool says = a->status == RECORD_AUDIT_DENIED ||
	    a->status == RECORD_AUDIT_REPLAY;

	if (!record_ack_status_valid(a->status))
		return RECORD_ERR_RANGE;
	if (says && a->message.len == 0)
		return RECORD_ERR_INCONSISTENT;
	if (!says && a->message.len != 0 &&
	    (a->status != RECORD_AUDIT_WRITTEN ||
	    a->message.len != 2 * HASH_SHA256_LEN))
		return RECORD_ERR_INCONSISTENT;
	if ((a->status == RECORD_AUDIT_DUPLICATE) !=
	    (a->first_call_id != 0) || a->first_call_id == a->call_id)
		return RECORD_ERR_INCONSISTENT;
	return RECORD_OK;
}

enum record_error
record_audit_ack_encode(const struct record_audit_ack *in, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_AUDIT_ACK)) == RECORD_OK &&
	    (e = record_ack_check(in)) == RECORD_OK &&
	    (e = buf_put_u64(&tmp, in->call_id)) == RECORD_OK &&
	    (e = buf_put_u8(&tmp, (uint8_t)in->status)) == RECORD_OK &&
	    (e = buf_put_u64(&tmp, in->first_call_id)) == RECORD_OK)
		e = record_put_text(&tmp, &in->message, RECORD_TEXT_CAP);
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_audit_ack_decode(const uint8_t *data, size_t len,
    struct record_audit_ack *out)
{
	struct buf in;
	uint8_t status;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_AUDIT_ACK)) !=
	    RECORD_OK)
		return e;
	if ((e = buf_get_u64(&in, &out->call_id)) != RECORD_OK ||
	    (e = buf_get_u8(&in, &status)) != RECORD_OK ||
	    (e = buf_get_u64(&in, &out->first_call_id)) != RECORD_OK ||
	    (e = record_get_text(&in, RECORD_TEXT_CAP, &out->message)) !=
	    RECORD_OK)
		goto fail;
	out->status = (enum record_audit_ack_status)status;
	if ((e = record_ack_check(out)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
fail:
	record_audit_ack_free(out);
	return e;
}

void
record_audit_ack_free(struct record_audit_ack *a)
{
	record_text_free(&a->message);
	memset(a, 0, sizeof(*a));
}

enum record_error
record_encode(enum record_type type, const void *rec,
    const struct record_limits *limits, struct buf *out)
{
	switch (type) {
	case RECORD_HELLO:
		return record_hello_encode(rec, out);
	case RECORD_ACTION:
		return record_action_encode(rec, limits, out);
	case RECORD_RESULT:
		return record_result_encode(rec, limits, out);
	case RECORD_CANCEL:
		return record_cancel_encode(rec, out);
	case RECORD_AUDIT_EVENT:
		return record_audit_event_encode(rec, limits, out);
	case RECORD_AUDIT_ACK:
		return record_audit_ack_encode(rec, out);
	case RECORD_CONFIRM_CHALLENGE:
		return record_confirm_challenge_encode(rec, out);
	case RECORD_CONFIRM_ANSWER:
		return record_confirm_answer_encode(rec, limits, out);
	case RECORD_OPERATOR_ASK:
		return record_operator_ask_encode(rec, out);
	case RECORD_OPERATOR_ANSWER:
		return record_operator_answer_encode(rec, limits, out);
	}
	return RECORD_ERR_TYPE;
}
