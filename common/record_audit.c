/*
 * The audit event record: what a child tells the broker to write.  Every
 * field is a number, an enum, a token or a bounded text, so the broker can
 * render a JSON line without parsing anything a child wrote as free text.
 * Layout in common/record.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/record.h"
#include "common/record_field.h"

static const uint8_t record_zero_sha256[HASH_SHA256_LEN];

/* The rules that relate fields; lengths are checked as they are coded. */
static enum record_error
record_audit_check(const struct record_audit_event *ev)
{
	bool execution = ev->kind == RECORD_AUDIT_EXECUTION;

	if (ev->kind < RECORD_AUDIT_REJECTION ||
	    ev->kind > RECORD_AUDIT_CONFIRMATION ||
	    (ev->flags & ~AUDIT_FLAGS_ALL) != 0 ||
	    ev->outcome > RECORD_OUTCOME_INVALID)
		return RECORD_ERR_RANGE;
	/* Only an execution has an outcome, and it always has one. */
	if (execution != (ev->outcome != RECORD_OUTCOME_NONE))
		return RECORD_ERR_INCONSISTENT;
	if ((ev->flags & AUDIT_HAS_SHA256) == 0 &&
	    memcmp(ev->sha256, record_zero_sha256, HASH_SHA256_LEN) != 0)
		return RECORD_ERR_INCONSISTENT;
	/* Only a rejection may or may not name a tool: the others always do
	 * (intent, execution, cancellation) or never (violation, client). */
	if ((ev->flags & AUDIT_HAS_TOOL) != 0 &&
	    ev->kind != RECORD_AUDIT_REJECTION)
		return RECORD_ERR_INCONSISTENT;
	if (ev->kind == RECORD_AUDIT_CLIENT &&
	    ev->shape_count != RECORD_AUDIT_CLIENT_TEXTS)
		return RECORD_ERR_INCONSISTENT;
	/* Only an intent carries digests, one per shape, and the "asked"
	 * confirmation of a tool with a journal, which the broker checks
	 * before a human is asked (docs/design.md section 9). */
	if (ev->digest_count != 0 && ((ev->kind != RECORD_AUDIT_INTENT &&
	    ev->kind != RECORD_AUDIT_CONFIRMATION) ||
	    ev->digest_count != ev->shape_count))
		return RECORD_ERR_INCONSISTENT;
	return RECORD_OK;
}

/*
 * A client event's texts are not arguments: their count is fixed.  A
 * rejection lists what the client sent, which the policy's largest tool
 * does not bound: the absolute cap does.
 */
static size_t
record_shapes_max(enum record_audit_kind kind,
    const struct record_limits *limits)
{
	if (kind == RECORD_AUDIT_CLIENT)
		return RECORD_AUDIT_CLIENT_TEXTS;
	if (kind == RECORD_AUDIT_REJECTION)
		return RECORD_ARGS_CAP;
	return record_limit(limits->max_args, RECORD_ARGS_CAP);
}

