/*
 * The HTTP engine against a real local HTTP server (http_target.py),
 * driven on a libevent loop the way the executor drives it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "executor/http.h"
#include "tests/unit/http_peer.h"

struct captured {
	bool done;
	struct http_result r;	/* body pointer cleared; see body */
	uint8_t *body;
	uint64_t elapsed_us;
};

struct fixture {
	struct event_base *base;
	struct http_engine *engine;
	struct http_peer peer;
	unsigned resolver_calls;
};

static struct fixture fx;

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Test names: *.test resolve here only, as the resolver-override hook. */
static bool
test_resolver(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n)
{
	static const struct { const char *name, *addr; } map[] = {
		{ "metadata.test", "169.254.169.254" },
		{ "linklocal.test", "169.254.10.1" },
		{ "v6meta.test", "fd00:ec2::254" },
		{ "mapped.test", "::ffff:169.254.169.254" },
		{ "private.test", "10.1.2.3" },
		{ "mixed.test", "127.0.0.1" },	/* plus 169.254.169.254 */
	};
	const char *addr = "127.0.0.1";
	struct fixture *f = arg;
	size_t len = strlen(host);

	f->resolver_calls++;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)addrs)->sin_addr))
		addr = host;
	else if (len < 5 || strcmp(host + len - 5, ".test") != 0 || max < 2)
		return false;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(host, map[i].name) == 0)
			addr = map[i].addr;
	*n = 0;
	for (const char *a = addr; a != NULL;
	    a = strcmp(host, "mixed.test") == 0 && *n == 1 ?
	    "169.254.169.254" : NULL) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&addrs[*n];
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&addrs[*n];

		memset(&addrs[*n], 0, sizeof(addrs[0]));
		if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
			sin->sin_family = AF_INET;
			sin->sin_port = htons(port);
		} else {
			cr_assert_eq(inet_pton(AF_INET6, a, &sin6->sin6_addr), 1);
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
		}
		(*n)++;
		if (*n == 2)
			break;
	}
	return true;
}

static void
setup(void)
{
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	fx.base = event_base_new();
	cr_assert_not_null(fx.base);
	fx.engine = http_engine_new(fx.base, 4);
	cr_assert_not_null(fx.engine);
	http_engine_set_resolver(fx.engine, test_resolver, &fx);
	cr_assert(http_peer_start(&fx.peer), "http_target.py did not start");
}

static void
teardown(void)
{
	http_engine_free(fx.engine);
	event_base_free(fx.base);
	http_peer_stop(&fx.peer);
	curl_global_cleanup();
}

TestSuite(http, .init = setup, .fini = teardown, .timeout = 20);

static void
capture_done(const struct http_result *r, void *arg)
{
	struct captured *c = arg;

	c->r = *r;
	c->r.body = NULL;
	c->body = malloc(r->body_len + 1);
	cr_assert_not_null(c->body);
	if (r->body_len > 0)
		memcpy(c->body, r->body, r->body_len);
	c->body[r->body_len] = '\0';
	c->done = true;
}

static void
run_all(struct captured *c, size_t n)
{
	for (bool all = false; !all;) {
		event_base_loop(fx.base, EVLOOP_ONCE);
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && c[i].done;
	}
}

static struct captured
run(const struct http_request *req)
{
	struct captured c = { 0 };
	uint64_t t0 = mono_us();

	cr_assert_eq(http_engine_submit(fx.engine, req, capture_done, &c), 0);
	cr_assert_not(c.done, "the callback ran inside submit");
	run_all(&c, 1);
	c.elapsed_us = mono_us() - t0;
	return c;
}

static struct http_request
request(const char *host, const char *path)
{
	struct http_request req = {
		.method = HTTP_METHOD_GET,
		.scheme = HTTP_SCHEME_HTTP,
		.host = host,
		.port = fx.peer.port,
		.path = path,
		.addr_allow = HTTP_ALLOW_LOOPBACK,
		.budget_ms = 5000,
		.body_max = 65536,
	};
	return req;
}

static const cJSON *
logged(cJSON *log, int i)
{
	const cJSON *e = cJSON_GetArrayItem(log, i);

	cr_assert_not_null(e, "request %d not in the server's log", i);
	return e;
}

static const char *
logged_str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	cr_assert(cJSON_IsString(v));
	return v->valuestring;
}

