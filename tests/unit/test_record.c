#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"
#include "tests/unit/record_samples.h"

/*
 * Refusals every decoder shares, and the small records (hello, cancel,
 * audit ack).  Per-type tests are in test_record_*.c.
 */

/* ---- decoders with one signature, checking the failure contract ------- */

typedef enum record_error (*decode_fn)(const uint8_t *, size_t,
    const struct record_limits *);

static bool
all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

#define DECODE_WRAPPER(name, type, call, release)			\
static enum record_error						\
decode_##name(const uint8_t *d, size_t n, const struct record_limits *l) \
{									\
	type out;							\
	enum record_error e;						\
									\
	(void)l;							\
	memset(&out, 0xa5, sizeof(out));				\
	e = call;							\
	if (e != RECORD_OK)						\
		cr_assert(all_zero(&out, sizeof(out)),			\
		    #name ": output not zeroed on failure");		\
	release;							\
	return e;							\
}

DECODE_WRAPPER(hello, struct record_hello,
    record_hello_decode(d, n, &out), (void)0)
DECODE_WRAPPER(action, struct record_action,
    record_action_decode(d, n, l, &out), record_action_free(&out))
DECODE_WRAPPER(cancel, struct record_cancel,
    record_cancel_decode(d, n, &out), (void)0)
DECODE_WRAPPER(result, struct record_result,
    record_result_decode(d, n, l, &out), record_result_free(&out))
DECODE_WRAPPER(event, struct record_audit_event,
    record_audit_event_decode(d, n, l, &out), record_audit_event_free(&out))
DECODE_WRAPPER(ack, struct record_audit_ack,
    record_audit_ack_decode(d, n, &out), record_audit_ack_free(&out))
DECODE_WRAPPER(challenge, struct record_confirm_challenge_msg,
    record_confirm_challenge_decode(d, n, &out), (void)0)
DECODE_WRAPPER(answer, struct record_confirm_answer,
    record_confirm_answer_decode(d, n, l, &out),
    record_confirm_answer_free(&out))
DECODE_WRAPPER(op_ask, struct record_operator_ask,
    record_operator_ask_decode(d, n, &out), record_operator_ask_free(&out))
DECODE_WRAPPER(op_answer, struct record_operator_answer,
    record_operator_answer_decode(d, n, l, &out),
    record_operator_answer_free(&out))

static struct sample
encode_op_ask(const struct record_operator_ask *a)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_ask_encode(a, &b), RECORD_OK);
	return sample_take(&b);
}

static struct sample
encode_op_answer(const struct record_operator_answer *a,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_operator_answer_encode(a, l, &b), RECORD_OK);
	return sample_take(&b);
}

static struct sample
encode_challenge(const struct record_confirm_challenge_msg *m)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_challenge_encode(m, &b), RECORD_OK);
	return sample_take(&b);
}

static struct sample
encode_answer(const struct record_confirm_answer *a,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_confirm_answer_encode(a, l, &b), RECORD_OK);
	return sample_take(&b);
}

struct kind_case {
	const char *name;
	enum record_type type;
	decode_fn decode;
	struct sample s;
	const char *markers[6];	/* texts whose u32 length precedes them */
};