static enum record_error
record_shapes_put(struct buf *b, const struct record_audit_event *ev,
    const struct record_limits *limits)
{
	size_t max_count = record_shapes_max(ev->kind, limits);
	size_t max_len = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	size_t i;
	enum record_error e;

	if (ev->shape_count > max_count)
		return RECORD_ERR_TOO_LONG;
	if ((e = buf_put_u16(b, (uint16_t)ev->shape_count)) !=
	    RECORD_OK)
		return e;
	for (i = 0; i < ev->shape_count; i++)
		if ((e = record_put_text(b, &ev->shapes[i], max_len)) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

static enum record_error
record_shapes_get(struct buf *in, const struct record_limits *limits,
    struct record_audit_event *ev)
{
	size_t max_count = record_shapes_max(ev->kind, limits);
	size_t max_len = record_limit(limits->max_text_bytes, RECORD_TEXT_CAP);
	uint16_t count;
	size_t i;
	enum record_error e;

	if ((e = buf_get_u16(in, &count)) != RECORD_OK)
		return e;
	if (count > max_count)
		return RECORD_ERR_TOO_LONG;
	if (count == 0)
		return RECORD_OK;
	if ((ev->shapes = calloc(count, sizeof(*ev->shapes))) == NULL)
		return RECORD_ERR_NOMEM;
	ev->shape_count = count;
	for (i = 0; i < count; i++)
		if ((e = record_get_text(in, max_len, &ev->shapes[i])) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

static enum record_error
record_digests_put(struct buf *b, const struct record_audit_event *ev)
{
	enum record_error e;
	size_t i;

	if ((e = buf_put_u16(b, (uint16_t)ev->digest_count)) != RECORD_OK)
		return e;
	for (i = 0; i < ev->digest_count; i++)
		if ((e = buf_put_raw(b, ev->digests[i], HASH_SHA256_LEN)) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

/* At most one per shape: record_audit_check() says exactly. */
static enum record_error
record_digests_get(struct buf *in, struct record_audit_event *ev)
{
	uint16_t count;
	enum record_error e;
	size_t i;

	if ((e = buf_get_u16(in, &count)) != RECORD_OK)
		return e;
	if (count > ev->shape_count)
		return RECORD_ERR_TOO_LONG;
	if (count == 0)
		return RECORD_OK;
	if ((ev->digests = calloc(count, sizeof(*ev->digests))) == NULL)
		return RECORD_ERR_NOMEM;
	ev->digest_count = count;
	for (i = 0; i < count; i++)
		if ((e = buf_get_raw(in, ev->digests[i], HASH_SHA256_LEN)) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

static enum record_error
record_audit_put(struct buf *b, const struct record_audit_event *ev,
    const struct record_limits *limits)
{
	enum record_error e;

	if ((e = record_audit_check(ev)) != RECORD_OK)
		return e;
	if ((e = buf_put_u8(b, (uint8_t)ev->kind)) !=
	    RECORD_OK ||
	    (e = buf_put_u8(b, (uint8_t)ev->flags)) !=
	    RECORD_OK ||
	    (e = buf_put_u64(b, ev->frame_no)) != RECORD_OK ||
	    (e = record_put_token(b, &ev->reason, RECORD_ALPHABET_REASON)) !=
	    RECORD_OK ||
	    (e = buf_put_u32(b, (uint32_t)ev->code)) !=
	    RECORD_OK ||
	    (e = record_put_token(b, &ev->method, RECORD_ALPHABET_METHOD)) !=
	    RECORD_OK)
		return e;
	if ((ev->flags & AUDIT_HAS_SHA256) != 0 &&
	    (e = buf_put_raw(b, ev->sha256,
	    HASH_SHA256_LEN)) != RECORD_OK)
		return e;
	if ((e = buf_put_u64(b, ev->call_id)) != RECORD_OK ||
	    (e = buf_put_u32(b, ev->tool_index)) !=
	    RECORD_OK ||
	    (e = buf_put_u8(b, (uint8_t)ev->outcome)) !=
	    RECORD_OK ||
	    (e = buf_put_u32(b, (uint32_t)ev->status)) !=
	    RECORD_OK ||
	    (e = buf_put_u64(b, ev->duration_us)) != RECORD_OK)
		return e;
	if ((e = record_shapes_put(b, ev, limits)) != RECORD_OK)
		return e;
	return record_digests_put(b, ev);
}

enum record_error
record_audit_event_encode(const struct record_audit_event *in,
    const struct record_limits *limits, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_AUDIT_EVENT)) == RECORD_OK)
		e = record_audit_put(&tmp, in, limits);
	return record_end_encode(&tmp, out, e);
}

/* A u32 on the wire is an int32 in two's complement. */
static enum record_error
record_int32_get(struct buf *in, int32_t *v)
{
	uint32_t u;
	enum record_error e;

	if ((e = buf_get_u32(in, &u)) != RECORD_OK)
		return e;
	memcpy(v, &u, sizeof(*v));
	return RECORD_OK;
}

static enum record_error
record_audit_get(struct buf *in, const struct record_limits *limits,
    struct record_audit_event *ev)
{
	uint8_t kind, flags, outcome;
	enum record_error e;

	if ((e = buf_get_u8(in, &kind)) != RECORD_OK ||
	    (e = buf_get_u8(in, &flags)) != RECORD_OK)
		return e;
	/* The flags decide what follows, so they are checked now. */
	if ((flags & ~AUDIT_FLAGS_ALL) != 0)
		return RECORD_ERR_RANGE;
	ev->kind = (enum record_audit_kind)kind;
	ev->flags = flags;
	if ((e = buf_get_u64(in, &ev->frame_no)) != RECORD_OK ||
	    (e = record_get_token(in, &ev->reason, RECORD_ALPHABET_REASON)) !=
	    RECORD_OK ||
	    (e = record_int32_get(in, &ev->code)) != RECORD_OK ||
	    (e = record_get_token(in, &ev->method, RECORD_ALPHABET_METHOD)) !=
	    RECORD_OK)
		return e;
	if ((flags & AUDIT_HAS_SHA256) != 0 &&
	    (e = buf_get_raw(in, ev->sha256,
	    HASH_SHA256_LEN)) != RECORD_OK)
		return e;
	if ((e = buf_get_u64(in, &ev->call_id)) != RECORD_OK ||
	    (e = buf_get_u32(in, &ev->tool_index)) !=
	    RECORD_OK ||
	    (e = buf_get_u8(in, &outcome)) != RECORD_OK ||
	    (e = record_int32_get(in, &ev->status)) != RECORD_OK ||
	    (e = buf_get_u64(in, &ev->duration_us)) !=
	    RECORD_OK)
		return e;
	ev->outcome = (enum record_outcome)outcome;
	if ((e = record_shapes_get(in, limits, ev)) != RECORD_OK)
		return e;
	return record_digests_get(in, ev);
}

enum record_error
record_audit_event_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_audit_event *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_AUDIT_EVENT)) !=
	    RECORD_OK)
		return e;
	if ((e = record_audit_get(&in, limits, out)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK &&
	    (e = record_audit_check(out)) == RECORD_OK)
		return RECORD_OK;
	record_audit_event_free(out);
	return e;
}

void
record_audit_event_free(struct record_audit_event *e)
{
	size_t i;

	if (e == NULL)
		return;
	record_text_free(&e->reason);
	record_text_free(&e->method);
	for (i = 0; i < e->shape_count; i++)
		record_text_free(&e->shapes[i]);
	free(e->shapes);
	free(e->digests);
	memset(e, 0, sizeof(*e));
}
