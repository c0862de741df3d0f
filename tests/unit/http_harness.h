/*
 * Test harness for the HTTP engine's tests (Criterion).  Each test file
 * keeps one struct harness, set up per test by harness_setup.
 */
#ifndef SP_TESTS_HTTP_HARNESS_H
#define SP_TESTS_HTTP_HARNESS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/http.h"
#include "tests/unit/http_peer.h"

struct harness;

/*
 * One finished request, copied out of the engine's callback.  Set owner
 * before submitting (harness_run does): the body copy belongs to that
 * harness and is freed by harness_teardown, so a test may overwrite or
 * drop a struct captured without freeing anything.
 */
struct captured {
	struct harness *owner;
	bool done;
	struct http_result r;	/* r.body cleared: see body */
	uint8_t *body;		/* NUL-terminated copy, owned by owner */
	uint64_t elapsed_us;
};

struct harness {
	struct event_base *base;
	struct http_engine *engine;	/* max 4 connections per host */
	struct http_peer peer;
	unsigned resolver_calls;
	uint8_t **bodies;		/* every captured body, for teardown */
	size_t nbodies;
};

/*
 * The resolver override maps *.test names: metadata.test 169.254.169.254,
 * linklocal.test 169.254.10.1, v6meta.test fd00:ec2::254, mapped.test
 * ::ffff:169.254.169.254, private.test 10.1.2.3, mixed.test 127.0.0.1 and
 * 169.254.169.254, any other *.test 127.0.0.1; IPv4 literals as given.
 */
void harness_setup(struct harness *h);

/* Frees the engine, the loop, the peer and every captured body. */
void harness_teardown(struct harness *h);

/* A GET of path on host at the peer's port, loopback allowed, 5 s budget. */
struct http_request harness_request(const struct harness *h,
    const char *host, const char *path);

/* Submits req and runs the loop until its callback ran. */
struct captured harness_run(struct harness *h,
    const struct http_request *req);

/* The completion callback harness_run uses; arg is a struct captured
 * whose owner is set. */
void harness_capture_done(const struct http_result *r, void *arg);

/* Runs the loop until all n captures are done. */
void harness_run_all(struct harness *h, struct captured *c, size_t n);

/* Request i of a server log (asserts it is there), and a string field. */
const cJSON *harness_logged(const cJSON *log, int i);
const char *harness_logged_str(const cJSON *e, const char *key);

uint64_t harness_mono_us(void);
char *harness_slurp(int fd);
char *harness_read_file(const char *path, size_t *len);

#endif
