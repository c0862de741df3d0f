/*
 * libFuzzer target for every record decoder.  Each input goes to all ten
 * decoders; the one whose type it carries must either refuse it or give a
 * struct that encodes back to exactly the input bytes (the encoding is
 * canonical) and decodes again to an equal struct.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"

/* Aborts unless encoded is the very input it was decoded from. */
static void
fuzz_same_bytes(const struct buf *encoded, const uint8_t *data, size_t size)
{
	if (buf_len(encoded) != size ||
	    memcmp(buf_ptr(encoded), data, size) != 0)
		abort();
}

static void
fuzz_hello(const uint8_t *data, size_t size)
{
	struct record_hello a, b;
	struct buf out;

	if (record_hello_decode(data, size, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_hello_encode(&a, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_hello_decode(buf_ptr(&out), buf_len(&out), &b) != RECORD_OK ||
	    !record_hello_equal(&a, &b))
		abort();
	buf_free(&out);
}

static void
fuzz_action(const uint8_t *data, size_t size, const struct record_limits *l)
{
	struct record_action a, b;
	struct buf out;

	if (record_action_decode(data, size, l, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_action_encode(&a, l, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_action_decode(buf_ptr(&out), buf_len(&out), l, &b) !=
	    RECORD_OK || !record_action_equal(&a, &b))
		abort();
	record_action_free(&a);
	record_action_free(&b);
	buf_free(&out);
}

static void
fuzz_cancel(const uint8_t *data, size_t size)
{
	struct record_cancel a, b;
	struct buf out;

	if (record_cancel_decode(data, size, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_cancel_encode(&a, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_cancel_decode(buf_ptr(&out), buf_len(&out), &b) !=
	    RECORD_OK || !record_cancel_equal(&a, &b))
		abort();
	buf_free(&out);
}

static void
fuzz_result(const uint8_t *data, size_t size, const struct record_limits *l)
{
	struct record_result a, b;
	struct buf out;

	if (record_result_decode(data, size, l, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_result_encode(&a, l, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_result_decode(buf_ptr(&out), buf_len(&out), l, &b) !=
	    RECORD_OK || !record_result_equal(&a, &b))
		abort();
	record_result_free(&a);
	record_result_free(&b);
	buf_free(&out);
}

static void
fuzz_event(const uint8_t *data, size_t size, const struct record_limits *l)
{
	struct record_audit_event a, b;
	struct buf out;

	if (record_audit_event_decode(data, size, l, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_audit_event_encode(&a, l, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_audit_event_decode(buf_ptr(&out), buf_len(&out), l, &b) !=
	    RECORD_OK || !record_audit_event_equal(&a, &b))
		abort();
	record_audit_event_free(&a);
	record_audit_event_free(&b);
	buf_free(&out);
}

static void
fuzz_ack(const uint8_t *data, size_t size)
{
	struct record_audit_ack a, b;
	struct buf out;

	if (record_audit_ack_decode(data, size, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_audit_ack_encode(&a, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_audit_ack_decode(buf_ptr(&out), buf_len(&out), &b) !=
	    RECORD_OK || !record_audit_ack_equal(&a, &b))
		abort();
	buf_free(&out);
	record_audit_ack_free(&a);
	record_audit_ack_free(&b);
}

static void
fuzz_challenge(const uint8_t *data, size_t size)
{
	struct record_confirm_challenge_msg a, b;
	struct buf out;

	if (record_confirm_challenge_decode(data, size, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_confirm_challenge_encode(&a, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_confirm_challenge_decode(buf_ptr(&out), buf_len(&out), &b) !=
	    RECORD_OK || memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	buf_free(&out);
}

static void
fuzz_answer(const uint8_t *data, size_t size, const struct record_limits *l)
{
	struct record_confirm_answer a, b;
	struct buf out;

	if (record_confirm_answer_decode(data, size, l, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_confirm_answer_encode(&a, l, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_confirm_answer_decode(buf_ptr(&out), buf_len(&out), l,
	    &b) != RECORD_OK || a.call_id != b.call_id ||
	    a.verdict != b.verdict || a.has_retyped != b.has_retyped ||
	    memcmp(&a.challenge, &b.challenge, sizeof(a.challenge)) != 0 ||
	    a.retyped.len != b.retyped.len || (a.retyped.len > 0 &&
	    memcmp(a.retyped.ptr, b.retyped.ptr, a.retyped.len) != 0))
		abort();
	record_confirm_answer_free(&a);
	record_confirm_answer_free(&b);
	buf_free(&out);
}

static void
fuzz_op_ask(const uint8_t *data, size_t size)
{
	struct record_operator_ask a, b;
	struct buf out;

	if (record_operator_ask_decode(data, size, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_operator_ask_encode(&a, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_operator_ask_decode(buf_ptr(&out), buf_len(&out), &b) !=
	    RECORD_OK || a.call_id != b.call_id ||
	    a.tool_index != b.tool_index ||
	    memcmp(&a.challenge, &b.challenge, sizeof(a.challenge)) != 0 ||
	    a.message.len != b.message.len || (a.message.len > 0 &&
	    memcmp(a.message.ptr, b.message.ptr, a.message.len) != 0))
		abort();
	record_operator_ask_free(&a);
	record_operator_ask_free(&b);
	buf_free(&out);
}

static void
fuzz_op_answer(const uint8_t *data, size_t size,
    const struct record_limits *l)
{
	struct record_operator_answer a, b;
	struct buf out;

	if (record_operator_answer_decode(data, size, l, &a) != RECORD_OK)
		return;
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (record_operator_answer_encode(&a, l, &out) != RECORD_OK)
		abort();
	fuzz_same_bytes(&out, data, size);
	if (record_operator_answer_decode(buf_ptr(&out), buf_len(&out), l,
	    &b) != RECORD_OK || a.approver_uid != b.approver_uid ||
	    a.answer.call_id != b.answer.call_id ||
	    a.answer.verdict != b.answer.verdict ||
	    a.answer.retyped.len != b.answer.retyped.len)
		abort();
	record_operator_answer_free(&a);
	record_operator_answer_free(&b);
	buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record_limits limits;

	/* Small limits too, so the limit checks are reached by short inputs. */
	record_limits_default(&limits);
	if (size % 2 == 1) {
		limits.max_args = 4;
		limits.max_arg_bytes = 16;
		limits.max_payload_bytes = 32;
		limits.max_text_bytes = 16;
	}
	fuzz_hello(data, size);
	fuzz_action(data, size, &limits);
	fuzz_cancel(data, size);
	fuzz_result(data, size, &limits);
	fuzz_event(data, size, &limits);
	fuzz_ack(data, size);
	fuzz_challenge(data, size);
	fuzz_answer(data, size, &limits);
	fuzz_op_ask(data, size);
	fuzz_op_answer(data, size, &limits);
	return 0;
}
