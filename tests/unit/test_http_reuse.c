/*
 * What the engine's per-call shortcuts must not change: an easy handle
 * reused from the pool carries nothing of its last call (credential,
 * headers, method, body) to the next one, and a literal host, which
 * skips the resolver, meets the same address rules and still reports
 * only from the loop; a name's answer is reused for a while but checked
 * against each call's rules; a kept-alive socket left registered between calls
 * neither wakes the loop for ever when its peer closes nor breaks the
 * next call.
 */
#include "config.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "executor/http.h"
#include "executor/http_resolve.h"
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

Test(http_reuse, a_name_is_resolved_once_and_checked_on_every_call)
{
	struct http_request a = harness_request(&fx, "svc.test", "/1");
	struct http_request strict = harness_request(&fx, "svc.test", "/2");
	struct http_request other_port = harness_request(&fx, "svc.test",
	    "/3");
	struct http_request mixed = harness_request(&fx, "mixed.test", "/4");
	struct captured r;

	for (int i = 0; i < 3; i++) {
		r = harness_run(&fx, &a);
		cr_assert_eq(r.r.status, 200, "%d: %s", i, r.r.message);
	}
	cr_assert_eq(fx.resolver_calls, 1);
	/* Another target on the same name, which does not allow loopback. */
	strict.addr_allow = HTTP_ALLOW_PRIVATE;
	r = harness_run(&fx, &strict);
	cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED);
	cr_assert_not_null(strstr(r.r.message, "is loopback"), "%s",
	    r.r.message);
	cr_assert_eq(r.r.attempts, 0);
	cr_assert_eq(fx.resolver_calls, 1);
	/* The answer is per host and port. */
	other_port.port = http_peer_closed_port();
	(void)harness_run(&fx, &other_port);
	cr_assert_eq(fx.resolver_calls, 2);
	/* A remembered answer with a forbidden address stays refused. */
	for (int i = 0; i < 2; i++) {
		r = harness_run(&fx, &mixed);
		cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED, "%d", i);
		cr_assert_not_null(strstr(r.r.message, "cloud metadata"),
		    "%d: %s", i, r.r.message);
	}
	cr_assert_eq(fx.resolver_calls, 3);
	cr_assert_eq(http_peer_requests(&fx.peer), 3);
}

Test(http_reuse, a_remembered_name_expires)
{
	struct http_request a = harness_request(&fx, "svc.test", "/t");
	struct timespec ts = { 0, 250 * 1000 * 1000 };
	struct captured r;

	http_engine_set_name_ttl(fx.engine, 200);
	for (int i = 0; i < 2; i++) {
		r = harness_run(&fx, &a);
		cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	}
	cr_assert_eq(fx.resolver_calls, 1);
	(void)nanosleep(&ts, NULL);
	r = harness_run(&fx, &a);
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	cr_assert_eq(fx.resolver_calls, 2);
	/* 0: every call asks the resolver. */
	http_engine_set_name_ttl(fx.engine, 0);
	for (int i = 0; i < 2; i++)
		(void)harness_run(&fx, &a);
	cr_assert_eq(fx.resolver_calls, 4);
}