static void
cases_fill(struct kind_case *c)
{
	struct record_limits l = limits_default();
	struct record_hello hello = { .role = RECORD_ROLE_EXECUTOR };
	struct record_action action;
	struct value args[SAMPLE_ACTION_ARGS];
	struct record_cancel cancel = { .call_id = 0x8000000000000001ULL };
	struct record_result http, ssh;
	struct record_audit_event ev;
	struct record_audit_ack ack = { .call_id = 7,
	    .status = RECORD_AUDIT_FAILED };
	struct record_confirm_challenge_msg challenge = { .call_id = 9,
	    .challenge = { .expiry_ms = 120000 } };
	struct record_confirm_answer answer = { .call_id = 9,
	    .verdict = RECORD_CONFIRM_ACCEPT, .has_retyped = true,
	    .retyped = { (char *)"RT:\"$(id)\" \xc3\xa9", 12 } };
	struct record_operator_ask op_ask = { .call_id = 11, .tool_index = 2,
	    .message = { (char *)"OM:Create 3 x \"$(id)\"\n-x", 24 } };
	struct record_operator_answer op_answer = { .approver_uid = 1001 };

	fingerprint("hello", hello.fingerprint);
	sample_action_fill(&action, args);
	sample_http_fill(&http);
	sample_ssh_fill(&ssh);
	sample_event_fill(&ev);
	c[0] = (struct kind_case){ "hello", RECORD_HELLO, decode_hello,
	    encode_hello(&hello), { NULL } };
	c[1] = (struct kind_case){ "action", RECORD_ACTION, decode_action,
	    encode_action(&action, &l), { "A1:", "A2:", "A3:" } };
	c[2] = (struct kind_case){ "cancel", RECORD_CANCEL, decode_cancel,
	    encode_cancel(&cancel), { NULL } };
	c[3] = (struct kind_case){ "http result", RECORD_RESULT, decode_result,
	    encode_result(&http, &l), { "M1:", "CT:", "LO:", "BO:" } };
	c[4] = (struct kind_case){ "ssh result", RECORD_RESULT, decode_result,
	    encode_result(&ssh, &l), { "M2:", "TERM", "SO:", "SE:" } };
	c[5] = (struct kind_case){ "audit event", RECORD_AUDIT_EVENT,
	    decode_event, encode_event(&ev, &l),
	    { "upstream-", "S1:", "S2:", "S3:" } };
	c[6] = (struct kind_case){ "audit ack", RECORD_AUDIT_ACK, decode_ack,
	    encode_ack(&ack), { NULL } };
	memset(challenge.challenge.mac, 0x5c, HASH_SHA256_LEN);
	answer.challenge = challenge.challenge;
	c[7] = (struct kind_case){ "confirm challenge",
	    RECORD_CONFIRM_CHALLENGE, decode_challenge,
	    encode_challenge(&challenge), { NULL } };
	c[8] = (struct kind_case){ "confirm answer", RECORD_CONFIRM_ANSWER,
	    decode_answer, encode_answer(&answer, &l), { "RT:" } };
	op_ask.challenge = challenge.challenge;
	op_answer.answer = answer;
	c[9] = (struct kind_case){ "operator ask", RECORD_OPERATOR_ASK,
	    decode_op_ask, encode_op_ask(&op_ask), { "OM:" } };
	c[10] = (struct kind_case){ "operator answer", RECORD_OPERATOR_ANSWER,
	    decode_op_answer, encode_op_answer(&op_answer, &l), { "RT:" } };
}

#define CASE_COUNT 11

static void
cases_free(struct kind_case *c)
{
	size_t i;

	for (i = 0; i < CASE_COUNT; i++)
		free(c[i].s.bytes);
}

/* ---- refusals every decoder shares ----------------------------------- */

Test(record_all, each_sample_decodes)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l), RECORD_OK,
		    "%s", c[i].name);
	cases_free(c);
}

Test(record_all, truncated_at_every_offset_is_short)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, n;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (n = 0; n < c[i].s.len; n++)
			cr_assert_eq(c[i].decode(c[i].s.bytes, n, &l),
			    RECORD_ERR_SHORT, "%s cut at %zu of %zu", c[i].name,
			    n, c[i].s.len);
	cases_free(c);
}

Test(record_all, one_byte_more_is_trailing)
{
	static const uint8_t extra[] = { 0x00, 0x01, 0xff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < sizeof(extra); j++) {
			c[i].s.bytes[c[i].s.len] = extra[j];
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len + 1,
			    &l), RECORD_ERR_TRAILING, "%s + %#x", c[i].name,
			    extra[j]);
		}
	cases_free(c);
}

