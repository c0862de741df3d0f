/*
 * Micro-benchmark, printed and not judged: per-call latency of `echo hi`
 * through the engine (connection already up) beside OpenSSH's ssh with a
 * control master (master already up), against the same sshd.  Only that
 * every call printed "hi" is asserted.  Figures: ssh-bench.txt.
 */
#include "config.h"

#include <sys/wait.h>

#include <criterion/criterion.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/unit/ssh_harness.h"

#define ROUNDS 15

static struct sshd sshd;

static void
setup(void)
{
	sshd_start(&sshd, "");
}

static void
teardown(void)
{
	sshd_stop(&sshd);
}

TestSuite(ssh_bench, .init = setup, .fini = teardown, .timeout = 60);

/* The engine's own clock (common/clock.h), as a double for the sums. */
static double
now_us(void)
{
	return (double)clock_monotonic_us();
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v and returns its p-th percentile (nearest rank). */
static double
percentile(double *v, size_t n, double p)
{
	size_t rank;

	qsort(v, n, sizeof(*v), cmp_double);
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	return v[rank > 0 ? rank - 1 : 0];
}

static void
engine_latencies(double *ms)
{
	struct ssh_engine_config cfg = { .keepalive_seconds = 30 };
	struct event_base *base = event_base_new();
	struct ssh_engine *engine = ssh_engine_new(base, &cfg);
	struct ssh_target t = sshd_target(&sshd, "user_ed25519", "known_hosts");
	struct call_result r;
	int id, i;

	cr_assert_geq(id = ssh_engine_add_target(engine, &t), 0);
	/* connect */
	run_call(base, engine, id, "true", 64, SSH_TEST_BUDGET_MS, &r);
	result_clear(&r);
	for (i = 0; i < ROUNDS; i++) {
		double t0 = now_us();

		run_call(base, engine, id, "echo hi", 64, SSH_TEST_BUDGET_MS,
		    &r);
		ms[i] = (now_us() - t0) / 1e3;
		cr_assert_str_eq(r.out, "hi\n", "%s", r.message);
		result_clear(&r);
	}
	ssh_engine_free(engine);
	event_base_free(base);
}

/* Runs ssh with the control master options; returns its stdout. */
static void
ssh_cli(const char *extra, const char *command, char *out, size_t size)
{
	char cmd[1400];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ssh -o ControlMaster=auto "
	    "-o ControlPath=%s/cm -o ControlPersist=60 -o BatchMode=yes "
	    "-o UserKnownHostsFile=%s/known_hosts -o StrictHostKeyChecking=yes "
	    "-i %s/user_ed25519 -p %d %s %s@127.0.0.1 %s </dev/null",
	    sshd.dir, sshd.dir, sshd.dir, sshd.port, extra,
	    sshd_user(), command);
	cr_assert_not_null(p = popen(cmd, "r"));
	n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	pclose(p);
}

static void
ssh_latencies(double *ms)
{
	char out[64];
	int i;

	ssh_cli("", "true", out, sizeof(out));	/* starts the master */
	for (i = 0; i < ROUNDS; i++) {
		double t0 = now_us();

		ssh_cli("", "echo hi", out, sizeof(out));
		ms[i] = (now_us() - t0) / 1e3;
		cr_assert_str_eq(out, "hi\n");
	}
	ssh_cli("-O exit", "", out, sizeof(out));
}

/*
 * Criterion keeps a worker's stdout and stderr out of its TAP stream, so
 * the figures also go to ssh-bench.txt in the directory the test ran in.
 */
static void
report(double e50, double e95, double s50, double s95)
{
	char line[300];
	FILE *f;

	snprintf(line, sizeof(line), "ssh bench (%d calls of echo hi): "
	    "engine p50 %.1f ms p95 %.1f ms; ssh ControlMaster p50 %.1f ms "
	    "p95 %.1f ms; ratio engine/ssh p50 %.2f p95 %.2f\n", ROUNDS, e50,
	    e95, s50, s95, e50 / s50, e95 / s95);
	fputs(line, stderr);
	if ((f = fopen("ssh-bench.txt", "w")) != NULL) {
		fputs(line, f);
		fclose(f);
	}
}

Test(ssh_bench, echo_latency_engine_vs_ssh_control_master)
{
	double engine_ms[ROUNDS], ssh_ms[ROUNDS];
	double e50, e95, s50, s95;

	engine_latencies(engine_ms);
	ssh_latencies(ssh_ms);
	e50 = percentile(engine_ms, ROUNDS, 50);
	e95 = percentile(engine_ms, ROUNDS, 95);
	s50 = percentile(ssh_ms, ROUNDS, 50);
	s95 = percentile(ssh_ms, ROUNDS, 95);
	report(e50, e95, s50, s95);
}
