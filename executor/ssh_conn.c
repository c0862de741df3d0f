/*
 * One SSH connection: connect -> handshake -> host key -> auth -> ready,
 * then the calls' channels are stepped on it.  Every libssh2 call may say
 * EAGAIN; the directions it was waiting for are collected during a pass
 * and the socket event is re-armed with exactly those.
 */
#include "config.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <event2/event.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "executor/ssh_int.h"

static void conn_drive(struct ssh_conn *conn);

static void
conn_fail(struct ssh_conn *conn, enum ssh_outcome outcome, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
conn_fail(struct ssh_conn *conn, enum ssh_outcome outcome, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(conn->fail_message, sizeof(conn->fail_message), fmt, ap);
	va_end(ap);
	conn->fail_outcome = outcome;
	conn->state = CONN_FAILED;
	log_warn("%s", conn->fail_message);
}

static const char *
session_error(LIBSSH2_SESSION *session)
{
	char *msg = NULL;

	if (session == NULL)
		return "no session";
	libssh2_session_last_error(session, &msg, NULL, 0);
	return msg != NULL ? msg : "unknown error";
}

void
ssh_conn_note_eagain(struct ssh_conn *conn, struct ssh_call *call)
{
	int dir = libssh2_session_block_directions(conn->session);

	conn->want |= dir;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		conn->sender = call;
}

static bool
conn_resolve(struct ssh_conn *conn)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
	    .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%u", (unsigned)conn->target->port);
	/* numeric only: the address was resolved and checked by the caller */
	if ((rc = getaddrinfo(conn->target->address, port, &hints, &ai)) != 0) {
		conn_fail(conn, SSH_FAILED, "address %s not usable: %s",
		    conn->target->address, gai_strerror(rc));
		return false;
	}
	memcpy(&conn->addr, ai->ai_addr, ai->ai_addrlen);
	conn->addr_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return true;
}

static void
conn_connect_start(struct ssh_conn *conn)
{
	int one = 1;

	if (!conn_resolve(conn))
		return;
	conn->fd = socket(conn->addr.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (conn->fd == -1) {
		conn_fail(conn, SSH_FAILED, "socket: %s", strerror(errno));
		return;
	}
	/* small requests back to back: Nagle plus delayed ACKs cost 40 ms each */
	if (setsockopt(conn->fd, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one)) == -1)
		log_warn("TCP_NODELAY: %s", strerror(errno));
	if (connect(conn->fd, (struct sockaddr *)&conn->addr,
	    conn->addr_len) == -1 && errno != EINPROGRESS)
		conn_fail(conn, SSH_FAILED, "connect to %s port %u: %s",
		    conn->target->address, (unsigned)conn->target->port,
		    strerror(errno));
}

static bool
conn_session_start(struct ssh_conn *conn)
{
	if ((conn->session = libssh2_session_init()) == NULL) {
		conn_fail(conn, SSH_FAILED, "cannot create an SSH session");
		return false;
	}
	libssh2_session_set_blocking(conn->session, 0);
	ssh_hostkey_prefer(conn->session, conn->target);
	conn->state = CONN_HANDSHAKE;
	return true;
}

/* Asking connect() again tells whether the first one has finished. */
static enum step_result
conn_step_connecting(struct ssh_conn *conn)
{
	if (connect(conn->fd, (struct sockaddr *)&conn->addr,
	    conn->addr_len) == 0 || errno == EISCONN)
		return conn_session_start(conn) ? STEP_PROGRESS : STEP_BLOCKED;
	if (errno == EALREADY || errno == EINPROGRESS) {
		conn->want |= LIBSSH2_SESSION_BLOCK_OUTBOUND;
		return STEP_BLOCKED;
	}
	conn_fail(conn, SSH_FAILED, "connect to %s port %u: %s",
	    conn->target->address, (unsigned)conn->target->port,
	    strerror(errno));
	return STEP_BLOCKED;
}