Test(http_reuse, the_name_table_is_bounded)
{
	struct http_names *n = http_names_new();
	struct sockaddr_storage addrs[3], out[HTTP_NAMES_ADDRS_MAX];
	char host[HTTP_NAMES_HOST_MAX + 8];
	size_t count = 0;

	cr_assert_not_null(n);
	memset(addrs, 0, sizeof(addrs));
	for (int i = 0; i < 3; i++)
		addrs[i].ss_family = AF_INET;
	/* One name more than the table holds: the oldest goes. */
	for (int i = 0; i <= HTTP_NAMES_MAX; i++) {
		snprintf(host, sizeof(host), "h%d.caf\xc3\xa9.test", i);
		http_names_put(n, host, 443, 1000u + (uint64_t)i, addrs, 3);
	}
	cr_assert(!http_names_get(n, "h0.caf\xc3\xa9.test", 443, 2000, out,
	    HTTP_NAMES_ADDRS_MAX, &count));
	cr_assert(http_names_get(n, "h1.caf\xc3\xa9.test", 443, 2000, out,
	    HTTP_NAMES_ADDRS_MAX, &count));
	cr_assert_eq(count, 3);
	cr_assert(http_names_get(n, "h16.caf\xc3\xa9.test", 443, 2000, out, 1,
	    &count));
	cr_assert_eq(count, 1, "no more than the caller's room");
	cr_assert(!http_names_get(n, "h1.caf\xc3\xa9.test", 80, 2000, out,
	    HTTP_NAMES_ADDRS_MAX, &count), "another port is another entry");
	/* A name longer than a DNS name is not kept, nor cut. */
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	http_names_put(n, host, 443, 3000, addrs, 1);
	host[HTTP_NAMES_HOST_MAX - 1] = '\0';
	cr_assert(!http_names_get(n, host, 443, 3000, out,
	    HTTP_NAMES_ADDRS_MAX, &count));
	http_names_free(n);
}

/*
 * A keep-alive server on this test's own loop, so the test decides when
 * the server side of an idle connection closes.
 */
#define MINI_CONNS_MAX 4

struct mini_server {
	int lfd;
	uint16_t port;
	struct event *ev_listen;
	int fds[MINI_CONNS_MAX];
	struct event *evs[MINI_CONNS_MAX];
	size_t n;
};

static void
mini_request(evutil_socket_t fd, short what, void *arg)
{
	static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2"
	    "\r\nContent-Type: text/plain\r\n\r\nok";
	char buf[4096];
	ssize_t n;

	(void)what;
	(void)arg;
	n = read(fd, buf, sizeof(buf));
	if (n > 0)	/* a GET without body fits one read here */
		cr_assert_eq(write(fd, answer, sizeof(answer) - 1),
		    (ssize_t)sizeof(answer) - 1);
}

static void
mini_accept(evutil_socket_t fd, short what, void *arg)
{
	struct mini_server *m = arg;
	int c;

	(void)what;
	c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	cr_assert_geq(c, 0);
	cr_assert_lt(m->n, (size_t)MINI_CONNS_MAX);
	m->fds[m->n] = c;
	m->evs[m->n] = event_new(fx.base, c, EV_READ | EV_PERSIST,
	    mini_request, m);
	cr_assert_not_null(m->evs[m->n]);
	cr_assert_eq(event_add(m->evs[m->n], NULL), 0);
	m->n++;
}

static void
mini_start(struct mini_server *m)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	memset(m, 0, sizeof(*m));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	cr_assert_geq(m->lfd, 0);
	cr_assert_eq(bind(m->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(m->lfd, 8), 0);
	cr_assert_eq(getsockname(m->lfd, (struct sockaddr *)&sin, &len), 0);
	m->port = ntohs(sin.sin_port);
	m->ev_listen = event_new(fx.base, m->lfd, EV_READ | EV_PERSIST,
	    mini_accept, m);
	cr_assert_not_null(m->ev_listen);
	cr_assert_eq(event_add(m->ev_listen, NULL), 0);
}

/* The server side of connection i goes away. */
static void
mini_close(struct mini_server *m, size_t i)
{
	event_free(m->evs[i]);
	m->evs[i] = NULL;
	close(m->fds[i]);
	m->fds[i] = -1;
}

static void
mini_stop(struct mini_server *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->evs[i] != NULL)
			mini_close(m, i);
	event_free(m->ev_listen);
	close(m->lfd);
}

static uint64_t
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static struct captured
mini_get(const struct mini_server *m, const char *path)
{
	struct http_request req = harness_request(&fx, "127.0.0.1", path);

	req.port = m->port;
	return harness_run(&fx, &req);
}

