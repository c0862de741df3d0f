#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"
#include "tests/unit/record_samples.h"

/* The action record: layout, roundtrips and each refusal. */

Test(record_action, layout_is_as_documented)
{
	/* call 5, tool 2, fingerprint 0x11.., ["a\"b", -2, true, absent, 3] */
	uint8_t want[] = {
		0, 1, 0, 2,
		0, 0, 0, 0, 0, 0, 0, 5,
		0, 0, 0, 2,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0, 5,
		VALUE_STRING, 0, 0, 0, 3, 'a', '"', 'b',
		VALUE_INTEGER, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
		VALUE_BOOLEAN, 1,
		VALUE_ABSENT,
		VALUE_DECIMAL, 0, 0, 0, 0, 0, 0, 0, 3,
	};
	struct record_limits l = limits_default();
	struct value args[5] = {
		str_value("a\"b"),
		{ .kind = VALUE_INTEGER, .u.integer = -2 },
		{ .kind = VALUE_BOOLEAN, .u.boolean = true },
		{ .kind = VALUE_ABSENT },
		{ .kind = VALUE_DECIMAL, .u.decimal_minor = 3 },
	};
	struct record_action in = { .call_id = 5, .tool_index = 2,
	    .args = args, .arg_count = 5 }, out;
	struct sample s;

	memset(in.fingerprint, 0x11, HASH_SHA256_LEN);
	s = encode_action(&in, &l);
	cr_assert_eq(s.len, sizeof(want));
	cr_assert_arr_eq(s.bytes, want, sizeof(want));
	cr_assert_eq(record_action_decode(want, sizeof(want), &l, &out),
	    RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_str_eq(out.args[0].u.str.ptr, "a\"b");
	record_action_free(&out);
	cr_assert_null(out.args);
	free(s.bytes);
}

Test(record_action, varied_arguments_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[SAMPLE_ACTION_ARGS];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_str_eq(out.args[5].u.str.ptr, sample_action_arg2);
	cr_assert_eq(out.args[1].u.integer, INT64_MIN);
	cr_assert_eq(out.args[6].u.integer, INT64_MAX);
	cr_assert_eq(out.args[8].kind, VALUE_STRING);
	cr_assert_str_eq(out.args[8].u.str.ptr, "");
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, zero_values_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_action in = { 0 }, out;
	struct value args[3] = {
		{ .kind = VALUE_INTEGER }, { .kind = VALUE_DECIMAL },
		{ .kind = VALUE_BOOLEAN },
	};
	struct sample s;

	s = encode_action(&in, &l);
	cr_assert_eq(s.len, 4 + 8 + 4 + 32 + 2);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_null(out.args);
	record_action_free(&out);
	free(s.bytes);

	in.args = args;
	in.arg_count = 3;
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, as_many_arguments_as_the_cap_roundtrip)
{
	struct record_limits l = limits_default();
	struct value args[RECORD_ARGS_CAP];
	char strings[RECORD_ARGS_CAP][16];
	struct record_action in = { .call_id = 1, .args = args,
	    .arg_count = RECORD_ARGS_CAP }, out;
	struct sample s;
	size_t i;

	for (i = 0; i < RECORD_ARGS_CAP; i++) {
		snprintf(strings[i], sizeof(strings[i]), "'%zu'\n", i);
		switch (i % 4) {
		case 0:
			args[i] = str_value(strings[i]);
			break;
		case 1:
			args[i] = (struct value){ .kind = VALUE_INTEGER,
			    .u.integer = -(int64_t)i * 1000003 };
			break;
		case 2:
			args[i] = (struct value){ .kind = VALUE_BOOLEAN,
			    .u.boolean = i % 8 == 2 };
			break;
		default:
			args[i] = (struct value){ .kind = VALUE_ABSENT };
		}
	}
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.arg_count, RECORD_ARGS_CAP);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
}

/* Two string arguments at the cap, every byte value but NUL. */
Test(record_action, strings_at_the_byte_cap_roundtrip)
{
	struct record_limits l = limits_default();
	char *big = malloc(RECORD_ARG_BYTES_CAP + 1);
	struct value args[2];
	struct record_action in = { .args = args, .arg_count = 2 }, out;
	struct sample s;
	size_t i;

	cr_assert_not_null(big);
	for (i = 0; i < RECORD_ARG_BYTES_CAP; i++)
		big[i] = (char)(1 + i % 255);
	big[RECORD_ARG_BYTES_CAP] = '\0';
	args[0] = str_value(big);
	args[1] = str_value(big);
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
	free(big);
}

