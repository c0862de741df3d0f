/*
 * broker/children.c: every channel's buffers hold a maximum-size record
 * as one datagram, whatever the host's default buffer size.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker/children.h"
#include "common/record.h"

static int
buffer_size(int fd, int opt)
{
	int v = 0;
	socklen_t len = sizeof(v);

	cr_assert_eq(getsockopt(fd, SOL_SOCKET, opt, &v, &len), 0);
	return v;
}

/* A host whose wmem_default is small: 8192 asked, 16384 stored. */
static void
shrink(int fd)
{
	int small = 8192;

	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small,
	    sizeof(small)), 0);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small,
	    sizeof(small)), 0);
}

Test(channel_buffers, sizes_read_back_at_least_a_record)
{
	int sv[2], i;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	for (i = 0; i < 2; i++) {
		shrink(sv[i]);
		cr_assert(channel_buffers_set(sv[i]));
		cr_expect_geq(buffer_size(sv[i], SO_SNDBUF),
		    2 * CHANNEL_BUFFER_BYTES);
		cr_expect_geq(buffer_size(sv[i], SO_RCVBUF),
		    2 * CHANNEL_BUFFER_BYTES);
	}
	cr_expect_gt(CHANNEL_BUFFER_BYTES, RECORD_MAX_BYTES +
	    RECORD_HEADER_LEN);
	(void)close(sv[0]);
	(void)close(sv[1]);
}

/* The effect that matters: the largest record goes as one datagram. */
Test(channel_buffers, largest_record_is_one_datagram)
{
	size_t n = RECORD_MAX_BYTES;
	char *out = malloc(n), *in = malloc(n + 1);
	int sv[2];
	ssize_t got;

	cr_assert(out != NULL && in != NULL);
	memset(out, 'r', n);
	out[0] = '"';
	out[n - 1] = '\n';
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	shrink(sv[0]);
	shrink(sv[1]);
	/* The small default really is too small: the test shows a change. */
	cr_assert_eq(send(sv[0], out, n, MSG_DONTWAIT), -1);
	cr_assert(errno == EMSGSIZE || errno == ENOBUFS || errno == EAGAIN,
	    "errno %d", errno);
	cr_assert(channel_buffers_set(sv[0]));
	cr_assert(channel_buffers_set(sv[1]));
	cr_assert_eq(send(sv[0], out, n, MSG_DONTWAIT), (ssize_t)n,
	    "send: %s", strerror(errno));
	got = recv(sv[1], in, n + 1, MSG_DONTWAIT);
	cr_assert_eq(got, (ssize_t)n);
	cr_expect_eq(memcmp(in, out, n), 0);
	(void)close(sv[0]);
	(void)close(sv[1]);
	free(out);
	free(in);
}