static enum step_result
conn_step_handshake(struct ssh_conn *conn)
{
	int rc = libssh2_session_handshake(conn->session, conn->fd);

	if (rc == LIBSSH2_ERROR_EAGAIN) {
		ssh_conn_note_eagain(conn, NULL);
		return STEP_BLOCKED;
	}
	if (rc != 0) {
		conn_fail(conn, SSH_FAILED, "key exchange with %s port %u "
		    "failed: %s", conn->target->address,
		    (unsigned)conn->target->port, session_error(conn->session));
		return STEP_BLOCKED;
	}
	if (!ssh_hostkey_verify(conn->session, conn->target,
	    conn->fail_message, sizeof(conn->fail_message))) {
		conn->fail_outcome = SSH_DENIED;
		conn->state = CONN_FAILED;
		log_warn("%s", conn->fail_message);
		return STEP_BLOCKED;
	}
	conn->state = CONN_AUTH;
	return STEP_PROGRESS;
}

static void
conn_keepalive_start(struct ssh_conn *conn)
{
	struct timeval tv = { .tv_sec = conn->engine->config.keepalive_seconds };

	if (tv.tv_sec == 0)
		return;
	/* no reply wanted: unread replies would pile up in libssh2 */
	libssh2_keepalive_config(conn->session, 0,
	    conn->engine->config.keepalive_seconds);
	event_add(conn->keepalive, &tv);
}

static enum step_result
conn_step_auth(struct ssh_conn *conn)
{
	const struct ssh_target_conf *t = conn->target;
	int rc;

	rc = libssh2_userauth_publickey_frommemory(conn->session, t->user,
	    strlen(t->user), t->public_key, t->public_key_len,
	    (const char *)t->private_key.ptr, t->private_key_len,
	    (const char *)t->passphrase.ptr);
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		ssh_conn_note_eagain(conn, NULL);
		return STEP_BLOCKED;
	}
	if (rc != 0) {
		conn_fail(conn, SSH_FAILED, "public key authentication as %s "
		    "on %s port %u failed: %s", t->user, t->address,
		    (unsigned)t->port, session_error(conn->session));
		return STEP_BLOCKED;
	}
	conn->state = CONN_READY;
	conn_keepalive_start(conn);
	return STEP_PROGRESS;
}

static void
conn_setup(struct ssh_conn *conn)
{
	enum step_result r = STEP_PROGRESS;

	while (r == STEP_PROGRESS) {
		switch (conn->state) {
		case CONN_CONNECTING:
			r = conn_step_connecting(conn);
			break;
		case CONN_HANDSHAKE:
			r = conn_step_handshake(conn);
			break;
		case CONN_AUTH:
			r = conn_step_auth(conn);
			break;
		default:
			return;
		}
	}
}

/* Steps one call; releases it once its channel is gone. */
static enum step_result
conn_step_call(struct ssh_conn *conn, struct ssh_call *call)
{
	enum step_result r;

	if (conn->sender != NULL && conn->sender != call)
		return STEP_BLOCKED;
	call->resuming_send = conn->sender == call;
	conn->sender = NULL;
	r = ssh_channel_step(call);
	if (r != STEP_CONN_LOST && call->state == CALL_GONE) {
		TAILQ_REMOVE(&conn->calls, call, entry);
		ssh_call_release(call);
	}
	return r;
}

static void
conn_step_calls(struct ssh_conn *conn)
{
	struct ssh_call *call, *next;
	bool progress = true;

	while (progress) {
		progress = false;
		for (call = TAILQ_FIRST(&conn->calls); call; call = next) {
			next = TAILQ_NEXT(call, entry);
			switch (conn_step_call(conn, call)) {
			case STEP_CONN_LOST:
				conn->state = CONN_DEAD;
				log_warn("connection to %s port %u lost: %s",
				    conn->target->address,
				    (unsigned)conn->target->port,
				    session_error(conn->session));
				return;
			case STEP_PROGRESS:
				progress = true;
				break;
			case STEP_BLOCKED:
				break;
			}
		}
	}
}

static void
conn_io_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_drive(arg);
}