/* Reads a whole file into a NUL-terminated buffer (caller frees). */
static char *
slurp(int fd)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[len] = '\0';
	return buf;
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
	err = slurp(fd);

	cr_assert_eq(c1.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c1.r.status, 200);
	cr_assert_eq(c2.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c3.r.outcome, HTTP_OUTCOME_FAILED);
	log = http_peer_log(&fx.peer);
	cr_assert_eq(cJSON_GetArraySize(log), 1);
	cr_assert_str_eq(http_peer_header(logged(log, 0), "Authorization"),
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
	cr_assert_str_eq(http_peer_header(logged(log, 0), "Authorization"),
	    "Basic b3BzOnBhIHNzOnfDtnJk");
	cr_assert_str_eq(http_peer_header(logged(log, 1), "X-Api-Key"),
	    "k-123\"'");
	cr_assert_null(http_peer_header(logged(log, 1), "Authorization"));
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
	cr_assert_str_eq(logged_str(logged(log, 0), "path"), path);
	cr_assert_null(http_peer_header(logged(log, 0), "X-Evil"));
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
	cr_assert_str_eq(http_peer_header(logged(log, 0), "X-Note"),
	    "caf\xc3\xa9 \"q\" $(id)");
	cr_assert_str_eq(http_peer_header(logged(log, 0), "X-Empty"), "");
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
	cr_assert_str_eq(logged_str(logged(log, 2), "path"), "/landing?n=2");
	cr_assert_str_eq(http_peer_header(logged(log, 2), "X-Api-Key"), "kk");
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
	cr_assert_str_eq(logged_str(logged(log, 0), "method"), "POST");
	cr_assert_str_eq(logged_str(logged(log, 0), "body"), "{\"qty\":3}");
	cr_assert_str_eq(http_peer_header(logged(log, 0), "Content-Type"),
	    "application/json");
	cr_assert_str_eq(logged_str(logged(log, 1), "method"), "GET");
	cr_assert_str_eq(logged_str(logged(log, 1), "body"), "");
	cJSON_Delete(log);
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

Test(http, five_megabyte_body_cut_at_limit_memory_bounded)
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
	cr_assert_not_null(strstr(c.r.message, "kept 65536 of 5242880"));
	cr_log_info("peak RSS grew by %ld kB for a 5 MB body", after - before);
	cr_assert_lt(after - before, 1024, "peak RSS grew by %ld kB",
	    after - before);
}

Test(http, retry_after_two_seconds_waits_once_then_succeeds)
{
	struct http_request req = request("127.0.0.1", "/retry-after/2/a1");
	struct captured c = run(&req);

	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_OK);
	cr_assert_eq(c.r.status, 200);
	cr_assert_eq(c.r.attempts, 2);
	cr_assert_eq(http_peer_requests(&fx.peer), 2);
	cr_assert_geq(c.elapsed_us, 2000000u);
	cr_assert_lt(c.elapsed_us, 3500000u);
}

Test(http, retry_after_is_honoured_only_once)
{
	struct http_request req = request("127.0.0.1", "/retry-after/1/o/5");
	struct captured c = run(&req);

	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.attempts, 2);
	cr_assert_str_eq(c.r.message, "the service asks to wait 1 s");
	cr_assert_eq(http_peer_requests(&fx.peer), 2);
	cr_assert_geq(c.elapsed_us, 1000000u);
}

Test(http, retry_after_long_returns_at_once)
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
	cr_assert_lt(c.elapsed_us, 1000000u);
	c = run(&date);
	cr_assert_eq(c.r.status, 503);
	cr_assert(c.r.retry_after_s >= 298 && c.r.retry_after_s <= 300);
	cr_assert_not_null(strstr(c.r.message, "asks to wait"));
	/* A POST is not repeated, even after a short Retry-After. */
	post.method = HTTP_METHOD_POST;
	c = run(&post);
	cr_assert_eq(c.r.status, 503);
	cr_assert_eq(c.r.attempts, 1);
	cr_assert_eq(http_peer_requests(&fx.peer), 3);
}

