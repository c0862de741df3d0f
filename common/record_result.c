/*
 * The result record: what the executor answers to one action, as typed
 * fields.  Layout in common/record.h.  Encoder and decoder share one set
 * of rules (record_result_check), so neither side can produce what the
 * other refuses.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/record.h"
#include "common/record_field.h"

static bool
record_outcome_valid(unsigned outcome)
{
	return outcome >= RECORD_OUTCOME_OK && outcome <= RECORD_OUTCOME_INVALID;
}

static enum record_error
record_http_check(const struct record_http_result *h)
{
	if (h->status != 0 && (h->status < 100 || h->status > 599))
		return RECORD_ERR_RANGE;
	if (h->body_total < h->body.len)
		return RECORD_ERR_INCONSISTENT;
	return RECORD_OK;
}

static enum record_error
record_ssh_check(const struct record_ssh_result *s)
{
	switch (s->end) {
	case RECORD_SSH_END_NONE:
		if (s->exit_status != 0 || s->signal.len != 0)
			return RECORD_ERR_INCONSISTENT;
		break;
	case RECORD_SSH_END_EXIT:
		if (s->signal.len != 0)
			return RECORD_ERR_INCONSISTENT;
		break;
	case RECORD_SSH_END_SIGNAL:
		if (s->exit_status != 0 || s->signal.len == 0)
			return RECORD_ERR_INCONSISTENT;
		break;
	default:
		return RECORD_ERR_RANGE;
	}
	if (s->out_total < s->out.len || s->err_total < s->err.len)
		return RECORD_ERR_INCONSISTENT;
	return RECORD_OK;
}

/* The rules that relate fields; lengths are checked as they are coded. */
static enum record_error
record_result_check(const struct record_result *r)
{
	bool retry = (r->flags & RESULT_HAS_RETRY_AFTER) != 0;

	if (!record_outcome_valid(r->outcome) ||
	    (r->flags & ~RESULT_FLAGS_ALL) != 0)
		return RECORD_ERR_RANGE;
	if (((r->flags & RESULT_DUPLICATE) != 0) != (r->duplicate_of != 0) ||
	    (r->duplicate_of != 0 && r->duplicate_of == r->call_id))
		return RECORD_ERR_INCONSISTENT;
	switch (r->kind) {
	case RECORD_RESULT_NONE:
		return retry ? RECORD_ERR_INCONSISTENT : RECORD_OK;
	case RECORD_RESULT_HTTP:
		if (!retry && r->http.retry_after_s != 0)
			return RECORD_ERR_INCONSISTENT;
		return record_http_check(&r->http);
	case RECORD_RESULT_SSH:
		if (retry)
			return RECORD_ERR_INCONSISTENT;
		return record_ssh_check(&r->ssh);
	}
	return RECORD_ERR_RANGE;
}

static enum record_error
record_http_put(struct buf *b, const struct record_http_result *h,
    const struct record_limits *limits)
{
	size_t text_max = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	size_t body_max = record_limit(limits->max_payload_bytes,
	    RECORD_PAYLOAD_CAP);
	enum record_error e;

	if ((e = buf_put_u16(b, h->status)) != RECORD_OK ||
	    (e = buf_put_u32(b, h->retry_after_s)) !=
	    RECORD_OK ||
	    (e = record_put_text(b, &h->content_type, text_max)) != RECORD_OK ||
	    (e = record_put_text(b, &h->location, text_max)) != RECORD_OK ||
	    (e = record_put_bytes(b, &h->body, body_max)) != RECORD_OK ||
	    (e = buf_put_u64(b, h->body_total)) != RECORD_OK ||
	    (e = buf_put_u64(b, h->connect_us)) != RECORD_OK)
		return e;
	return buf_put_u64(b, h->first_byte_us);
}

static enum record_error
record_http_get(struct buf *in, const struct record_limits *limits,
    struct record_http_result *h)
{
	size_t text_max = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	size_t body_max = record_limit(limits->max_payload_bytes,
	    RECORD_PAYLOAD_CAP);
	enum record_error e;

	if ((e = buf_get_u16(in, &h->status)) != RECORD_OK ||
	    (e = buf_get_u32(in, &h->retry_after_s)) !=
	    RECORD_OK ||
	    (e = record_get_text(in, text_max, &h->content_type)) != RECORD_OK ||
	    (e = record_get_text(in, text_max, &h->location)) != RECORD_OK ||
	    (e = record_get_bytes(in, body_max, &h->body)) != RECORD_OK ||
	    (e = buf_get_u64(in, &h->body_total)) !=
	    RECORD_OK ||
	    (e = buf_get_u64(in, &h->connect_us)) != RECORD_OK)
		return e;
	return buf_get_u64(in, &h->first_byte_us);
}

static enum record_error
record_ssh_put(struct buf *b, const struct record_ssh_result *s,
    const struct record_limits *limits)
{
	size_t max = record_limit(limits->max_payload_bytes,
	    RECORD_PAYLOAD_CAP);
	enum record_error e;

	if ((e = buf_put_u8(b, (uint8_t)s->end)) != RECORD_OK ||
	    (e = buf_put_u32(b, (uint32_t)s->exit_status)) !=
	    RECORD_OK ||
	    (e = record_put_token(b, &s->signal, RECORD_ALPHABET_SIGNAL)) !=
	    RECORD_OK ||
	    (e = record_put_bytes(b, &s->out, max)) != RECORD_OK ||
	    (e = buf_put_u64(b, s->out_total)) != RECORD_OK ||
	    (e = record_put_bytes(b, &s->err, max)) != RECORD_OK)
		return e;
	return buf_put_u64(b, s->err_total);
}

