/*
 * The action record: what the frontend asks the executor to do, as a tool
 * index and typed values only.  Layout in common/record.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/record.h"
#include "common/record_field.h"

static enum record_error
record_value_put(struct buf *b, const struct value *v, size_t max_bytes)
{
	const struct record_text text = {
		.ptr = v->u.str.ptr, .len = v->u.str.len,
	};
	enum record_error e;

	if ((unsigned)v->kind > VALUE_DECIMAL)
		return RECORD_ERR_RANGE;
	if ((e = buf_put_u8(b, (uint8_t)v->kind)) != RECORD_OK)
		return e;
	switch (v->kind) {
	case VALUE_STRING:
		return record_put_text(b, &text, max_bytes);
	case VALUE_INTEGER:
		return buf_put_u64(b, (uint64_t)v->u.integer);
	case VALUE_DECIMAL:
		return buf_put_u64(b,
		    (uint64_t)v->u.decimal_minor);
	case VALUE_BOOLEAN:
		return buf_put_u8(b, v->u.boolean ? 1 : 0);
	case VALUE_ABSENT:
		break;
	}
	return RECORD_OK;
}

/* A u64 on the wire is an int64 in two's complement. */
static enum record_error
record_int64_get(struct buf *in, int64_t *v)
{
	uint64_t u;
	enum record_error e;

	if ((e = buf_get_u64(in, &u)) != RECORD_OK)
		return e;
	memcpy(v, &u, sizeof(*v));
	return RECORD_OK;
}

static enum record_error
record_boolean_get(struct buf *in, bool *v)
{
	uint8_t u;
	enum record_error e;

	if ((e = buf_get_u8(in, &u)) != RECORD_OK)
		return e;
	if (u > 1)
		return RECORD_ERR_RANGE;
	*v = u == 1;
	return RECORD_OK;
}

/* On error v stays VALUE_ABSENT with nothing allocated. */
static enum record_error
record_value_get(struct buf *in, size_t max_bytes, struct value *v)
{
	struct record_text text;
	uint8_t kind;
	enum record_error e;

	if ((e = buf_get_u8(in, &kind)) != RECORD_OK)
		return e;
	switch (kind) {
	case VALUE_ABSENT:
		return RECORD_OK;
	case VALUE_STRING:
		if ((e = record_get_text(in, max_bytes, &text)) != RECORD_OK)
			return e;
		v->kind = VALUE_STRING;
		v->u.str.ptr = text.ptr;
		v->u.str.len = text.len;
		return RECORD_OK;
	case VALUE_INTEGER:
		e = record_int64_get(in, &v->u.integer);
		break;
	case VALUE_DECIMAL:
		e = record_int64_get(in, &v->u.decimal_minor);
		break;
	case VALUE_BOOLEAN:
		e = record_boolean_get(in, &v->u.boolean);
		break;
	default:
		return RECORD_ERR_RANGE;
	}
	if (e == RECORD_OK)
		v->kind = (enum value_kind)kind;
	else
		memset(v, 0, sizeof(*v));
	return e;
}

static enum record_error
record_action_put(struct buf *b, const struct record_action *in,
    const struct record_limits *limits)
{
	size_t max_args = record_limit(limits->max_args, RECORD_ARGS_CAP);
	size_t max_bytes = record_limit(limits->max_arg_bytes,
	    RECORD_ARG_BYTES_CAP);
	size_t i;
	enum record_error e;

	if (in->arg_count > max_args)
		return RECORD_ERR_TOO_LONG;
	if ((e = buf_put_u64(b, in->call_id)) != RECORD_OK ||
	    (e = buf_put_u32(b, in->tool_index)) != RECORD_OK ||
	    (e = buf_put_raw(b, in->fingerprint,
	    HASH_SHA256_LEN)) != RECORD_OK ||
	    (e = buf_put_u16(b, (uint16_t)in->arg_count)) !=
	    RECORD_OK)
		return e;
	for (i = 0; i < in->arg_count; i++)
		if ((e = record_value_put(b, &in->args[i], max_bytes)) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

enum record_error
record_action_encode(const struct record_action *in,
    const struct record_limits *limits, struct buf *out)
{
	struct buf tmp;
	enum record_error e;

	if ((e = record_begin_encode(&tmp, RECORD_ACTION)) == RECORD_OK)
		e = record_action_put(&tmp, in, limits);
	return record_end_encode(&tmp, out, e);
}

static enum record_error
record_action_get(struct buf *in, const struct record_limits *limits,
    struct record_action *out)
{
	size_t max_args = record_limit(limits->max_args, RECORD_ARGS_CAP);
	size_t max_bytes = record_limit(limits->max_arg_bytes,
	    RECORD_ARG_BYTES_CAP);
	uint16_t count;
	size_t i;
	enum record_error e;

	if ((e = buf_get_u64(in, &out->call_id)) != RECORD_OK ||
	    (e = buf_get_u32(in, &out->tool_index)) !=
	    RECORD_OK ||
	    (e = buf_get_raw(in, out->fingerprint,
	    HASH_SHA256_LEN)) != RECORD_OK ||
	    (e = buf_get_u16(in, &count)) != RECORD_OK)
		return e;
	if (count > max_args)
		return RECORD_ERR_TOO_LONG;
	if (count == 0)
		return RECORD_OK;
	if ((out->args = calloc(count, sizeof(*out->args))) == NULL)
		return RECORD_ERR_NOMEM;
	out->arg_count = count;
	for (i = 0; i < count; i++)
		if ((e = record_value_get(in, max_bytes, &out->args[i])) !=
		    RECORD_OK)
			return e;
	return RECORD_OK;
}

enum record_error
record_action_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_action *out)
{
	struct buf in;
	enum record_error e;

	memset(out, 0, sizeof(*out));
	if ((e = record_begin_decode(&in, data, len, RECORD_ACTION)) != RECORD_OK)
		return e;
	if ((e = record_action_get(&in, limits, out)) == RECORD_OK &&
	    (e = record_end_decode(&in)) == RECORD_OK)
		return RECORD_OK;
	record_action_free(out);
	return e;
}

void
record_action_free(struct record_action *a)
{
	if (a == NULL)
		return;
	value_array_free(a->args, a->arg_count);
	memset(a, 0, sizeof(*a));
}