Test(record_all, another_version_is_refused_and_reported)
{
	static const uint16_t versions[] = { 0, 2, 0x0100, 0xffff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	uint16_t seen;
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < 4; j++) {
			put_u16_at(c[i].s.bytes, versions[j]);
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l),
			    RECORD_ERR_VERSION, "%s v%u", c[i].name,
			    versions[j]);
			cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &seen,
			    NULL), RECORD_ERR_VERSION);
			cr_assert_eq(seen, versions[j]);
		}
	cases_free(c);
}

Test(record_all, another_type_is_refused)
{
	static const uint16_t types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x0101,
	    0xffff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < sizeof(types) / sizeof(types[0]); j++) {
			if (types[j] == c[i].type)
				continue;
			put_u16_at(c[i].s.bytes + 2, types[j]);
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l),
			    RECORD_ERR_TYPE, "%s as type %u", c[i].name,
			    types[j]);
		}
	cases_free(c);
}

Test(record_all, above_the_record_cap_is_too_long)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	uint8_t *big;
	size_t i;

	cases_fill(c);
	big = calloc(1, RECORD_MAX_BYTES + 1);
	cr_assert_not_null(big);
	for (i = 0; i < CASE_COUNT; i++) {
		memcpy(big, c[i].s.bytes, c[i].s.len);
		cr_assert_eq(c[i].decode(big, RECORD_MAX_BYTES + 1, &l),
		    RECORD_ERR_TOO_LONG, "%s", c[i].name);
	}
	free(big);
	cases_free(c);
}

Test(record_all, each_length_field_corrupted_is_refused)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j, at, rest;
	uint32_t len;
	enum record_error e;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++) {
		uint8_t *r = c[i].s.bytes;

		for (j = 0; c[i].markers[j] != NULL; j++) {
			at = marker_offset(r, c[i].s.len, c[i].markers[j]) - 4;
			len = get_u32_at(r + at);
			rest = c[i].s.len - at - 4;

			put_u32_at(r + at, UINT32_MAX);
			cr_assert_eq(c[i].decode(r, c[i].s.len, &l),
			    RECORD_ERR_TOO_LONG, "%s %s", c[i].name,
			    c[i].markers[j]);
			put_u32_at(r + at, (uint32_t)rest + 1);
			e = c[i].decode(r, c[i].s.len, &l);
			cr_assert(e == RECORD_ERR_SHORT || e == RECORD_ERR_TOO_LONG,
			    "%s %s past the end: %s", c[i].name,
			    c[i].markers[j], record_error_str(e));
			put_u32_at(r + at, len + 1);
			cr_assert_neq(c[i].decode(r, c[i].s.len, &l), RECORD_OK,
			    "%s %s +1", c[i].name, c[i].markers[j]);
			put_u32_at(r + at, len - 1);
			cr_assert_neq(c[i].decode(r, c[i].s.len, &l), RECORD_OK,
			    "%s %s -1", c[i].name, c[i].markers[j]);
			put_u32_at(r + at, len);
			cr_assert_eq(c[i].decode(r, c[i].s.len, &l), RECORD_OK);
		}
	}
	cases_free(c);
}

Test(record_all, peek_names_the_type_of_each_sample)
{
	struct kind_case c[CASE_COUNT];
	enum record_type type;
	uint16_t version = 0;
	size_t i;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++) {
		cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &version,
		    &type), RECORD_OK);
		cr_assert_eq(type, c[i].type);
		cr_assert_eq(version, RECORD_VERSION);
		cr_assert_eq(record_peek(c[i].s.bytes, 3, NULL, NULL),
		    RECORD_ERR_SHORT);
		put_u16_at(c[i].s.bytes + 2, RECORD_TYPE_LAST + 1);
		cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &version,
		    &type), RECORD_ERR_TYPE);
		put_u16_at(c[i].s.bytes + 2, 0);
		cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &version,
		    &type), RECORD_ERR_TYPE);
		cr_assert_eq(type, c[i].type, "left as it was on failure");
	}
	cases_free(c);
}


