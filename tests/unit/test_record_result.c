#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"
#include "tests/unit/record_samples.h"

/* The result record: layout, roundtrips and each refusal. */

static void
result_roundtrip(const struct record_result *in, const struct record_limits *l)
{
	struct record_result out;
	struct sample s = encode_result(in, l);

	cr_assert_eq(record_result_decode(s.bytes, s.len, l, &out), RECORD_OK);
	cr_assert(record_result_equal(in, &out));
	/* Decoded texts are C strings of their length. */
	cr_assert_eq(strlen(out.message.ptr), out.message.len);
	record_result_free(&out);
	cr_assert_null(out.message.ptr);
	free(s.bytes);
}

Test(record_result, http_ssh_and_none_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_result r;
	enum record_outcome o;

	sample_http_fill(&r);
	result_roundtrip(&r, &l);
	sample_ssh_fill(&r);
	result_roundtrip(&r, &l);
	r.ssh.end = RECORD_SSH_END_EXIT;
	r.ssh.signal = text("");
	r.ssh.exit_status = -1;
	result_roundtrip(&r, &l);
	r.ssh.exit_status = 255;
	result_roundtrip(&r, &l);
	for (o = RECORD_OUTCOME_OK; o <= RECORD_OUTCOME_INVALID; o++) {
		memset(&r, 0, sizeof(r));
		r.outcome = o;
		r.message = text("MN:denied by \"scope\"\n\xe2\x9b\x94");
		result_roundtrip(&r, &l);
	}
}

Test(record_result, zero_values_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_OK,
	    .kind = RECORD_RESULT_HTTP };

	result_roundtrip(&r, &l);
	r.kind = RECORD_RESULT_SSH;
	result_roundtrip(&r, &l);
	r.kind = RECORD_RESULT_NONE;
	result_roundtrip(&r, &l);
}

Test(record_result, payloads_at_the_cap_roundtrip_with_any_byte)
{
	struct record_limits l = limits_default();
	uint8_t *big = malloc(RECORD_PAYLOAD_CAP);
	char *msg = malloc(RECORD_TEXT_CAP + 1);
	struct record_result r;
	size_t i;

	cr_assert_not_null(big);
	cr_assert_not_null(msg);
	for (i = 0; i < RECORD_PAYLOAD_CAP; i++)
		big[i] = (uint8_t)(i * 7);
	memset(msg, 'm', RECORD_TEXT_CAP);
	msg[RECORD_TEXT_CAP] = '\0';
	sample_http_fill(&r);
	r.message = text(msg);
	r.http.body = blob(big, RECORD_PAYLOAD_CAP);
	r.http.body_total = RECORD_PAYLOAD_CAP;
	result_roundtrip(&r, &l);
	sample_ssh_fill(&r);
	r.ssh.out = blob(big, RECORD_PAYLOAD_CAP);
	r.ssh.err = blob(big, RECORD_PAYLOAD_CAP);
	r.ssh.out_total = r.ssh.err_total = UINT64_MAX;
	result_roundtrip(&r, &l);
	free(big);
	free(msg);
}

Test(record_result, limits_come_from_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;

	sample_http_fill(&r);
	s = encode_result(&r, &l);
	l.max_payload_bytes = r.http.body.len - 1;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_TOO_LONG);
	l.max_payload_bytes = r.http.body.len;
	/* The content type is the longest text of the sample. */
	cr_assert_gt(r.http.content_type.len, r.message.len);
	cr_assert_gt(r.http.content_type.len, r.http.location.len);
	l.max_text_bytes = r.http.content_type.len - 1;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_TOO_LONG);
	l.max_text_bytes = r.http.content_type.len;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	free(s.bytes);
}

/* A result with an empty message: outcome at 12, kind 13, flags 14..17. */
Test(record_result, outcome_kind_and_flags_out_of_range_are_refused)
{
	static const uint8_t outcomes[] = { 0, 6, 0xff };
	static const uint32_t flags[] = { 0x40, 0x100, 0x80000000U };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_DENIED }, out;
	struct sample s = encode_result(&r, &l);
	size_t i;

	cr_assert_eq(s.len, 30);
	for (i = 0; i < sizeof(outcomes); i++) {
		s.bytes[12] = outcomes[i];
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "outcome %u", outcomes[i]);
	}
	s.bytes[12] = RECORD_OUTCOME_DENIED;
	s.bytes[13] = 3;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[13] = RECORD_RESULT_NONE;
	for (i = 0; i < 3; i++) {
		put_u32_at(s.bytes + 14, flags[i]);
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "flags %#x", flags[i]);
	}
	put_u32_at(s.bytes + 14, RESULT_HAS_RETRY_AFTER);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "Retry-After without HTTP");
	put_u32_at(s.bytes + 14, RESULT_REQUEST_SENT | RESULT_STARTED);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	free(s.bytes);
}

