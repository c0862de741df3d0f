/*
 * Shared by the SSH engine's tests: a throwaway sshd per test process
 * (tests/integration/sshd_fixture.sh), targets built from its files, and
 * a synchronous way to run calls through the engine on a private loop.
 */
#ifndef SP_TESTS_SSH_HARNESS_H
#define SP_TESTS_SSH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/ssh.h"

struct event_base;

/*
 * The budget of a call in a test that is not about time: far above need,
 * so a loaded machine (make -j8 check beside other work, where a plain
 * echo once took over 5 s) slows the test but does not fail it.  A call
 * ends as soon as its result is in, so the budget costs nothing.
 */
#define SSH_TEST_BUDGET_MS 60000

struct sshd {
	char dir[256];			/* keys, config, log */
	int port;
	char **owned;			/* buffers of sshd_target's targets */
	size_t owned_len;
};

/* A copy of a result, owned by the test (free with result_clear). */
struct call_result {
	bool done;
	enum ssh_outcome outcome;
	bool exited;
	int exit_status;
	char signal[32];
	char *out;			/* NUL-terminated copy of out.data */
	size_t out_len;
	uint64_t out_total;
	char *err;
	size_t err_len;
	uint64_t err_total;
	char message[512];
	uint64_t total_ms;
};

/*
 * Starts sshd; options are the fixture's ("", "rsa", "debug", "rsa debug").
 * Aborts the test on failure.
 */
void sshd_start(struct sshd *s, const char *options);

/* Stops sshd, removes its directory and frees every sshd_target buffer. */
void sshd_stop(struct sshd *s);

/*
 * What most SSH test files set up per test: sshd started with options, an
 * event base, and an engine on it with keepalive_seconds; asserts on
 * failure.  The three are the caller's; ssh_suite_stop frees them all.
 */
void ssh_suite_start(struct sshd *s, struct event_base **base,
    struct ssh_engine **engine, const char *options,
    unsigned keepalive_seconds);
void ssh_suite_stop(struct sshd *s, struct event_base *base,
    struct ssh_engine *engine);

/* The account the tests log in as: the current user (root on CI). */
const char *sshd_user(void);

/* Writes "DIR/name" into out. */
void sshd_path(const struct sshd *s, const char *name, char *out, size_t size);

/* Lines of sshd's log containing needle. */
int sshd_log_count(const struct sshd *s, const char *needle);

/* A whole file, NUL-terminated, malloc'd: the caller frees it.  Aborts the
 * test on failure. */
char *file_read(const char *path, size_t *len);
bool file_exists(const char *path);

/* OpenSSH's fingerprint of DIR/name.pub, as `ssh-keygen -lf` prints it. */
void sshd_keygen_fingerprint(const struct sshd *s, const char *name,
    char out[SSH_FINGERPRINT_SIZE]);

/* SHA-256 of the key blob in DIR/name.pub. */
void sshd_pub_sha256(const struct sshd *s, const char *name,
    uint8_t out[HASH_SHA256_LEN]);

/*
 * A target for sshd with user key `key` and known_hosts file `kh` (or NULL
 * for none).  The buffers it points to belong to s and live until
 * sshd_stop(s), so a test may repoint a field at its own memory without
 * freeing anything; the engine copies them at ssh_engine_add_target().
 */
struct ssh_target sshd_target(struct sshd *s, const char *key,
    const char *kh);

/* Callback that fills a struct call_result; arg is the result. */
void result_store(const struct ssh_result *r, void *arg);
void result_clear(struct call_result *r);

/* Runs the loop until every result in rs[0..n) is done. */
void loop_until_done(struct event_base *base, struct call_result *rs,
    size_t n);

/* Runs the loop for ms milliseconds. */
void run_loop_for(struct event_base *base, unsigned ms);

/* One call, run to its end. */
void run_call(struct event_base *base, struct ssh_engine *engine, int target,
    const char *command, size_t limit, uint32_t timeout_ms,
    struct call_result *r);

/* Single-quotes one shell word ('  ->  '\'').  Test-local: to be replaced by
 * the policy's quoting function when that branch lands.  Returns heap. */
char *test_shell_quote(const char *value);

uint64_t test_now_ms(void);

#endif