static enum record_error
record_ssh_get(struct buf *in, const struct record_limits *limits,
    struct record_ssh_result *s)
{
	size_t max = record_limit(limits->max_payload_bytes,
	    RECORD_PAYLOAD_CAP);
	uint8_t end;
	uint32_t status;
	enum record_error e;

	if ((e = buf_get_u8(in, &end)) != RECORD_OK ||
	    (e = buf_get_u32(in, &status)) != RECORD_OK ||
	    (e = record_get_token(in, &s->signal, RECORD_ALPHABET_SIGNAL)) !=
	    RECORD_OK ||
	    (e = record_get_bytes(in, max, &s->out)) != RECORD_OK ||
	    (e = buf_get_u64(in, &s->out_total)) != RECORD_OK ||
	    (e = record_get_bytes(in, max, &s->err)) != RECORD_OK ||
	    (e = buf_get_u64(in, &s->err_total)) != RECORD_OK)
		return e;
	/* Range-checked by record_ssh_check(). */
	s->end = (enum record_ssh_end)end;
	memcpy(&s->exit_status, &status, sizeof(status));
	return RECORD_OK;
}

static enum record_error
record_result_put(struct buf *b, const struct record_result *r,
    const struct record_limits *limits)
{
	size_t text_max = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	enum record_error e;

	if ((e = record_result_check(r)) != RECORD_OK)
		return e;
	if ((e = buf_put_u64(b, r->call_id)) != RECORD_OK ||
	    (e = buf_put_u8(b, (uint8_t)r->outcome)) !=
	    RECORD_OK ||
	    (e = buf_put_u8(b, (uint8_t)r->kind)) != RECORD_OK ||
	    (e = buf_put_u32(b, r->flags)) != RECORD_OK ||
	    ((r->flags & RESULT_DUPLICATE) != 0 &&
	    (e = buf_put_u64(b, r->duplicate_of)) != RECORD_OK) ||
	    (e = buf_put_u64(b, r->duration_us)) != RECORD_OK ||
	    (e = record_put_text(b, &r->message, text_max)) != RECORD_OK)
		return e;
	if (r->kind == RECORD_RESULT_HTTP)
		return record_http_put(b, &r->http, limits);
	if (r->kind == RECORD_RESULT_SSH)
		return record_ssh_put(b, &r->ssh, limits);
	return RECORD_OK;
}

void
record_result_message(struct record_result *r, enum record_outcome outcome,
    const char *message)
{
	memset(r, 0, sizeof(*r));
	r->outcome = outcome;
	r->kind = RECORD_RESULT_NONE;
	r->message.ptr = (char *)message;
	r->message.len = strlen(message);
}

enum record_error
record_result_encode(const struct record_result *in,
    const struct record_limits *limits, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_RESULT)) == RECORD_OK)
		e = record_result_put(&tmp, in, limits);
	return record_end_encode(&tmp, out, e);
}

static enum record_error
record_result_get(struct buf *in, const struct record_limits *limits,
    struct record_result *r)
{
	size_t text_max = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	uint8_t outcome, kind;
	enum record_error e;

	if ((e = buf_get_u64(in, &r->call_id)) != RECORD_OK ||
	    (e = buf_get_u8(in, &outcome)) != RECORD_OK ||
	    (e = buf_get_u8(in, &kind)) != RECORD_OK ||
	    (e = buf_get_u32(in, &r->flags)) != RECORD_OK ||
	    ((r->flags & RESULT_DUPLICATE) != 0 &&
	    (e = buf_get_u64(in, &r->duplicate_of)) != RECORD_OK) ||
	    (e = buf_get_u64(in, &r->duration_us)) !=
	    RECORD_OK ||
	    (e = record_get_text(in, text_max, &r->message)) != RECORD_OK)
		return e;
	/* The kind decides what follows, so it is checked now. */
	if (kind > RECORD_RESULT_SSH)
		return RECORD_ERR_RANGE;
	/* The rest is checked by record_result_check() once all is read. */
	r->outcome = (enum record_outcome)outcome;
	r->kind = (enum record_result_kind)kind;
	if (kind == RECORD_RESULT_HTTP)
		return record_http_get(in, limits, &r->http);
	if (kind == RECORD_RESULT_SSH)
		return record_ssh_get(in, limits, &r->ssh);
	return RECORD_OK;
}

enum record_error
record_result_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_result *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_RESULT)) != RECORD_OK)
		return e;
	if ((e = record_result_get(&in, limits, out)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK &&
	    (e = record_result_check(out)) == RECORD_OK)
		return RECORD_OK;
	record_result_free(out);
	return e;
}

void
record_result_free(struct record_result *r)
{
	if (r == NULL)
		return;
	record_text_free(&r->message);
	record_text_free(&r->http.content_type);
	record_text_free(&r->http.location);
	record_bytes_free(&r->http.body);
	record_text_free(&r->ssh.signal);
	record_bytes_free(&r->ssh.out);
	record_bytes_free(&r->ssh.err);
	memset(r, 0, sizeof(*r));
}
