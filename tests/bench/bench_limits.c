/*
 * Micro-benchmark (printed, not asserted): the broker's per-call limit
 * decision (state/limits.h) for a tool with per_day, without state_dir
 * (counted in memory: the baseline) and with it (flock, fstat, stat of
 * the name, re-read of what is new, append, unlock), in the same
 * process on the same policy; then with state_dir while a second writer
 * (another session) appends between each two calls, so every decision
 * also reads a foreign line; then, in PostgreSQL (state/pg.h), when
 * SP_BENCH_PG_CONNINFO names a database whose schema is made (`make
 * bench-limits` starts a throwaway cluster: tests/bench/limits_bench.py),
 * each decision one call of sallyport.take_limits() over a unix socket.
 * Without it, or without libpq, that row says why it is skipped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state/limits.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "policy/load.h"

#define BENCH_CALLS 20000
#define BENCH_PG_ENV "SP_BENCH_PG_CONNINFO"
#define BENCH_PG_WHY_ENV "SP_BENCH_PG_WHY"	/* the driver's: no cluster */
#define BENCH_WHO "uid:1000"

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

/* Why there is no PostgreSQL row, or NULL when BENCH_PG_ENV names one. */
static const char *
bench_pg_absent(void)
{
#ifdef SP_HAVE_LIBPQ
	const char *conninfo = getenv(BENCH_PG_ENV);
	const char *why = getenv(BENCH_PG_WHY_ENV);

	if (conninfo != NULL && conninfo[0] != '\0')
		return NULL;
	return why != NULL && why[0] != '\0' ? why : BENCH_PG_ENV " is not "
	    "set (make bench-limits starts a cluster and sets it)";
#else
	return "this bench_limits was built without libpq (configure "
	    "--with-libpq, with libpq-dev installed)";
#endif
}

/*
 * bench_policy with "state": {"postgres": conninfo}, built with cJSON so
 * that any conninfo is quoted right; the same tool, per_day and who as
 * the other rows.  NULL when it does not load.
 */
static struct policy *
bench_pg_policy(const char *conninfo)
{
	struct policy_diags diags = { 0 };
	struct policy *p = NULL;
	cJSON *root, *state;
	char *text = NULL;

	root = cJSON_Parse(bench_policy);
	state = cJSON_AddObjectToObject(root, "state");
	if (state != NULL &&
	    cJSON_AddStringToObject(state, "postgres", conninfo) != NULL &&
	    (text = cJSON_PrintUnformatted(root)) != NULL)
		p = policy_load("bench-pg.json", text, strlen(text), &diags);
	if (p == NULL && diags.count > 0)
		fprintf(stderr, "bench_limits: %s\n", diags.items[0].text);
	policy_diags_free(&diags);
	cJSON_free(text);
	cJSON_Delete(root);
	return p;
}

/*
 * ns per decision in PostgreSQL, connected as the broker connects
 * (pg_state_open(): schema and rights checked); false with why.
 */
static bool
bench_pg(const char *conninfo, double *ns, char *why, size_t why_size)
{
	struct policy *p = bench_pg_policy(conninfo);
	struct pg_state *pg = NULL;
	struct limits *l = NULL;
	enum pg_open how = PG_OPEN_REFUSED;
	bool ok = false;

	if (p == NULL)
		(void)snprintf(why, why_size, "its policy does not load");
	else if ((pg = pg_state_open(p, &how, why, why_size)) != NULL &&
	    how == PG_OPEN_UP &&
	    (l = limits_new(p, NULL, pg, BENCH_WHO)) != NULL) {
		*ns = bench_run(l, NULL);
		ok = true;
	} else if (how == PG_OPEN_UP)
		(void)snprintf(why, why_size, "out of memory");
	limits_free(l);
	pg_state_free(pg);
	policy_free(p);
	return ok;
}

/* The PostgreSQL row, timed after the others are printed, or why not. */
static void
bench_pg_row(double base, double with)
{
	char why[PG_WHY_MAX];
	const char *absent = bench_pg_absent();
	double ns;

	if (absent != NULL) {
		printf("  in PostgreSQL: skipped, %s\n", absent);
		return;
	}
	(void)fflush(stdout);	/* the rows above stay if a call is refused */
	if (!bench_pg(getenv(BENCH_PG_ENV), &ns, why, sizeof(why))) {
		printf("  in PostgreSQL: not timed, %s\n", why);
		return;
	}
	printf("  in PostgreSQL, one session               %10.0f  "
	    "ratio %.1f (%.1f x state_dir)\n", ns, ns / base, ns / with);
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
	mem = limits_new(p, NULL, NULL, BENCH_WHO);
	base = bench_run(mem, NULL);
	sf = state_file_open(dir, LIMITS_STATE_FILE);
	shared = limits_new(p, sf, NULL, BENCH_WHO);
	with = bench_run(shared, NULL);
	(void)snprintf(path, sizeof(path), "%s/%s", dir, LIMITS_STATE_FILE);
	(void)unlink(path);
	sf2 = state_file_open(dir, LIMITS_STATE_FILE);
	a = limits_new(p, sf2, NULL, BENCH_WHO);
	sf = state_file_open(dir, LIMITS_STATE_FILE);
	b = limits_new(p, sf, NULL, BENCH_WHO);
	busy = bench_run(a, b);
	printf("limit check, %d calls of a per_day tool, ns per call:\n",
	    BENCH_CALLS);
	printf("  without state_dir (in memory, baseline)  %10.0f\n", base);
	printf("  with state_dir, one session              %10.0f  "
	    "ratio %.1f\n", with, with / base);
	printf("  with state_dir, a second session writing %10.0f  "
	    "ratio %.1f\n", busy, busy / base);
	bench_pg_row(base, with);
	(void)unlink(path);
	(void)rmdir(dir);
	return 0;
}
