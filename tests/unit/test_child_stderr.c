/*
 * broker/child_stderr.h: the lines the broker writes for a child's
 * stderr, fed byte runs as a pipe would give them and read back from a
 * pipe standing for the broker's own stderr.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/child_stderr.h"

/* Everything written to out so far (at most size - 1 bytes). */
static size_t
drain(int fd, char *got, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < size && (r = read(fd, got + n, size - 1 - n)) > 0)
		n += (size_t)r;
	got[n] = '\0';
	return n;
}

/* Feeds each piece in turn, closes, and returns what came out. */
static void
relay(const char *role, const char *const *pieces, const size_t *lens,
    size_t n, char *got, size_t size)
{
	struct child_stderr cs;
	int out[2];
	size_t i;

	cr_assert_eq(pipe2(out, O_NONBLOCK), 0);
	child_stderr_init(&cs, role, -1, out[1]);
	for (i = 0; i < n; i++)
		child_stderr_feed(&cs, pieces[i], lens[i]);
	child_stderr_close(&cs);
	(void)close(out[1]);
	(void)drain(out[0], got, size);
	(void)close(out[0]);
}

static void
relay1(const char *role, const char *text, size_t len, char *got,
    size_t size)
{
	relay(role, &text, &len, 1, got, size);
}

Test(child_stderr, a_line_split_across_reads_is_one_line)
{
	const char *pieces[] = { "sp[executor]: dispatch: call ", "7 ",
	    "done\nsecond" };
	const size_t lens[] = { 29, 2, 11 };
	char got[512];

	relay("executor", pieces, lens, 3, got, sizeof(got));
	cr_assert_str_eq(got, "sp[executor]: warning: dispatch: call 7 done\n"
	    "sp[executor]: warning: second\n");
}

Test(child_stderr, only_the_childs_own_prefix_is_replaced_and_once)
{
	static const char in[] = "sp[frontend]: sp[frontend]: x\n"
	    "sp[sp]: info: audit: session 00 ended\n"
	    "sp[executor]: y\n";
	char got[512];

	relay1("frontend", in, sizeof(in) - 1, got, sizeof(got));
	cr_assert_str_eq(got, "sp[frontend]: warning: sp[frontend]: x\n"
	    "sp[frontend]: warning: sp[sp]: info: audit: session 00 ended\n"
	    "sp[frontend]: warning: sp[executor]: y\n");
}

Test(child_stderr, control_bytes_nul_and_c1_are_escaped_utf8_kept)
{
	static const char in[] = "a\tb\0c\x1b]0;x\x07 \xc2\x85 \xe2\x82\xac "
	    "\xf0\x9f\x98\x80\n";
	char got[512];

	relay1("executor", in, sizeof(in) - 1, got, sizeof(got));
	cr_assert_str_eq(got, "sp[executor]: warning: a\\x09b\\x00c\\x1b]0;x\\x07 "
	    "\\xc2\\x85 \xe2\x82\xac \xf0\x9f\x98\x80\n");
}

Test(child_stderr, a_line_that_is_not_utf8_has_every_high_byte_escaped)
{
	static const char in[] = "\xc3\xa9 \xed\xa0\x80 \xc0\xaf\n";
	char got[512];

	relay1("frontend", in, sizeof(in) - 1, got, sizeof(got));
	cr_assert_str_eq(got, "sp[frontend]: warning: \\xc3\\xa9 \\xed\\xa0\\x80 "
	    "\\xc0\\xaf\n");
}

Test(child_stderr, a_line_of_exactly_the_limit_is_not_cut)
{
	char in[CHILD_STDERR_LINE_MAX + 1], want[CHILD_STDERR_LINE_MAX + 64];
	char got[sizeof(want) + 64];

	memset(in, 'x', CHILD_STDERR_LINE_MAX);
	in[CHILD_STDERR_LINE_MAX] = '\n';
	relay1("frontend", in, sizeof(in), got, sizeof(got));
	(void)snprintf(want, sizeof(want), "sp[frontend]: warning: %.*s\n",
	    CHILD_STDERR_LINE_MAX, in);
	cr_assert_str_eq(got, want);
}

/* A long line fed in many small reads: one cut line, the rest dropped up
 * to its newline, and the next line whole. */
