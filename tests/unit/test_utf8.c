#include "config.h"

#include <string.h>

#include <criterion/criterion.h>

#include "common/utf8.h"

/* Validates a string literal (which may hold any byte but NUL). */
static enum utf8_error
check(const char *s, size_t *offset)
{
	*offset = (size_t)-1;
	return utf8_validate((const uint8_t *)s, strlen(s), offset);
}

static void
assert_refused(const char *s, enum utf8_error want, size_t want_offset)
{
	size_t offset;

	cr_assert_eq(check(s, &offset), want, "wrong reason for a sequence "
	    "at offset %zu", want_offset);
	cr_assert_eq(offset, want_offset);
}

Test(utf8, accepts_every_sequence_length_and_the_edges)
{
	static const char *const valid[] = {
		"plain ascii with \"quotes\" and $() and %2e%2e",
		"\xc2\x80",			/* U+0080, smallest 2-byte */
		"caf\xc3\xa9 \xdf\xbf",		/* é, U+07FF */
		"\xe0\xa0\x80",			/* U+0800, smallest 3-byte */
		"\xed\x9f\xbf",			/* U+D7FF, below surrogates */
		"\xee\x80\x80",			/* U+E000, above surrogates */
		"\xef\xbf\xbf \xe2\x82\xac",	/* U+FFFF, € */
		"\xf0\x90\x80\x80",		/* U+10000, smallest 4-byte */
		"\xf4\x8f\xbf\xbf",		/* U+10FFFF, the largest */
		"\xf0\x9f\x98\x80 emoji",
		"",
	};
	size_t i, offset;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		cr_assert_eq(check(valid[i], &offset), UTF8_OK,
		    "valid string %zu refused", i);
}

Test(utf8, nul_is_valid_utf8)
{
	static const uint8_t bytes[] = { 'a', 0, 'b' };

	cr_assert_eq(utf8_validate(bytes, sizeof(bytes), NULL), UTF8_OK);
}

Test(utf8, overlong_forms_of_each_length)
{
	assert_refused("\xc0\xaf", UTF8_OVERLONG, 0);		/* '/' in 2 */
	assert_refused("ab\xc1\xbf", UTF8_OVERLONG, 2);		/* C1 lead */
	assert_refused("x\xe0\x80\xaf", UTF8_OVERLONG, 1);	/* '/' in 3 */
	assert_refused("\xe0\x9f\xbf", UTF8_OVERLONG, 0);	/* U+07FF in 3 */
	assert_refused("\xc3\xa9\xf0\x80\x80\xaf", UTF8_OVERLONG, 2);
	assert_refused("\xf0\x8f\xbf\xbf", UTF8_OVERLONG, 0);	/* U+FFFF in 4 */
}

Test(utf8, encoded_surrogates)
{
	assert_refused("\xed\xa0\x80", UTF8_SURROGATE, 0);	/* U+D800 */
	assert_refused("ok \xed\xbf\xbf", UTF8_SURROGATE, 3);	/* U+DFFF */
	assert_refused("\xed\xa0\xbd\xed\xb8\x80", UTF8_SURROGATE, 0);
}

Test(utf8, code_points_above_u10ffff)
{
	assert_refused("\xf4\x90\x80\x80", UTF8_TOO_LARGE, 0);	/* U+110000 */
	assert_refused("a\xf5\x80\x80\x80", UTF8_TOO_LARGE, 1);
	assert_refused("\xf7\xbf\xbf\xbf", UTF8_TOO_LARGE, 0);
	assert_refused("\xf8\x88\x80\x80\x80", UTF8_TOO_LARGE, 0);	/* 5-byte */
	assert_refused("\xfc\x84\x80\x80\x80\x80", UTF8_TOO_LARGE, 0);
	assert_refused("\xff", UTF8_TOO_LARGE, 0);
}

Test(utf8, sequence_truncated_by_the_end)
{
	assert_refused("abc\xe2\x82", UTF8_TRUNCATED, 3);
	assert_refused("\xc3", UTF8_TRUNCATED, 0);
	assert_refused("\xf0\x9f\x98", UTF8_TRUNCATED, 0);
}

