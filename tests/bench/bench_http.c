/*
 * Micro-benchmark (printed, not asserted): requests through the HTTP
 * engine on a libevent loop against http_target.py, beside plain libcurl
 * in the same process issuing the same requests (an easy loop at 1 in
 * flight, a curl_multi_poll loop at 16).  Both reuse connections.
 */
#include "config.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/http.h"
#include "tests/unit/http_peer.h"

#define SAMPLES_MAX 4000

struct series {
	uint64_t lat_us[SAMPLES_MAX];
	size_t n;
	uint64_t wall_us;
};

struct engine_run;

/* A request in flight: the callback argument. */
struct slot {
	struct engine_run *run;
	size_t index;
};

struct engine_run {
	struct http_engine *engine;
	const struct http_request *req;
	struct series *s;
	size_t total, submitted, done;
	uint64_t started_us[SAMPLES_MAX];
	struct slot slots[SAMPLES_MAX];
	bool failed;
};

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
percentile(struct series *s, unsigned pct)
{
	qsort(s->lat_us, s->n, sizeof(s->lat_us[0]), cmp_u64);
	return s->lat_us[(s->n - 1) * pct / 100];
}

/* One completion: record its latency and keep the window full. */
static void engine_slot_done(const struct http_result *res, void *arg);

static void
engine_submit_next(struct engine_run *r)
{
	struct slot *sl = &r->slots[r->submitted];

	sl->run = r;
	sl->index = r->submitted;
	r->started_us[r->submitted] = mono_us();
	r->submitted++;
	if (http_engine_submit(r->engine, r->req, engine_slot_done, sl) != 0) {
		r->failed = true;
		r->done++;	/* no callback will come */
	}
}

static void
engine_slot_done(const struct http_result *res, void *arg)
{
	struct slot *sl = arg;
	struct engine_run *r = sl->run;

	if (res->status != 200) {
		fprintf(stderr, "bench_http: %s\n", res->message);
		r->failed = true;
	}
	r->s->lat_us[r->s->n++] = mono_us() - r->started_us[sl->index];
	r->done++;
	if (r->submitted < r->total && !r->failed)
		engine_submit_next(r);
}

static bool
bench_engine(struct event_base *base, struct http_engine *e,
    const struct http_request *req, size_t total, size_t inflight,
    struct series *s)
{
	struct engine_run *r = calloc(1, sizeof(*r));
	uint64_t t0;
	bool ok;

	if (r == NULL)
		return false;
	r->engine = e;
	r->req = req;
	r->s = s;
	r->total = total;
	s->n = 0;
	t0 = mono_us();
	while (r->submitted < inflight && r->submitted < total)
		engine_submit_next(r);
	while (r->done < r->submitted && (r->done < total && !r->failed))
		event_base_loop(base, EVLOOP_ONCE);
	/* After a failure, let the rest finish: their callbacks use r. */
	while (r->done < r->submitted)
		event_base_loop(base, EVLOOP_ONCE);
	s->wall_us = mono_us() - t0;
	ok = !r->failed;
	free(r);
	return ok;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static CURL *
direct_easy(const char *url)
{
	CURL *easy = curl_easy_init();

	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_PROXY, "");
	return easy;
}

static bool
bench_direct_serial(const char *url, size_t total, struct series *s)
{
	CURL *easy = direct_easy(url);
	uint64_t t0 = mono_us();
	bool ok = true;

	s->n = 0;
	for (size_t i = 0; i < total && ok; i++) {
		uint64_t t = mono_us();

		ok = curl_easy_perform(easy) == CURLE_OK;
		s->lat_us[s->n++] = mono_us() - t;
	}
	s->wall_us = mono_us() - t0;
	curl_easy_cleanup(easy);
	return ok;
}

static bool
bench_direct_multi(const char *url, size_t total, size_t inflight,
    struct series *s)
{
	CURLM *multi = curl_multi_init();
	uint64_t started[SAMPLES_MAX], t0 = mono_us();
	size_t submitted = 0, done = 0;
	bool ok = true;

