#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"
#include "tests/unit/record_samples.h"

/* The audit event record: roundtrips and each refusal. */

static void
event_roundtrip(const struct record_audit_event *in,
    const struct record_limits *l)
{
	struct record_audit_event out;
	struct sample s = encode_event(in, l);

	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, l, &out),
	    RECORD_OK);
	cr_assert(record_audit_event_equal(in, &out));
	record_audit_event_free(&out);
	cr_assert_null(out.shapes);
	free(s.bytes);
}

Test(record_audit_event, every_kind_roundtrips)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev;

	sample_event_fill(&ev);
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.flags = AUDIT_HAS_SHA256;
	ev.frame_no = UINT64_MAX;
	ev.reason = text("not-utf8");
	ev.code = -32700;
	fingerprint("\xff\xfe{\"jsonrpc\"", ev.sha256);
	event_roundtrip(&ev, &l);

	/* A refused call of a known tool: method, tool and shapes. */
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.flags = AUDIT_HAS_TOOL;
	ev.reason = text("scope-denied");
	ev.method = text("tools/call");
	ev.tool_index = 0;
	ev.shapes = sample_event_shapes;
	ev.shape_count = 3;
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CLIENT;
	ev.method = text("initialize");
	ev.shapes = sample_event_shapes;
	ev.shape_count = RECORD_AUDIT_CLIENT_TEXTS;
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	ev.call_id = 1;
	ev.tool_index = 0;
	ev.shapes = sample_event_shapes;
	ev.shape_count = 3;
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_VIOLATION;
	ev.reason = text("record-trailing");
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CANCELLATION;
	ev.flags = AUDIT_STARTED;
	ev.call_id = 0x7fffffffffffffffULL;
	ev.tool_index = UINT32_MAX;
	event_roundtrip(&ev, &l);
}

Test(record_audit_event, as_many_shapes_as_the_cap_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_text shapes[RECORD_ARGS_CAP];
	char strings[RECORD_ARGS_CAP][24];
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .shapes = shapes, .shape_count = RECORD_ARGS_CAP };
	size_t i;

	for (i = 0; i < RECORD_ARGS_CAP; i++) {
		snprintf(strings[i], sizeof(strings[i]), "string(%zu) \"\xc3\xa9\"",
		    i);
		shapes[i] = text(strings[i]);
	}
	event_roundtrip(&ev, &l);
}

/*
 * A minimal event (empty reason, no sha256, no shapes): kind at 4, flags
 * 5, reason length 14..17, code 18..21, method length 22..25, outcome 38,
 * shape count 51..52.
 */
Test(record_audit_event, kind_flags_and_outcome_out_of_range_are_refused)
{
	static const uint8_t kinds[] = { 0, RECORD_AUDIT_CONFIRMATION + 1,
	    0xff };
	static const uint8_t flags[] = { 0x08, 0x80, 0xff };
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_EXECUTION,
	    .outcome = RECORD_OUTCOME_OK }, out;
	struct sample s = encode_event(&ev, &l);
	size_t i;

	cr_assert_eq(s.len, 55);
	for (i = 0; i < 3; i++) {
		s.bytes[4] = kinds[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "kind %u", kinds[i]);
	}
	s.bytes[4] = RECORD_AUDIT_EXECUTION;
	for (i = 0; i < 3; i++) {
		s.bytes[5] = flags[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "flags %#x", flags[i]);
	}
	s.bytes[5] = AUDIT_STARTED;
	s.bytes[38] = 6;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[38] = RECORD_OUTCOME_NONE;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "an execution without an outcome");
	s.bytes[4] = RECORD_AUDIT_INTENT;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_audit_event_free(&out);
	s.bytes[38] = RECORD_OUTCOME_OK;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "an intent with an outcome");
	free(s.bytes);

	ev.kind = RECORD_AUDIT_REJECTION;
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_INCONSISTENT);
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.flags = 0x10;
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_RANGE);
}

Test(record_audit_event, sha256_flag_decides_whether_the_bytes_are_there)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev, out;
	struct sample s;

	sample_event_fill(&ev);
	s = encode_event(&ev, &l);
	s.bytes[5] &= (uint8_t)~AUDIT_HAS_SHA256;
	cr_assert_neq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	free(s.bytes);

	ev.flags &= ~AUDIT_HAS_SHA256;
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_INCONSISTENT, "sha256 bytes without the flag");
	memset(ev.sha256, 0, sizeof(ev.sha256));
	s = encode_event(&ev, &l);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_audit_event_free(&out);
	free(s.bytes);

	/* The flag on a minimal event asks for 32 bytes it does not have. */
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	s = encode_event(&ev, &l);
	s.bytes[5] |= AUDIT_HAS_SHA256;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	free(s.bytes);
}

Test(record_audit_event, reason_outside_its_alphabet_is_refused)
{
	static const char bad[] = { 'A', ' ', '"', '\n', '\0', '_', '{', '\\',
	    (char)0xe2 };
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION }, out;
	char reason[RECORD_TOKEN_MAX + 2];
	struct sample s;
	size_t i;

	ev.reason = text("bad-frame");
	s = encode_event(&ev, &l);
	for (i = 0; i < sizeof(bad); i++) {
		s.bytes[18 + 3] = (uint8_t)bad[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "byte %#x", (unsigned)(uint8_t)bad[i]);
	}
	free(s.bytes);
	ev.reason = text("Bad frame");
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_CHAR);

	memset(reason, 'z', sizeof(reason));
	reason[RECORD_TOKEN_MAX] = '\0';
	ev.reason = text(reason);
	event_roundtrip(&ev, &l);
	reason[RECORD_TOKEN_MAX] = 'z';
	reason[RECORD_TOKEN_MAX + 1] = '\0';
	ev.reason = text(reason);
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_TOO_LONG);
}

