/*
 * A server with two host keys (ed25519 and ecdsa), as a stock sshd has:
 * the engine must ask for a key type known_hosts holds for the host, as
 * OpenSSH does, and still accept nothing that does not match.
 */
#include "config.h"

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
	ssh_suite_start(&sshd, &base, &engine, "ecdsa", 30);
}

static void
teardown(void)
{
	ssh_suite_stop(&sshd, base, engine);
}

TestSuite(ssh_hostkeys, .init = setup, .fini = teardown, .timeout = 20);

/* Runs `touch DIR/marker` on a target whose known_hosts is kh. */
static void
touch_marker(const char *kh, struct call_result *r, char *marker,
    size_t size)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);
	char cmd[400];
	int t;

	tg.known_hosts = kh;
	tg.known_hosts_len = strlen(kh);
	sshd_path(&sshd, "marker", marker, size);
	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, cmd, 4096, SSH_TEST_BUDGET_MS, r);
}

static char *
fixture_file(const char *name)
{
	char path[300];

	sshd_path(&sshd, name, path, sizeof(path));
	return file_read(path, NULL);
}

static void
assert_ran(const char *kh)
{
	struct call_result r;
	char marker[300];

	touch_marker(kh, &r, marker, sizeof(marker));
	cr_assert_eq(r.outcome, SSH_OK, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(file_exists(marker));
	result_clear(&r);
}

Test(ssh_hostkeys, known_hosts_with_only_the_ed25519_key_is_enough)
{
	char *kh = fixture_file("known_hosts");

	assert_ran(kh);
	free(kh);
}

Test(ssh_hostkeys, known_hosts_with_only_the_ecdsa_key_is_enough)
{
	char *kh = fixture_file("known_hosts_ecdsa");

	assert_ran(kh);
	free(kh);
}

Test(ssh_hostkeys, hashed_known_hosts_with_only_the_ed25519_key_is_enough)
{
	char path[300], cmd[400];
	char *kh;

	sshd_path(&sshd, "known_hosts", path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "ssh-keygen -q -H -f '%s' >/dev/null 2>&1",
	    path);
	cr_assert_eq(system(cmd), 0);
	kh = file_read(path, NULL);
	cr_assert(strncmp(kh, "|1|", 3) == 0, "not hashed: %s", kh);
	assert_ran(kh);
	free(kh);
}

/*
 * known_hosts holds a wrong ed25519 key and the right ecdsa one: OpenSSH
 * asks for ed25519 first and refuses the changed key; so must the engine,
 * rather than settle for the type that happens to match.
 */
Test(ssh_hostkeys, a_changed_key_of_one_type_is_denied_despite_another)
{
	char *other = fixture_file("known_hosts_other");
	char *ecdsa = fixture_file("known_hosts_ecdsa");
	char kh[2048], marker[300];
	struct call_result r;

	snprintf(kh, sizeof(kh), "%s%s", other, ecdsa);
	free(other);
	free(ecdsa);
	touch_marker(kh, &r, marker, sizeof(marker));
	cr_assert_eq(r.outcome, SSH_DENIED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "mismatch") != NULL, "%s", r.message);
	cr_assert(!file_exists(marker));
	result_clear(&r);
}

/* Entries for other hosts do not choose the type asked of this one. */
Test(ssh_hostkeys, another_hosts_key_type_does_not_steer_the_offer)
{
	char *pub = fixture_file("other_host_key.pub");
	char *ecdsa = fixture_file("known_hosts_ecdsa");
	char kh[2048];

	snprintf(kh, sizeof(kh), "web1.example.com %s%s", pub, ecdsa);
	free(pub);
	free(ecdsa);
	assert_ran(kh);
}

/*
 * A pin says nothing of the key's type, so libssh2 asks for its own first
 * choice (ecdsa before ed25519): the denial names the type it was offered,
 * so the operator can pin that key instead.
 */
Test(ssh_hostkeys, a_pin_of_another_type_is_denied_naming_the_type_offered)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);
	struct call_result r;
	int t;

	tg.has_host_key_sha256 = true;
	sshd_pub_sha256(&sshd, "host_key", tg.host_key_sha256);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, "true", 4096, SSH_TEST_BUDGET_MS, &r);
	cr_assert_eq(r.outcome, SSH_DENIED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "offered ecdsa-sha2-nistp256 SHA256:") !=
	    NULL, "%s", r.message);
	result_clear(&r);
	tg = sshd_target(&sshd, "user_ed25519", NULL);
	tg.has_host_key_sha256 = true;
	sshd_pub_sha256(&sshd, "host_key_ecdsa", tg.host_key_sha256);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, "true", 4096, SSH_TEST_BUDGET_MS, &r);
	cr_assert_eq(r.outcome, SSH_OK, "outcome %d: %s", r.outcome,
	    r.message);
	result_clear(&r);
}

