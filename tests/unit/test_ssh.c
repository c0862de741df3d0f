/*
 * The SSH engine against a real OpenSSH sshd on 127.0.0.1, one per test
 * process: commands, output limits, signals, host keys, user keys, quoting
 * of hostile values, time budgets.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <criterion/criterion.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/ssh_harness.h"

static struct sshd sshd;
static struct event_base *base;
static struct ssh_engine *engine;

static void
setup(void)
{
	ssh_suite_start(&sshd, &base, &engine, "", 15);
}

static void
teardown(void)
{
	ssh_suite_stop(&sshd, base, engine);
}

TestSuite(ssh, .init = setup, .fini = teardown, .timeout = 20);

static int
default_target(void)
{
	struct ssh_target t = sshd_target(&sshd, "user_ed25519", "known_hosts");
	int id = ssh_engine_add_target(engine, &t);

	cr_assert_geq(id, 0);
	return id;
}

static void
assert_ok_exit(const struct call_result *r, int status)
{
	cr_assert_eq(r->outcome, SSH_OK, "outcome %d: %s", r->outcome,
	    r->message);
	cr_assert(r->exited, "no exit status: %s", r->message);
	cr_assert_eq(r->exit_status, status, "status %d: %s", r->exit_status,
	    r->message);
}

Test(ssh, echo_returns_its_arguments_and_status_zero)
{
	struct call_result r;
	int t = default_target();

	run_call(base, engine, t, "echo hello 'two  words' \"\xc3\xbcn\xc3\xaf "
	    "\xe2\x9c\x93\"", 4096, SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 0);
	cr_assert_str_eq(r.out, "hello two  words \xc3\xbcn\xc3\xaf \xe2\x9c\x93\n");
	cr_assert_eq(r.out_total, r.out_len);
	cr_assert_eq(r.err_len, 0, "stderr: %.*s", (int)r.err_len,
	    r.err != NULL ? r.err : "");
	result_clear(&r);
}

Test(ssh, non_zero_exit_status_is_reported)
{
	struct call_result r;
	int t = default_target();

	run_call(base, engine, t, "echo partial; exit 7", 4096,
	    SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 7);
	cr_assert_str_eq(r.out, "partial\n");
	cr_assert(strstr(r.message, "status 7") != NULL, "%s", r.message);
	result_clear(&r);
}

Test(ssh, stderr_is_captured_apart_from_stdout)
{
	struct call_result r;
	int t = default_target();

	run_call(base, engine, t, "echo out1; echo 'err 1' >&2; echo out2; "
	    "printf 'err\\n2\\n' >&2", 4096, SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 0);
	cr_assert_str_eq(r.out, "out1\nout2\n");
	cr_assert_str_eq(r.err, "err 1\nerr\n2\n");
	cr_assert_eq(r.err_total, 12);
	result_clear(&r);
}

Test(ssh, five_megabytes_are_cut_at_the_limit_and_counted)
{
	struct call_result r;
	int t = default_target();
	size_t i;

	run_call(base, engine, t, "head -c 5242880 /dev/zero | tr '\\000' x; "
	    "head -c 70000 /dev/zero | tr '\\000' y >&2", 1000,
	    SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 0);
	cr_assert_eq(r.out_len, 1000);
	cr_assert_eq(r.out_total, 5242880);
	for (i = 0; i < r.out_len; i++)
		cr_assert_eq(r.out[i], 'x', "byte %zu", i);
	cr_assert_eq(r.err_len, 1000);
	cr_assert_eq(r.err_total, 70000);
	cr_assert_eq(r.err[999], 'y');
	result_clear(&r);
}

Test(ssh, a_command_killed_by_a_signal_reports_it)
{
	struct call_result r;
	int t = default_target();

	run_call(base, engine, t, "echo before; kill -TERM $$; echo after",
	    4096, SSH_TEST_BUDGET_MS, &r);
	cr_assert_eq(r.outcome, SSH_OK, "%s", r.message);
	cr_assert(!r.exited);
	cr_assert_str_eq(r.signal, "TERM");
	cr_assert_str_eq(r.out, "before\n");
	cr_assert(strstr(r.message, "signal TERM") != NULL, "%s", r.message);
	result_clear(&r);
	run_call(base, engine, t, "echo oops >&2; kill -KILL $$", 4096,
	    SSH_TEST_BUDGET_MS, &r);
	cr_assert(!r.exited);
	cr_assert_str_eq(r.signal, "KILL");
	cr_assert_str_eq(r.err, "oops\n");
	result_clear(&r);
}

Test(ssh, stdin_bytes_reach_the_command)
{
	struct ssh_request req = { .command = "cat; echo; read -r x </dev/null;"
	    " echo done", .stdin_data = "s3cr\"et\n$(touch x) \xe2\x9c\x93",
	    .output_limit = 4096, .timeout_ms = SSH_TEST_BUDGET_MS };
	struct call_result r = { 0 };
	int t = default_target();

	req.stdin_len = strlen(req.stdin_data);
	cr_assert_not_null(ssh_call_start(engine, t, &req, result_store, &r));
	loop_until_done(base, &r, 1);
	assert_ok_exit(&r, 0);
	cr_assert_str_eq(r.out, "s3cr\"et\n$(touch x) \xe2\x9c\x93\ndone\n");
	result_clear(&r);
}

/* Hostile values must arrive as literal single arguments. */
Test(ssh, hostile_values_arrive_as_literal_arguments)
{
	char marker[300], quote[400], subst[400], tick[400];
	char cmd[4096], expected[2048];
	const char *values[] = { NULL, NULL, NULL, "a\nb; touch x",
	    "--option=1", "-n", "%2e%2e/%2e%2e/etc", "\"dq\" \\ $HOME *",
	    "\xc3\xbc\xe2\x9c\x93 \xf0\x9f\x94\x91", "", "it's" };
	struct call_result r;
	int t = default_target();
	size_t i;

	sshd_path(&sshd, "marker", marker, sizeof(marker));
	snprintf(quote, sizeof(quote), "'; touch %s'", marker);
	snprintf(subst, sizeof(subst), "$(touch %s)", marker);
	snprintf(tick, sizeof(tick), "`touch %s`", marker);
	values[0] = quote;
	values[1] = subst;
	values[2] = tick;
	snprintf(cmd, sizeof(cmd), "printf '<%%s>\\n'");
	expected[0] = '\0';
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char *q = test_shell_quote(values[i]);

		strncat(cmd, " ", sizeof(cmd) - strlen(cmd) - 1);
		strncat(cmd, q, sizeof(cmd) - strlen(cmd) - 1);
		snprintf(expected + strlen(expected),
		    sizeof(expected) - strlen(expected), "<%s>\n", values[i]);
		free(q);
	}
	run_call(base, engine, t, cmd, 8192, SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 0);
	cr_assert_str_eq(r.out, expected);
	cr_assert(!file_exists(marker), "a value was run as a command");
	result_clear(&r);
}