Test(child_stderr, a_long_line_is_cut_once_and_the_next_is_whole)
{
	const char *pieces[40];
	size_t lens[40], i;
	char chunk[100], want[CHILD_STDERR_LINE_MAX + 128];
	char got[sizeof(want) + 64];

	memset(chunk, 'y', sizeof(chunk));
	for (i = 0; i < 39; i++) {
		pieces[i] = chunk;
		lens[i] = sizeof(chunk);
	}
	pieces[39] = "tail\nnext -x $(id)\n";
	lens[39] = strlen(pieces[39]);
	relay("executor", pieces, lens, 40, got, sizeof(got));
	(void)snprintf(want, sizeof(want), "sp[executor]: warning: %.*s [line cut]\n"
	    "sp[executor]: warning: next -x $(id)\n", CHILD_STDERR_LINE_MAX,
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
	    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	cr_assert_str_eq(got, want);
}

/* A cut that splits a multibyte character drops its first bytes, so the
 * rest of the line still counts as UTF-8 and is not escaped. */
Test(child_stderr, a_cut_inside_a_character_keeps_the_line_utf8)
{
	char in[CHILD_STDERR_LINE_MAX + 8], got[4 * sizeof(in) + 64];
	size_t i;

	in[0] = 'a';
	for (i = 1; i + 1 < CHILD_STDERR_LINE_MAX; i += 2)
		memcpy(in + i, "\xc3\xa9", 2);	/* 511 x U+00E9 */
	/* The 1024th byte leads a character whose second byte is cut. */
	memcpy(in + CHILD_STDERR_LINE_MAX - 1, "\xc3\xa9zz\n", 5);
	relay1("frontend", in, CHILD_STDERR_LINE_MAX + 4, got, sizeof(got));
	cr_assert_null(strstr(got, "\\x"), "%s", got);
	cr_assert(strstr(got, "\xc3\xa9 [line cut]\n") != NULL, "%s", got);
	cr_assert_eq(strlen(got), strlen("sp[frontend]: warning: ") +
	    CHILD_STDERR_LINE_MAX - 1 + strlen(" [line cut]\n"));
}

Test(child_stderr, a_partial_last_line_is_flushed_at_close)
{
	static const char in[] = "first\nno newline at the end";
	char got[512];

	relay1("frontend", in, sizeof(in) - 1, got, sizeof(got));
	cr_assert_str_eq(got, "sp[frontend]: warning: first\n"
	    "sp[frontend]: warning: no newline at the end\n");
}

/* The pipe read to EOF after its writer is gone, data left in it said. */
Test(child_stderr, drain_reads_what_a_dead_writer_left)
{
	struct child_stderr cs;
	int err[2], out[2];
	char got[512];

	cr_assert_eq(pipe(err), 0);
	cr_assert_eq(pipe2(out, O_NONBLOCK), 0);
	cr_assert_eq(write(err[1], "one\ntwo", 7), 7);
	(void)close(err[1]);
	child_stderr_init(&cs, "executor", err[0], out[1]);
	child_stderr_drain(&cs);
	cr_assert_eq(cs.fd, -1);
	(void)close(out[1]);
	(void)drain(out[0], got, sizeof(got));
	cr_assert_str_eq(got, "sp[executor]: warning: one\n"
	    "sp[executor]: warning: two\n");
}

/* A writer still holding the pipe cannot make drain block. */
Test(child_stderr, drain_does_not_block_on_a_live_writer, .timeout = 10)
{
	struct child_stderr cs;
	int err[2], out[2];
	char got[512];

	cr_assert_eq(pipe(err), 0);
	cr_assert_eq(pipe2(out, O_NONBLOCK), 0);
	cr_assert_eq(write(err[1], "held\n", 5), 5);
	child_stderr_init(&cs, "frontend", err[0], out[1]);
	child_stderr_drain(&cs);
	(void)close(err[1]);
	(void)close(out[1]);
	(void)drain(out[0], got, sizeof(got));
	cr_assert_str_eq(got, "sp[frontend]: warning: held\n");
}

/* A child's own lines keep their level; the relay writes them in its
 * own form. */
Test(child_stderr, the_childs_level_is_kept)
{
	static const char in[] = "sp[frontend]: error: it's \"x\"\n"
	    "sp[frontend]: info: fine\n"
	    "sp[frontend]: debug: d\n"
	    "sp[frontend]: warning: w\n"
	    "sp[frontend]: errors: not a level\n";
	char got[512];

	relay1("frontend", in, sizeof(in) - 1, got, sizeof(got));
	cr_assert_str_eq(got, "sp[frontend]: error: it's \"x\"\n"
	    "sp[frontend]: info: fine\n"
	    "sp[frontend]: debug: d\n"
	    "sp[frontend]: warning: w\n"
	    "sp[frontend]: warning: errors: not a level\n");
}
