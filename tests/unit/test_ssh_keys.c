/*
 * Keys as operators really hold them: known_hosts files with comments,
 * CRLF line ends, other hosts and hashed names; user keys with a
 * passphrase and a separate public key.  And the loop keeps running while
 * a call is in flight (nothing blocks).
 */
#include "config.h"

#include <criterion/criterion.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/ssh_harness.h"

static struct sshd sshd;
static struct event_base *base;
static struct ssh_engine *engine;

static void
setup(void)
{
	ssh_suite_start(&sshd, &base, &engine, "", 30);
}

static void
teardown(void)
{
	ssh_suite_stop(&sshd, base, engine);
}

TestSuite(ssh_keys, .init = setup, .fini = teardown, .timeout = 20);

static void
shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
shell(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof(cmd));
	cr_assert_eq(system(cmd), 0, "failed: %s", cmd);
}

static void
run_on(struct ssh_target *tg, const char *command, struct call_result *r)
{
	int t = ssh_engine_add_target(engine, tg);

	cr_assert_geq(t, 0);
	run_call(base, engine, t, command, 4096, SSH_TEST_BUDGET_MS, r);
}

static void
assert_echoed(struct call_result *r, const char *out)
{
	cr_assert_eq(r->outcome, SSH_OK, "outcome %d: %s", r->outcome,
	    r->message);
	cr_assert_str_eq(r->out, out);
	result_clear(r);
}

Test(ssh_keys, known_hosts_with_comments_crlf_and_other_hosts_matches)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);
	char path[300], kh[4096];
	char *right, *other;
	struct call_result r;

	sshd_path(&sshd, "known_hosts", path, sizeof(path));
	right = file_read(path, NULL);
	sshd_path(&sshd, "other_host_key.pub", path, sizeof(path));
	other = file_read(path, NULL);
	right[strcspn(right, "\n")] = '\0';
	snprintf(kh, sizeof(kh), "# operator's file\r\n\r\n"
	    "web1.example.com,192.0.2.7 %s"
	    "   \t# indented comment\n%s\r\n", other, right);
	free(right);
	free(other);
	tg.known_hosts = kh;
	tg.known_hosts_len = strlen(kh);
	run_on(&tg, "echo \"it's \\\"known\\\"\"", &r);
	assert_echoed(&r, "it's \"known\"\n");
}

Test(ssh_keys, hashed_known_hosts_name_matches)
{
	struct ssh_target tg;
	char path[300];
	struct call_result r;
	char *kh;

	/* ssh-keygen -H replaces names by HMAC-SHA1 |1|salt|hash */
	shell("ssh-keygen -q -H -f '%s/known_hosts' >/dev/null 2>&1",
	    sshd.dir);
	sshd_path(&sshd, "known_hosts", path, sizeof(path));
	kh = file_read(path, NULL);
	cr_assert(strncmp(kh, "|1|", 3) == 0, "not hashed: %s", kh);
	free(kh);
	tg = sshd_target(&sshd, "user_ed25519", "known_hosts");
	run_on(&tg, "echo hashed", &r);
	assert_echoed(&r, "hashed\n");
}

/* A user key under a passphrase, authorized while sshd runs. */
static void
make_locked_key(void)
{
	shell("ssh-keygen -q -t ed25519 -N 'pa$$ \"w\xc3\xb6rd\"' -f '%s/locked'"
	    " </dev/null && cat '%s/locked.pub' >>'%s/authorized_keys'",
	    sshd.dir, sshd.dir, sshd.dir);
}

Test(ssh_keys, passphrase_protected_key_with_its_public_key)
{
	struct ssh_target tg;
	char path[300];
	struct call_result r;
	char *pub;

	make_locked_key();
	tg = sshd_target(&sshd, "locked", "known_hosts");
	tg.passphrase = "pa$$ \"w\xc3\xb6rd\"";
	sshd_path(&sshd, "locked.pub", path, sizeof(path));
	pub = file_read(path, &tg.public_key_len);
	tg.public_key = pub;
	run_on(&tg, "echo unlocked", &r);
	free(pub);	/* the engine copied it when the target was added */
	assert_echoed(&r, "unlocked\n");
}

Test(ssh_keys, wrong_passphrase_fails_and_says_so)
{
	struct ssh_target tg;
	struct call_result r;

	make_locked_key();
	tg = sshd_target(&sshd, "locked", "known_hosts");
	tg.passphrase = "pa$$ \"word\"";
	run_on(&tg, "echo never", &r);
	cr_assert_eq(r.outcome, SSH_FAILED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "authentication") != NULL, "%s",
	    r.message);
	cr_assert_eq(sshd_log_count(&sshd, "Accepted publickey"), 0);
	result_clear(&r);
}

struct tick {
	uint64_t fired_ms;
};

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tick *t = arg;

	(void)fd;
	(void)what;
	t->fired_ms = test_now_ms();
}

Test(ssh_keys, the_loop_keeps_running_while_a_call_is_in_flight)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", "known_hosts");
	struct ssh_request req = { .command = "sleep 1; echo slept",
	    .output_limit = 64, .timeout_ms = SSH_TEST_BUDGET_MS };
	struct timeval tv = { .tv_usec = 150000 };
	struct tick tick = { 0 };
	struct call_result r = { 0 };
	struct event *ev = evtimer_new(base, tick_cb, &tick);
	uint64_t t0;
	int t;

	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	t0 = test_now_ms();
	cr_assert_not_null(ssh_call_start(engine, t, &req, result_store, &r));
	evtimer_add(ev, &tv);
	loop_until_done(base, &r, 1);
	event_free(ev);
	cr_assert_neq(tick.fired_ms, 0, "the timer never fired");
	cr_assert_lt(tick.fired_ms - t0, 600, "timer fired after %llu ms",
	    (unsigned long long)(tick.fired_ms - t0));
	assert_echoed(&r, "slept\n");
}
