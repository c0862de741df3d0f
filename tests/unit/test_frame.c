#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/frame.h"

#define MAX_EVENTS 16

/* One frame or refusal, with its bytes copied out of the reader. */
struct seen {
	enum frame_status status;
	uint64_t number, offset, error_offset;
	enum utf8_error utf8;
	char bytes[64];
	size_t len;
};

static void
copy_event(const struct frame *f, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	s->status = f->status;
	s->number = f->number;
	s->offset = f->offset;
	s->error_offset = f->error_offset;
	s->utf8 = f->utf8;
	cr_assert_not_null(f->reason);
	if (f->status == FRAME_OK) {
		cr_assert_lt(f->len, sizeof(s->bytes));
		memcpy(s->bytes, f->bytes, f->len);
		s->len = f->len;
	}
}

/* Feeds bytes in pieces of chunk bytes (0: all at once), then finishes. */
static size_t
read_all(const char *bytes, size_t len, size_t chunk, size_t max,
    struct seen *out)
{
	struct frame_reader r;
	struct frame f;
	size_t n = 0, pos = 0, piece;

	cr_assert(frame_reader_init(&r, max));
	if (chunk == 0)
		chunk = len > 0 ? len : 1;
	while (pos < len) {
		piece = len - pos < chunk ? len - pos : chunk;
		frame_reader_feed(&r, bytes + pos, piece);
		pos += piece;
		while (frame_reader_next(&r, &f)) {
			cr_assert_lt(n, MAX_EVENTS);
			copy_event(&f, &out[n++]);
		}
		cr_assert_leq(r.len, max, "reader holds more than its limit");
	}
	if (frame_reader_finish(&r, &f)) {
		cr_assert_lt(n, MAX_EVENTS);
		copy_event(&f, &out[n++]);
	}
	frame_reader_free(&r);
	return n;
}

static size_t
read_str(const char *text, size_t chunk, size_t max, struct seen *out)
{
	return read_all(text, strlen(text), chunk, max, out);
}

static void
assert_frame(const struct seen *s, uint64_t number, uint64_t offset,
    const char *bytes)
{
	cr_assert_eq(s->status, FRAME_OK, "frame %llu refused",
	    (unsigned long long)number);
	cr_assert_eq(s->number, number);
	cr_assert_eq(s->offset, offset);
	cr_assert_eq(s->len, strlen(bytes));
	cr_assert_arr_eq(s->bytes, bytes, s->len);
}

static void
assert_refusal(const struct seen *s, enum frame_status status,
    uint64_t number, uint64_t offset, uint64_t error_offset)
{
	cr_assert_eq(s->status, status, "frame %llu: status %d, want %d",
	    (unsigned long long)number, s->status, status);
	cr_assert_eq(s->number, number);
	cr_assert_eq(s->offset, offset);
	cr_assert_eq(s->error_offset, error_offset);
}

Test(frame, splits_at_newline_with_numbers_and_offsets)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("{\"a\":1}\n[2,3]\n\"x\"\n", 0, 64, ev);

	cr_assert_eq(n, 3);
	assert_frame(&ev[0], 1, 0, "{\"a\":1}");
	assert_frame(&ev[1], 2, 8, "[2,3]");
	assert_frame(&ev[2], 3, 14, "\"x\"");
}

Test(frame, carriage_return_stays_in_the_frame)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("{}\r\n[]\r\n", 0, 64, ev);

	cr_assert_eq(n, 2);
	assert_frame(&ev[0], 1, 0, "{}\r");
	assert_frame(&ev[1], 2, 4, "[]\r");
}

Test(frame, empty_line_is_an_empty_frame)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("\n{}\n", 0, 64, ev);

	cr_assert_eq(n, 2);
	assert_frame(&ev[0], 1, 0, "");
	assert_frame(&ev[1], 2, 1, "{}");
}

Test(frame, exactly_the_limit_is_accepted)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("12345678\n", 0, 8, ev);

	cr_assert_eq(n, 1);
	assert_frame(&ev[0], 1, 0, "12345678");
}

Test(frame, one_byte_over_the_limit_is_refused_and_the_next_line_read)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("123456789\n[\"ok\"]\n", 0, 8, ev);

	cr_assert_eq(n, 2);
	assert_refusal(&ev[0], FRAME_TOO_LONG, 1, 0, 8);
	assert_frame(&ev[1], 2, 10, "[\"ok\"]");
}

Test(frame, long_line_refused_before_its_end_arrives)
{
	struct frame_reader r;
	struct frame f;
	static const char head[] = "0123456789abcdef";

	cr_assert(frame_reader_init(&r, 10));
	frame_reader_feed(&r, head, 16);
	cr_assert(frame_reader_next(&r, &f), "no refusal before the newline");
	cr_assert_eq(f.status, FRAME_TOO_LONG);
	cr_assert_eq(f.error_offset, 10);
	cr_assert_not(frame_reader_next(&r, &f));
	/* The rest of the line, in pieces, is dropped; the next is read. */
	frame_reader_feed(&r, "more $() %2e%2e", 15);
	cr_assert_not(frame_reader_next(&r, &f));
	frame_reader_feed(&r, "tail\n{}\n", 8);
	cr_assert(frame_reader_next(&r, &f));
	cr_assert_eq(f.status, FRAME_OK);
	cr_assert_eq(f.number, 2);
	cr_assert_eq(f.offset, 36);
	cr_assert_eq(f.len, 2);
	cr_assert_arr_eq(f.bytes, "{}", 2);
	cr_assert_not(frame_reader_finish(&r, &f), "refused line reported twice");
	frame_reader_free(&r);
}

