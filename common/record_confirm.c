/*
 * The confirmation records (docs/design.md section 8): the executor's
 * challenge for one call, and the frontend's relay of the human's answer
 * with the challenge it answers.  Layout in common/record.h.
 */
#include "config.h"

#include <string.h>

#include "common/record.h"
#include "common/record_field.h"

static enum record_error
record_challenge_put(struct buf *b, const struct record_confirm_challenge *c)
{
	enum record_error e;

	if ((e = buf_put_raw(b, c->nonce, sizeof(c->nonce))) != RECORD_OK ||
	    (e = buf_put_u64(b, c->expiry_ms)) != RECORD_OK)
		return e;
	return buf_put_raw(b, c->mac, sizeof(c->mac));
}

static enum record_error
record_challenge_get(struct buf *in, struct record_confirm_challenge *c)
{
	enum record_error e;

	if ((e = buf_get_raw(in, c->nonce, sizeof(c->nonce))) != RECORD_OK ||
	    (e = buf_get_u64(in, &c->expiry_ms)) != RECORD_OK)
		return e;
	return buf_get_raw(in, c->mac, sizeof(c->mac));
}

enum record_error
record_confirm_challenge_encode(const struct record_confirm_challenge_msg *in,
    struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_CONFIRM_CHALLENGE)) ==
	    RECORD_OK && (e = buf_put_u64(&tmp, in->call_id)) == RECORD_OK)
		e = record_challenge_put(&tmp, &in->challenge);
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_confirm_challenge_decode(const uint8_t *data, size_t len,
    struct record_confirm_challenge_msg *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len,
	    RECORD_CONFIRM_CHALLENGE)) == RECORD_OK &&
	    (e = buf_get_u64(&in, &out->call_id)) == RECORD_OK &&
	    (e = record_challenge_get(&in, &out->challenge)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	memset(out, 0, sizeof(*out));
	return e;
}

size_t
record_confirm_retyped_max(const struct record_limits *limits)
{
	size_t max = record_limit(limits->max_arg_bytes, RECORD_ARG_BYTES_CAP);

	return max < RECORD_CONFIRM_RETYPED_MIN ? RECORD_CONFIRM_RETYPED_MIN :
	    max;
}

/* A retyped value comes only with an accept: nothing else carries one. */
static enum record_error
record_answer_check(const struct record_confirm_answer *a)
{
	if (a->verdict < RECORD_CONFIRM_ACCEPT ||
	    a->verdict > RECORD_CONFIRM_RELAYED)
		return RECORD_ERR_RANGE;
	if (a->has_retyped && a->verdict != RECORD_CONFIRM_ACCEPT)
		return RECORD_ERR_INCONSISTENT;
	return RECORD_OK;
}

static enum record_error
record_answer_put(struct buf *b, const struct record_confirm_answer *in,
    const struct record_limits *limits)
{
	size_t max = record_confirm_retyped_max(limits);
	enum record_error e;

	if ((e = record_answer_check(in)) != RECORD_OK ||
	    (e = buf_put_u64(b, in->call_id)) != RECORD_OK ||
	    (e = buf_put_u8(b, (uint8_t)in->verdict)) != RECORD_OK ||
	    (e = record_challenge_put(b, &in->challenge)) != RECORD_OK ||
	    (e = buf_put_u8(b, in->has_retyped ? 1 : 0)) != RECORD_OK)
		return e;
	if (!in->has_retyped)
		return RECORD_OK;
	return record_put_text(b, &in->retyped, max);
}

enum record_error
record_confirm_answer_encode(const struct record_confirm_answer *in,
    const struct record_limits *limits, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_CONFIRM_ANSWER)) == RECORD_OK)
		e = record_answer_put(&tmp, in, limits);
	return record_end_encode(&tmp, out, e);
}

static enum record_error
record_answer_get(struct buf *in, const struct record_limits *limits,
    struct record_confirm_answer *out)
{
	size_t max = record_confirm_retyped_max(limits);
	uint8_t verdict, retyped;
	enum record_error e;