Test(http_reuse, an_idle_kept_alive_socket_closed_by_its_peer_costs_nothing)
{
	struct timeval wait = { 0, 300000 };
	struct http_engine_stats st;
	struct mini_server m;
	struct captured r;
	uint64_t cpu0;

	mini_start(&m);
	r = mini_get(&m, "/one");
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	r = mini_get(&m, "/two");
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(st.connections_opened, 1, "kept alive between calls");
	/* The idle connection's peer closes; the loop runs 300 ms. */
	mini_close(&m, 0);
	cpu0 = cpu_us();
	cr_assert_eq(event_base_loopexit(fx.base, &wait), 0);
	cr_assert_eq(event_base_dispatch(fx.base), 0);
	cr_assert_lt(cpu_us() - cpu0, 100000u, "the loop spun on a closed "
	    "idle socket: %llu us of CPU in 300 ms",
	    (unsigned long long)(cpu_us() - cpu0));
	/* The next calls open one new connection and keep it. */
	for (int i = 0; i < 3; i++) {
		r = mini_get(&m, "/again");
		cr_assert_eq(r.r.status, 200, "%d: %s", i, r.r.message);
	}
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(st.connections_opened, 2);
	cr_assert_eq(m.n, 2);
	mini_stop(&m);
}

/*
 * What a response said (Location, Retry-After, its type) is read back
 * from the handle after each attempt; a reused handle must answer for
 * its own last response only, not the previous call's.
 */
Test(http_reuse, a_reused_handle_reports_only_its_own_response)
{
	struct http_request moved = harness_request(&fx, "127.0.0.1",
	    "/redirect/302?to=http%3A%2F%2Felsewhere.test%2F%22%24(id)%22");
	struct http_request busy = harness_request(&fx, "127.0.0.1",
	    "/retry-after/90/tag-a");
	struct http_request plain = harness_request(&fx, "127.0.0.1", "/p");
	struct http_request failing = harness_request(&fx, "127.0.0.1",
	    "/status/503");
	struct captured r;

	r = harness_run(&fx, &moved);
	cr_assert_eq(r.r.status, 302, "%s", r.r.message);
	cr_assert_str_eq(r.r.location, "http://elsewhere.test/\"$(id)\"");
	r = harness_run(&fx, &plain);
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	cr_assert_str_eq(r.r.location, "");
	cr_assert_eq(r.r.retry_after_s, -1);
	r = harness_run(&fx, &busy);
	cr_assert_eq(r.r.status, 503, "%s", r.r.message);
	cr_assert_eq(r.r.retry_after_s, 90);
	r = harness_run(&fx, &failing);
	cr_assert_eq(r.r.status, 503, "%s", r.r.message);
	cr_assert_eq(r.r.retry_after_s, -1, "no Retry-After this time");
	cr_assert_str_eq(r.r.location, "");
}

/* A resolver whose answer the test chooses per call. */
enum flaky_mode { FLAKY_FAIL, FLAKY_EMPTY, FLAKY_GOOD };

struct flaky {
	enum flaky_mode mode;
	unsigned calls;
};

static bool
flaky_resolver(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n)
{
	struct flaky *f = arg;
	struct sockaddr_in *sin = (struct sockaddr_in *)&addrs[0];

	(void)host;
	f->calls++;
	*n = 0;
	if (f->mode == FLAKY_FAIL)
		return false;
	if (f->mode == FLAKY_EMPTY || max == 0)
		return true;
	memset(&addrs[0], 0, sizeof(addrs[0]));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*n = 1;
	return true;
}

/*
 * Only an answer with addresses is remembered: a failure, or a "yes"
 * with no address, is asked again on the next call, and neither lets a
 * call go on without checked addresses.
 */
Test(http_reuse, an_unresolved_or_empty_answer_is_not_remembered)
{
	struct http_request req = harness_request(&fx, "flaky.test", "/f");
	struct flaky f = { FLAKY_FAIL, 0 };
	const enum flaky_mode modes[] = { FLAKY_FAIL, FLAKY_EMPTY };
	struct captured r;
	unsigned want = 0;

	http_engine_set_resolver(fx.engine, flaky_resolver, &f);
	for (size_t m = 0; m < 2; m++) {
		f.mode = modes[m];
		for (int i = 0; i < 3; i++) {
			r = harness_run(&fx, &req);
			cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED,
			    "mode %zu call %d: %s", m, i, r.r.message);
			cr_assert_str_eq(r.r.message,
			    "cannot resolve flaky.test");
			cr_assert_eq(r.r.attempts, 0);
			cr_assert_eq(f.calls, ++want, "mode %zu call %d", m, i);
		}
	}
	f.mode = FLAKY_GOOD;
	for (int i = 0; i < 3; i++) {
		r = harness_run(&fx, &req);
		cr_assert_eq(r.r.status, 200, "%d: %s", i, r.r.message);
	}
	cr_assert_eq(f.calls, want + 1, "the good answer is remembered");
	cr_assert_eq(http_peer_requests(&fx.peer), 3);
}

