/*
 * The protocol writer (frontend/writer.h): messages queued in one
 * wake-up leave in one write, at once, with no write event armed; only a
 * full fd arms one, and the rest then leaves in order as the peer reads;
 * the drained and finished callbacks fire when they should.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "frontend/writer.h"

struct calls {
	int drained;
	int finished;
};

static void
on_drained(void *arg)
{
	((struct calls *)arg)->drained++;
}

static void
on_finished(void *arg)
{
	((struct calls *)arg)->finished++;
}

static int
armed_events(struct event_base *base)
{
	return event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
}

/* Quotes, $(), %2e%2e and multibyte text: bytes pass as they are. */
static const char *const lines[] = {
	"{\"id\":1,\"text\":\"it's \\\"quoted\\\"\"}",
	"{\"id\":\"$(id)\",\"path\":\"%2e%2e/x\"}",
	"{\"id\":3,\"text\":\"\xc3\xa9t\xc3\xa9 \xe2\x98\x83\"}",
};

Test(writer, messages_of_one_wake_up_leave_in_one_write_at_flush)
{
	struct event_base *base = event_base_new();
	struct calls calls = { 0, 0 };
	char want[512], got[512];
	struct writer *w;
	size_t i, wlen = 0;
	ssize_t n;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	w = writer_new(base, sv[0], on_drained, on_finished, &calls);
	cr_assert_not_null(w);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		cr_assert(writer_send(w, lines[i], strlen(lines[i])));
		memcpy(want + wlen, lines[i], strlen(lines[i]));
		wlen += strlen(lines[i]);
		want[wlen++] = '\n';
	}
	cr_assert_eq(writer_queued(w), wlen);
	n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT);
	cr_assert(n == -1 && errno == EAGAIN, "nothing before the flush");
	writer_flush(w);
	/* SOCK_SEQPACKET keeps each write one record: one recv is one write. */
	n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT);
	cr_assert_eq(n, (ssize_t)wlen, "the three lines in one write");
	cr_assert_arr_eq(got, want, wlen);
	n = recv(sv[1], got, sizeof(got), MSG_DONTWAIT);
	cr_assert(n == -1 && errno == EAGAIN);
	cr_assert_eq(writer_queued(w), 0);
	cr_assert_eq(armed_events(base), 0, "no write event: fd took it all");
	writer_finish(w);
	cr_assert_eq(calls.finished, 1);
	cr_assert_eq(calls.drained, 0);
	writer_free(w);
	close(sv[0]);
	close(sv[1]);
	event_base_free(base);
}

#define BIG_LINE	(64u * 1024)
#define BIG_LINES	80	/* 5 MiB: past WRITER_QUEUE_RESUME */

/* Line i: its number in the first bytes, then a fill of one letter. */
static void
big_line(char *buf, unsigned i)
{
	memset(buf, 'a' + (int)(i % 26), BIG_LINE);
	(void)snprintf(buf, 16, "%08u", i);
	buf[8] = ' ';
}

/* Reads what sv has now into got (cap bytes), non-blocking. */
static size_t
read_available(int fd, char *got, size_t have, size_t cap)
{
	ssize_t n;

	while (have < cap && (n = recv(fd, got + have, cap - have,
	    MSG_DONTWAIT)) > 0)
		have += (size_t)n;
	return have;
}

