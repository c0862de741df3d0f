/*
 * Helper of tests/bench/exec_bench.py (printed figures, not asserted):
 *
 *   exec_bench_peer serve            a small HTTP/1.1 server (libevent's
 *                                    evhttp) on 127.0.0.1, port on stdout,
 *                                    every request answered 200 "ok\n",
 *                                    until stdin closes
 *   exec_bench_peer curl URL N K     N GETs of URL with plain libcurl, K
 *                                    in flight (one multi handle, reused
 *                                    connections), one latency in µs per
 *                                    line, then "wall <µs>"
 *   exec_bench_peer mcp N K TOOL ARGS -- SP_ARGV...
 *                                    the same through `sp mcp`
 *                                    (tests/bench/exec_bench_mcp.h)
 *   exec_bench_peer pingpong N [one-cpu]
 *                                    N round trips of one byte between two
 *                                    processes over a SOCK_SEQPACKET pair,
 *                                    each waiting in epoll as sp's loops
 *                                    do; one latency in µs per line: the
 *                                    machine's price of one hop pair.
 *                                    With one-cpu both are bound to the
 *                                    CPU the parent runs on, so neither
 *                                    wakes an idle CPU: the difference is
 *                                    what waking one costs here
 *
 * The server is C because the Python target was the bottleneck: the
 * comparison is Sallyport against a direct libcurl loop, not against it.
 */
#include "config.h"

#include <sched.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/exec_bench_mcp.h"

#define BENCH_INFLIGHT_MAX 64

static void
serve_ok(struct evhttp_request *req, void *arg)
{
	struct evbuffer *b = evbuffer_new();

	(void)arg;
	if (b == NULL)
		return;
	evbuffer_add(b, "ok\n", 3);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void
serve_stdin_closed(evutil_socket_t fd, short what, void *arg)
{
	char c;

	(void)what;
	if (read(fd, &c, 1) <= 0)
		event_base_loopbreak(arg);
}

static int
serve(void)
{
	struct event_base *base = event_base_new();
	struct evhttp *http = base != NULL ? evhttp_new(base) : NULL;
	struct evhttp_bound_socket *h;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct event *ev;

	if (http == NULL || (h = evhttp_bind_socket_with_handle(http,
	    "127.0.0.1", 0)) == NULL || getsockname(
	    evhttp_bound_socket_get_fd(h), (struct sockaddr *)&sin, &len) == -1)
		return 1;
	evhttp_set_gencb(http, serve_ok, NULL);
	printf("%u\n", ntohs(sin.sin_port));
	fflush(stdout);
	ev = event_new(base, 0, EV_READ | EV_PERSIST, serve_stdin_closed, base);
	if (ev == NULL || event_add(ev, NULL) == -1)
		return 1;
	event_base_dispatch(base);
	event_free(ev);
	evhttp_free(http);
	event_base_free(base);
	return 0;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static CURL *
easy_for(const char *url, uint64_t *start)
{
	CURL *e = curl_easy_init();

	if (e == NULL)
		return NULL;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PRIVATE, start);
	*start = mono_us();
	return e;
}

/* N requests, k in flight, on one multi handle (pooled connections). */
static int
curl_loop(const char *url, long n, long k)
{
	uint64_t starts[BENCH_INFLIGHT_MAX], *st, t0 = mono_us();
	CURLM *m = curl_multi_init();
	long submitted = 0, finished = 0, i;
	int running, queued;
	CURLMsg *msg;
	CURL *e;

	if (m == NULL || k < 1 || k > BENCH_INFLIGHT_MAX)
		return 1;
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, k);
	for (i = 0; i < k && submitted < n; i++, submitted++)
		if ((e = easy_for(url, &starts[i])) == NULL ||
		    curl_multi_add_handle(m, e) != CURLM_OK)
			return 1;
	while (finished < n) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			return 1;
		/* Wait only when nothing finished: new handles start now. */
		if ((msg = curl_multi_info_read(m, &queued)) == NULL) {
			if (curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
				return 1;
			continue;
		}
		for (; msg != NULL; msg = curl_multi_info_read(m, &queued)) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&st);
			printf("%llu\n", (unsigned long long)(mono_us() - *st));
			curl_multi_remove_handle(m, msg->easy_handle);
			curl_easy_cleanup(msg->easy_handle);
			finished++;
			if (submitted < n) {
				if ((e = easy_for(url, st)) == NULL ||
				    curl_multi_add_handle(m, e) != CURLM_OK)
					return 1;
				submitted++;
			}
		}
	}
	printf("wall %llu\n", (unsigned long long)(mono_us() - t0));
	curl_multi_cleanup(m);
	return 0;
}

/* Waits in epoll for fd, then reads one record; false on any error. */
static bool
pingpong_wait(int ep, int fd)
{
	struct epoll_event ev;
	char byte;

	return epoll_wait(ep, &ev, 1, 5000) == 1 &&
	    recv(fd, &byte, 1, 0) == 1;
}

static int
pingpong_epoll(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		return -1;
	return ep;
}

/* Binds this process, and the child it forks next, to its current CPU. */
static bool
pingpong_one_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return false;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static int
pingpong(long n, bool one_cpu)
{
	int sv[2], ep, status;
	pid_t pid;
	long i;

	if (n <= 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return 1;
	if (one_cpu && !pingpong_one_cpu()) {
		perror("pingpong: sched_setaffinity");
		return 1;
	}
	if ((pid = fork()) == 0) {
		close(sv[0]);
		if ((ep = pingpong_epoll(sv[1])) < 0)
			_exit(1);
		for (i = 0; i < n; i++)
			if (!pingpong_wait(ep, sv[1]) ||
			    send(sv[1], "p", 1, 0) != 1)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	if (pid < 0 || (ep = pingpong_epoll(sv[0])) < 0)
		return 1;
	for (i = 0; i < n; i++) {
		uint64_t t = mono_us();

		if (send(sv[0], "p", 1, 0) != 1 || !pingpong_wait(ep, sv[0]))
			return 1;
		printf("%llu\n", (unsigned long long)(mono_us() - t));
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc == 2 && strcmp(argv[1], "serve") == 0)
		return serve();
	if (argc >= 2 && strcmp(argv[1], "mcp") == 0)
		return mcp_bench_main(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "pingpong") == 0)
		return pingpong(atol(argv[2]), false);
	if (argc == 4 && strcmp(argv[1], "pingpong") == 0 &&
	    strcmp(argv[3], "one-cpu") == 0)
		return pingpong(atol(argv[2]), true);
	if (argc != 5 || strcmp(argv[1], "curl") != 0) {
		fprintf(stderr, "usage: exec_bench_peer serve | "
		    "curl URL N K | mcp N K TOOL ARGS -- SP_ARGV... | "
		    "pingpong N [one-cpu]\n");
		return 64;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = curl_loop(argv[2], atol(argv[3]), atol(argv[4]));
	curl_global_cleanup();
	return rc;
}