static void
conn_rearm(struct ssh_conn *conn)
{
	short what = 0;

	event_del(conn->io);
	if (conn->want & LIBSSH2_SESSION_BLOCK_INBOUND)
		what |= EV_READ;
	if (conn->want & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		what |= EV_WRITE;
	/* calls waiting on a channel slot still need to hear the server */
	if (what == 0 && !TAILQ_EMPTY(&conn->calls))
		what = EV_READ;
	if (what == 0 || conn->fd == -1)
		return;
	event_assign(conn->io, conn->engine->base, conn->fd, what,
	    conn_io_cb, conn);
	if (event_add(conn->io, NULL) == -1)
		log_error("event_add failed");
}

/* Whether a call still waits for a result from this connection. */
static bool
conn_has_live_calls(const struct ssh_conn *conn)
{
	const struct ssh_call *call;

	TAILQ_FOREACH(call, &conn->calls, entry)
		if (!call->detached)
			return true;
	return false;
}

/*
 * One pass: set up, step every call, then re-arm.  A connection still
 * being set up that nobody waits for any more (all timed out) is dropped.
 */
static void
conn_drive(struct ssh_conn *conn)
{
	conn->want = 0;
	if (conn->state < CONN_READY && conn_has_live_calls(conn))
		conn_setup(conn);
	if (conn->state == CONN_READY)
		conn_step_calls(conn);
	if (conn->state == CONN_FAILED || conn->state == CONN_DEAD ||
	    (conn->state != CONN_READY && !conn_has_live_calls(conn))) {
		/* frees conn; nothing here may touch it afterwards */
		ssh_engine_conn_ended(conn);
		return;
	}
	conn_rearm(conn);
}

static void
conn_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_drive(arg);
}

void
ssh_conn_kick(struct ssh_conn *conn)
{
	event_active(conn->kick, 0, 0);
}

/*
 * A keepalive that cannot be written at once leaves a partial packet that
 * libssh2 only completes through the same call; on an idle connection a
 * full send buffer means the peer stopped reading, so the connection is
 * treated as dead rather than wedged.
 */
static void
conn_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ssh_conn *conn = arg;
	int next = 0, rc;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (conn->sender == NULL && TAILQ_EMPTY(&conn->calls)) {
		rc = libssh2_keepalive_send(conn->session, &next);
		if (rc != 0) {
			conn->state = CONN_DEAD;
			ssh_conn_kick(conn);
			return;
		}
	}
	tv.tv_sec = next > 0 ? (time_t)next :
	    (time_t)conn->engine->config.keepalive_seconds;
	tv.tv_usec = 0;
	event_add(conn->keepalive, &tv);
}

struct ssh_conn *
ssh_conn_new(struct ssh_engine *engine, struct ssh_target_conf *target)
{
	struct ssh_conn *conn;

	if ((conn = calloc(1, sizeof(*conn))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	conn->engine = engine;
	conn->target = target;
	conn->fd = -1;
	conn->state = CONN_CONNECTING;
	TAILQ_INIT(&conn->calls);
	conn->io = event_new(engine->base, -1, 0, conn_io_cb, conn);
	conn->kick = event_new(engine->base, -1, 0, conn_kick_cb, conn);
	conn->keepalive = evtimer_new(engine->base, conn_keepalive_cb, conn);
	if (conn->io == NULL || conn->kick == NULL || conn->keepalive == NULL) {
		log_error("event_new failed");
		ssh_conn_free(conn);
		return NULL;
	}
	conn_connect_start(conn);
	ssh_conn_kick(conn);
	return conn;
}

/* Says goodbye if it can without waiting, then drops the session. */
void
ssh_conn_free(struct ssh_conn *conn)
{
	if (conn == NULL)
		return;
	if (conn->session != NULL) {
		if (conn->state == CONN_READY && conn->sender == NULL)
			libssh2_session_disconnect(conn->session, "closing");
		if (conn->fd != -1)
			shutdown(conn->fd, SHUT_RDWR);
		libssh2_session_free(conn->session);
	}
	if (conn->fd != -1)
		close(conn->fd);
	if (conn->io != NULL)
		event_free(conn->io);
	if (conn->kick != NULL)
		event_free(conn->kick);
	if (conn->keepalive != NULL)
		event_free(conn->keepalive);
	free(conn);
}
