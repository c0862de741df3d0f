/*
 * Name resolution runs off the event loop and within the call's budget
 * (executor/http_resolve.h): a resolver stuck for 10 s neither stalls
 * another call or timer nor holds its own call past a 4000 ms budget
 * (long budgets, so that each bound stays far from the next on a loaded
 * machine).
 * Against http_target.py.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <event2/event.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "executor/http.h"
#include "tests/unit/http_harness.h"

static struct harness fx;
static atomic_int stuck_returned;

/* "stuck.test" blocks 10 s; every name answers 127.0.0.1. */
static bool
slow_resolver(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&addrs[0];
	struct timespec ts = { 10, 0 };

	(void)arg;
	if (max < 1)
		return false;
	if (strcmp(host, "stuck.test") == 0)
		(void)nanosleep(&ts, NULL);
	memset(&addrs[0], 0, sizeof(addrs[0]));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*n = 1;
	if (strcmp(host, "stuck.test") == 0)
		atomic_store(&stuck_returned, 1);
	return true;
}

static void
setup(void)
{
	harness_setup(&fx);
	http_engine_set_resolver(fx.engine, slow_resolver, NULL);
}

/* The resolver thread ends before the process: nothing is left behind. */
static void
teardown(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < 1000 && !atomic_load(&stuck_returned); i++)
		(void)nanosleep(&ts, NULL);
	(void)nanosleep(&ts, NULL);
	harness_teardown(&fx);
}

TestSuite(http_resolve, .init = setup, .fini = teardown, .timeout = 60);

struct tick {
	uint64_t start_us, fired_us;
};

static void
tick_fired(evutil_socket_t fd, short what, void *arg)
{
	struct tick *t = arg;

	(void)fd;
	(void)what;
	t->fired_us = harness_mono_us() - t->start_us;
}

Test(http_resolve, a_stuck_name_ends_at_the_budget_and_blocks_nothing)
{
	struct http_request stuck = harness_request(&fx, "stuck.test",
	    "/items/%2e%2e/caf%C3%A9");
	struct http_request other = harness_request(&fx, "quick.test",
	    "/slow/100");
	struct captured c[2] = { { .owner = &fx }, { .owner = &fx } };
	struct timeval tv = { 0, 200 * 1000 };
	struct tick t = { harness_mono_us(), 0 };
	struct event *timer;

	/* A long budget, so that "blocks nothing" is far from the budget's
	 * end even on a loaded machine. */
	stuck.budget_ms = 4000;
	timer = evtimer_new(fx.base, tick_fired, &t);
	cr_assert_not_null(timer);
	cr_assert_eq(evtimer_add(timer, &tv), 0);
	cr_assert_eq(http_engine_submit(fx.engine, &stuck,
	    harness_capture_done, &c[0]), 0);
	cr_assert_eq(http_engine_submit(fx.engine, &other,
	    harness_capture_done, &c[1]), 0);
	harness_run_all(&fx, c, 2);
	event_free(timer);

	cr_assert_neq(t.fired_us, 0, "the 200 ms timer never fired");
	cr_assert_lt(t.fired_us, 3000 * 1000, "the 200 ms timer fired at "
	    "%llu us", (unsigned long long)t.fired_us);
	cr_assert_eq(c[1].r.outcome, HTTP_OUTCOME_OK, "%s", c[1].r.message);
	cr_assert_eq(c[1].r.status, 200);
	cr_assert_lt(c[1].r.timings.total_us, 3500 * 1000, "the other call "
	    "took %llu us", (unsigned long long)c[1].r.timings.total_us);
	cr_assert_eq(c[0].r.outcome, HTTP_OUTCOME_FAILED, "%s",
	    c[0].r.message);
	cr_assert_lt(c[0].r.timings.total_us, 8000 * 1000, "the stuck call "
	    "took %llu us", (unsigned long long)c[0].r.timings.total_us);
	cr_assert_geq(c[0].r.timings.total_us, 3990 * 1000);
	cr_assert_not_null(strstr(c[0].r.message, "stuck.test"), "%s",
	    c[0].r.message);
	cr_assert_not_null(strstr(c[0].r.message, "4000 ms budget"), "%s",
	    c[0].r.message);
	cr_assert_eq(http_peer_requests(&fx.peer), 1, "only the other call "
	    "reached the target");
}

Test(http_resolve, a_name_resolved_on_the_thread_is_used)
{
	struct http_request req = harness_request(&fx, "named.test",
	    "/items/named");
	struct captured c;

	atomic_store(&stuck_returned, 1);
	c = harness_run(&fx, &req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK, "%s", c.r.message);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(http_peer_requests(&fx.peer), 1);
}
