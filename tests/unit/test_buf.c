#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

Test(buf, numbers_are_big_endian_on_the_wire)
{
	static const uint8_t want[] = {
		0xab,
		0x12, 0x34,
		0xde, 0xad, 0xbe, 0xef,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	};
	struct buf b;

	buf_init_writer(&b, 64);
	cr_assert_eq(buf_put_u8(&b, 0xab), RECORD_OK);
	cr_assert_eq(buf_put_u16(&b, 0x1234), RECORD_OK);
	cr_assert_eq(buf_put_u32(&b, 0xdeadbeef), RECORD_OK);
	cr_assert_eq(buf_put_u64(&b, 0x0123456789abcdefULL), RECORD_OK);
	cr_assert_eq(buf_len(&b), sizeof(want));
	cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
	buf_free(&b);
}

Test(buf, numbers_roundtrip_at_their_extremes)
{
	static const uint64_t samples[] = { 0, 1, 0x7f, 0x80, 0xff, 0x100,
	    0xffff, 0x10000, 0x7fffffff, 0xffffffff, 0x100000000ULL,
	    UINT64_MAX - 1, UINT64_MAX };
	struct buf b, r;
	size_t i;

	buf_init_writer(&b, 1024);
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		cr_assert_eq(buf_put_u8(&b, (uint8_t)samples[i]), RECORD_OK);
		cr_assert_eq(buf_put_u16(&b, (uint16_t)samples[i]), RECORD_OK);
		cr_assert_eq(buf_put_u32(&b, (uint32_t)samples[i]), RECORD_OK);
		cr_assert_eq(buf_put_u64(&b, samples[i]), RECORD_OK);
	}
	buf_init_reader(&r, buf_ptr(&b), buf_len(&b));
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		uint8_t v8;
		uint16_t v16;
		uint32_t v32;
		uint64_t v64;

		cr_assert_eq(buf_get_u8(&r, &v8), RECORD_OK);
		cr_assert_eq(v8, (uint8_t)samples[i]);
		cr_assert_eq(buf_get_u16(&r, &v16), RECORD_OK);
		cr_assert_eq(v16, (uint16_t)samples[i]);
		cr_assert_eq(buf_get_u32(&r, &v32), RECORD_OK);
		cr_assert_eq(v32, (uint32_t)samples[i]);
		cr_assert_eq(buf_get_u64(&r, &v64), RECORD_OK);
		cr_assert_eq(v64, samples[i]);
	}
	cr_assert_eq(buf_len(&r), 0);
	buf_free(&b);
}

