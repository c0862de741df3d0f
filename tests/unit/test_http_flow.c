/*
 * How an HTTP call unfolds in time and what it reports: body limits,
 * Retry-After, the budget, outcomes when the connection breaks, retries,
 * many requests in flight, shutdown.  Against http_target.py.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

TestSuite(http_flow, .init = setup, .fini = teardown, .timeout = 20);

static struct captured
run(const struct http_request *req)
{
	return harness_run(&fx, req);
}

static struct http_request
request(const char *host, const char *path)
{
	return harness_request(&fx, host, path);
}


static long
vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

Test(http_flow, five_megabyte_body_cut_at_limit_memory_bounded)
{
	struct http_request warm = request("127.0.0.1", "/big/100000");
	struct http_request req = request("127.0.0.1", "/big/5242880");
	struct captured c;
	long before, after;

	run(&warm);
	before = vm_hwm_kb();
	req.body_max = 65536;
	c = run(&req);
	after = vm_hwm_kb();
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(c.r.body_len, 65536);
	cr_assert_eq(c.r.body_total, 5242880);
	cr_assert_eq(memcmp(c.body, "0123456789abcdef0123", 20), 0);
	/* The cut is said by the dispatch, which cuts again once it has
	 * withheld credentials (executor/redact.h). */
	cr_assert_str_empty(c.r.message);
	cr_log_info("peak RSS grew by %ld kB for a 5 MB body", after - before);
	cr_assert_lt(after - before, 1024, "peak RSS grew by %ld kB",
	    after - before);
}

Test(http_flow, retry_after_two_seconds_waits_once_then_succeeds)
{
	struct http_request req = request("127.0.0.1", "/retry-after/2/a1");
	struct captured c = run(&req);

	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(c.r.attempts, 2);
	cr_assert_eq(http_peer_requests(&fx.peer), 2);
	cr_assert_geq(c.elapsed_us, 2000000u);
	/* once (two attempts, counted above), not for ever */
	cr_assert_lt(c.elapsed_us, 10000000u);
}

Test(http_flow, retry_after_is_honoured_only_once)
{
	struct http_request req = request("127.0.0.1", "/retry-after/1/o/5");
	struct captured c = run(&req);

	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.attempts, 2);
	cr_assert_str_eq(c.r.message, "the service asks to wait 1 s");
	cr_assert_eq(http_peer_requests(&fx.peer), 2);
	cr_assert_geq(c.elapsed_us, 1000000u);
}

Test(http_flow, retry_after_long_returns_at_once)
{
	struct http_request req = request("127.0.0.1", "/retry-after/120/b");
	struct http_request date = request("127.0.0.1",
	    "/retry-after/date300/c");
	struct http_request post = request("127.0.0.1", "/retry-after/1/d");
	struct captured c;

	c = run(&req);
	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.retry_after_s, 120);
	cr_assert_not_null(strstr(c.r.message, "asks to wait 120 s"), "%s",
	    c.r.message);
	cr_assert_lt(c.elapsed_us, 10000000u);	/* far from 120 s */
	c = run(&date);
	cr_assert_eq(c.r.status, 503);
	/* The date has one-second resolution and the peer formats it before
	 * the executor reads the clock: on a loaded machine several seconds
	 * can pass in between, so allow some, but far from 0 or 120. */
	cr_assert(c.r.retry_after_s >= 290 && c.r.retry_after_s <= 300,
	    "retry_after_s %ld", c.r.retry_after_s);
	cr_assert_not_null(strstr(c.r.message, "asks to wait"));
	/* A POST is not repeated, even after a short Retry-After. */
	post.method = HTTP_METHOD_POST;
	c = run(&post);
	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.attempts, 1);
	cr_assert_eq(http_peer_requests(&fx.peer), 3);
}

Test(http_flow, slow_server_hits_the_budget)
{
	struct http_request req = request("127.0.0.1", "/slow/5000");
	struct captured c;

	req.budget_ms = 1500;
	c = run(&req);
	cr_assert_eq(c.r.status, 0);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_str_eq(c.r.message, "no answer within the 1500 ms budget");
	cr_assert_geq(c.elapsed_us, 1400000u);
	/* the budget's end, not the server's at 5 s */
	cr_assert_lt(c.elapsed_us, 4500000u);
	/* A mutating request that was sent and never answered. */
	req.method = HTTP_METHOD_PUT;
	req.budget_ms = 1200;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_UNKNOWN);
	cr_assert_str_eq(c.r.message, "no answer within the 1200 ms budget");
}

Test(http_flow, connection_closed_after_post_is_unknown)
{
	struct http_request req = request("127.0.0.1", "/close");
	struct captured c;
	cJSON *log;

	req.method = HTTP_METHOD_POST;
	req.body = "name=a\nb";
	req.body_len = 8;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_UNKNOWN, "%s", c.r.message);
	cr_assert_eq(c.r.attempts, 1);
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), 1);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "body"), "name=a\nb");
	cJSON_Delete(log);
	/* A GET applies nothing: failed, and not retried once it was sent. */
	req.method = HTTP_METHOD_GET;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c.r.attempts, 1);
}

Test(http_flow, connection_refused_is_failed_and_get_retried)
{
	struct http_request req = request("127.0.0.1", "/x");
	struct captured c;

	req.port = http_peer_closed_port();
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c.r.attempts, 3);
	cr_assert_not_null(strstr(c.r.message, "onnect"), "%s", c.r.message);
	req.method = HTTP_METHOD_DELETE;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c.r.attempts, 1);
}

