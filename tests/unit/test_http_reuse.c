/*
 * What the engine's per-call shortcuts must not change: an easy handle
 * reused from the pool carries nothing of its last call (credential,
 * headers, method, body) to the next one, and a literal host, which
 * skips the resolver, meets the same address rules and still reports
 * only from the loop.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "executor/http.h"
#include "tests/unit/http_harness.h"

static struct harness fx;

static void
setup(void)
{
	harness_setup(&fx);
	/* One pooled handle: every call after the first reuses it. */
	http_engine_set_easy_pool(fx.engine, 1);
}

static void
teardown(void)
{
	harness_teardown(&fx);
}

TestSuite(http_reuse, .init = setup, .fini = teardown, .timeout = 20);

#define SECRET_A "tok-A\"$(id)%2e%2e\xc3\xa9\xe2\x82\xac"
#define SECRET_B "key-B'\\n`x`"

/* Whether text occurs anywhere in a logged request (line, headers, body). */
static bool
logged_contains(const cJSON *e, const char *text)
{
	char *all = cJSON_PrintUnformatted(e);
	bool found;

	cr_assert_not_null(all);
	found = strstr(all, text) != NULL;
	cJSON_free(all);
	return found;
}

/* A: PUT with bearer, a header and a body.  Then B, C, D on the handle. */
Test(http_reuse, nothing_of_a_call_reaches_the_next_on_a_reused_handle)
{
	struct http_credential a_cred = { HTTP_CREDENTIAL_BEARER, NULL,
	    SECRET_A, strlen(SECRET_A) };
	struct http_credential c_cred = { HTTP_CREDENTIAL_HEADER, "X-Api-Key",
	    SECRET_B, strlen(SECRET_B) };
	struct http_header a_hdr[] = { { "X-Only-A", "v \"q\" $(x)" } };
	const char *a_body = "{\"name\":\"caf\xc3\xa9 \\\"A\\\"\",\"n\":3}";
	struct http_request a = harness_request(&fx, "127.0.0.1", "/a");
	struct http_request b = harness_request(&fx, "127.0.0.1", "/b");
	struct http_request c = harness_request(&fx, "127.0.0.1", "/c");
	struct http_request d = harness_request(&fx, "127.0.0.1", "/d");
	struct http_engine_stats st;
	struct captured r;
	cJSON *log;

	a.method = HTTP_METHOD_PUT;
	a.credential = &a_cred;
	a.headers = a_hdr;
	a.nheaders = 1;
	a.body = a_body;
	a.body_len = strlen(a_body);
	a.content_type = "application/json";
	c.credential = &c_cred;
	d.method = HTTP_METHOD_POST;
	d.body = "k=v&n=2";
	d.body_len = 7;
	for (const struct http_request *q[] = { &a, &b, &c, &d, &b }, **p = q;
	    p < q + 5; p++) {
		r = harness_run(&fx, *p);
		cr_assert_eq(r.r.status, 200, "%s: %s", (*p)->path,
		    r.r.message);
	}
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(st.connections_opened, 1, "the connection was reused");
	log = http_peer_log(&fx.peer);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "method"),
	    "PUT");
	cr_assert(logged_contains(harness_logged(log, 0), "X-Only-A"));
	for (int i = 1; i < 5; i++) {
		const cJSON *e = harness_logged(log, i);
		const char *want = i == 3 ? "POST" : "GET";

		cr_assert_str_eq(harness_logged_str(e, "method"), want,
		    "request %d", i);
		cr_assert(!logged_contains(e, "tok-A"), "request %d", i);
		cr_assert(!logged_contains(e, "X-Only-A"), "request %d", i);
		cr_assert_null(http_peer_header(e, "Content-Type"),
		    "request %d", i);
		if (i != 3)
			cr_assert_str_eq(harness_logged_str(e, "body"), "",
			    "request %d", i);
		if (i != 2)
			cr_assert_null(http_peer_header(e, "X-Api-Key"),
			    "request %d", i);
		if (i != 2 && i != 3)
			cr_assert_null(http_peer_header(e, "Authorization"),
			    "request %d", i);
	}
	cr_assert_str_eq(http_peer_header(harness_logged(log, 2), "X-Api-Key"),
	    SECRET_B);
	cr_assert_null(http_peer_header(harness_logged(log, 2),
	    "Authorization"));
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 3), "body"),
	    "k=v&n=2");
	cJSON_Delete(log);
}

Test(http_reuse, a_literal_never_reaches_the_resolver)
{
	struct http_request v4 = harness_request(&fx, "127.0.0.1", "/lit");
	struct captured r;

	r = harness_run(&fx, &v4);
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	cr_assert_eq(fx.resolver_calls, 0);
	cr_assert_eq(http_peer_requests(&fx.peer), 1);
}

static void
refused_literal_is_reported_from_the_loop(const char *host, unsigned allow,
    const char *class_name)
{
	struct http_request req = harness_request(&fx, host, "/meta");
	struct http_engine_stats st;
	struct captured r = { .owner = &fx };

	req.scheme = HTTP_SCHEME_HTTPS;
	req.addr_allow = allow;
	cr_assert_eq(http_engine_submit(fx.engine, &req, harness_capture_done,
	    &r), 0);
	cr_assert(!r.done, "%s: answered inside submit", host);
	harness_run_all(&fx, &r, 1);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED, "%s", host);
	cr_assert_not_null(strstr(r.r.message, class_name), "%s: %s", host,
	    r.r.message);
	cr_assert_not_null(strstr(r.r.message, "not connected"), "%s", host);
	cr_assert_eq(r.r.attempts, 0, "%s", host);
	cr_assert_eq(st.connections_opened, 0, "%s", host);
	cr_assert_eq(fx.resolver_calls, 0, "%s", host);
}

Test(http_reuse, a_literal_meets_the_address_rules_of_a_resolved_name)
{
	unsigned all_but_meta = HTTP_ALLOW_LOOPBACK | HTTP_ALLOW_PRIVATE |
	    HTTP_ALLOW_LINK_LOCAL;

	refused_literal_is_reported_from_the_loop("169.254.169.254",
	    all_but_meta, "cloud metadata");
	refused_literal_is_reported_from_the_loop("::ffff:169.254.169.254",
	    all_but_meta, "cloud metadata");
	refused_literal_is_reported_from_the_loop("fd00:ec2::254",
	    all_but_meta, "cloud metadata");
	refused_literal_is_reported_from_the_loop("10.0.0.7", 0, "private");
	refused_literal_is_reported_from_the_loop("::1", HTTP_ALLOW_PRIVATE,
	    "loopback");
	refused_literal_is_reported_from_the_loop("127.0.0.1", 0, "loopback");
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
}