Test(record_action, limits_come_from_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[SAMPLE_ACTION_ARGS];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	l.max_args = 9;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_args = 10;
	l.max_arg_bytes = strlen(sample_action_arg2) - 1;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_arg_bytes = strlen(sample_action_arg2);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, caps_hold_whatever_the_parameters_say)
{
	struct record_limits l = { SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX };
	struct record_action in = { 0 }, out;
	struct sample s;

	s = encode_action(&in, &l);
	/* Count 257 with nothing after it: the cap refuses before reading. */
	put_u16_at(s.bytes + 48, RECORD_ARGS_CAP + 1);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	put_u16_at(s.bytes + 48, RECORD_ARGS_CAP);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	free(s.bytes);
}

Test(record_action, argument_count_corrupted_is_refused)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[SAMPLE_ACTION_ARGS];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	put_u16_at(s.bytes + 48, 11);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	put_u16_at(s.bytes + 48, 9);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TRAILING);
	put_u16_at(s.bytes + 48, 0xffff);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	free(s.bytes);
}

Test(record_action, unknown_value_kind_is_refused)
{
	static const uint8_t kinds[] = { 5, 6, 0x80, 0xff };
	struct record_limits l = limits_default();
	struct value arg = { .kind = VALUE_INTEGER, .u.integer = 7 };
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct buf b;
	struct sample s;
	size_t i;

	s = encode_action(&in, &l);
	for (i = 0; i < sizeof(kinds); i++) {
		s.bytes[50] = kinds[i];
		cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "kind %u", kinds[i]);
		arg.kind = (enum value_kind)kinds[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_action_encode(&in, &l, &b),
		    RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
	free(s.bytes);
}

Test(record_action, boolean_other_than_zero_or_one_is_refused)
{
	struct record_limits l = limits_default();
	struct value arg = { .kind = VALUE_BOOLEAN, .u.boolean = true };
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct sample s;

	s = encode_action(&in, &l);
	cr_assert_eq(s.bytes[51], 1);
	s.bytes[51] = 2;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[51] = 0xff;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[51] = 0;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.args[0].u.boolean, false);
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, nul_inside_a_string_argument_is_refused)
{
	struct record_limits l = limits_default();
	struct value arg = str_value("abc");
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct buf b;
	struct sample s;
	size_t i;

	s = encode_action(&in, &l);
	for (i = 0; i < 3; i++) {
		s.bytes[55 + i] = '\0';
		cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "NUL at %zu", i);
		s.bytes[55 + i] = (uint8_t)"abc"[i];
	}
	arg.u.str.ptr = (char *)"a\0c";
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_CHAR);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
	free(s.bytes);
}

Test(record_action, encoder_refuses_what_the_limits_refuse)
{
	struct record_limits l = limits_default();
	struct record_action in;
	struct value args[SAMPLE_ACTION_ARGS];
	struct buf b;

	sample_action_fill(&in, args);
	l.max_args = 9;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(buf_put_u8(&b, 0x42), RECORD_OK);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	l.max_args = 10;
	l.max_arg_bytes = 3;
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 1, "what was there is kept, nothing added");
	cr_assert_eq(buf_ptr(&b)[0], 0x42);
	buf_free(&b);
}

Test(record_action, a_record_above_the_cap_is_not_encoded)
{
	struct record_limits l = limits_default();
	char *big = malloc(RECORD_ARG_BYTES_CAP + 1);
	struct value args[4];
	struct record_action in = { .args = args, .arg_count = 4 };
	struct buf b;
	size_t i;

	cr_assert_not_null(big);
	memset(big, 'x', RECORD_ARG_BYTES_CAP);
	big[RECORD_ARG_BYTES_CAP] = '\0';
	for (i = 0; i < 4; i++)
		args[i] = str_value(big);
	buf_init_writer(&b, SIZE_MAX);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
	free(big);
}