/* ---- hello, cancel, audit ack ---------------------------------------- */

Test(record_hello, layout_is_as_documented_and_roundtrips)
{
	struct record_hello in = { .role = RECORD_ROLE_FRONTEND }, out;
	uint8_t want[4 + 1 + HASH_SHA256_LEN] = { 0, 1, 0, 1, 2 };
	enum record_role role;
	struct buf b;

	fingerprint("tools", in.fingerprint);
	memcpy(want + 5, in.fingerprint, HASH_SHA256_LEN);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&in, &b), RECORD_OK);
	cr_assert_eq(buf_len(&b), sizeof(want));
	cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
	buf_free(&b);
	for (role = RECORD_ROLE_BROKER; role <= RECORD_ROLE_EXECUTOR; role++) {
		want[4] = (uint8_t)role;
		cr_assert_eq(record_hello_decode(want, sizeof(want), &out),
		    RECORD_OK);
		cr_assert_eq(out.role, role);
		cr_assert_arr_eq(out.fingerprint, in.fingerprint,
		    HASH_SHA256_LEN);
	}
}

Test(record_hello, role_out_of_range_is_refused_both_ways)
{
	static const uint8_t roles[] = { 0, 4, 0xff };
	struct record_hello in = { .role = RECORD_ROLE_FRONTEND }, out;
	struct sample s;
	struct buf b;
	size_t i;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&in, &b), RECORD_OK);
	s = sample_take(&b);
	for (i = 0; i < sizeof(roles); i++) {
		s.bytes[4] = roles[i];
		cr_assert_eq(record_hello_decode(s.bytes, s.len, &out),
		    RECORD_ERR_RANGE, "role %u", roles[i]);
		in.role = (enum record_role)roles[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_hello_encode(&in, &b), RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
	free(s.bytes);
}

Test(record_cancel, layout_is_as_documented_and_roundtrips)
{
	static const uint64_t ids[] = { 0, 1, 0x0102030405060708ULL,
	    UINT64_MAX };
	uint8_t want[12] = { 0, 1, 0, 4 };
	struct record_cancel in, out;
	struct buf b;
	size_t i;

	for (i = 0; i < 4; i++) {
		in.call_id = ids[i];
		put_u32_at(want + 4, (uint32_t)(ids[i] >> 32));
		put_u32_at(want + 8, (uint32_t)ids[i]);
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_cancel_encode(&in, &b), RECORD_OK);
		cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
		cr_assert_eq(buf_len(&b), sizeof(want));
		cr_assert_eq(record_cancel_decode(buf_ptr(&b), buf_len(&b),
		    &out), RECORD_OK);
		cr_assert(record_cancel_equal(&in, &out));
		buf_free(&b);
	}
}

Test(record_audit_ack, layout_roundtrip_and_status_range)
{
	uint8_t want[25] = { 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0x30, 0x39,
	    RECORD_AUDIT_WRITTEN };
	struct record_audit_ack in = { .call_id = 12345,
	    .status = RECORD_AUDIT_WRITTEN }, out;
	static const uint8_t bad[] = { 0, 6, 0xff };
	struct buf b;
	size_t i;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_audit_ack_encode(&in, &b), RECORD_OK);
	cr_assert_eq(buf_len(&b), sizeof(want));
	cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
	buf_free(&b);
	cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
	    RECORD_OK);
	cr_assert(record_audit_ack_equal(&in, &out));
	record_audit_ack_free(&out);
	want[12] = RECORD_AUDIT_FAILED;
	cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
	    RECORD_OK);
	cr_assert_eq(out.status, RECORD_AUDIT_FAILED);
	record_audit_ack_free(&out);
	for (i = 0; i < sizeof(bad); i++) {
		want[12] = bad[i];
		cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
		    RECORD_ERR_RANGE, "status %u", bad[i]);
		in.status = (enum record_audit_ack_status)bad[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_audit_ack_encode(&in, &b), RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
}

