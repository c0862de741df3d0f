/*
 * What the HTTP engine sends and where: credentials, path and header
 * bytes, methods and bodies, redirects, TLS, address rules.  Against a
 * real local HTTP server (http_target.py) on a libevent loop.
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

TestSuite(http, .init = setup, .fini = teardown, .timeout = 20);

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


#define SECRET "s3cr\"et$(id)%2e%2e-\xc3\xa9t\xe2\x82\xac-42"

Test(http, bearer_credential_reaches_target_and_no_stderr)
{
	struct http_credential cred = { HTTP_CREDENTIAL_BEARER, NULL, SECRET,
	    strlen(SECRET) };
	struct http_request ok = request("127.0.0.1", "/items/7");
	struct http_request bad = request("127.0.0.1", "/x");
	struct http_request badhdr = request("127.0.0.1", "/x");
	struct http_header evil = { "X-Note", "a\r\nb" };
	struct captured c1, c2, c3;
	char tmpl[] = "/tmp/sp-http-stderr-XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO);
	char *err;
	cJSON *log;

	cr_assert(fd != -1 && saved != -1);
	unlink(tmpl);
	ok.credential = bad.credential = badhdr.credential = &cred;
	bad.port = http_peer_closed_port();
	bad.method = HTTP_METHOD_POST;
	badhdr.headers = &evil;
	badhdr.nheaders = 1;
	dup2(fd, STDERR_FILENO);
	c1 = run(&ok);
	c2 = run(&bad);
	c3 = run(&badhdr);
	dup2(saved, STDERR_FILENO);
	err = harness_slurp(fd);

	cr_assert_eq(c1.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c1.r.status, 200);
	cr_assert_eq(c2.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c3.r.outcome, HTTP_OUTCOME_FAILED);
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), 1);
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "Authorization"),
	    "Bearer " SECRET);
	cr_assert_null(strstr(err, "s3cr"), "secret on stderr: %s", err);
	cr_assert_null(strstr(c2.r.message, "s3cr"));
	cr_assert_null(strstr(c3.r.message, "s3cr"));
	cJSON_Delete(log);
	free(err);
}

Test(http, basic_and_named_header_credentials)
{
	struct http_credential basic = { HTTP_CREDENTIAL_BASIC, NULL,
	    "ops:pa ss:w\xc3\xb6rd", 15 };
	struct http_credential named = { HTTP_CREDENTIAL_HEADER, "X-Api-Key",
	    "k-123\"'", 7 };
	struct http_request a = request("127.0.0.1", "/a");
	struct http_request b = request("127.0.0.1", "/b");
	cJSON *log;

	a.credential = &basic;
	b.credential = &named;
	struct captured ca = run(&a);
	cr_assert_eq(ca.r.status, 200, "%s", ca.r.message);
	cr_assert_eq(run(&b).r.status, 200);
	log = http_peer_log(&fx.peer);
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "Authorization"),
	    "Basic b3BzOnBhIHNzOnfDtnJk");
	cr_assert_str_eq(http_peer_header(harness_logged(log, 1), "X-Api-Key"),
	    "k-123\"'");
	cr_assert_null(http_peer_header(harness_logged(log, 1), "Authorization"));
	cJSON_Delete(log);
}

Test(http, expanded_path_arrives_byte_for_byte)
{
	const char *path = "/items/..%2F%2e%2e%2Fadmin/../x/./y"
	    "?q=%0D%0AX-Evil%3A%201&r=%22%24(id)%22&s=%E2%82%AC";
	struct http_request req = request("127.0.0.1", path);
	struct captured c = run(&req);
	cJSON *log = http_peer_log(&fx.peer);

	cr_assert_eq(c.r.status, 200);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "path"), path);
	cr_assert_null(http_peer_header(harness_logged(log, 0), "X-Evil"));
	cJSON_Delete(log);
}

Test(http, raw_control_bytes_in_path_refused_before_connecting)
{
	static const char *const paths[] = { "/a\r\nX-Evil: 1", "/a b",
	    "/a\n", "items", "/caf\xc3\xa9", "/a#frag" };
	struct http_engine_stats st;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct http_request req = request("127.0.0.1", paths[i]);
		struct captured c = run(&req);

		cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%zu", i);
		cr_assert_not_null(strstr(c.r.message, "path refused"), "%s",
		    c.r.message);
		cr_assert_eq(c.r.attempts, 0);
	}
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(st.connections_opened, 0);
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
}

Test(http, header_values_with_cr_lf_and_reserved_names_refused)
{
	static const struct http_header bad[][1] = {
		{ { "X-Note", "ok\r\nX-Evil: 1" } },
		{ { "X-Note", "ok\nX-Evil: 1" } },
		{ { "X-Note", "nul\001" } },
		{ { "X Note", "v" } },
		{ { "X-Note:", "v" } },
		{ { "Authorization", "Bearer mine" } },
		{ { "host", "elsewhere.example" } },
		{ { "Content-Length", "0" } },
		{ { "Transfer-Encoding", "chunked" } },
	};
	struct http_header good[] = { { "X-Note", "caf\xc3\xa9 \"q\" $(id)" },
	    { "X-Empty", "" } };
	struct http_request req = request("127.0.0.1", "/h");
	cJSON *log;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req.headers = bad[i];
		req.nheaders = 1;
		struct captured c = run(&req);

		cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "case %zu", i);
		cr_assert_not_null(strstr(c.r.message, "request refused"));
	}
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
	req.headers = good;
	req.nheaders = 2;
	cr_assert_eq(run(&req).r.status, 200);
	log = http_peer_log(&fx.peer);
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "X-Note"),
	    "caf\xc3\xa9 \"q\" $(id)");
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "X-Empty"), "");
	cJSON_Delete(log);
}

Test(http, redirect_to_another_host_is_not_followed)
{
	struct http_credential cred = { HTTP_CREDENTIAL_BEARER, NULL, SECRET,
	    strlen(SECRET) };
	struct http_peer other;
	char path[256];
	struct http_request req;
	struct captured c;

	cr_assert(http_peer_start(&other));
	snprintf(path, sizeof(path), "/redirect/302?to=http%%3A%%2F%%2F"
	    "other.test%%3A%u%%2Fsteal", (unsigned)other.port);
	req = request("api.test", path);
	req.credential = &cred;
	req.follow_redirects = true;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c.r.status, 302);
	cr_assert_eq(c.r.redirects, 0);
	cr_assert_not_null(strstr(c.r.location, "other.test"));
	cr_assert_not_null(strstr(c.r.message, "not followed"));
	cr_assert_eq(http_peer_requests(&fx.peer), 1);
	cr_assert_eq(http_peer_requests(&other), 0,
	    "the other host received a request");

	/* Same host name, other port: another origin too. */
	snprintf(path, sizeof(path), "/redirect/307?to=http%%3A%%2F%%2F"
	    "api.test%%3A%u%%2Fsteal", (unsigned)other.port);
	c = run(&req);
	cr_assert_eq(c.r.status, 307);
	cr_assert_eq(http_peer_requests(&other), 0);
	http_peer_stop(&other);

	/* Other host name or scheme on the same port: not followed either. */
	snprintf(path, sizeof(path), "/redirect/302?to=http%%3A%%2F%%2F"
	    "other.test%%3A%u%%2Fsteal", (unsigned)fx.peer.port);
	c = run(&req);
	cr_assert_eq(c.r.status, 302);
	snprintf(path, sizeof(path), "/redirect/308?to=https%%3A%%2F%%2F"
	    "api.test%%3A%u%%2Fsteal", (unsigned)fx.peer.port);
	c = run(&req);
	cr_assert_eq(c.r.status, 308);
	cr_assert_eq(http_peer_requests(&fx.peer), 4, "a redirect was followed");
}