Test(frame, never_buffers_more_than_the_limit)
{
	size_t big = 1 << 20, max = 100;
	char *line = malloc(big + 4);
	struct seen ev[MAX_EVENTS];
	size_t n;

	cr_assert_not_null(line);
	memset(line, 'x', big);
	memcpy(line + big, "\n1\n", 3);
	/* read_all asserts r.len <= max after every piece. */
	n = read_all(line, big + 3, 4093, max, ev);
	cr_assert_eq(n, 2);
	assert_refusal(&ev[0], FRAME_TOO_LONG, 1, 0, max);
	assert_frame(&ev[1], 2, big + 1, "1");
	free(line);
}

Test(frame, embedded_nul_is_its_own_reason)
{
	static const char bytes[] = "{}\n{\"a\":\"b\0c\"}\n[]\n";
	struct seen ev[MAX_EVENTS];
	size_t n = read_all(bytes, sizeof(bytes) - 1, 0, 64, ev);

	cr_assert_eq(n, 3);
	assert_frame(&ev[0], 1, 0, "{}");
	assert_refusal(&ev[1], FRAME_NUL, 2, 3, 10);
	assert_frame(&ev[2], 3, 15, "[]");
}

Test(frame, invalid_utf8_is_its_own_reason_with_the_precise_one)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("[1]\n[\"\xc0\xaf\"]\n[\"\xed\xa0\x80\"]\n"
	    "[\"\xe2\x82\"]\n[\"caf\xc3\xa9\"]\n", 0, 64, ev);

	cr_assert_eq(n, 5);
	assert_frame(&ev[0], 1, 0, "[1]");
	assert_refusal(&ev[1], FRAME_BAD_UTF8, 2, 4, 6);
	cr_assert_eq(ev[1].utf8, UTF8_OVERLONG);
	assert_refusal(&ev[2], FRAME_BAD_UTF8, 3, 11, 13);
	cr_assert_eq(ev[2].utf8, UTF8_SURROGATE);
	assert_refusal(&ev[3], FRAME_BAD_UTF8, 4, 19, 21);
	cr_assert_eq(ev[3].utf8, UTF8_MISSING_CONTINUATION);
	assert_frame(&ev[4], 5, 26, "[\"caf\xc3\xa9\"]");
}

Test(frame, end_of_input_inside_a_frame)
{
	struct seen ev[MAX_EVENTS];
	size_t n = read_str("{}\n{\"jsonrpc\":\"2.0\"", 0, 64, ev);

	cr_assert_eq(n, 2);
	assert_frame(&ev[0], 1, 0, "{}");
	assert_refusal(&ev[1], FRAME_TRUNCATED, 2, 3, 19);
}

Test(frame, clean_end_of_input_is_no_event)
{
	struct frame_reader r;
	struct frame f;

	cr_assert(frame_reader_init(&r, 16));
	cr_assert_not(frame_reader_finish(&r, &f));
	frame_reader_feed(&r, "[]\n", 3);
	cr_assert(frame_reader_next(&r, &f));
	cr_assert_not(frame_reader_next(&r, &f));
	cr_assert_not(frame_reader_finish(&r, &f));
	frame_reader_free(&r);
}

Test(frame, refused_line_cut_by_the_end_is_reported_once)
{
	static const char bytes[] = "[\"a\0";
	struct seen ev[MAX_EVENTS];
	size_t n = read_all(bytes, sizeof(bytes) - 1, 0, 64, ev);

	cr_assert_eq(n, 1);
	assert_refusal(&ev[0], FRAME_NUL, 1, 0, 3);
}

Test(frame, each_status_has_its_own_phrase)
{
	enum frame_status s, t;

	for (s = FRAME_OK; s <= FRAME_TRUNCATED; s++)
		for (t = s + 1; t <= FRAME_TRUNCATED; t++)
			cr_assert_str_neq(frame_status_string(s),
			    frame_status_string(t));
}

Test(frame, zero_limit_is_refused)
{
	struct frame_reader r;

	cr_assert_not(frame_reader_init(&r, 0));
	frame_reader_free(&r);
}

/* Every kind of event, a multibyte character and the limit in one stream. */
static const char mixed[] =
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
	"too long line with $() and %2e%2e in it, far past the limit.......\n"
	"\n"
	"[\"\xe2\x82\xac \xf0\x9f\x98\x80\"]\n"
	"[\"nul\0\"]\n"
	"[\"\xf4\x90\x80\x80\"]\n"
	"[\"tail";

Test(frame, one_byte_at_a_time_gives_the_same_events_as_one_feed)
{
	struct seen whole[MAX_EVENTS], bytewise[MAX_EVENTS], sevens[MAX_EVENTS];
	size_t n, m, k, i;

	n = read_all(mixed, sizeof(mixed) - 1, 0, 48, whole);
	m = read_all(mixed, sizeof(mixed) - 1, 1, 48, bytewise);
	k = read_all(mixed, sizeof(mixed) - 1, 7, 48, sevens);
	cr_assert_eq(n, 7);
	cr_assert_eq(whole[1].status, FRAME_TOO_LONG);
	cr_assert_eq(whole[4].status, FRAME_NUL);
	cr_assert_eq(whole[5].status, FRAME_BAD_UTF8);
	cr_assert_eq(whole[6].status, FRAME_TRUNCATED);
	cr_assert_eq(m, n);
	cr_assert_eq(k, n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(memcmp(&whole[i], &bytewise[i], sizeof(whole[i])),
		    0, "event %zu differs when fed byte by byte", i);
		cr_assert_eq(memcmp(&whole[i], &sevens[i], sizeof(whole[i])),
		    0, "event %zu differs when fed 7 bytes at a time", i);
	}
}