static enum record_error
ack_roundtrip(const struct record_audit_ack *in)
{
	struct record_audit_ack out;
	struct buf b;
	enum record_error e;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	if ((e = record_audit_ack_encode(in, &b)) == RECORD_OK) {
		cr_assert_eq(record_audit_ack_decode(buf_ptr(&b), buf_len(&b),
		    &out), RECORD_OK);
		cr_assert(record_audit_ack_equal(in, &out));
		record_audit_ack_free(&out);
	}
	buf_free(&b);
	return e;
}

/* A refusal says why, a duplicate names its first call; nothing else does. */
Test(record_audit_ack, denied_has_a_message_and_duplicate_a_first_call)
{
	struct record_audit_ack a = { .call_id = 9,
	    .status = RECORD_AUDIT_DENIED,
	    .message = { .ptr = "denied by limit per_day: 2 of 2 \"q\"\n",
	    .len = 36 } };

	cr_assert_eq(ack_roundtrip(&a), RECORD_OK);
	a.message.len = 0;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
	a.status = RECORD_AUDIT_DUPLICATE;
	a.first_call_id = 3;
	cr_assert_eq(ack_roundtrip(&a), RECORD_OK);
	a.first_call_id = 9;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT, "itself");
	a.first_call_id = 0;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
	a.status = RECORD_AUDIT_WRITTEN;
	a.first_call_id = 3;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
	a.first_call_id = 0;
	a.message.len = 6;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
	/* WRITTEN may carry the idempotency key, 64 hex digits */
	a.message.ptr = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	a.message.len = 64;
	cr_assert_eq(ack_roundtrip(&a), RECORD_OK);
	a.status = RECORD_AUDIT_FAILED;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
	a.status = RECORD_AUDIT_REPLAY;
	cr_assert_eq(ack_roundtrip(&a), RECORD_OK);
	a.message.len = 0;
	cr_assert_eq(ack_roundtrip(&a), RECORD_ERR_INCONSISTENT);
}


static decode_fn
decoder_for(enum record_type type)
{
	switch (type) {
	case RECORD_HELLO:
		return decode_hello;
	case RECORD_ACTION:
		return decode_action;
	case RECORD_RESULT:
		return decode_result;
	case RECORD_CANCEL:
		return decode_cancel;
	case RECORD_AUDIT_EVENT:
		return decode_event;
	case RECORD_AUDIT_ACK:
		return decode_ack;
	case RECORD_CONFIRM_CHALLENGE:
		return decode_challenge;
	case RECORD_CONFIRM_ANSWER:
		return decode_answer;
	case RECORD_OPERATOR_ASK:
		return decode_op_ask;
	case RECORD_OPERATOR_ANSWER:
		return decode_op_answer;
	}
	return NULL;
}

static void
seed_check(const char *path)
{
	struct record_limits l = limits_default();
	uint8_t bytes[4096];
	enum record_type type;
	FILE *f;
	size_t n;

	f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	n = fread(bytes, 1, sizeof(bytes), f);
	fclose(f);
	cr_assert_eq(record_peek(bytes, n, NULL, &type), RECORD_OK, "%s", path);
	cr_assert_eq(decoder_for(type)(bytes, n, &l), RECORD_OK, "%s", path);
}

/* A layout change must come with new seeds (tests/fuzz/make_record_corpus). */
Test(record_all, every_fuzz_seed_is_a_current_record)
{
	const char *srcdir = getenv("SP_SRCDIR");
	char dir[4096], path[4096 + 256];
	struct dirent *d;
	DIR *dp;
	size_t seeds = 0;

	if (srcdir == NULL)
		cr_skip_test("SP_SRCDIR is not set (run through make check)");
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/fuzz_record", srcdir);
	dp = opendir(dir);
	cr_assert_not_null(dp, "%s", dir);
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		seed_check(path);
		seeds++;
	}
	closedir(dp);
	cr_assert_geq(seeds, 6, "one seed per record type at least");
}
