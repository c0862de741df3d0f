/*
 * Test harness for the SSH engine: see ssh_harness.h.
 */
#include "config.h"

#include <sys/stat.h>

#include <criterion/criterion.h>
#include <event2/event.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/ssh_harness.h"

#ifndef SSHD_FIXTURE
#error "SSHD_FIXTURE must name tests/integration/sshd_fixture.sh"
#endif

uint64_t
test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
sshd_path(const struct sshd *s, const char *name, char *out, size_t size)
{
	int n = snprintf(out, size, "%s/%s", s->dir, name);

	cr_assert(n > 0 && (size_t)n < size, "path too long");
}

/*
 * The fixture's commands hold SSHD_FIXTURE, an absolute path as long as
 * the source tree's (make distcheck's is deep), so they are sized from it
 * and a command that does not fit is never run cut short.
 */
#define SSHD_CMD_MAX \
	(sizeof(SSHD_FIXTURE) + 2 * sizeof(((struct sshd *)0)->dir) + 64)

void
sshd_start(struct sshd *s, const char *options)
{
	char cmd[SSHD_CMD_MAX];
	FILE *p;
	int n;

	snprintf(s->dir, sizeof(s->dir), "/tmp/sp-sshd-XXXXXX");
	cr_assert_not_null(mkdtemp(s->dir), "mkdtemp");
	/* exec: the fixture's parent, whose life sshd's is tied to, is
	 * this process, not popen's shell */
	n = snprintf(cmd, sizeof(cmd), "exec sh '%s' start '%s' %s",
	    SSHD_FIXTURE, s->dir, options);
	cr_assert(n > 0 && (size_t)n < sizeof(cmd), "sshd fixture command "
	    "too long");
	cr_assert_not_null(p = popen(cmd, "r"), "popen fixture");
	s->port = 0;
	if (fscanf(p, "%d", &s->port) != 1)
		s->port = 0;
	pclose(p);
	cr_assert(s->port > 0, "sshd fixture did not start");
}

static void
sshd_free_owned(struct sshd *s)
{
	size_t i;

	for (i = 0; i < s->owned_len; i++)
		free(s->owned[i]);
	free(s->owned);
	s->owned = NULL;
	s->owned_len = 0;
}

/* Hands buf to s, to be freed by sshd_stop; returns buf. */
static char *
sshd_own(struct sshd *s, char *buf)
{
	char **grown;

	grown = reallocarray(s->owned, s->owned_len + 1, sizeof(*s->owned));
	cr_assert_not_null(grown, "sshd_own: out of memory");
	s->owned = grown;
	s->owned[s->owned_len++] = buf;
	return buf;
}

void
sshd_stop(struct sshd *s)
{
	char cmd[SSHD_CMD_MAX];
	int n;

	sshd_free_owned(s);
	if (s->dir[0] == '\0')
		return;
	n = snprintf(cmd, sizeof(cmd), "sh '%s' stop '%s'; rm -rf '%s'",
	    SSHD_FIXTURE, s->dir, s->dir);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		fprintf(stderr, "sshd_stop: command too long for %s\n", s->dir);
	else if (system(cmd) != 0)
		fprintf(stderr, "sshd_stop: cleanup of %s failed\n", s->dir);
	s->dir[0] = '\0';
}

char *
file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	cr_assert(n >= 0);
	cr_assert_not_null(buf = malloc((size_t)n + 1));
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

bool
file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int
sshd_log_count(const struct sshd *s, const char *needle)
{
	char path[300];
	char *log, *p;
	int count = 0;

	sshd_path(s, "sshd.log", path, sizeof(path));
	log = file_read(path, NULL);
	for (p = log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		count++;
	free(log);
	return count;
}

void
sshd_keygen_fingerprint(const struct sshd *s, const char *name,
    char out[SSH_FINGERPRINT_SIZE])
{
	char cmd[400], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ssh-keygen -E sha256 -lf '%s/%s.pub'",
	    s->dir, name);
	cr_assert_not_null(p = popen(cmd, "r"));
	cr_assert_not_null(fgets(line, sizeof(line), p));
	pclose(p);
	/* "256 SHA256:xxxx comment (ED25519)" */
	cr_assert_eq(sscanf(line, "%*d %50s", out), 1);
}

void
sshd_pub_sha256(const struct sshd *s, const char *name,
    uint8_t out[HASH_SHA256_LEN])
{
	char path[300], b64[1024];
	unsigned char blob[1024];
	char *pub;
	int n;

	snprintf(path, sizeof(path), "%s/%s.pub", s->dir, name);
	pub = file_read(path, NULL);
	cr_assert_eq(sscanf(pub, "%*s %1023s", b64), 1);
	free(pub);
	n = EVP_DecodeBlock(blob, (unsigned char *)b64, (int)strlen(b64));
	cr_assert(n > 0);
	while (b64[strlen(b64) - 1] == '=') {	/* padding decodes as zeros */
		b64[strlen(b64) - 1] = '\0';
		n--;
	}
	hash_sha256(blob, (size_t)n, out);
}

