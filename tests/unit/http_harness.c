/*
 * Test harness for the HTTP engine: an engine on a fresh event_base, a
 * real http_target.py, a resolver override for *.test names, and helpers
 * that run requests to completion and read the server's log.
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

#include "tests/unit/http_harness.h"

uint64_t
harness_mono_us(void)
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
	struct harness *f = arg;
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

void
harness_setup(struct harness *fx)
{
	memset(fx, 0, sizeof(*fx));
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	fx->base = event_base_new();
	cr_assert_not_null(fx->base);
	fx->engine = http_engine_new(fx->base, 4);
	cr_assert_not_null(fx->engine);
	http_engine_set_resolver(fx->engine, test_resolver, fx);
	cr_assert(http_peer_start(&fx->peer), "http_target.py did not start");
}

void
harness_teardown(struct harness *fx)
{
	http_engine_free(fx->engine);
	event_base_free(fx->base);
	http_peer_stop(&fx->peer);
	curl_global_cleanup();
	for (size_t i = 0; i < fx->nbodies; i++)
		free(fx->bodies[i]);
	free(fx->bodies);
	fx->bodies = NULL;
	fx->nbodies = 0;
}

/* Records body as fx's, for harness_teardown to free. */
static void
harness_keep_body(struct harness *fx, uint8_t *body)
{
	uint8_t **grown;

	grown = reallocarray(fx->bodies, fx->nbodies + 1, sizeof(*grown));
	cr_assert_not_null(grown, "harness_keep_body: out of memory");
	fx->bodies = grown;
	fx->bodies[fx->nbodies++] = body;
}

void
harness_capture_done(const struct http_result *r, void *arg)
{
	struct captured *c = arg;

	cr_assert_not_null(c->owner, "captured.owner not set before submit");
	c->r = *r;
	c->r.body = NULL;
	c->body = malloc(r->body_len + 1);
	cr_assert_not_null(c->body);
	harness_keep_body(c->owner, c->body);
	if (r->body_len > 0)
		memcpy(c->body, r->body, r->body_len);
	c->body[r->body_len] = '\0';
	c->done = true;
}

void
harness_run_all(struct harness *fx, struct captured *c, size_t n)
{
	for (bool all = false; !all;) {
		event_base_loop(fx->base, EVLOOP_ONCE);
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && c[i].done;
	}
}

struct captured
harness_run(struct harness *fx, const struct http_request *req)
{
	struct captured c = { .owner = fx };
	uint64_t t0 = harness_mono_us();

	cr_assert_eq(http_engine_submit(fx->engine, req, harness_capture_done,
	    &c), 0);
	cr_assert_not(c.done, "the callback ran inside submit");
	harness_run_all(fx, &c, 1);
	c.elapsed_us = harness_mono_us() - t0;
	return c;
}

struct http_request
harness_request(const struct harness *fx, const char *host, const char *path)
{
	struct http_request req = {
		.method = HTTP_METHOD_GET,
		.scheme = HTTP_SCHEME_HTTP,
		.host = host,
		.port = fx->peer.port,
		.path = path,
		.addr_allow = HTTP_ALLOW_LOOPBACK,
		.budget_ms = 5000,
		.body_max = 65536,
	};
	return req;
}

const cJSON *
harness_logged(const cJSON *log, int i)
{
	const cJSON *e = cJSON_GetArrayItem(log, i);

	cr_assert_not_null(e, "request %d not in the server's log", i);
	return e;
}

const char *
harness_logged_str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	cr_assert(cJSON_IsString(v));
	return v->valuestring;
}

/* Reads a whole file into a NUL-terminated buffer (caller frees). */
char *
harness_slurp(int fd)
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

char *
harness_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	char *buf;

	cr_assert(fd != -1, "%s", path);
	buf = harness_slurp(fd);
	close(fd);
	*len = strlen(buf);
	return buf;
}