Test(utf8, lead_without_enough_continuation_bytes)
{
	assert_refused("\xe2\x28\xa1", UTF8_MISSING_CONTINUATION, 0);
	assert_refused("\xc3\xa9\xc3(", UTF8_MISSING_CONTINUATION, 2);
	assert_refused("\xf0\x9f\x98 x", UTF8_MISSING_CONTINUATION, 0);
}

Test(utf8, continuation_byte_where_a_sequence_starts)
{
	assert_refused("\x80", UTF8_UNEXPECTED_CONTINUATION, 0);
	assert_refused("ab\xbf", UTF8_UNEXPECTED_CONTINUATION, 2);
	assert_refused("\xc3\xa9\xa9", UTF8_UNEXPECTED_CONTINUATION, 2);
}

Test(utf8, each_reason_has_its_own_phrase)
{
	enum utf8_error e, f;

	for (e = UTF8_OK; e <= UTF8_TOO_LARGE; e++) {
		cr_assert_not_null(utf8_error_string(e));
		for (f = e + 1; f <= UTF8_TOO_LARGE; f++)
			cr_assert_str_neq(utf8_error_string(e),
			    utf8_error_string(f));
	}
}

Test(utf8, counts_code_points_not_bytes)
{
	static const char text[] = "h\xc3\xa9llo \xe2\x82\xac\xf0\x9f\x98\x80";
	size_t count = 0;

	cr_assert(utf8_count_code_points((const uint8_t *)text,
	    strlen(text), &count));
	cr_assert_eq(count, 8);
	cr_assert(utf8_count_code_points((const uint8_t *)"", 0, &count));
	cr_assert_eq(count, 0);
}

Test(utf8, count_refuses_invalid_input_and_leaves_count_alone)
{
	size_t count = 42;

	cr_assert_not(utf8_count_code_points((const uint8_t *)"a\xc0\xaf" "b",
	    4, &count));
	cr_assert_eq(count, 42);
}

Test(utf8, decode_gives_each_code_point_and_its_length)
{
	static const struct {
		const char *s;
		uint32_t cp;
		size_t len;
	} cases[] = {
		{ "$()", '$', 1 },
		{ "\xc3\xa9t\xc3\xa9", 0xe9, 2 },
		{ "\xe2\x82\xac", 0x20ac, 3 },
		{ "\xef\xbc\x9c", 0xff1c, 3 },		/* full-width '<' */
		{ "\xf0\x9f\x98\x80", 0x1f600, 4 },
		{ "\xf4\x8f\xbf\xbf", 0x10ffff, 4 },
	};
	uint8_t back[UTF8_SEQUENCE_MAX];
	uint32_t cp;
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(utf8_decode((const uint8_t *)cases[i].s,
		    strlen(cases[i].s), &cp, &len), UTF8_OK, "case %zu", i);
		cr_assert_eq(cp, cases[i].cp, "case %zu", i);
		cr_assert_eq(len, cases[i].len, "case %zu", i);
		cr_assert_eq(utf8_encode(cp, back), len, "case %zu", i);
		cr_assert_arr_eq(back, cases[i].s, len, "case %zu", i);
	}
}

/* The sanitizer's replacement rule rests on these: nothing is decoded. */
Test(utf8, decode_refuses_what_validate_refuses_and_leaves_outputs)
{
	static const char *const bad[] = {
		"\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8", "\xff",
		"\xe2\x82", "\xc3(", "\xf0\x9f\x98",
	};
	uint32_t cp;
	size_t i, len, off;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cp = 7, len = 7;
		cr_assert_neq(utf8_decode((const uint8_t *)bad[i],
		    strlen(bad[i]), &cp, &len), UTF8_OK, "case %zu", i);
		cr_assert(cp == 7 && len == 7, "case %zu wrote", i);
		cr_assert_neq(utf8_validate((const uint8_t *)bad[i],
		    strlen(bad[i]), &off), UTF8_OK, "case %zu", i);
	}
}