/* "[name]:port TYPE KEY\n" for the fixture's public key file pub. */
static void
known_hosts_line(const char *name, const char *pub, char *out, size_t size)
{
	char *key = fixture_file(pub);
	char *sp = strchr(key, ' ');

	cr_assert_not_null(sp);
	sp = strchr(sp + 1, ' ');	/* drop the comment */
	if (sp != NULL)
		*sp = '\0';
	key[strcspn(key, "\n")] = '\0';
	snprintf(out, size, "[%s]:%d %s\n", name, sshd.port, key);
	free(key);
}

/* touch_marker() on a target named host_name, at 127.0.0.1. */
static void
touch_marker_named(const char *host_name, const char *kh,
    struct call_result *r, char *marker, size_t size)
{
	struct ssh_target tg = sshd_target(&sshd, "user_ed25519", NULL);
	char cmd[400];
	int t;

	tg.host_name = host_name;
	tg.known_hosts = kh;
	tg.known_hosts_len = strlen(kh);
	sshd_path(&sshd, "marker", marker, size);
	snprintf(cmd, sizeof(cmd), "touch '%s'", marker);
	cr_assert_geq(t = ssh_engine_add_target(engine, &tg), 0);
	run_call(base, engine, t, cmd, 4096, SSH_TEST_BUDGET_MS, r);
}

/* What ssh-keyscan or ssh itself writes for a host named in the policy. */
Test(ssh_hostkeys, known_hosts_naming_the_host_rather_than_its_address)
{
	char kh[1024], marker[300];
	struct call_result r;

	known_hosts_line("sshd.test", "host_key.pub", kh, sizeof(kh));
	touch_marker_named("sshd.test", kh, &r, marker, sizeof(marker));
	cr_assert_eq(r.outcome, SSH_OK, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(file_exists(marker));
	result_clear(&r);
	cr_assert_eq(unlink(marker), 0);
	/* OpenSSH looks names up in lower case */
	touch_marker_named("SSHD.Test", kh, &r, marker, sizeof(marker));
	cr_assert_eq(r.outcome, SSH_OK, "outcome %d: %s", r.outcome,
	    r.message);
	result_clear(&r);
}

/* A changed key under either the name or the address refuses. */
Test(ssh_hostkeys, a_changed_key_under_the_name_or_the_address_is_denied)
{
	const char *wrong[2][2] = {
		{ "host_key.pub", "other_host_key.pub" },	/* address */
		{ "other_host_key.pub", "host_key.pub" },	/* name */
	};
	char kh[2048], line[1024], marker[300];
	struct call_result r;
	size_t i;

	for (i = 0; i < 2; i++) {
		known_hosts_line("sshd.test", wrong[i][0], kh, sizeof(kh));
		known_hosts_line("127.0.0.1", wrong[i][1], line, sizeof(line));
		strncat(kh, line, sizeof(kh) - strlen(kh) - 1);
		touch_marker_named("sshd.test", kh, &r, marker, sizeof(marker));
		cr_assert_eq(r.outcome, SSH_DENIED, "%zu: outcome %d: %s", i,
		    r.outcome, r.message);
		cr_assert(strstr(r.message, "mismatch for [") != NULL, "%s",
		    r.message);
		cr_assert(!file_exists(marker));
		result_clear(&r);
	}
}

/* An entry for another name says nothing about this host. */
Test(ssh_hostkeys, an_entry_for_another_name_is_not_found)
{
	char kh[1024], marker[300];
	struct call_result r;

	known_hosts_line("other.test", "host_key.pub", kh, sizeof(kh));
	touch_marker_named("sshd.test", kh, &r, marker, sizeof(marker));
	cr_assert_eq(r.outcome, SSH_DENIED, "outcome %d: %s", r.outcome,
	    r.message);
	cr_assert(strstr(r.message, "for [sshd.test]:") != NULL, "%s",
	    r.message);
	cr_assert(!file_exists(marker));
	result_clear(&r);
}