Test(http, same_host_redirect_followed_only_when_allowed)
{
	struct http_credential cred = { HTTP_CREDENTIAL_HEADER, "X-Api-Key",
	    "kk", 2 };
	struct http_request req = request("api.test",
	    "/redirect/302?to=%2Flanding%3Fn%3D2");
	struct captured c;
	cJSON *log;

	req.credential = &cred;
	c = run(&req);
	cr_assert_eq(c.r.status, 302);
	cr_assert_str_eq(c.r.location, "/landing?n=2");
	cr_assert_eq(http_peer_requests(&fx.peer), 1);

	req.follow_redirects = true;
	c = run(&req);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(c.r.redirects, 1);
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), 3);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 2), "path"), "/landing?n=2");
	cr_assert_str_eq(http_peer_header(harness_logged(log, 2), "X-Api-Key"), "kk");
	cJSON_Delete(log);
}

Test(http, redirect_303_after_post_becomes_get_without_body)
{
	struct http_request req = request("api.test",
	    "/redirect/303?to=%2Fdone");
	struct captured c;
	cJSON *log;

	req.method = HTTP_METHOD_POST;
	req.body = "{\"qty\":3}";
	req.body_len = 9;
	req.content_type = "application/json";
	req.follow_redirects = true;
	c = run(&req);
	cr_assert_eq(c.r.status, 200);
	log = http_peer_log(&fx.peer);
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "method"), "POST");
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 0), "body"), "{\"qty\":3}");
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "Content-Type"),
	    "application/json");
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 1), "method"), "GET");
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 1), "body"), "");
	cJSON_Delete(log);
}

