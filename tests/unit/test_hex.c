#include "config.h"

#include <string.h>

#include <criterion/criterion.h>

#include "common/hex.h"

Test(hex, uint_reads_either_case_and_stops_at_a_non_digit)
{
	uint32_t v = 0;

	cr_assert(hex_decode_uint((const uint8_t *)"00e9", 4, &v));
	cr_assert_eq(v, 0xe9);
	cr_assert(hex_decode_uint((const uint8_t *)"DbFf", 4, &v));
	cr_assert_eq(v, 0xdbff);
	cr_assert(hex_decode_uint((const uint8_t *)"2e%", 2, &v));
	cr_assert_eq(v, 0x2e);
	cr_assert(hex_decode_uint((const uint8_t *)"ffffffff", 8, &v));
	cr_assert_eq(v, 0xffffffffu);
	v = 7;
	cr_assert_not(hex_decode_uint((const uint8_t *)"12g4", 4, &v));
	cr_assert_not(hex_decode_uint((const uint8_t *)"-1", 2, &v));
	cr_assert_not(hex_decode_uint((const uint8_t *)"12", 4, &v),
	    "the NUL after a short input is not a digit");
	cr_assert_not(hex_decode_uint((const uint8_t *)"000000000", 9, &v),
	    "more digits than 32 bits hold");
	cr_assert_eq(v, 7, "a refusal leaves the output");
}

Test(hex, bytes_read_pairs)
{
	uint8_t out[4];

	cr_assert(hex_decode_bytes("00Ff7a80", out, 4));
	cr_assert_arr_eq(out, "\x00\xff\x7a\x80", 4);
	cr_assert_not(hex_decode_bytes("00Ff7 80", out, 4));
	cr_assert_not(hex_decode_bytes("0", out, 1));
}

/* The audit chain's digests are lowercase: "AB" is another text. */
Test(hex, lowercase_refuses_capitals_and_non_digits)
{
	cr_assert(hex_is_lowercase("0123456789abcdef", 16));
	cr_assert(hex_is_lowercase("", 0));
	cr_assert_not(hex_is_lowercase("00Ab", 4));
	cr_assert_not(hex_is_lowercase("00g0", 4));
	cr_assert_not(hex_is_lowercase("12 4", 4));
	cr_assert(hex_is_lowercase("12\0" "4", 2), "only len bytes are read");
}