Test(http, slow_server_hits_the_budget)
{
	struct http_request req = request("127.0.0.1", "/slow/5000");
	struct captured c;

	req.budget_ms = 1500;
	c = run(&req);
	cr_assert_eq(c.r.status, 0);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_str_eq(c.r.message, "no answer within the 1500 ms budget");
	cr_assert_geq(c.elapsed_us, 1400000u);
	cr_assert_lt(c.elapsed_us, 2200000u);
	/* A mutating request that was sent and never answered. */
	req.method = HTTP_METHOD_PUT;
	req.budget_ms = 1200;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_UNKNOWN);
	cr_assert_str_eq(c.r.message, "no answer within the 1200 ms budget");
}

Test(http, connection_closed_after_post_is_unknown)
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
	cr_assert_str_eq(logged_str(logged(log, 0), "body"), "name=a\nb");
	cJSON_Delete(log);
	/* A GET applies nothing: failed, and not retried once it was sent. */
	req.method = HTTP_METHOD_GET;
	c = run(&req);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_eq(c.r.attempts, 1);
}

Test(http, connection_refused_is_failed_and_get_retried)
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

static void
assert_refused_without_connect(const char *host, unsigned allow,
    const char *why)
{
	struct http_request req = request(host, "/latest/meta-data/");
	struct http_engine_stats st;
	struct captured c;

	req.addr_allow = allow;
	c = run(&req);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(c.r.outcome, HTTP_OUTCOME_FAILED, "%s", host);
	cr_assert_not_null(strstr(c.r.message, why), "%s: %s", host,
	    c.r.message);
	cr_assert_not_null(strstr(c.r.message, "not connected"));
	cr_assert_eq(c.r.attempts, 0);
	cr_assert_eq(st.connections_opened, 0);
	cr_assert_eq(st.requests_started, 0);
	cr_assert_lt(c.elapsed_us, 200000u);
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
	cr_assert_str_eq(http_peer_header(logged(log, 0), "Host"), host);
	cJSON_Delete(log);
}

Test(http, sixteen_in_flight_complete_and_reuse_connections)
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
			snprintf(paths[i], sizeof(paths[i]), "/n/%d/%d", round, i);
			req[i] = request("127.0.0.1", paths[i]);
			cr_assert_eq(http_engine_submit(fx.engine, &req[i],
			    capture_done, &c[i]), 0);
		}
		cr_assert_eq(http_engine_inflight(fx.engine), INFLIGHT);
		run_all(c, INFLIGHT);
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

Test(http, attempt_with_less_than_a_second_left_is_not_started)
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
	cr_assert_lt(c.elapsed_us, 1000000u);
}

static char *
read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	char *buf;

	cr_assert(fd != -1, "%s", path);
	buf = slurp(fd);
	close(fd);
	*len = strlen(buf);
	return buf;
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
	ca = read_file(tls.cert_path, &ca_len);
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
		const cJSON *e = logged(log, (int)i);
		const char *ct = http_peer_header(e, "Content-Type");

		cr_assert_str_eq(logged_str(e, "method"), t[i].name);
		cr_assert_str_eq(logged_str(e, "body"), t[i].body);
		if (i % 2)
			cr_assert_str_eq(ct, "text/plain; charset=\"utf-8\"");
		else
			cr_assert(ct == NULL, "%zu: curl's default type sent: %s",
			    i, ct);
		cr_assert_null(http_peer_header(e, "Expect"));
	}
	cr_assert_str_eq(logged_str(logged(log, 5), "method"), "HEAD");
	cJSON_Delete(log);
}

static void
never_called(const struct http_result *r, void *arg)
{
	(void)r;
	(void)arg;
	cr_assert_fail("a callback ran after http_engine_free");
}

Test(http, engine_free_aborts_requests_in_flight_without_callbacks)
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

Test(http, post_answered_303_then_broken_get_is_unknown)
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
	cr_assert_str_eq(logged_str(logged(log, 0), "method"), "POST");
	cr_assert_str_eq(logged_str(logged(log, 1), "method"), "GET");
	cJSON_Delete(log);
}

Test(http, post_on_a_reused_connection_is_never_sent_twice)
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
	cr_assert_eq(cJSON_GetObjectItemCaseSensitive(logged(log, 0),
	    "peer_port")->valueint, cJSON_GetObjectItemCaseSensitive(
	    logged(log, 1), "peer_port")->valueint,
	    "the POST did not go over the reused connection");
	cr_log_info("connections opened: %llu",
	    (unsigned long long)st.connections_opened);
	cJSON_Delete(log);
}