static void
assert_refused_without_connect(const char *host, unsigned allow,
    const char *why)
{
	struct http_request req = request(host, "/latest/meta-data/");
	struct http_engine_stats st;
	struct captured c;

	/* https, so that only the address rules can refuse it. */
	req.scheme = HTTP_SCHEME_HTTPS;
	req.addr_allow = allow;
	c = run(&req);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%s", host);
	cr_assert_not_null(strstr(c.r.message, why), "%s: %s", host,
	    c.r.message);
	cr_assert_not_null(strstr(c.r.message, "the target does not allow"),
	    "%s: %s", host, c.r.message);
	cr_assert_not_null(strstr(c.r.message, "not connected"));
	cr_assert_eq(c.r.attempts, 0);
	cr_assert_eq(st.connections_opened, 0);
	cr_assert_eq(st.requests_started, 0);
	/* at once, not at the 5 s budget: far from both on a loaded host */
	cr_assert_lt(c.elapsed_us, 2500000u);
}

Test(http, metadata_and_link_local_refused_without_connecting)
{
	unsigned most = HTTP_ALLOW_LOOPBACK | HTTP_ALLOW_PRIVATE;

	assert_refused_without_connect("metadata.test", most, "cloud metadata");
	assert_refused_without_connect("metadata.test",
	    most | HTTP_ALLOW_LINK_LOCAL, "cloud metadata");
	assert_refused_without_connect("mapped.test", most, "cloud metadata");
	assert_refused_without_connect("v6meta.test", most, "cloud metadata");
	assert_refused_without_connect("linklocal.test", most, "link-local");
	assert_refused_without_connect("169.254.169.254", most,
	    "cloud metadata");
	assert_refused_without_connect("private.test", HTTP_ALLOW_LOOPBACK,
	    "private");
	/* One bad address among good ones refuses the whole name. */
	assert_refused_without_connect("mixed.test", most, "cloud metadata");
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
}

Test(http, loopback_refused_unless_allowed)
{
	struct captured c;
	struct http_request req = request("127.0.0.1", "/x");

	assert_refused_without_connect("127.0.0.1", 0, "loopback");
	assert_refused_without_connect("local.test", HTTP_ALLOW_PRIVATE,
	    "loopback");
	cr_assert_eq(http_peer_requests(&fx.peer), 0);
	c = run(&req);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(http_peer_requests(&fx.peer), 1);
}

Test(http, connects_to_the_checked_address_not_a_second_lookup)
{
	/* "pinned.test" exists only in the engine's resolver: curl itself
	 * cannot resolve it, so success means curl used the pinned address. */
	struct http_request req = request("pinned.test", "/p");
	struct captured c = run(&req);
	cJSON *log = http_peer_log(&fx.peer);
	char host[64];

	cr_assert_eq(c.r.status, 200, "%s", c.r.message);
	cr_assert_eq(fx.resolver_calls, 1);
	snprintf(host, sizeof(host), "pinned.test:%u", (unsigned)fx.peer.port);
	cr_assert_str_eq(http_peer_header(harness_logged(log, 0), "Host"), host);
	cJSON_Delete(log);
}

