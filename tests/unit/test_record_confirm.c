/*
 * The confirmation records (common/record_confirm.c): layout, round
 * trips, and the rules only they have (a verdict in range, a retyped
 * value only with an accept, the retyped flag 0 or 1).
 */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_samples.h"

static struct record_limits
limits(void)
{
	struct record_limits l;

	record_limits_default(&l);
	return l;
}

static struct record_confirm_answer
answer_sample(void)
{
	struct record_confirm_answer a;

	memset(&a, 0, sizeof(a));
	a.call_id = 0x0102030405060708ULL;
	a.verdict = RECORD_CONFIRM_ACCEPT;
	memset(a.challenge.nonce, 0x11, sizeof(a.challenge.nonce));
	a.challenge.expiry_ms = 0x0a0b0c0d0e0f1011ULL;
	memset(a.challenge.mac, 0x22, sizeof(a.challenge.mac));
	a.has_retyped = true;
	a.retyped.ptr = (char *)"-7 'x' \xc3\xa9";
	a.retyped.len = strlen(a.retyped.ptr);
	return a;
}

static struct sample
encode(const struct record_confirm_answer *a)
{
	struct record_limits l = limits();
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_answer_encode(a, &l, &b), RECORD_OK);
	return sample_take(&b);
}

Test(record_confirm, challenge_layout_and_roundtrip)
{
	struct record_confirm_challenge_msg in, out;
	struct buf b;

	memset(&in, 0, sizeof(in));
	in.call_id = 42;
	memset(in.challenge.nonce, 0xa1, sizeof(in.challenge.nonce));
	in.challenge.expiry_ms = 99;
	memset(in.challenge.mac, 0xb2, sizeof(in.challenge.mac));
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_challenge_encode(&in, &b), RECORD_OK);
	/* header 4, call id 8, nonce 16, expiry 8, mac 32 */
	cr_assert_eq(buf_len(&b), 68);
	cr_assert_eq(buf_ptr(&b)[3], RECORD_CONFIRM_CHALLENGE);
	cr_assert_eq(buf_ptr(&b)[12], 0xa1);
	cr_assert_eq(buf_ptr(&b)[35], 99);
	cr_assert_eq(record_confirm_challenge_decode(buf_ptr(&b), buf_len(&b),
	    &out), RECORD_OK);
	cr_assert_eq(memcmp(&in, &out, sizeof(in)), 0);
	cr_assert_eq(record_confirm_challenge_decode(buf_ptr(&b),
	    buf_len(&b) - 1, &out), RECORD_ERR_SHORT);
	buf_free(&b);
}

Test(record_confirm, answer_roundtrips_with_and_without_retyped)
{
	struct record_limits l = limits();
	struct record_confirm_answer in = answer_sample(), out;
	struct sample s = encode(&in);

	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	cr_assert_eq(out.call_id, in.call_id);
	cr_assert_eq(out.verdict, RECORD_CONFIRM_ACCEPT);
	cr_assert_eq(memcmp(&out.challenge, &in.challenge,
	    sizeof(in.challenge)), 0);
	cr_assert(out.has_retyped);
	cr_assert_eq(out.retyped.len, in.retyped.len);
	cr_assert_str_eq(out.retyped.ptr, in.retyped.ptr);
	record_confirm_answer_free(&out);
	free(s.bytes);
	in.has_retyped = false;
	in.verdict = RECORD_CONFIRM_UNSUPPORTED;
	s = encode(&in);
	/* header 4, call 8, verdict 1, challenge 56, flag 1 */
	cr_assert_eq(s.len, 70);
	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	cr_assert_not(out.has_retyped);
	cr_assert_eq(out.verdict, RECORD_CONFIRM_UNSUPPORTED);
	free(s.bytes);
}

Test(record_confirm, verdict_out_of_range_is_refused)
{
	static const uint8_t verdicts[] = { 0, 6, 0xff };
	struct record_limits l = limits();
	struct record_confirm_answer in = answer_sample(), out;
	struct sample s;
	struct buf b;
	size_t i;

	in.has_retyped = false;
	s = encode(&in);
	for (i = 0; i < sizeof(verdicts); i++) {
		s.bytes[12] = verdicts[i];
		cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l,
		    &out), RECORD_ERR_RANGE, "verdict %u", verdicts[i]);
	}
	s.bytes[12] = RECORD_CONFIRM_DECLINE;
	s.bytes[69] = 2;	/* the retyped flag */
	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	free(s.bytes);
	in.verdict = (enum record_confirm_verdict)7;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_answer_encode(&in, &l, &b),
	    RECORD_ERR_RANGE);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
}