/* Every getter on every too-short input fails, consuming nothing. */
Test(buf, number_getters_refuse_short_input_without_consuming)
{
	static const uint8_t bytes[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
	struct buf r;
	size_t n;

	for (n = 0; n < 8; n++) {
		uint8_t v8 = 0x5a;
		uint16_t v16 = 0x5a5a;
		uint32_t v32 = 0x5a5a5a5a;
		uint64_t v64 = 0x5a5a5a5a5a5a5a5aULL;

		buf_init_reader(&r, bytes, n);
		if (n < 1)
			cr_assert_eq(buf_get_u8(&r, &v8), RECORD_ERR_SHORT);
		if (n < 2)
			cr_assert_eq(buf_get_u16(&r, &v16), RECORD_ERR_SHORT);
		if (n < 4)
			cr_assert_eq(buf_get_u32(&r, &v32), RECORD_ERR_SHORT);
		cr_assert_eq(buf_get_u64(&r, &v64), RECORD_ERR_SHORT);
		cr_assert_eq(buf_len(&r), n, "consumed on failure at %zu", n);
		cr_assert_eq(v8, 0x5a);
		cr_assert_eq(v16, 0x5a5a);
		cr_assert_eq(v32, 0x5a5a5a5aU);
		cr_assert_eq(v64, 0x5a5a5a5a5a5a5a5aULL);
	}
}

Test(buf, strings_roundtrip_with_any_bytes)
{
	static const char *samples[] = { "", "a", "say \"hi\"\n$(id)`x`",
	    "%2e%2e/%00", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91" };
	struct buf b, r;
	size_t i, len;
	char *s;
	uint8_t *bin;
	const uint8_t *view;

	buf_init_writer(&b, 4096);
	for (i = 0; i < 5; i++)
		cr_assert_eq(buf_put_string(&b, samples[i], strlen(samples[i])),
		    RECORD_OK);
	cr_assert_eq(buf_put_string(&b, "a\0b", 3), RECORD_OK);
	cr_assert_eq(buf_put_string(&b, "xyz", 3), RECORD_OK);
	buf_init_reader(&r, buf_ptr(&b), buf_len(&b));
	for (i = 0; i < 5; i++) {
		cr_assert_eq(buf_get_cstring(&r, 100, &s, &len), RECORD_OK);
		cr_assert_eq(len, strlen(samples[i]));
		cr_assert_str_eq(s, samples[i]);
		free(s);
	}
	cr_assert_eq(buf_get_string(&r, 100, &bin, &len), RECORD_OK);
	cr_assert_eq(len, 3);
	cr_assert_arr_eq(bin, "a\0b", 4, "copy is NUL-terminated");
	free(bin);
	cr_assert_eq(buf_get_string_view(&r, 3, &view, &len), RECORD_OK);
	cr_assert_eq(len, 3);
	cr_assert_arr_eq(view, "xyz", 3);
	cr_assert_eq(buf_len(&r), 0);
	buf_free(&b);
}

Test(buf, string_length_is_checked_against_the_maximum_before_the_input)
{
	/* Declares 4 GiB - 1 bytes and holds two: a reader must not try. */
	static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 'a', 'b' };
	static const uint8_t five[] = { 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e' };
	struct buf r;
	uint8_t *bin = NULL;
	char *s = NULL;
	size_t len = 77;

	buf_init_reader(&r, huge, sizeof(huge));
	cr_assert_eq(buf_get_string(&r, 1000, &bin, &len), RECORD_ERR_TOO_LONG);
	cr_assert_null(bin);
	cr_assert_eq(len, 77);
	cr_assert_eq(buf_len(&r), sizeof(huge));

	buf_init_reader(&r, five, sizeof(five));
	cr_assert_eq(buf_get_cstring(&r, 4, &s, &len), RECORD_ERR_TOO_LONG);
	cr_assert_null(s);
	cr_assert_eq(buf_len(&r), sizeof(five));
	cr_assert_eq(buf_get_cstring(&r, 5, &s, &len), RECORD_OK);
	cr_assert_str_eq(s, "abcde");
	free(s);
}

Test(buf, string_length_past_the_end_is_short_at_every_cut)
{
	struct buf b, r;
	const uint8_t *view;
	size_t n, len;

	buf_init_writer(&b, 64);
	cr_assert_eq(buf_put_string(&b, "it's \"quoted\"", 13), RECORD_OK);
	for (n = 0; n < buf_len(&b); n++) {
		buf_init_reader(&r, buf_ptr(&b), n);
		cr_assert_eq(buf_get_string_view(&r, 64, &view, &len),
		    RECORD_ERR_SHORT, "cut at %zu", n);
		cr_assert_eq(buf_len(&r), n);
	}
	buf_free(&b);
}

Test(buf, cstring_refuses_a_nul_anywhere_inside)
{
	static const char *samples[] = { "\0abc", "ab\0c", "abc\0" };
	struct buf b, r;
	char *s = NULL;
	uint8_t *bin;
	size_t i, len;

	for (i = 0; i < 3; i++) {
		buf_init_writer(&b, 64);
		cr_assert_eq(buf_put_string(&b, samples[i], 4), RECORD_OK);
		buf_init_reader(&r, buf_ptr(&b), buf_len(&b));
		cr_assert_eq(buf_get_cstring(&r, 64, &s, &len), RECORD_ERR_CHAR);
		cr_assert_null(s);
		cr_assert_eq(buf_len(&r), 8, "nothing consumed");
		/* The same bytes are fine where binary is allowed. */
		cr_assert_eq(buf_get_string(&r, 64, &bin, &len), RECORD_OK);
		cr_assert_eq(len, 4);
		free(bin);
		buf_free(&b);
	}
}

Test(buf, empty_string_is_an_empty_c_string)
{
	struct buf b, r;
	const uint8_t *view = (const uint8_t *)"x";
	char *s;
	size_t len;

	buf_init_writer(&b, 16);
	cr_assert_eq(buf_put_string(&b, NULL, 0), RECORD_OK);
	cr_assert_eq(buf_put_string(&b, NULL, 0), RECORD_OK);
	cr_assert_eq(buf_len(&b), 8);
	buf_init_reader(&r, buf_ptr(&b), buf_len(&b));
	cr_assert_eq(buf_get_cstring(&r, 0, &s, &len), RECORD_OK);
	cr_assert_eq(len, 0);
	cr_assert_str_eq(s, "");
	free(s);
	cr_assert_eq(buf_get_string_view(&r, 0, &view, &len), RECORD_OK);
	cr_assert_null(view);
	cr_assert_eq(len, 0);
	buf_free(&b);
}

Test(buf, writer_stops_at_its_maximum_and_appends_nothing_then)
{
	struct buf b;

	buf_init_writer(&b, 10);
	cr_assert_eq(buf_put_u64(&b, 1), RECORD_OK);
	cr_assert_eq(buf_put_u32(&b, 2), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_put_string(&b, "", 0), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 8);
	cr_assert_eq(buf_put_u16(&b, 0xbeef), RECORD_OK);
	cr_assert_eq(buf_len(&b), 10);
	cr_assert_eq(buf_put_u8(&b, 3), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_ptr(&b)[8], 0xbe);
	cr_assert_eq(buf_ptr(&b)[9], 0xef);
	buf_free(&b);

	/* A string whose prefix fits but whose bytes do not: all or nothing. */
	buf_init_writer(&b, 7);
	cr_assert_eq(buf_put_string(&b, "abcd", 4), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 0);
	cr_assert_eq(buf_put_string(&b, "abc", 3), RECORD_OK);
	buf_free(&b);
}

Test(buf, writer_grows_and_keeps_every_byte)
{
	struct buf b, r;
	uint32_t i, v;

	buf_init_writer(&b, 4 * 10000);
	for (i = 0; i < 10000; i++)
		cr_assert_eq(buf_put_u32(&b, i * 2654435761U), RECORD_OK);
	cr_assert_eq(buf_put_u8(&b, 0), RECORD_ERR_TOO_LONG);
	buf_init_reader(&r, buf_ptr(&b), buf_len(&b));
	for (i = 0; i < 10000; i++) {
		cr_assert_eq(buf_get_u32(&r, &v), RECORD_OK);
		cr_assert_eq(v, i * 2654435761U);
	}
	buf_free(&b);
}

Test(buf, reader_is_never_written)
{
	uint8_t bytes[4] = { 1, 2, 3, 4 };
	struct buf r;
	uint16_t v;

	buf_init_reader(&r, bytes, sizeof(bytes));
	cr_assert_eq(buf_get_u16(&r, &v), RECORD_OK);
	cr_assert_eq(buf_put_u8(&r, 9), RECORD_ERR_READONLY);
	cr_assert_eq(buf_put_string(&r, "x", 1), RECORD_ERR_READONLY);
	cr_assert_eq(buf_len(&r), 2);
	cr_assert_eq(bytes[0], 1);
	cr_assert_eq(bytes[2], 3);
	buf_free(&r);
	cr_assert_eq(bytes[3], 4, "freeing a reader leaves the caller's bytes");
}

Test(buf, raw_fields_are_exact)
{
	uint8_t out[5] = { 0 };
	struct buf b;

	buf_init_writer(&b, 16);
	cr_assert_eq(buf_put_raw(&b, "\x00\x01\x02\x03\x04", 5), RECORD_OK);
	cr_assert_eq(buf_get_raw(&b, out, 6), RECORD_ERR_SHORT);
	cr_assert_eq(buf_len(&b), 5);
	cr_assert_eq(buf_get_raw(&b, out, 5), RECORD_OK);
	cr_assert_arr_eq(out, "\x00\x01\x02\x03\x04", 5);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
}