Test(ssh, pinned_host_key_that_matches_is_accepted)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);
	struct call_result r;
	int t;

	tg.has_host_key_sha256 = true;
	sshd_pub_sha256(&sshd, "host_key", tg.host_key_sha256);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, "echo pinned", 4096, SSH_TEST_BUDGET_MS, &r);
	assert_ok_exit(&r, 0);
	cr_assert_str_eq(r.out, "pinned\n");
	result_clear(&r);
}

static void
assert_denied_without_marker(struct ssh_target *tg, const char *expected_key)
{
	char marker[300], cmd[400], offered[SSH_FINGERPRINT_SIZE],
	    expected[SSH_FINGERPRINT_SIZE];
	struct call_result r;
	int t;

	sshd_path(&sshd, "marker", marker, sizeof(marker));
	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);
	cr_assert_geq(t = ssh_engine_add_target(engine, tg), 0);
	run_call(base, engine, t, cmd, 4096, SSH_TEST_BUDGET_MS, &r);
	cr_assert_eq(r.outcome, SSH_DENIED, "outcome %d: %s", r.outcome,
	    r.message);
	sshd_keygen_fingerprint(&sshd, "host_key", offered);
	cr_assert(strstr(r.message, offered) != NULL, "offered %s not in: %s",
	    offered, r.message);
	if (expected_key != NULL) {
		sshd_keygen_fingerprint(&sshd, expected_key, expected);
		cr_assert(strstr(r.message, expected) != NULL,
		    "expected %s not in: %s", expected, r.message);
	}
	cr_assert(!file_exists(marker), "command ran on an unverified host");
	cr_assert_eq(sshd_log_count(&sshd, "Accepted publickey"), 0,
	    "authenticated to an unverified host");
	result_clear(&r);
}

Test(ssh, wrong_pinned_host_key_is_denied_before_anything_is_sent)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);

	tg.has_host_key_sha256 = true;
	sshd_pub_sha256(&sshd, "other_host_key", tg.host_key_sha256);
	assert_denied_without_marker(&tg, "other_host_key");
}

Test(ssh, known_hosts_with_another_key_is_denied)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519",
	    "known_hosts_other");

	assert_denied_without_marker(&tg, "other_host_key");
}

Test(ssh, known_hosts_entry_for_the_plain_host_does_not_cover_the_port)
{
	char line[600], path[300];
	char *kh;
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);

	/* OpenSSH names a non-22 port "[host]:port"; a bare host is not it */
	sshd_path(&sshd, "host_key.pub", path, sizeof(path));
	kh = file_read(path, NULL);
	snprintf(line, sizeof(line), "127.0.0.1 %s", kh);
	free(kh);
	tg.known_hosts = line;
	tg.known_hosts_len = strlen(line);
	assert_denied_without_marker(&tg, NULL);
}

