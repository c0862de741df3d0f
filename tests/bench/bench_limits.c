/*
 * Micro-benchmark (printed, not asserted): the broker's per-call limit
 * decision (state/limits.h) for a tool with per_day, without state_dir
 * (counted in memory: the baseline) and with it (flock, fstat, stat of
 * the name, re-read of what is new, append, unlock), in the same
 * process on the same policy; then with state_dir while a second writer
 * (another session) appends between each two calls, so every decision
 * also reads a foreign line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state/limits.h"
#include "state/state_dir.h"
#include "policy/load.h"

#define BENCH_CALLS 20000

static const char bench_policy[] =
	"{\"sallyport\": 1,\n"
	"\"targets\": {\"api\": {\"type\": \"http\", "
	"\"base_url\": \"http://127.0.0.1:9\"}},\n"
	"\"tools\": [{\"name\": \"count_item\", \"description\": \"d\", "
	"\"target\": \"api\", \"scope\": \"read\",\n"
	"\"http\": {\"method\": \"GET\", \"path\": \"/items/{id}\"},\n"
	"\"limits\": {\"per_day\": 1000000},\n"
	"\"params\": {\"id\": {\"type\": \"integer\"}}}],\n"
	"\"profiles\": {\"default\": {\"scopes\": [\"read\"]}}}\n";

static uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per decided-and-committed call; other (may be NULL) writes between */
static double
bench_run(struct limits *l, struct limits *other)
{
	uint8_t digest[HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;
	uint64_t start, spent = 0, i, wall;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	ev.digests = &digest;
	ev.digest_count = 1;
	ev.shape_count = 1;
	for (i = 0; i < BENCH_CALLS; i++) {
		hash_sha256(&i, sizeof(i), digest);
		ev.call_id = i + 1;
		if (other != NULL) {
			wall = (uint64_t)time(NULL) * 1000;
			(void)limits_decide(other, &ev, i, wall, &d);
		}
		wall = (uint64_t)time(NULL) * 1000;
		start = bench_now_ns();
		if (limits_decide(l, &ev, i, wall, &d) != LIMITS_PASS) {
			fprintf(stderr, "bench_limits: call %llu refused: %s\n",
			    (unsigned long long)i, d.message);
			exit(1);
		}
		limits_commit(l, &ev, &d, i);
		spent += bench_now_ns() - start;
	}
	return (double)spent / BENCH_CALLS;
}

int
main(void)
{
	struct policy_diags diags = { 0 };
	struct policy *p;
	struct state_file *sf, *sf2;
	struct limits *mem, *shared, *a, *b;
	char dir[] = "/tmp/sp-bench-limits-XXXXXX", path[64];
	double base, with, busy;

	p = policy_load("bench.json", bench_policy, sizeof(bench_policy) - 1,
	    &diags);
	if (p == NULL || mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_limits: setup failed\n");
		return 1;
	}
	mem = limits_new(p, NULL, NULL, "uid:1000");
	base = bench_run(mem, NULL);
	sf = state_file_open(dir, LIMITS_STATE_FILE);
	shared = limits_new(p, sf, NULL, "uid:1000");
	with = bench_run(shared, NULL);
	(void)snprintf(path, sizeof(path), "%s/%s", dir, LIMITS_STATE_FILE);
	(void)unlink(path);
	sf2 = state_file_open(dir, LIMITS_STATE_FILE);
	a = limits_new(p, sf2, NULL, "uid:1000");
	sf = state_file_open(dir, LIMITS_STATE_FILE);
	b = limits_new(p, sf, NULL, "uid:1000");
	busy = bench_run(a, b);
	printf("limit check, %d calls of a per_day tool, ns per call:\n",
	    BENCH_CALLS);
	printf("  without state_dir (in memory, baseline)  %10.0f\n", base);
	printf("  with state_dir, one session              %10.0f  "
	    "ratio %.1f\n", with, with / base);
	printf("  with state_dir, a second session writing %10.0f  "
	    "ratio %.1f\n", busy, busy / base);
	(void)unlink(path);
	(void)rmdir(dir);
	return 0;
}