Test(http_flow, sixteen_in_flight_complete_and_reuse_connections)
{
	enum { INFLIGHT = 16, ROUNDS = 2 };
	struct captured c[INFLIGHT];
	struct http_request req[INFLIGHT];
	char paths[INFLIGHT][32];
	struct http_engine_stats st;
	int ports[ROUNDS * INFLIGHT], nports = 0;
	const cJSON *e;
	cJSON *log;

	for (int round = 0; round < ROUNDS; round++) {
		memset(c, 0, sizeof(c));
		for (int i = 0; i < INFLIGHT; i++) {
			c[i].owner = &fx;
			snprintf(paths[i], sizeof(paths[i]), "/n/%d/%d", round, i);
			req[i] = request("127.0.0.1", paths[i]);
			cr_assert_eq(http_engine_submit(fx.engine, &req[i],
			    harness_capture_done, &c[i]), 0);
		}
		cr_assert_eq(http_engine_inflight(fx.engine), INFLIGHT);
		harness_run_all(&fx, c, INFLIGHT);
		for (int i = 0; i < INFLIGHT; i++) {
			cr_assert_eq(c[i].r.status, 200);
			cr_assert_str_eq((char *)c[i].body, "ok\n");
		}
	}
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), ROUNDS * INFLIGHT);
	cJSON_ArrayForEach(e, log) {
		int port = cJSON_GetObjectItemCaseSensitive(e, "peer_port")->valueint;
		bool seen = false;

		for (int i = 0; i < nports; i++)
			seen = seen || ports[i] == port;
		if (!seen)
			ports[nports++] = port;
	}
	http_engine_stats(fx.engine, &st);
	cr_log_info("%d requests over %d connections", ROUNDS * INFLIGHT,
	    nports);
	cr_assert_leq(nports, 4, "%d connections for %d requests", nports,
	    ROUNDS * INFLIGHT);
	cr_assert_eq((uint64_t)nports, st.connections_opened);
	cJSON_Delete(log);
}

Test(http_flow, attempt_with_less_than_a_second_left_is_not_started)
{
	struct http_request req = request("127.0.0.1", "/x");
	struct http_request wait = request("127.0.0.1", "/retry-after/2/w");
	struct captured c;

	req.budget_ms = 800;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c.r.attempts, 0);
	cr_assert_str_eq(c.r.message, "no answer within the 800 ms budget");
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
	/* 2 s of waiting plus a 1 s attempt do not fit in 2500 ms. */
	wait.budget_ms = 2500;
	c = run(&wait);
	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.attempts, 1);
	cr_assert_str_eq(c.r.message, "the service asks to wait 2 s");
	cr_assert_lt(c.elapsed_us, 1900000u);	/* it did not wait the 2 s */
}

static void
never_called(const struct http_result *r, void *arg)
{
	(void)r;
	(void)arg;
	cr_assert_fail("a callback ran after http_engine_free");
}

Test(http_flow, engine_free_aborts_requests_in_flight_without_callbacks)
{
	struct http_request slow = request("127.0.0.1", "/slow/3000");
	struct http_request waiting = request("127.0.0.1", "/retry-after/5/z");

	cr_assert_eq(http_engine_submit(fx.engine, &slow, never_called, NULL), 0);
	cr_assert_eq(http_engine_submit(fx.engine, &slow, never_called, NULL), 0);
	waiting.budget_ms = 10000;
	cr_assert_eq(http_engine_submit(fx.engine, &waiting, never_called,
	    NULL), 0);
	while (http_peer_requests(&fx.peer) < 3) {
		event_base_loop(fx.base, EVLOOP_NONBLOCK);
		usleep(10000);
	}
	cr_assert_eq(http_engine_inflight(fx.engine), 3);
	http_engine_free(fx.engine);
	fx.engine = http_engine_new(fx.base, 4);
	event_base_loop(fx.base, EVLOOP_NONBLOCK);
}

Test(http_flow, post_answered_303_then_broken_get_is_unknown)
{
	/* The POST was applied (it was answered); the GET after the 303
	 * breaks.  The call may have changed something: unknown. */
	struct http_request req = request("api.test",
	    "/redirect/303?to=%2Fclose");
	struct captured c;
	cJSON *log;

	req.method = HTTP_METHOD_POST;
	req.body = "a=1";
	req.body_len = 3;
	req.follow_redirects = true;
	c = run(&req);
	cr_assert_eq(c.r.redirects, 1);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_UNKNOWN, "%s", c.r.message);
	log = http_peer_log(&fx.peer);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "method"), "POST");
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 1), "method"), "GET");
	cJSON_Delete(log);
}

Test(http_flow, post_on_a_reused_connection_is_never_sent_twice)
{
	/* curl re-sends a request on a fresh connection when a reused one
	 * dies unanswered; for a POST that would apply it twice. */
	struct http_request warm = request("127.0.0.1", "/warm");
	struct http_request req = request("127.0.0.1", "/close");
	struct http_engine_stats st;
	struct captured c;
	cJSON *log;

	cr_assert_eq(run(&warm).r.status, 200);
	req.method = HTTP_METHOD_POST;
	req.body = "qty=3";
	req.body_len = 5;
	c = run(&req);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_UNKNOWN, "%s", c.r.message);
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), 2, "the POST arrived %d times",
	    cJSON_GetArraySize(log) - 1);
	cr_assert_eq(cJSON_GetObjectItemCaseSensitive(harness_logged(log, 0),
	    "peer_port")->valueint, cJSON_GetObjectItemCaseSensitive(
	    harness_logged(log, 1), "peer_port")->valueint,
	    "the POST did not go over the reused connection");
	cr_log_info("connections opened: %llu",
	    (unsigned long long)st.connections_opened);
	cJSON_Delete(log);
}