Test(writer, a_full_fd_arms_one_event_and_the_rest_leaves_in_order)
{
	struct event_base *base = event_base_new();
	struct calls calls = { 0, 0 };
	size_t total = (size_t)BIG_LINES * (BIG_LINE + 1), have = 0;
	char *line = malloc(BIG_LINE), *got = malloc(total), *want;
	struct writer *w;
	int sv[2], sndbuf = 65536, rounds;
	unsigned i;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
	    sizeof(sndbuf)), 0);
	w = writer_new(base, sv[0], on_drained, on_finished, &calls);
	for (i = 0; i < BIG_LINES; i++) {
		big_line(line, i);
		cr_assert(writer_send(w, line, BIG_LINE));
	}
	cr_assert_gt(writer_queued(w), WRITER_QUEUE_RESUME);
	writer_flush(w);
	cr_assert_gt(writer_queued(w), 0, "the socket cannot take 5 MiB");
	cr_assert_eq(armed_events(base), 1, "a short write arms EV_WRITE");
	writer_finish(w);
	cr_assert_eq(calls.finished, 0, "not finished while bytes wait");
	for (rounds = 0; have < total && rounds < 100000; rounds++) {
		have = read_available(sv[1], got, have, total);
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
	}
	have = read_available(sv[1], got, have, total);
	cr_assert_eq(have, total);
	want = malloc(BIG_LINE);
	for (i = 0; i < BIG_LINES; i++) {
		big_line(want, i);
		cr_assert_arr_eq(got + (size_t)i * (BIG_LINE + 1), want,
		    BIG_LINE, "line %u in its place", i);
		cr_assert_eq(got[(size_t)i * (BIG_LINE + 1) + BIG_LINE], '\n');
	}
	cr_assert_eq(calls.drained, 1, "drained once, below the bound");
	cr_assert_eq(calls.finished, 1, "finished once everything was written");
	cr_assert_eq(writer_queued(w), 0);
	cr_assert_eq(armed_events(base), 0);
	free(want);
	free(line);
	free(got);
	writer_free(w);
	close(sv[0]);
	close(sv[1]);
	event_base_free(base);
}

static int lost_calls;

static void
on_lost(void *arg)
{
	(void)arg;
	lost_calls++;
}

/* A pipe whose read end is closed while nothing is written: told at once,
 * once, from the loop. */
Test(writer, a_closed_pipe_is_seen_while_idle)
{
	struct event_base *base = event_base_new();
	struct calls calls = { 0, 0 };
	struct writer *w;
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	w = writer_new(base, fds[1], on_drained, on_finished, &calls);
	cr_assert(writer_watch_client(w, on_lost));
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert(writer_client_alive(w));
	cr_assert_eq(lost_calls, 0, "a pipe someone reads is not lost");
	close(fds[0]);
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert_eq(lost_calls, 1, "the hang-up woke the loop");
	cr_assert_not(writer_client_alive(w));
	cr_assert_not(writer_send(w, lines[0], strlen(lines[0])));
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert_eq(lost_calls, 1, "told once");
	writer_finish(w);
	cr_assert_eq(calls.finished, 1, "nothing left to write");
	writer_free(w);
	close(fds[1]);
	event_base_free(base);
}

/* Asked before acting: true until the reader is gone, false at once
 * after, before the loop ran; then lost comes from the loop. */
Test(writer, alive_is_asked_now_not_when_the_loop_runs)
{
	struct event_base *base = event_base_new();
	struct calls calls = { 0, 0 };
	struct writer *w;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	w = writer_new(base, sv[0], on_drained, on_finished, &calls);
	cr_assert(writer_watch_client(w, on_lost));
	cr_assert_eq(send(sv[1], "x", 1, 0), 1);
	cr_assert(writer_client_alive(w), "input on the fd is not a hang-up");
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	cr_assert(writer_client_alive(w), "nor the end of the peer's output");
	close(sv[1]);
	cr_assert_not(writer_client_alive(w));
	cr_assert_eq(lost_calls, 0, "not from inside the question");
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert_eq(lost_calls, 1);
	writer_free(w);
	close(sv[0]);
	event_base_free(base);
}

/* A write that fails with EPIPE tells lost from the loop, not from
 * inside writer_flush(). */
Test(writer, a_failed_write_tells_lost_from_the_loop)
{
	struct event_base *base = event_base_new();
	struct calls calls = { 0, 0 };
	struct writer *w;
	int fds[2];

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(pipe(fds), 0);
	w = writer_new(base, fds[1], on_drained, on_finished, &calls);
	cr_assert(writer_watch_client(w, on_lost));
	close(fds[0]);
	cr_assert(writer_send(w, lines[1], strlen(lines[1])));
	writer_flush(w);
	cr_assert_eq(writer_queued(w), 0, "dropped");
	cr_assert_eq(lost_calls, 0);
	(void)event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert_eq(lost_calls, 1);
	writer_free(w);
	close(fds[1]);
	event_base_free(base);
}