/*
 * RESULT_WITHHELD (a reflected credential replaced by the executor) is a
 * flag of every kind, alone or with the others, in both directions; the
 * bit above it is still refused.
 */
Test(record_result, withheld_flag_roundtrips_on_every_kind)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;

	sample_http_fill(&r);
	r.flags |= RESULT_WITHHELD;
	result_roundtrip(&r, &l);
	sample_ssh_fill(&r);
	r.flags = RESULT_WITHHELD;
	result_roundtrip(&r, &l);
	memset(&r, 0, sizeof(r));
	r.outcome = RECORD_OUTCOME_FAILED;
	r.flags = RESULT_WITHHELD | RESULT_STARTED | RESULT_REQUEST_SENT;
	r.message = text("HTTP 0: [credential withheld]");
	s = encode_result(&r, &l);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.flags, RESULT_WITHHELD | RESULT_STARTED |
	    RESULT_REQUEST_SENT);
	record_result_free(&out);
	r.flags = RESULT_FLAGS_ALL + 1;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_RANGE);
	free(s.bytes);
}

/* A duplicate's answer names the first call, and only it does. */
Test(record_result, duplicate_of_travels_only_with_its_flag)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s, plain;

	sample_http_fill(&r);
	plain = encode_result(&r, &l);
	r.flags |= RESULT_DUPLICATE;
	r.duplicate_of = 0x0102030405060708ULL;
	result_roundtrip(&r, &l);
	s = encode_result(&r, &l);
	cr_assert_eq(s.len, plain.len + 8);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.duplicate_of, r.duplicate_of);
	record_result_free(&out);
	r.duplicate_of = 0;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_INCONSISTENT);
	r.flags &= ~RESULT_DUPLICATE;
	r.duplicate_of = 7;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_INCONSISTENT);
	r.flags |= RESULT_DUPLICATE;
	r.duplicate_of = r.call_id;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_INCONSISTENT);
	free(s.bytes);
	free(plain.bytes);
}

/*
 * An HTTP result with empty texts: status at 30, Retry-After 32..35, body
 * length 44..47, body from 48; then body total, connect, first byte.
 */
Test(record_result, http_fields_that_disagree_are_refused)
{
	static const uint16_t statuses[] = { 1, 99, 600, 0xffff };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_OK,
	    .kind = RECORD_RESULT_HTTP }, out;
	struct sample s;
	size_t i;

	r.http.status = 200;
	r.http.body = blob("a\"\0", 3);
	r.http.body_total = 3;
	s = encode_result(&r, &l);
	cr_assert_eq(s.len, 48 + 3 + 24);
	for (i = 0; i < 4; i++) {
		put_u16_at(s.bytes + 30, statuses[i]);
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "status %u", statuses[i]);
	}
	put_u16_at(s.bytes + 30, 0);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	put_u16_at(s.bytes + 30, 599);
	put_u32_at(s.bytes + 32, 30);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "Retry-After without its flag");
	put_u32_at(s.bytes + 14, RESULT_HAS_RETRY_AFTER);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	put_u32_at(s.bytes + 51 + 4, 2);	/* body total 2 < 3 shown */
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	free(s.bytes);

	r.http.status = 100;
	r.http.body_total = 2;
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_INCONSISTENT);
	r.http.body_total = 3;
	r.http.status = 600;
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_RANGE);
}

/*
 * An SSH result with an empty message: end at 30, exit status 31..34,
 * signal length 35..38, signal bytes from 39.
 */