/* A resolver that answers whatever single IPv4 address the test set. */
struct steer {
	const char *addr;
	unsigned calls;
};

static bool
steer_resolver(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n)
{
	struct steer *s = arg;
	struct sockaddr_in *sin = (struct sockaddr_in *)&addrs[0];

	(void)host;
	s->calls++;
	if (max == 0)
		return false;
	memset(&addrs[0], 0, sizeof(addrs[0]));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, s->addr, &sin->sin_addr), 1);
	*n = 1;
	return true;
}

/*
 * curl's pins live in the multi handle, not in the pooled easy handle:
 * each call's pin replaces the last one for the name, and a kept-alive
 * connection that an earlier answer led to is still judged by the rules
 * of the call that finds it, before a byte is sent.
 */
static struct http_request
steer_request(const struct http_peer *tls, const char *path, const char *ca,
    size_t ca_len)
{
	struct http_request req = harness_request(&fx, "api.test", path);

	req.scheme = HTTP_SCHEME_HTTPS;
	req.port = tls->port;
	req.ca_blob = ca;
	req.ca_len = ca_len;
	return req;
}

Test(http_reuse, a_pin_or_a_kept_connection_of_another_answer_is_judged_anew)
{
	struct steer s = { "127.0.0.2", 0 };
	struct http_request post, get, strict;
	struct http_engine_stats st;
	struct http_peer tls;
	struct captured r;
	size_t ca_len;
	char *ca;

	cr_assert(http_peer_start_tls(&tls), "TLS server (needs openssl)");
	ca = harness_read_file(tls.cert_path, &ca_len);
	post = steer_request(&tls, "/1", ca, ca_len);
	get = steer_request(&tls, "/2", ca, ca_len);
	strict = steer_request(&tls, "/3?q=%22$(id)%22", ca, ca_len);
	http_engine_set_resolver(fx.engine, steer_resolver, &s);
	http_engine_set_name_ttl(fx.engine, 0);
	/* Nothing listens on 127.0.0.2: a POST is not retried. */
	post.method = HTTP_METHOD_POST;
	post.body = "a=\"1\"";
	post.body_len = 5;
	r = harness_run(&fx, &post);
	cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED, "%s", r.r.message);
	/* The next answer is the peer's address, and curl follows it. */
	s.addr = "127.0.0.1";
	r = harness_run(&fx, &get);
	cr_assert_eq(r.r.status, 200, "%s", r.r.message);
	/* A target for private addresses only, told 10.9.8.7: the answer
	 * passes, but the connection curl keeps for the name is loopback. */
	s.addr = "10.9.8.7";
	strict.addr_allow = HTTP_ALLOW_PRIVATE;
	r = harness_run(&fx, &strict);
	cr_assert_eq(r.r.outcome, HTTP_OUTCOME_FAILED, "%s", r.r.message);
	cr_assert_not_null(strstr(r.r.message, "address 127.0.0.1 refused "
	    "by the address rules"), "%s", r.r.message);
	cr_assert_eq(r.r.status, 0);
	cr_assert_eq(s.calls, 3);
	http_engine_stats(fx.engine, &st);
	cr_assert_eq(st.connections_opened, 2, "127.0.0.2 tried, 127.0.0.1 "
	    "kept; none opened for 10.9.8.7");
	cr_assert_eq(http_peer_requests(&tls), 1);
	free(ca);
	http_peer_stop(&tls);
}