Test(ssh, known_hosts_line_not_understood_is_denied)
{
	char kh[1200], path[300];
	char *good;
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);

	sshd_path(&sshd, "known_hosts", path, sizeof(path));
	good = file_read(path, NULL);
	/* a revocation libssh2 cannot read must not be skipped silently */
	snprintf(kh, sizeof(kh), "@revoked %s%s", good, good);
	free(good);
	tg.known_hosts = kh;
	tg.known_hosts_len = strlen(kh);
	assert_denied_without_marker(&tg, NULL);
}

Test(ssh, no_known_hosts_and_no_pin_is_denied)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);

	assert_denied_without_marker(&tg, NULL);
}

Test(ssh, wrong_user_key_fails_and_runs_nothing)
{
	struct ssh_target tg = sshd_target(&sshd, "stranger", "known_hosts");
	char marker[300], cmd[400];
	struct call_result r;
	int t;

	sshd_path(&sshd, "marker", marker, sizeof(marker));
	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, cmd, 4096, SSH_TEST_BUDGET_MS, &r);
	cr_assert_eq(r.outcome, SSH_FAILED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "authentication") != NULL, "%s",
	    r.message);
	cr_assert(!file_exists(marker));
	result_clear(&r);
}

Test(ssh, timeout_after_sending_is_unknown_and_prompt)
{
	struct call_result r;
	int t = default_target();
	uint64_t t0 = test_now_ms(), elapsed;

	run_call(base, engine, t, "echo started; sleep 10", 4096, 1000, &r);
	elapsed = test_now_ms() - t0;
	cr_assert_eq(r.outcome, SSH_UNKNOWN, "outcome %d: %s", r.outcome,
	    r.message);
	/* the 1 s budget's end, far from the command's 10 s on a busy host */
	cr_assert(elapsed >= 950 && elapsed < 6000, "took %llu ms",
	    (unsigned long long)elapsed);
	cr_assert(strstr(r.message, "may have run") != NULL, "%s", r.message);
	result_clear(&r);
}

/* A listener that never speaks SSH: the key exchange cannot finish. */
static int
silent_listener(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(fd, 4), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* True once the peer on fd has closed (within about a second). */
static bool
peer_closed(int fd)
{
	struct timeval tv = { .tv_sec = 1 };
	char buf[256];
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		continue;	/* the client's banner */
	return n == 0;
}

Test(ssh, timeout_before_sending_is_failed_and_drops_the_connection)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", "known_hosts");
	struct call_result r;
	uint64_t t0 = test_now_ms(), elapsed;
	int t, lfd, cfd;

	lfd = silent_listener(&tg.port);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, "echo never", 4096, 300, &r);
	elapsed = test_now_ms() - t0;
	cr_assert_eq(r.outcome, SSH_FAILED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "before the command was sent") != NULL,
	    "%s", r.message);
	/* the 300 ms budget's end; a key exchange nobody bounds never ends */
	cr_assert(elapsed >= 280 && elapsed < 5000, "took %llu ms",
	    (unsigned long long)elapsed);
	/* nobody waits for that connection any more: it must not linger */
	run_loop_for(base, 50);
	cr_assert_geq(cfd = accept(lfd, NULL, NULL), 0);
	cr_assert(peer_closed(cfd), "the engine kept a connection nobody uses");
	close(cfd);
	close(lfd);
	result_clear(&r);
}

/* libssh2 would refuse the exec request only after the call counts as sent. */
Test(ssh, a_command_over_the_limit_is_refused_before_any_connection)
{
	struct ssh_request req = { .output_limit = 4096,
	    .timeout_ms = SSH_TEST_BUDGET_MS };
	struct call_result r = { 0 };
	char *cmd = malloc(SSH_COMMAND_MAX + 2);
	int t = default_target();

	cr_assert_not_null(cmd);
	memset(cmd, 'x', SSH_COMMAND_MAX + 1);
	cmd[SSH_COMMAND_MAX + 1] = '\0';
	req.command = cmd;
	cr_assert_null(ssh_call_start(engine, t, &req, result_store, &r));
	run_loop_for(base, 100);
	cr_assert(!r.done);
	cr_assert_eq(sshd_log_count(&sshd, "Connection from"), 0);
	cmd[SSH_COMMAND_MAX] = '\0';	/* the limit itself is allowed */
	cmd[0] = ':';
	cmd[1] = ' ';
	cr_assert_not_null(ssh_call_start(engine, t, &req, result_store, &r));
	loop_until_done(base, &r, 1);
	assert_ok_exit(&r, 0);
	result_clear(&r);
	free(cmd);
}