/* Only an accept carries what the human typed. */
Test(record_confirm, retyped_without_accept_is_inconsistent)
{
	struct record_limits l = limits();
	struct record_confirm_answer in = answer_sample(), out;
	struct sample s = encode(&in);
	struct buf b;

	s.bytes[12] = RECORD_CONFIRM_DECLINE;
	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	free(s.bytes);
	in.verdict = RECORD_CONFIRM_CANCEL;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_answer_encode(&in, &l, &b),
	    RECORD_ERR_INCONSISTENT);
	buf_free(&b);
}

/*
 * The bound is the policy's string bound, but never below
 * RECORD_CONFIRM_RETYPED_MIN: a policy without string params still
 * takes the text of any integer.
 */
Test(record_confirm, retyped_bound_is_the_string_bound_with_a_floor)
{
	struct record_limits l = limits();
	struct record_confirm_answer in = answer_sample(), out;
	char text[RECORD_CONFIRM_RETYPED_MIN + 1];
	struct sample s;
	struct buf b;

	memset(text, '9', sizeof(text));
	in.retyped.ptr = text;
	in.retyped.len = RECORD_CONFIRM_RETYPED_MIN;
	s = encode(&in);
	l.max_arg_bytes = 0;
	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_confirm_answer_free(&out);
	free(s.bytes);
	in.retyped.len = RECORD_CONFIRM_RETYPED_MIN + 1;
	s = encode(&in);	/* default limits: fits */
	cr_assert_eq(record_confirm_answer_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	free(s.bytes);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_answer_encode(&in, &l, &b),
	    RECORD_ERR_TOO_LONG);
	buf_free(&b);
}

/* An approver says yes or no: nothing else travels as OPERATOR_ANSWER,
 * and its uid comes first, before the answer's own fields. */
Test(record_confirm, operator_answer_is_accept_or_decline_with_a_uid)
{
	struct record_limits l = limits();
	struct record_operator_answer in, out;
	enum record_confirm_verdict v;
	uint8_t raw[256];
	struct buf b;

	memset(&in, 0, sizeof(in));
	in.approver_uid = 4294967294u;
	in.answer = answer_sample();
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_answer_encode(&in, &l, &b), RECORD_OK);
	cr_assert_eq(buf_ptr(&b)[3], RECORD_OPERATOR_ANSWER);
	cr_assert_eq(buf_ptr(&b)[4], 0xff);
	cr_assert_eq(buf_ptr(&b)[7], 0xfe);
	cr_assert_eq(record_operator_answer_decode(buf_ptr(&b), buf_len(&b),
	    &l, &out), RECORD_OK);
	cr_assert_eq(out.approver_uid, in.approver_uid);
	cr_assert_eq(out.answer.call_id, in.answer.call_id);
	cr_assert_eq(out.answer.retyped.len, in.answer.retyped.len);
	cr_assert_arr_eq(out.answer.retyped.ptr, in.answer.retyped.ptr,
	    in.answer.retyped.len);
	record_operator_answer_free(&out);
	buf_free(&b);
	/* the verdict byte sits after header, uid and call id */
	in.answer.has_retyped = false;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_answer_encode(&in, &l, &b), RECORD_OK);
	cr_assert_lt(buf_len(&b), sizeof(raw));
	memcpy(raw, buf_ptr(&b), buf_len(&b));
	for (v = RECORD_CONFIRM_CANCEL; v <= RECORD_CONFIRM_RELAYED; v++) {
		raw[16] = (uint8_t)v;
		cr_assert_eq(record_operator_answer_decode(raw, buf_len(&b), &l,
		    &out), RECORD_ERR_RANGE, "verdict %d", v);
	}
	buf_free(&b);
	in.answer.has_retyped = false;
	in.answer.verdict = RECORD_CONFIRM_CANCEL;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_answer_encode(&in, &l, &b),
	    RECORD_ERR_RANGE);
	buf_free(&b);
	in.answer.verdict = RECORD_CONFIRM_DECLINE;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_answer_encode(&in, &l, &b), RECORD_OK);
	buf_free(&b);
}

Test(record_confirm, operator_ask_roundtrips_its_message)
{
	struct record_operator_ask in, out;
	struct buf b;

	memset(&in, 0, sizeof(in));
	in.call_id = 77;
	in.tool_index = 3;
	memset(in.challenge.mac, 0x33, sizeof(in.challenge.mac));
	in.message.ptr = (char *)"Delete \"$(id)\"\n-rf \xc3\xa9t\xc3\xa9";
	in.message.len = strlen(in.message.ptr);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_ask_encode(&in, &b), RECORD_OK);
	cr_assert_eq(record_operator_ask_decode(buf_ptr(&b), buf_len(&b),
	    &out), RECORD_OK);
	cr_assert_eq(out.call_id, 77);
	cr_assert_eq(out.tool_index, 3);
	cr_assert_arr_eq(out.challenge.mac, in.challenge.mac,
	    sizeof(in.challenge.mac));
	cr_assert_str_eq(out.message.ptr, in.message.ptr);
	record_operator_ask_free(&out);
	buf_free(&b);
}