Test(http, tls_is_verified_against_the_given_ca)
{
	struct http_credential cred = { HTTP_CREDENTIAL_BEARER, NULL, SECRET,
	    strlen(SECRET) };
	struct http_peer tls;
	struct http_request req;
	struct captured c;
	size_t ca_len;
	char *ca;

	cr_assert(http_peer_start_tls(&tls), "TLS server (needs openssl)");
	ca = harness_read_file(tls.cert_path, &ca_len);
	req = request("api.test", "/secure");
	req.scheme = HTTP_SCHEME_HTTPS;
	req.port = tls.port;
	req.credential = &cred;

	/* System CAs do not know the self-signed certificate. */
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%s", c.r.message);
	cr_assert_eq(c.r.status, 0);
	cr_assert_eq(c.r.attempts, 1, "a TLS failure is not retried");
	cr_assert_eq(http_peer_requests(&tls), 0);

	/* The right CA for the wrong name. */
	req.ca_blob = ca;
	req.ca_len = ca_len;
	req.host = "other.test";
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%s", c.r.message);
	cr_assert_eq(http_peer_requests(&tls), 0);

	req.host = "api.test";
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK, "%s", c.r.message);
	cr_assert_eq(c.r.status, 200);
	cr_assert_gt(c.r.timings.tls_us, 0);
	cr_assert_eq(http_peer_requests(&tls), 1);
	free(ca);
	http_peer_stop(&tls);
}

Test(http, https_to_a_plain_http_port_is_failed)
{
	struct http_request req = request("127.0.0.1", "/x");
	struct captured c;

	req.scheme = HTTP_SCHEME_HTTPS;
	req.method = HTTP_METHOD_POST;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%s", c.r.message);
	cr_assert_eq(c.r.status, 0);
}

Test(http, plain_http_only_to_loopback)
{
	struct http_request req = request("private.test", "/x");
	struct captured c;

	req.addr_allow = HTTP_ALLOW_PRIVATE | HTTP_ALLOW_LOOPBACK;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_not_null(strstr(c.r.message, "plain http is for loopback "
	    "only"), "%s", c.r.message);
	cr_assert_eq(c.r.attempts, 0);
}

Test(http, methods_bodies_and_content_types_arrive_as_given)
{
	static const struct { enum http_method m; const char *name, *body; } t[] = {
		{ HTTP_METHOD_PUT, "PUT", "{\"name\":\"caf\xc3\xa9 \\\"x\\\"\"}" },
		{ HTTP_METHOD_PATCH, "PATCH", "qty=2\r\n$(id)" },
		{ HTTP_METHOD_DELETE, "DELETE", "" },
		{ HTTP_METHOD_DELETE, "DELETE", "{\"force\":true}" },
		{ HTTP_METHOD_POST, "POST", "" },
	};
	struct http_request req = request("127.0.0.1", "/m");
	struct http_request head = request("127.0.0.1", "/big/1000");
	struct captured c;
	cJSON *log;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		req.method = t[i].m;
		req.body = t[i].body;
		req.body_len = strlen(t[i].body);
		req.content_type = i % 2 ? "text/plain; charset=\"utf-8\"" : NULL;
		c = run(&req);
		cr_assert_eq(c.r.status, 200, "%zu", i);
	}
	head.method = HTTP_METHOD_HEAD;
	c = run(&head);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(c.r.body_total, 0);
	log = http_peer_log(&fx.peer);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const cJSON *e = harness_logged(log, (int)i);
		const char *ct = http_peer_header(e, "Content-Type");

		cr_assert_str_eq(harness_logged_str(e, "method"), t[i].name);
		cr_assert_str_eq(harness_logged_str(e, "body"), t[i].body);
		if (i % 2)
			cr_assert_str_eq(ct, "text/plain; charset=\"utf-8\"");
		else
			cr_assert(ct == NULL, "%zu: curl's default type sent: %s",
			    i, ct);
		cr_assert_null(http_peer_header(e, "Expect"));
	}
	cr_assert_str_eq(harness_logged_str(harness_logged(log, 5), "method"), "HEAD");
	cJSON_Delete(log);
}

Test(http, redirect_loop_stops_after_five)
{
	struct http_request req = request("127.0.0.1", "/loop?n=1");
	struct captured c;

	req.follow_redirects = true;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c.r.status, 302);
	cr_assert_eq(c.r.redirects, 5);
	cr_assert_str_eq(c.r.location, "/loop?n=1");
	cr_assert_not_null(strstr(c.r.message, "too many redirects"));
	cr_assert_eq(http_peer_requests(&fx.peer), 6);
}