Test(record_result, ssh_end_exit_status_and_signal_must_agree)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_FAILED,
	    .kind = RECORD_RESULT_SSH }, out;
	struct sample s;

	/* No end: neither exit status nor signal. */
	s = encode_result(&r, &l);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	put_u32_at(s.bytes + 31, 1);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	s.bytes[30] = RECORD_SSH_END_EXIT;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	s.bytes[30] = RECORD_SSH_END_SIGNAL;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "signal end with no signal");
	s.bytes[30] = 3;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	free(s.bytes);

	r.ssh.end = RECORD_SSH_END_SIGNAL;
	r.ssh.signal = text("KILL");
	s = encode_result(&r, &l);
	s.bytes[30] = RECORD_SSH_END_EXIT;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "exit with a signal");
	s.bytes[30] = RECORD_SSH_END_NONE;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "no end with a signal");
	s.bytes[30] = RECORD_SSH_END_SIGNAL;
	put_u32_at(s.bytes + 31, 137);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "signal with an exit status");
	free(s.bytes);

	r.ssh.exit_status = 9;
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_INCONSISTENT);
}

Test(record_result, signal_name_outside_its_alphabet_is_refused)
{
	static const char bad[] = { 'k', ' ', '"', '\n', '\0', '-', '$',
	    (char)0xc3 };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_FAILED,
	    .kind = RECORD_RESULT_SSH, .ssh.end = RECORD_SSH_END_SIGNAL }, out;
	char name[RECORD_TOKEN_MAX + 2];
	struct sample s;
	size_t i;

	r.ssh.signal = text("KILL");
	s = encode_result(&r, &l);
	for (i = 0; i < sizeof(bad); i++) {
		s.bytes[40] = (uint8_t)bad[i];
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "byte %#x", (unsigned)(uint8_t)bad[i]);
	}
	free(s.bytes);
	r.ssh.signal = text("Kill");
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_CHAR);

	memset(name, 'X', sizeof(name));
	name[RECORD_TOKEN_MAX] = '\0';
	r.ssh.signal = text(name);
	result_roundtrip(&r, &l);
	name[RECORD_TOKEN_MAX] = 'X';
	name[RECORD_TOKEN_MAX + 1] = '\0';
	r.ssh.signal = text(name);
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_TOO_LONG);
}

Test(record_result, stream_totals_below_what_is_shown_are_refused)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;

	sample_ssh_fill(&r);
	s = encode_result(&r, &l);
	/* err_total is the last field, out_total precedes stderr. */
	put_u32_at(s.bytes + s.len - 8, 0);
	put_u32_at(s.bytes + s.len - 4, (uint32_t)r.ssh.err.len - 1);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	put_u32_at(s.bytes + s.len - 4, (uint32_t)r.ssh.err.len);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	free(s.bytes);

	r.ssh.out_total = r.ssh.out.len - 1;
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_INCONSISTENT);
}

Test(record_result, nul_inside_a_text_is_refused_but_allowed_in_bodies)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;
	size_t at;

	sample_http_fill(&r);
	s = encode_result(&r, &l);
	at = marker_offset(s.bytes, s.len, "CT:");
	s.bytes[at + 5] = '\0';
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	s.bytes[at + 5] = 'x';
	at = marker_offset(s.bytes, s.len, "M1:");
	s.bytes[at + 3] = '\0';
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	free(s.bytes);

	r.http.location = (struct record_text){ .ptr = (char *)"/a\0b",
	    .len = 4 };
	cr_assert_eq(encode_result_status(&r, &l),
	    RECORD_ERR_CHAR);
	cr_assert_not_null(memchr(sample_body, '\0', sample_body_len));
}

Test(record_result, encoder_refuses_outcome_none)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_NONE };
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_result_encode(&r, &l, &b), RECORD_ERR_RANGE);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
}


Test(record_result, kind_decides_what_follows)
{
	static const uint8_t kinds[] = { 3, 0x80, 0xff };
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;
	size_t i;

	/* An unknown kind with fields after it is out of range, not long. */
	sample_http_fill(&r);
	s = encode_result(&r, &l);
	for (i = 0; i < sizeof(kinds); i++) {
		s.bytes[13] = kinds[i];
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "kind %u", kinds[i]);
	}
	/* HTTP fields read as SSH ones do not make a result. */
	s.bytes[13] = RECORD_RESULT_SSH;
	cr_assert_neq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	free(s.bytes);

	/* Retry-After belongs to HTTP alone. */
	sample_ssh_fill(&r);
	s = encode_result(&r, &l);
	put_u32_at(s.bytes + 14, r.flags | RESULT_HAS_RETRY_AFTER);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	free(s.bytes);
	r.flags |= RESULT_HAS_RETRY_AFTER;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_INCONSISTENT);
	r.kind = RECORD_RESULT_NONE;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_INCONSISTENT);
	r.kind = 3;
	cr_assert_eq(encode_result_status(&r, &l), RECORD_ERR_RANGE);
}
