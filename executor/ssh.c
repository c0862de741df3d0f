/*
 * The SSH engine: targets, calls, their time budgets and results.  A call
 * joins its target's connection (made on first use, reused afterwards);
 * the connection steps it.  A connection found dead before a call's
 * command was sent moves the call to a fresh connection, once.
 */
#include "config.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"
#include "executor/ssh_int.h"

#define DEFAULT_MAX_CHANNELS 8	/* OpenSSH's MaxSessions is 10 */

static char *
copy_bytes(const char *p, size_t len)
{
	char *s;

	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static void
free_secret(char *p, size_t len)
{
	if (p == NULL)
		return;
	explicit_bzero(p, len);
	free(p);
}

static void
target_free(struct ssh_target_conf *t)
{
	if (t == NULL)
		return;
	free(t->address);
	free(t->host_name);
	free(t->user);
	free(t->known_hosts);
	secret_free(&t->private_key);
	free(t->public_key);
	secret_free(&t->passphrase);
	explicit_bzero(t, sizeof(*t));
	free(t);
}

/*
 * The host's name as known_hosts holds it (OpenSSH looks names up in
 * lower case), or NULL when it is just the address again.
 */
static bool
copy_host_name(struct ssh_target_conf *t, const char *name)
{
	char *p;

	if (name == NULL || strcasecmp(name, t->address) == 0)
		return true;
	if ((t->host_name = strdup(name)) == NULL)
		return false;
	for (p = t->host_name; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return true;
}

/* len bytes and a NUL into secret memory. */
static bool
copy_secret(struct secret *s, const char *p, size_t len)
{
	if (!secret_alloc(s, len + 1))
		return false;
	memcpy(s->ptr, p, len);
	return true;
}

static struct ssh_target_conf *
target_copy(const struct ssh_target *in)
{
	struct ssh_target_conf *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->port = in->port;
	t->has_host_key_sha256 = in->has_host_key_sha256;
	memcpy(t->host_key_sha256, in->host_key_sha256, HASH_SHA256_LEN);
	t->known_hosts_len = in->known_hosts_len;
	t->private_key_len = in->private_key_len;
	t->public_key_len = in->public_key_len;
	t->address = strdup(in->address);
	t->user = strdup(in->user);
	if (!copy_secret(&t->private_key, in->private_key,
	    in->private_key_len)) {
		target_free(t);
		return NULL;
	}
	if (in->known_hosts != NULL)
		t->known_hosts = copy_bytes(in->known_hosts,
		    in->known_hosts_len);
	if (in->public_key != NULL)
		t->public_key = copy_bytes(in->public_key, in->public_key_len);
	if (in->passphrase != NULL && !copy_secret(&t->passphrase,
	    in->passphrase, strlen(in->passphrase))) {
		target_free(t);
		return NULL;
	}
	if (t->address == NULL || !copy_host_name(t, in->host_name) ||
	    t->user == NULL ||
	    (in->known_hosts != NULL && t->known_hosts == NULL) ||
	    (in->public_key != NULL && t->public_key == NULL)) {
		target_free(t);
		return NULL;
	}
	return t;
}

int
ssh_engine_add_target(struct ssh_engine *engine, const struct ssh_target *in)
{
	struct ssh_target_conf **grown, *t;

	if (in->address == NULL || in->user == NULL || in->private_key == NULL) {
		log_error("address, user and private key are required");
		return -1;
	}
	if (engine->target_count >= INT32_MAX ||
	    (t = target_copy(in)) == NULL) {
		log_error("cannot add a target");
		return -1;
	}
	grown = reallocarray(engine->targets, engine->target_count + 1,
	    sizeof(*grown));
	if (grown == NULL) {
		log_error("out of memory");
		target_free(t);
		return -1;
	}
	engine->targets = grown;
	engine->targets[engine->target_count] = t;
	return (int)engine->target_count++;
}

struct ssh_engine *
ssh_engine_new(struct event_base *base, const struct ssh_engine_config *config)
{
	struct ssh_engine *engine;

	if (libssh2_init(0) != 0) {
		log_error("libssh2_init failed");
		return NULL;
	}
	if ((engine = calloc(1, sizeof(*engine))) == NULL) {
		log_error("out of memory");
		libssh2_exit();
		return NULL;
	}
	engine->base = base;
	engine->config = *config;
	if (engine->config.max_channels == 0)
		engine->config.max_channels = DEFAULT_MAX_CHANNELS;
	return engine;
}

/* Drops every call of conn without a callback, then conn itself. */
static void
conn_discard(struct ssh_conn *conn)
{
	struct ssh_call *call;

	while ((call = TAILQ_FIRST(&conn->calls)) != NULL) {
		TAILQ_REMOVE(&conn->calls, call, entry);
		call->channel = NULL;	/* freed with the session */
		ssh_call_release(call);
	}
	ssh_conn_free(conn);
}

void
ssh_engine_free(struct ssh_engine *engine)
{
	size_t i;

	if (engine == NULL)
		return;
	for (i = 0; i < engine->target_count; i++) {
		if (engine->targets[i]->conn != NULL)
			conn_discard(engine->targets[i]->conn);
		target_free(engine->targets[i]);
	}
	free(engine->targets);
	free(engine);
	libssh2_exit();
}

void
ssh_call_release(struct ssh_call *call)
{
	if (call->timer != NULL)
		event_free(call->timer);
	free(call->command);
	free_secret(call->stdin_data, call->stdin_len);
	free(call->out.data);
	free(call->err.data);
	free(call);
}

void
ssh_call_finish(struct ssh_call *call, enum ssh_outcome outcome,
    const char *fmt, ...)
{
	struct ssh_result r = { .outcome = outcome };
	char message[512];
	uint64_t now = clock_monotonic_ms();
	va_list ap;

	if (call->detached)
		return;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	call->detached = true;
	event_del(call->timer);
	r.exited = call->exited;
	r.exit_status = call->exit_status;
	r.signal = call->signal[0] != '\0' ? call->signal : NULL;
	r.out = (struct ssh_stream){ call->out.data, call->out.len,
	    call->out.total };
	r.err = (struct ssh_stream){ call->err.data, call->err.len,
	    call->err.total };
	r.wait_ms = (call->opened_ms != 0 ? call->opened_ms : now) -
	    call->started_ms;
	r.total_ms = now - call->started_ms;
	r.message = message;
	call->done(&r, call->arg);
}

/*
 * The target's connection, made on first use.  One that died while idle
 * is noticed when the next channel open fails, and the call moves on.
 */
static struct ssh_conn *
target_conn(struct ssh_engine *engine, struct ssh_target_conf *t)
{
	if (t->conn == NULL)
		t->conn = ssh_conn_new(engine, t);
	return t->conn;
}

static void
call_attach(struct ssh_call *call, struct ssh_conn *conn)
{
	call->conn = conn;
	call->state = CALL_WAITING;
	call->channel = NULL;
	TAILQ_INSERT_TAIL(&conn->calls, call, entry);
	ssh_conn_kick(conn);
}

static void
call_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ssh_call *call = arg;
	struct ssh_conn *conn = call->conn;
	uint64_t ms = clock_monotonic_ms() - call->started_ms;

	(void)fd;
	(void)what;
	if (call->sent)
		ssh_call_finish(call, SSH_UNKNOWN, "timed out after %llu ms; "
		    "the command was sent and may have run",
		    (unsigned long long)ms);
	else
		ssh_call_finish(call, SSH_FAILED, "timed out after %llu ms "
		    "before the command was sent", (unsigned long long)ms);
	ssh_conn_kick(conn);
}

static struct ssh_call *
call_new(struct ssh_engine *engine, int target_id,
    const struct ssh_request *req, ssh_done_fn done, void *arg)
{
	struct ssh_call *call;

	if ((call = calloc(1, sizeof(*call))) == NULL)
		return NULL;
	call->engine = engine;
	call->target_id = target_id;
	call->done = done;
	call->arg = arg;
	call->started_ms = clock_monotonic_ms();
	call->out.limit = req->output_limit;
	call->err.limit = req->output_limit;
	call->stdin_len = req->stdin_len;
	call->command = strdup(req->command);
	if (req->stdin_len > 0)
		call->stdin_data = copy_bytes(req->stdin_data, req->stdin_len);
	call->timer = evtimer_new(engine->base, call_timeout_cb, call);
	if (call->command == NULL || call->timer == NULL ||
	    (req->stdin_len > 0 && call->stdin_data == NULL)) {
		ssh_call_release(call);
		return NULL;
	}
	return call;
}

struct ssh_call *
ssh_call_start(struct ssh_engine *engine, int target_id,
    const struct ssh_request *req, ssh_done_fn done, void *arg)
{
	struct timeval tv = { .tv_sec = req->timeout_ms / 1000,
	    .tv_usec = (req->timeout_ms % 1000) * 1000 };
	struct ssh_conn *conn;
	struct ssh_call *call;

	if (target_id < 0 || (size_t)target_id >= engine->target_count ||
	    req->command == NULL || done == NULL) {
		log_error("bad target id or request");
		return NULL;
	}
	if (strnlen(req->command, SSH_COMMAND_MAX + 1) > SSH_COMMAND_MAX) {
		log_error("command longer than %u bytes", SSH_COMMAND_MAX);
		return NULL;
	}
	if ((call = call_new(engine, target_id, req, done, arg)) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	conn = target_conn(engine, engine->targets[target_id]);
	if (conn == NULL || evtimer_add(call->timer, &tv) == -1) {
		log_error("cannot start the call");
		ssh_call_release(call);
		return NULL;
	}
	call_attach(call, conn);
	return call;
}

void
ssh_call_cancel(struct ssh_call *call)
{
	call->detached = true;
	event_del(call->timer);
	ssh_conn_kick(call->conn);
}

/* How a connection ended, kept after it is freed. */
struct conn_end {
	bool failed;			/* set up failed, rather than lost */
	enum ssh_outcome outcome;
	char message[256];
};

/* What a call whose connection ended becomes. */
static void
call_after_conn(struct ssh_call *call, const struct conn_end *end)
{
	struct ssh_engine *engine = call->engine;
	struct ssh_conn *fresh;

	if (end->failed)
		ssh_call_finish(call, end->outcome, "%s", end->message);
	else if (!call->sent && !call->retried && !call->detached &&
	    (fresh = target_conn(engine, engine->targets[call->target_id]))) {
		call->retried = true;
		call_attach(call, fresh);
		return;
	} else if (call->sent)
		ssh_call_finish(call, SSH_UNKNOWN, "connection lost after "
		    "the command was sent; it may have run");
	else
		ssh_call_finish(call, SSH_FAILED, "connection lost before "
		    "the command was sent");
	ssh_call_release(call);
}

void
ssh_engine_conn_ended(struct ssh_conn *conn)
{
	struct ssh_call_list calls;
	struct ssh_call *call;
	struct conn_end end = { .failed = conn->state == CONN_FAILED,
	    .outcome = conn->fail_outcome };

	snprintf(end.message, sizeof(end.message), "%s", conn->fail_message);
	if (conn->target->conn == conn)
		conn->target->conn = NULL;
	TAILQ_INIT(&calls);
	while ((call = TAILQ_FIRST(&conn->calls)) != NULL) {
		TAILQ_REMOVE(&conn->calls, call, entry);
		call->channel = NULL;	/* freed with the session below */
		TAILQ_INSERT_TAIL(&calls, call, entry);
	}
	/* callbacks below may start calls: conn must be gone by then */
	ssh_conn_free(conn);
	while ((call = TAILQ_FIRST(&calls)) != NULL) {
		TAILQ_REMOVE(&calls, call, entry);
		call_after_conn(call, &end);
	}
}