	s->n = 0;
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 8L);
	while (submitted < inflight && submitted < total) {
		CURL *easy = direct_easy(url);

		curl_easy_setopt(easy, CURLOPT_PRIVATE, (char *)submitted);
		started[submitted++] = mono_us();
		curl_multi_add_handle(multi, easy);
	}
	while (done < total && ok) {
		CURLMsg *m;
		int running, left;

		curl_multi_perform(multi, &running);
		while ((m = curl_multi_info_read(multi, &left)) != NULL) {
			CURL *easy = m->easy_handle;
			char *idx;

			ok = ok && m->data.result == CURLE_OK;
			curl_easy_getinfo(easy, CURLINFO_PRIVATE, &idx);
			s->lat_us[s->n++] = mono_us() - started[(size_t)idx];
			done++;
			curl_multi_remove_handle(multi, easy);
			if (submitted < total) {
				curl_easy_setopt(easy, CURLOPT_PRIVATE,
				    (char *)submitted);
				started[submitted++] = mono_us();
				curl_multi_add_handle(multi, easy);
			} else {
				curl_easy_cleanup(easy);
			}
		}
		if (done < total)
			curl_multi_poll(multi, NULL, 0, 1000, NULL);
	}
	s->wall_us = mono_us() - t0;
	curl_multi_cleanup(multi);
	return ok;
}

static void
report(const char *what, struct series *eng, struct series *dir)
{
	double eng_rps = eng->n * 1e6 / (double)eng->wall_us;
	double dir_rps = dir->n * 1e6 / (double)dir->wall_us;
	uint64_t e50 = percentile(eng, 50), e95 = percentile(eng, 95);
	uint64_t d50 = percentile(dir, 50), d95 = percentile(dir, 95);

	printf("%-12s engine p50 %6llu us p95 %6llu us %8.0f req/s | "
	    "direct p50 %6llu us p95 %6llu us %8.0f req/s | "
	    "p50 %+lld us, p50 x%.2f, p95 x%.2f, throughput x%.2f\n", what,
	    (unsigned long long)e50, (unsigned long long)e95, eng_rps,
	    (unsigned long long)d50, (unsigned long long)d95, dir_rps,
	    (long long)e50 - (long long)d50, (double)e50 / (double)d50,
	    (double)e95 / (double)d95, eng_rps / dir_rps);
}

int
main(int argc, char **argv)
{
	size_t total = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	static struct series eng, dir;
	struct event_base *base;
	struct http_engine *e;
	struct http_peer peer;
	struct http_request req;
	char url[128];
	int rc = 0;

	if (total == 0 || total > SAMPLES_MAX)
		total = 1000;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!http_peer_start(&peer)) {
		fprintf(stderr, "bench_http: http_target.py did not start\n");
		return 1;
	}
	base = event_base_new();
	e = http_engine_new(base, 8);
	memset(&req, 0, sizeof(req));
	req.method = HTTP_METHOD_GET;
	req.scheme = HTTP_SCHEME_HTTP;
	req.host = "127.0.0.1";
	req.port = peer.port;
	req.path = "/bench";
	req.addr_allow = HTTP_ALLOW_LOOPBACK;
	req.budget_ms = 10000;
	req.body_max = 65536;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/bench",
	    (unsigned)peer.port);
	printf("bench_http: %zu requests per series, GET %s\n", total, url);
	if (bench_engine(base, e, &req, 50, 1, &eng) &&
	    bench_engine(base, e, &req, total, 1, &eng) &&
	    bench_direct_serial(url, total, &dir))
		report("1 in flight", &eng, &dir);
	else
		rc = 1;
	if (bench_engine(base, e, &req, total, 16, &eng) &&
	    bench_direct_multi(url, total, 16, &dir))
		report("16 in flight", &eng, &dir);
	else
		rc = 1;
	http_engine_free(e);
	event_base_free(base);
	http_peer_stop(&peer);
	curl_global_cleanup();
	return rc;
}