Test(record_audit_event, shapes_are_bounded_by_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev, out;
	struct sample s;
	size_t at;

	sample_event_fill(&ev);
	s = encode_event(&ev, &l);
	l.max_args = 2;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	cr_assert_eq(encode_event_status(&ev, &l),
	    RECORD_ERR_TOO_LONG);
	l.max_args = 3;
	l.max_text_bytes = 12;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_text_bytes = 13;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_audit_event_free(&out);

	/* Shape count: one more runs out, one fewer leaves bytes behind. */
	l = limits_default();
	at = marker_offset(s.bytes, s.len, "S1:") - 6;
	put_u16_at(s.bytes + at, 4);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	put_u16_at(s.bytes + at, 2);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TRAILING);
	put_u16_at(s.bytes + at, RECORD_ARGS_CAP + 1);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	put_u16_at(s.bytes + at, 3);

	at = marker_offset(s.bytes, s.len, "S2:");
	s.bytes[at + 4] = '\0';
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	free(s.bytes);
}


Test(record_audit_event, method_outside_its_alphabet_is_refused)
{
	static const char bad[] = { ' ', '"', '\n', '.', '{', '\\', '$',
	    (char)0xe2 };
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION }, out;
	struct sample s;
	size_t i;

	ev.method = text("notifications/cancelled_X-1");
	event_roundtrip(&ev, &l);
	ev.method = text("tools/call");
	s = encode_event(&ev, &l);
	for (i = 0; i < sizeof(bad); i++) {
		s.bytes[22 + 4 + 5] = (uint8_t)bad[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "byte %#x", (unsigned)(uint8_t)bad[i]);
	}
	free(s.bytes);
	ev.method = text("tools call");
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_CHAR);
}

Test(record_audit_event, tool_flag_and_client_texts_are_checked)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_VIOLATION,
	    .flags = AUDIT_HAS_TOOL }, out;
	struct sample s;

	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT,
	    "only a rejection says whether it names a tool");
	ev.kind = RECORD_AUDIT_REJECTION;
	s = encode_event(&ev, &l);
	s.bytes[4] = RECORD_AUDIT_CANCELLATION;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	free(s.bytes);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CLIENT;
	ev.shapes = sample_event_shapes;
	ev.shape_count = 2;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT);
	/* Three texts, even where the policy allows one argument. */
	ev.shape_count = RECORD_AUDIT_CLIENT_TEXTS;
	l.max_args = 1;
	event_roundtrip(&ev, &l);
	/* A rejection lists what the client sent, up to the cap alone. */
	ev.kind = RECORD_AUDIT_REJECTION;
	event_roundtrip(&ev, &l);
	ev.kind = RECORD_AUDIT_INTENT;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_TOO_LONG);
}

/* Digests: one per shape or none, on an intent or a confirmation (a
 * journaled "asked"); no other kind has them. */
Test(record_audit_event, only_an_intent_carries_one_digest_per_shape)
{
	struct record_limits l = limits_default();
	uint8_t digests[SAMPLE_EVENT_SHAPES][HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct sample plain, s;
	size_t i;

	sample_event_fill(&ev);
	ev.kind = RECORD_AUDIT_INTENT;
	ev.outcome = RECORD_OUTCOME_NONE;
	plain = encode_event(&ev, &l);
	for (i = 0; i < SAMPLE_EVENT_SHAPES; i++)
		hash_sha256(&i, sizeof(i), digests[i]);
	ev.digests = digests;
	ev.digest_count = SAMPLE_EVENT_SHAPES;
	event_roundtrip(&ev, &l);
	s = encode_event(&ev, &l);
	cr_assert_eq(s.len, plain.len + SAMPLE_EVENT_SHAPES * HASH_SHA256_LEN);
	/* a count above the shapes' is refused before anything is read */
	s.bytes[s.len - SAMPLE_EVENT_SHAPES * HASH_SHA256_LEN - 1] =
	    SAMPLE_EVENT_SHAPES + 1;
	{
		struct record_audit_event out;

		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l,
		    &out), RECORD_ERR_TOO_LONG);
	}
	ev.digest_count = SAMPLE_EVENT_SHAPES - 1;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT);
	ev.digest_count = SAMPLE_EVENT_SHAPES;
	ev.kind = RECORD_AUDIT_CONFIRMATION;
	event_roundtrip(&ev, &l);
	ev.digest_count = SAMPLE_EVENT_SHAPES - 1;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT);
	ev.digest_count = SAMPLE_EVENT_SHAPES;
	ev.kind = RECORD_AUDIT_CANCELLATION;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT);
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.outcome = RECORD_OUTCOME_OK;
	cr_assert_eq(encode_event_status(&ev, &l), RECORD_ERR_INCONSISTENT);
	free(s.bytes);
	free(plain.bytes);
}