const char *
sshd_user(void)
{
	struct passwd *pw = getpwuid(getuid());

	cr_assert_not_null(pw, "no passwd entry for uid %u", (unsigned)getuid());
	return pw->pw_name;	/* static in libc; read before the next call */
}

struct ssh_target
sshd_target(struct sshd *s, const char *key, const char *kh)
{
	struct ssh_target t = { .address = "127.0.0.1",
	    .port = (uint16_t)s->port, .user = NULL };
	char path[300], *user;

	cr_assert_not_null(user = strdup(sshd_user()));
	t.user = sshd_own(s, user);
	sshd_path(s, key, path, sizeof(path));
	t.private_key = sshd_own(s, file_read(path, &t.private_key_len));
	if (kh != NULL) {
		sshd_path(s, kh, path, sizeof(path));
		t.known_hosts = sshd_own(s, file_read(path,
		    &t.known_hosts_len));
	}
	return t;
}

void
result_store(const struct ssh_result *r, void *arg)
{
	struct call_result *c = arg;

	cr_assert(!c->done, "callback ran twice");
	c->done = true;
	c->outcome = r->outcome;
	c->exited = r->exited;
	c->exit_status = r->exit_status;
	snprintf(c->signal, sizeof(c->signal), "%s",
	    r->signal != NULL ? r->signal : "");
	cr_assert_not_null(c->out = malloc(r->out.len + 1));
	memcpy(c->out, r->out.data != NULL ? r->out.data : "", r->out.len);
	c->out[r->out.len] = '\0';
	c->out_len = r->out.len;
	c->out_total = r->out.total;
	cr_assert_not_null(c->err = malloc(r->err.len + 1));
	memcpy(c->err, r->err.data != NULL ? r->err.data : "", r->err.len);
	c->err[r->err.len] = '\0';
	c->err_len = r->err.len;
	c->err_total = r->err.total;
	snprintf(c->message, sizeof(c->message), "%s", r->message);
	c->total_ms = r->total_ms;
}

void
result_clear(struct call_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

void
loop_until_done(struct event_base *base, struct call_result *rs, size_t n)
{
	size_t i, done;

	for (;;) {
		for (done = 0, i = 0; i < n; i++)
			done += rs[i].done;
		if (done == n)
			return;
		/* returns after each round of callbacks; 1: nothing pending */
		cr_assert_neq(event_base_loop(base, EVLOOP_ONCE), 1,
		    "calls pending but no event armed");
	}
}

static void
stop_loop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

void
run_loop_for(struct event_base *base, unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
	    .tv_usec = (ms % 1000) * 1000 };
	struct event *stop = evtimer_new(base, stop_loop_cb, base);

	cr_assert_not_null(stop);
	evtimer_add(stop, &tv);
	event_base_dispatch(base);
	event_free(stop);
}

void
run_call(struct event_base *base, struct ssh_engine *engine, int target,
    const char *command, size_t limit, uint32_t timeout_ms,
    struct call_result *r)
{
	struct ssh_request req = { .command = command, .output_limit = limit,
	    .timeout_ms = timeout_ms };

	memset(r, 0, sizeof(*r));
	cr_assert_not_null(ssh_call_start(engine, target, &req, result_store,
	    r));
	loop_until_done(base, r, 1);
}

/* REPLACE with the policy's argv quoting once that branch is merged. */
char *
test_shell_quote(const char *value)
{
	size_t n = 2, i;
	char *out, *p;

	for (i = 0; value[i] != '\0'; i++)
		n += value[i] == '\'' ? 4 : 1;
	cr_assert_not_null(out = malloc(n + 1));
	p = out;
	*p++ = '\'';
	for (i = 0; value[i] != '\0'; i++) {
		if (value[i] == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else
			*p++ = value[i];
	}
	*p++ = '\'';
	*p = '\0';
	return out;
}

void
ssh_suite_start(struct sshd *s, struct event_base **base,
    struct ssh_engine **engine, const char *options,
    unsigned keepalive_seconds)
{
	struct ssh_engine_config cfg = {
		.keepalive_seconds = keepalive_seconds,
	};

	sshd_start(s, options);
	cr_assert_not_null(*base = event_base_new());
	cr_assert_not_null(*engine = ssh_engine_new(*base, &cfg));
}

void
ssh_suite_stop(struct sshd *s, struct event_base *base,
    struct ssh_engine *engine)
{
	ssh_engine_free(engine);
	event_base_free(base);
	sshd_stop(s);
}
