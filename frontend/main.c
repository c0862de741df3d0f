/*
 * Entry of the frontend role (frontend/frontend.h): load the policy
 * handed over, confine, greet the executor, then run the session on a
 * libevent loop until end of input.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/child_role.h"
#include "broker/commands.h"
#include "broker/test_hook.h"
#include "common/frame.h"
#include "common/log.h"
#include "frontend/frontend.h"
#include "frontend/session.h"
#include "frontend/writer.h"

#define FRONTEND_READ_CHUNK 65536

struct frontend {
	struct child_context ctx;
	struct event_base *base;
	struct event *ev_stdin;
	struct event *ev_action;
	struct event *ev_term;
	struct frame_reader reader;
	struct writer *out;
	struct session *session;
	uint8_t *inbuf;		/* FRONTEND_READ_CHUNK bytes */
	uint8_t *recbuf;	/* RECORD_MAX_BYTES bytes */
	bool input_done;	/* nothing more is read from fd 0 */
	bool stdin_file;	/* fd 0 cannot be polled: a file, /dev/null */
	bool finishing;
	int status;
};

/* Input is over: once every call is answered, flush and end. */
static void
frontend_maybe_finish(struct frontend *fe)
{
	if (!fe->input_done || fe->finishing || session_inflight(fe->session))
		return;
	fe->finishing = true;
	writer_finish(fe->out);
}

static void
frontend_stop_input(struct frontend *fe)
{
	fe->input_done = true;
	(void)event_del(fe->ev_stdin);
	frontend_maybe_finish(fe);
}

/* Asks for the next chunk of fd 0. */
static void
frontend_want_input(struct frontend *fe)
{
	if (fe->input_done || writer_is_full(fe->out))
		return;
	if (fe->stdin_file)
		event_active(fe->ev_stdin, EV_READ, 0);
	else
		(void)event_add(fe->ev_stdin, NULL);
}

static void
frontend_feed(struct frontend *fe, const uint8_t *data, size_t len)
{
	struct frame f;

	frame_reader_feed(&fe->reader, data, len);
	while (frame_reader_next(&fe->reader, &f)) {
		if (!session_frame(fe->session, &f)) {
			frontend_stop_input(fe);
			return;
		}
	}
	if (writer_is_full(fe->out))
		(void)event_del(fe->ev_stdin);
	else if (fe->stdin_file)
		frontend_want_input(fe);
}

static void
frontend_on_stdin(evutil_socket_t fd, short what, void *arg)
{
	struct frontend *fe = arg;
	struct frame f;
	ssize_t n;

	(void)fd;
	(void)what;
	n = read(STDIN_FILENO, fe->inbuf, FRONTEND_READ_CHUNK);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		frontend_feed(fe, fe->inbuf, (size_t)n);
		return;
	}
	if (n == -1)
		log_error("read: %s", strerror(errno));
	if (frame_reader_finish(&fe->reader, &f))
		(void)session_frame(fe->session, &f);
	frontend_stop_input(fe);
}

static void
frontend_on_action(evutil_socket_t fd, short what, void *arg)
{
	struct frontend *fe = arg;
	ssize_t n;

	(void)what;
	n = recv(fd, fe->recbuf, RECORD_MAX_BYTES, MSG_TRUNC);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && (size_t)n <= RECORD_MAX_BYTES &&
	    session_executor_record(fe->session, fe->recbuf, (size_t)n)) {
		frontend_maybe_finish(fe);
		return;
	}
	log_error("the executor channel is %s", n == 0 ? "closed" : "broken");
	session_executor_lost(fe->session);
	(void)event_del(fe->ev_action);
	fe->status = SP_EXIT_INTERNAL;
	frontend_stop_input(fe);
}

/* The broker ends the session in order: stop reading, flush, exit. */
static void
frontend_on_term(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	frontend_stop_input(arg);
}

static void
frontend_on_drained(void *arg)
{
	frontend_want_input(arg);
}

static void
frontend_on_finished(void *arg)
{
	struct frontend *fe = arg;

	(void)event_base_loopbreak(fe->base);
}

