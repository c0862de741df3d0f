/*
 * http_engine_cancel(): an abandoned request's callback never runs, its
 * transfer stops, and the caller learns whether bytes may have reached the
 * target.  Against http_target.py.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <event2/event.h>

#include "executor/http.h"
#include "tests/unit/http_harness.h"

static struct harness fx;

static void
setup(void)
{
	harness_setup(&fx);
}

static void
teardown(void)
{
	harness_teardown(&fx);
}

TestSuite(http_cancel, .init = setup, .fini = teardown, .timeout = 20);

/* Runs the loop for ms milliseconds. */
static void
spin(unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	cr_assert_eq(event_base_loopexit(fx.base, &tv), 0);
	cr_assert_geq(event_base_dispatch(fx.base), 0);
}

Test(http_cancel, a_request_under_way_is_aborted_and_may_have_been_sent)
{
	struct http_request req = harness_request(&fx, "127.0.0.1",
	    "/slow/1500");
	struct captured c = { .owner = &fx };
	bool sent = false;

	cr_assert_eq(http_engine_submit(fx.engine, &req, harness_capture_done,
	    &c), 0);
	spin(500);
	cr_assert_eq(http_peer_requests(&fx.peer), 1, "the request arrived");
	cr_assert(http_engine_cancel(fx.engine, &c, &sent));
	cr_assert(sent);
	cr_assert_eq(http_engine_inflight(fx.engine), 0);
	spin(1500);
	cr_assert_not(c.done, "a cancelled request's callback ran");
	cr_assert_not(http_engine_cancel(fx.engine, &c, &sent),
	    "cancelled twice");
}

Test(http_cancel, a_request_not_started_is_not_sent)
{
	struct http_request req = harness_request(&fx, "127.0.0.1", "/x/y");
	struct captured c = { .owner = &fx };
	bool sent = true;

	cr_assert_eq(http_engine_submit(fx.engine, &req, harness_capture_done,
	    &c), 0);
	cr_assert(http_engine_cancel(fx.engine, &c, &sent));
	cr_assert_not(sent);
	spin(300);
	cr_assert_not(c.done);
	cr_assert_eq(http_peer_requests(&fx.peer), 0, "nothing was sent");
}

Test(http_cancel, only_the_named_request_is_cancelled)
{
	struct http_request slow = harness_request(&fx, "127.0.0.1",
	    "/slow/300");
	struct http_request fast = harness_request(&fx, "127.0.0.1", "/a");
	struct captured c[2] = { { .owner = &fx }, { .owner = &fx } };
	bool sent;

	cr_assert_eq(http_engine_submit(fx.engine, &slow,
	    harness_capture_done, &c[0]), 0);
	cr_assert_eq(http_engine_submit(fx.engine, &fast,
	    harness_capture_done, &c[1]), 0);
	cr_assert(http_engine_cancel(fx.engine, &c[1], &sent));
	harness_run_all(&fx, &c[0], 1);
	cr_assert_eq(c[0].r.status, 200);
	cr_assert_not(c[1].done);
}