	if ((e = buf_get_u64(in, &out->call_id)) != RECORD_OK ||
	    (e = buf_get_u8(in, &verdict)) != RECORD_OK ||
	    (e = record_challenge_get(in, &out->challenge)) != RECORD_OK ||
	    (e = buf_get_u8(in, &retyped)) != RECORD_OK)
		return e;
	if (retyped > 1)
		return RECORD_ERR_RANGE;
	out->verdict = (enum record_confirm_verdict)verdict;
	out->has_retyped = retyped == 1;
	if ((e = record_answer_check(out)) != RECORD_OK)
		return e;
	if (!out->has_retyped)
		return RECORD_OK;
	return record_get_text(in, max, &out->retyped);
}

enum record_error
record_confirm_answer_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_confirm_answer *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_CONFIRM_ANSWER)) !=
	    RECORD_OK)
		return e;
	if ((e = record_answer_get(&in, limits, out)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	record_confirm_answer_free(out);
	return e;
}

void
record_confirm_answer_free(struct record_confirm_answer *a)
{
	if (a == NULL)
		return;
	record_text_free(&a->retyped);
	memset(a, 0, sizeof(*a));
}

/* Only a human's yes or no comes from an approver. */
static enum record_error
record_operator_check(const struct record_confirm_answer *a)
{
	if (a->verdict != RECORD_CONFIRM_ACCEPT &&
	    a->verdict != RECORD_CONFIRM_DECLINE)
		return RECORD_ERR_RANGE;
	return RECORD_OK;
}

enum record_error
record_operator_ask_encode(const struct record_operator_ask *in,
    struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_OPERATOR_ASK)) ==
	    RECORD_OK && (e = buf_put_u64(&tmp, in->call_id)) == RECORD_OK &&
	    (e = buf_put_u32(&tmp, in->tool_index)) == RECORD_OK &&
	    (e = record_challenge_put(&tmp, &in->challenge)) == RECORD_OK)
		e = record_put_text(&tmp, &in->message, RECORD_TEXT_CAP);
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_operator_ask_decode(const uint8_t *data, size_t len,
    struct record_operator_ask *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_OPERATOR_ASK)) ==
	    RECORD_OK && (e = buf_get_u64(&in, &out->call_id)) == RECORD_OK &&
	    (e = buf_get_u32(&in, &out->tool_index)) == RECORD_OK &&
	    (e = record_challenge_get(&in, &out->challenge)) == RECORD_OK &&
	    (e = record_get_text(&in, RECORD_TEXT_CAP, &out->message)) ==
	    RECORD_OK && (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	record_operator_ask_free(out);
	return e;
}

void
record_operator_ask_free(struct record_operator_ask *a)
{
	if (a == NULL)
		return;
	record_text_free(&a->message);
	memset(a, 0, sizeof(*a));
}

enum record_error
record_operator_answer_encode(const struct record_operator_answer *in,
    const struct record_limits *limits, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_OPERATOR_ANSWER)) ==
	    RECORD_OK &&
	    (e = record_operator_check(&in->answer)) == RECORD_OK &&
	    (e = buf_put_u32(&tmp, in->approver_uid)) == RECORD_OK)
		e = record_answer_put(&tmp, &in->answer, limits);
	return record_end_encode(&tmp, out, e);
}

enum record_error
record_operator_answer_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_operator_answer *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len,
	    RECORD_OPERATOR_ANSWER)) != RECORD_OK)
		return e;
	if ((e = buf_get_u32(&in, &out->approver_uid)) == RECORD_OK &&
	    (e = record_answer_get(&in, limits, &out->answer)) == RECORD_OK &&
	    (e = record_operator_check(&out->answer)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	record_operator_answer_free(out);
	return e;
}

void
record_operator_answer_free(struct record_operator_answer *a)
{
	if (a == NULL)
		return;
	record_confirm_answer_free(&a->answer);
	memset(a, 0, sizeof(*a));
}