/* Everything that needs memory, files or sigaction: before confinement. */
static void
frontend_setup(struct frontend *fe)
{
	const struct policy *p = fe->ctx.policy;

	/* The broker orders the end (SIGTERM); a terminal's SIGINT or
	 * SIGHUP to the whole group is its to handle, not ours. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
	    signal(SIGINT, SIG_IGN) == SIG_ERR ||
	    signal(SIGHUP, SIG_IGN) == SIG_ERR ||
	    (fe->base = event_base_new()) == NULL ||
	    !frame_reader_init(&fe->reader, p->limits.max_frame_bytes) ||
	    (fe->inbuf = malloc(FRONTEND_READ_CHUNK)) == NULL ||
	    (fe->recbuf = malloc(RECORD_MAX_BYTES)) == NULL)
		fatal(SP_EXIT_INTERNAL, "cannot set up the event loop");
	fe->out = writer_new(fe->base, STDOUT_FILENO, frontend_on_drained,
	    frontend_on_finished, fe);
	fe->session = fe->out == NULL ? NULL : session_new(&fe->ctx, fe->out,
	    CHILD_FD_ACTION, CHILD_FD_CONTROL);
	fe->stdin_file = !fd_is_pollable(STDIN_FILENO);
	fe->ev_stdin = event_new(fe->base, fe->stdin_file ? -1 : STDIN_FILENO,
	    fe->stdin_file ? 0 : EV_READ | EV_PERSIST, frontend_on_stdin, fe);
	fe->ev_action = event_new(fe->base, CHILD_FD_ACTION,
	    EV_READ | EV_PERSIST, frontend_on_action, fe);
	fe->ev_term = evsignal_new(fe->base, SIGTERM, frontend_on_term, fe);
	if (fe->session == NULL || fe->ev_stdin == NULL ||
	    fe->ev_action == NULL || fe->ev_term == NULL ||
	    event_add(fe->ev_term, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot set up the session");
}

/* Hello both ways on the action channel; the catalogs must be the same. */
static void
frontend_hello(const struct frontend *fe)
{
	struct record_hello hello = { .role = RECORD_ROLE_FRONTEND };
	struct buf out;
	uint8_t rec[64];
	ssize_t n;

	memcpy(hello.fingerprint, fe->ctx.fingerprint, HASH_SHA256_LEN);
	buf_init_writer(&out, sizeof(rec));
	if (record_hello_encode(&hello, &out) != RECORD_OK ||
	    !child_send_record(CHILD_FD_ACTION, &out) ||
	    !child_send_record(CHILD_FD_CONTROL, &out))
		fatal(SP_EXIT_INTERNAL, "cannot greet the executor");
	buf_free(&out);
	n = recv(CHILD_FD_ACTION, rec, sizeof(rec), MSG_TRUNC);
	if (n <= 0 || (size_t)n > sizeof(rec) ||
	    record_hello_decode(rec, (size_t)n, &hello) != RECORD_OK ||
	    hello.role != RECORD_ROLE_EXECUTOR ||
	    memcmp(hello.fingerprint, fe->ctx.fingerprint, HASH_SHA256_LEN) != 0)
		fatal(SP_EXIT_INTERNAL, "the executor's hello is not ours");
}

static void
frontend_free(struct frontend *fe)
{
	session_free(fe->session);
	writer_free(fe->out);
	if (fe->ev_stdin != NULL)
		event_free(fe->ev_stdin);
	if (fe->ev_action != NULL)
		event_free(fe->ev_action);
	frame_reader_free(&fe->reader);
	free(fe->inbuf);
	free(fe->recbuf);
	child_context_free(&fe->ctx);
	/* ev_term and base stay: freeing them would call sigaction. */
}

int
frontend_main(int argc, char **argv)
{
	struct frontend fe;

	log_init("frontend", LOG_LEVEL_INFO);
	if (argc != 2)
		fatal(SP_EXIT_USAGE, "internal role started by hand");
	memset(&fe, 0, sizeof(fe));
	child_context_load(&fe.ctx, SANDBOX_ROLE_FRONTEND, argv[1]);
	frontend_setup(&fe);
	child_confine(&fe.ctx);
	test_hook_run("frontend");
	frontend_hello(&fe);
	test_hook_forge(&fe.ctx, CHILD_FD_ACTION);
	if (event_add(fe.ev_action, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot watch the executor channel");
	frontend_want_input(&fe);
	(void)event_base_dispatch(fe.base);
	if (fe.status == 0)
		fe.status = session_exit_status(fe.session);
	frontend_free(&fe);
	return fe.status;
}
