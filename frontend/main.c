/*
 * sp-frontend, the frontend role (docs/design.md section 1), started by
 * the broker with the fds of child/child.h; it holds no file, socket or
 * library beyond what MCP needs.  Load the policy handed over, confine, greet the executor (its answer is taken when it
 * comes, and no record goes before it), then run the MCP session
 * (frontend/mcp_session.h) on a libevent loop until end of input.  This
 * file is the session's I/O: frames in from fd 0, the session's output
 * items out in order (protocol lines to the one writer on fd 1, records
 * to the executor, audit events to the broker), results in from the
 * executor.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "child/child.h"
#include "common/exit.h"
#include "child/test_hook.h"
#include "common/channel.h"
#include "common/frame.h"
#include "common/log.h"
#include "frontend/mcp_session.h"
#include "policy/catalog.h"
#include "frontend/writer.h"

/*
 * fd 0 is read in chunks of max_frame_bytes, so one read takes a whole
 * frame of the largest size allowed, kept between these bounds.
 */
#define FRONTEND_READ_CHUNK_MIN (64u * 1024)
#define FRONTEND_READ_CHUNK_MAX (1024u * 1024)
/* Results taken per wake-up: a busy executor cannot starve fd 0. */
#define FRONTEND_RECORDS_PER_WAKEUP 64

/* The writer's drained callback is what resumes reading after the
 * session's output bound stopped it, so it must fire below that bound. */
_Static_assert(WRITER_QUEUE_RESUME < MCP_OUTPUT_QUEUE_BOUND,
    "the writer must wake the loop below the session's output bound");
_Static_assert(MCP_EXIT_CLIENT_GONE == SP_EXIT_IOERR &&
    MCP_EXIT_BUDGET == SP_EXIT_BUDGET && MCP_EXIT_MALFORMED ==
    SP_EXIT_MALFORMED, "the broker reads the session's statuses as sp's");

/*
 * How long the executor may take to answer the hello.  It loads libcurl
 * and libssh2 first (a few ms); one that has not answered by then is
 * taken for hung, or the calls held for it would wait for ever.
 */
#define FRONTEND_HELLO_MS 10000

/*
 * The frontend's life.  Whether the executor's hello came and matched is
 * the channel's own state (frontend_greeted()), since input may end
 * before it comes: HELLO is the phase before it while the client is
 * still read.
 */
enum frontend_state {
	FRONTEND_HELLO,		/* reading; the executor's records held */
	FRONTEND_RUNNING,	/* greeted, reading the client */
	FRONTEND_DRAINING,	/* no more reading; calls in flight end */
	FRONTEND_DONE,		/* all answered: the writer flushes, then
				 * the loop ends */
};

struct frontend {
	struct child_context ctx;
	struct event_base *base;
	struct event *ev_stdin;
	struct event *ev_action;
	struct event *ev_term;
	struct event *ev_hello;	/* the hello's deadline */
	struct event *ev_progress;	/* persistent: progress of long calls */
	struct frame_reader reader;
	struct writer *out;
	struct mcp_session *session;
	struct mcp_output items;	/* the session's output, sent at once */
	struct mcp_output held;	/* made before the executor's hello */
	uint8_t *inbuf;		/* inbuf_size bytes */
	size_t inbuf_size;
	enum frontend_state state;
	/*
	 * An internal error sets SP_EXIT_INTERNAL, the exit status whatever
	 * the session's: an outcome, not a phase, since the session goes on
	 * (a failed send does not stop the reading; frontend_fail() does).
	 */
	int status;
	/* Facts, not phases: what the peers and fd 0 are, and the input's
	 * machinery. */
	bool executor_gone;	/* the action channel closed or broke */
	bool client_lost;	/* fd 1 broke: nothing more is read or started */
	bool stdin_file;	/* fd 0 cannot be polled: a file, /dev/null */
	bool window_open;	/* inbuf may still hold frames not taken */
	bool woken;		/* ev_stdin was made active, not fd 0 readable */
};

static void frontend_flush_items(struct frontend *fe);

/* The executor's hello came and matched (frontend_hello()). */
static bool
frontend_greeted(const struct frontend *fe)
{
	return channel_state(fe->ctx.chan, RECORD_ROLE_EXECUTOR) ==
	    CHANNEL_READY;
}

/*
 * Input is over: once every call is answered, flush and end.  Not before
 * the executor's hello either: an executor left greeting a closed channel
 * would fail, and the broker would take a short session for a death.
 */
static void
frontend_maybe_finish(struct frontend *fe)
{
	if (fe->state != FRONTEND_DRAINING ||
	    mcp_session_inflight(fe->session) > 0 ||
	    (!frontend_greeted(fe) && !fe->executor_gone))
		return;
	fe->state = FRONTEND_DONE;
	writer_finish(fe->out);
}

static void
frontend_stop_input(struct frontend *fe)
{
	if (fe->state < FRONTEND_DRAINING)
		fe->state = FRONTEND_DRAINING;
	(void)event_del(fe->ev_stdin);
	/* a call still waiting for a slot is answered, not started late */
	if (!mcp_session_end_input(fe->session, &fe->items))
		fe->status = SP_EXIT_INTERNAL;
	frontend_flush_items(fe);
	frontend_maybe_finish(fe);
}

/*
 * Nobody reads fd 1 any more: results could not reach anyone, so the
 * session stops reading and cancels what runs (docs/design.md section
 * 5), then ends once those calls are answered.
 */
static void
frontend_client_gone(struct frontend *fe)
{
	if (fe->client_lost)
		return;
	fe->client_lost = true;
	log_error("the client stopped reading: ending the session; calls in "
	    "flight cancelled: %zu", mcp_session_inflight(fe->session));
	if (!mcp_session_client_lost(fe->session, &fe->items))
		fe->status = SP_EXIT_INTERNAL;
	frontend_flush_items(fe);
	frontend_stop_input(fe);
}

/* An internal error: nothing more is read; calls in flight still end. */
static void
frontend_fail(struct frontend *fe)
{
	fe->status = SP_EXIT_INTERNAL;
	frontend_stop_input(fe);
}

static bool
frontend_may_read(const struct frontend *fe)
{
	return fe->state < FRONTEND_DRAINING &&
	    mcp_session_may_read(fe->session, writer_queued(fe->out));
}

/*
 * Asks for the next frame when the session may take one: from the chunk
 * already read if it holds more, else from fd 0.
 */
static void
frontend_want_input(struct frontend *fe)
{
	if (mcp_session_should_close(fe->session)) {
		frontend_stop_input(fe);
		return;
	}
	if (!frontend_may_read(fe)) {
		(void)event_del(fe->ev_stdin);
		return;
	}
	if (!fe->stdin_file)
		(void)event_add(fe->ev_stdin, NULL);
	if (fe->stdin_file || fe->window_open) {
		fe->woken = !fe->stdin_file;
		event_active(fe->ev_stdin, EV_READ, 0);
	}
}

/*
 * Keeps an executor record until the executor's hello is verified: until
 * then the peer may not be our executor, and nothing may reach it.  The
 * item's data moves to fe->held; a failure to keep it is an internal
 * error, as a failed send is.
 */
static void
frontend_hold(struct frontend *fe, struct mcp_item *it)
{
	struct mcp_output *h = &fe->held;
	struct mcp_item *grown;
	size_t cap;

	if (h->count == h->cap) {
		cap = h->cap == 0 ? 8 : h->cap * 2;
		if ((grown = reallocarray(h->items, cap, sizeof(*grown))) ==
		    NULL) {
			log_error("out of memory");
			fe->status = SP_EXIT_INTERNAL;
			return;
		}
		h->items = grown;
		h->cap = cap;
	}
	h->items[h->count++] = *it;
	it->data = NULL;
	it->len = 0;
}

/*
 * Sends what the session appended, in order, and empties the list.  A
 * lost client drops its lines but not the records: the cancels of
 * frontend_client_gone() still go, and every call is still audited.
 */
static void
frontend_flush_items(struct frontend *fe)
{
	const struct mcp_item *it;
	size_t i;

	for (i = 0; i < fe->items.count; i++) {
		it = &fe->items.items[i];
		switch (it->kind) {
		case MCP_ITEM_LINE:
			(void)writer_send(fe->out, (const char *)it->data,
			    it->len);
			break;
		case MCP_ITEM_EXECUTOR:
			if (!frontend_greeted(fe))
				frontend_hold(fe, &fe->items.items[i]);
			/* the test build's forged answer may go instead */
			else if (!test_hook_confirm_relay(&fe->ctx, it->data,
			    it->len) && !channel_send_encoded(fe->ctx.chan,
			    RECORD_ROLE_EXECUTOR, it->data, it->len))
				fe->status = SP_EXIT_INTERNAL;
			break;
		case MCP_ITEM_AUDIT:
			if (!channel_send_encoded(fe->ctx.chan,
			    RECORD_ROLE_BROKER, it->data, it->len))
				fe->status = SP_EXIT_INTERNAL;
			break;
		}
	}
	mcp_output_clear(&fe->items);
}

/*
 * Hands the session the frames of the chunk read last, one at a time,
 * while it may take them.  true when the chunk is used up; false when
 * frames stay held back (the chunk must not be overwritten yet).
 */
static bool
frontend_drain(struct frontend *fe)
{
	struct frame f;
	bool ok;

	while (fe->window_open) {
		if (!frontend_may_read(fe))
			return false;
		if (!frame_reader_next(&fe->reader, &f)) {
			fe->window_open = false;
			break;
		}
		ok = f.status == FRAME_OK ?
		    mcp_session_handle_frame(fe->session, f.bytes, f.len,
		    f.number, &fe->items) :
		    mcp_session_handle_bad_frame(fe->session, &f, &fe->items);
		frontend_flush_items(fe);
		if (!ok) {
			frontend_fail(fe);
			return false;
		}
	}
	return true;
}

/* Takes the frames that may be taken, reading fd 0 when it is ready. */
static void
frontend_read_input(struct frontend *fe)
{
	struct frame f;
	ssize_t n;
	bool woken = fe->woken;

	fe->woken = false;
	if (!frontend_drain(fe) || !frontend_may_read(fe)) {
		frontend_want_input(fe);
		return;
	}
	/*
	 * A wake-up made only to finish a held-back chunk says nothing about
	 * fd 0, which may be a blocking pipe: reading now could stall the
	 * loop, and every result with it, until the client writes again.
	 * The persistent read event brings us back when there is input.
	 */
	if (woken) {
		frontend_want_input(fe);
		return;
	}
	n = read(STDIN_FILENO, fe->inbuf, fe->inbuf_size);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	/* frames sent after the client closed its end must start nothing */
	if (n > 0 && !writer_client_alive(fe->out)) {
		frontend_client_gone(fe);
		return;
	}
	if (n > 0) {
		frame_reader_feed(&fe->reader, fe->inbuf, (size_t)n);
		fe->window_open = true;
		(void)frontend_drain(fe);
		frontend_want_input(fe);
		return;
	}
	if (n == -1)
		log_error("cannot read the client: %s", strerror(errno));
	if (frame_reader_finish(&fe->reader, &f)) {
		if (!mcp_session_handle_bad_frame(fe->session, &f, &fe->items))
			fe->status = SP_EXIT_INTERNAL;
		frontend_flush_items(fe);
	}
	frontend_stop_input(fe);
}

static void
frontend_on_stdin(evutil_socket_t fd, short what, void *arg)
{
	struct frontend *fe = arg;

	(void)fd;
	(void)what;
	frontend_read_input(fe);
	writer_flush(fe->out);
}

/* One result record from the executor. */
static bool
frontend_result(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct frontend *fe = arg;
	struct record_result r;
	enum record_error e;
	bool ok;

	if ((e = record_result_decode(rec, len,
	    mcp_session_record_limits(fe->session), &r)) != RECORD_OK)
		return channel_undecodable(fe->ctx.chan, from, rec, len, e);
	ok = mcp_session_handle_result(fe->session, &r, &fe->items);
	record_result_free(&r);
	frontend_flush_items(fe);
	if (!ok)
		fe->status = SP_EXIT_INTERNAL;
	return true;
}

/* The executor's challenge for a confirm tool's call. */
static bool
frontend_challenge(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct frontend *fe = arg;
	struct record_confirm_challenge_msg m;
	enum record_error e;
	bool ok;

	if ((e = record_confirm_challenge_decode(rec, len, &m)) != RECORD_OK)
		return channel_undecodable(fe->ctx.chan, from, rec, len, e);
	ok = mcp_session_handle_challenge(fe->session, &m, &fe->items);
	frontend_flush_items(fe);
	if (!ok)
		fe->status = SP_EXIT_INTERNAL;
	return true;
}

/* Sends, in order, the records kept while the hello was pending. */
static void
frontend_release_held(struct frontend *fe)
{
	size_t i;

	for (i = 0; i < fe->held.count; i++)
		if (!channel_send_encoded(fe->ctx.chan, RECORD_ROLE_EXECUTOR,
		    fe->held.items[i].data, fe->held.items[i].len))
			fe->status = SP_EXIT_INTERNAL;
	mcp_output_clear(&fe->held);
}

/*
 * The executor's hello: its role and our catalog, or the session ends;
 * then what was held for it goes.
 */
static bool
frontend_hello(void *arg, enum record_role from, const uint8_t *rec,
    size_t len)
{
	struct frontend *fe = arg;
	struct record_hello hello;
	enum record_error e;

	if ((e = record_hello_decode(rec, len, &hello)) != RECORD_OK)
		return channel_undecodable(fe->ctx.chan, from, rec, len, e);
	if (hello.role != from ||
	    memcmp(hello.fingerprint, fe->ctx.fingerprint,
	    HASH_SHA256_LEN) != 0)
		fatal(SP_EXIT_INTERNAL, "the executor's hello is not ours");
	channel_set_state(fe->ctx.chan, from, CHANNEL_READY);
	if (fe->state == FRONTEND_HELLO)
		fe->state = FRONTEND_RUNNING;
	(void)event_del(fe->ev_hello);
	test_hook_forge(&fe->ctx);
	test_hook_stray(fe->ctx.chan, "frontend", true);
	frontend_release_held(fe);
	return true;
}

/*
 * The frontend's channels.  The broker's is written only: nothing is
 * read from it, so it accepts nothing.  Every undecodable body from the
 * executor is fatal (no type is audited): an executor that sends one is
 * broken, and no answer of it can be trusted.
 */
static const struct channel_peer frontend_peers[] = {
	{
		.role = RECORD_ROLE_EXECUTOR,
		.start = CHANNEL_HELLO,
		.accept = {
			[CHANNEL_HELLO] = CHANNEL_TYPE(RECORD_HELLO),
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_RESULT) |
			    CHANNEL_TYPE(RECORD_CONFIRM_CHALLENGE),
		},
		.sends = CHANNEL_TYPE(RECORD_HELLO) |
		    CHANNEL_TYPE(RECORD_ACTION) | CHANNEL_TYPE(RECORD_CANCEL) |
		    CHANNEL_TYPE(RECORD_CONFIRM_ANSWER),
		.on = {
			[RECORD_HELLO] = frontend_hello,
			[RECORD_RESULT] = frontend_result,
			[RECORD_CONFIRM_CHALLENGE] = frontend_challenge,
		},
	},
	{
		.role = RECORD_ROLE_BROKER,
		.start = CHANNEL_READY,
		.sends = CHANNEL_TYPE(RECORD_HELLO) |
		    CHANNEL_TYPE(RECORD_AUDIT_EVENT),
	},
};

static void
frontend_executor_lost(struct frontend *fe, bool closed)
{
	log_error("the executor channel is %s",
	    closed ? "closed" : "broken");
	fe->executor_gone = true;
	(void)event_del(fe->ev_action);
	(void)mcp_session_executor_lost(fe->session, &fe->items);
	frontend_flush_items(fe);
	frontend_fail(fe);
}

/*
 * Takes the records waiting on the action channel (up to
 * FRONTEND_RECORDS_PER_WAKEUP; the event fires again for the rest), so
 * answers that arrived together leave in one write.  false when the
 * channel is gone.
 */
static bool
frontend_read_records(struct frontend *fe)
{
	enum channel_read end;

	end = channel_read(fe->ctx.chan, RECORD_ROLE_EXECUTOR,
	    FRONTEND_RECORDS_PER_WAKEUP);
	if (end == CHANNEL_OPEN)
		return true;
	frontend_executor_lost(fe, end == CHANNEL_CLOSED);
	return false;
}

static void
frontend_on_action(evutil_socket_t fd, short what, void *arg)
{
	struct frontend *fe = arg;

	(void)fd;
	(void)what;
	/* a result could start a waiting call: not for a client gone */
	if (!fe->client_lost && !writer_client_alive(fe->out))
		frontend_client_gone(fe);
	/* answered calls may let held-back frames in */
	if (frontend_read_records(fe) && fe->state < FRONTEND_DRAINING)
		frontend_want_input(fe);
	frontend_maybe_finish(fe);
	writer_flush(fe->out);
}

/* The broker ends the session in order: stop reading, flush, exit. */
static void
frontend_on_term(evutil_socket_t sig, short what, void *arg)
{
	struct frontend *fe = arg;

	(void)sig;
	(void)what;
	frontend_stop_input(fe);
	writer_flush(fe->out);
}

/* Calls that asked for progress hear of it at each tick while they run. */
static void
frontend_on_progress(evutil_socket_t fd, short what, void *arg)
{
	struct frontend *fe = arg;

	(void)fd;
	(void)what;
	if (!mcp_session_progress(fe->session, &fe->items))
		fe->status = SP_EXIT_INTERNAL;
	frontend_flush_items(fe);
	writer_flush(fe->out);
}

/* The progress tick, every MCP_PROGRESS_INTERVAL_MS (docs/design.md 5). */
static bool
frontend_start_progress(struct frontend *fe)
{
	unsigned ms = test_hook_progress_ms(MCP_PROGRESS_INTERVAL_MS);
	const struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	fe->ev_progress = event_new(fe->base, -1, EV_PERSIST,
	    frontend_on_progress, fe);
	return fe->ev_progress != NULL && event_add(fe->ev_progress, &tv) == 0;
}

static void
frontend_on_drained(void *arg)
{
	frontend_want_input(arg);
}

static void
frontend_on_client_lost(void *arg)
{
	frontend_client_gone(arg);
}

static void
frontend_on_finished(void *arg)
{
	struct frontend *fe = arg;

	(void)event_base_loopbreak(fe->base);
}

/* The session on this role's policy and profile; NULL after logging. */
static struct mcp_session *
frontend_session_new(const struct child_context *ctx)
{
	struct mcp_session_config cfg = {
		.policy = ctx->policy,
		.profile = ctx->profile,
		.server_version = PACKAGE_VERSION,
	};
	struct mcp_session *s;
	char *catalog;

	catalog = policy_catalog_render(ctx->policy, ctx->profile,
	    &cfg.catalog_len);
	if (catalog == NULL) {
		log_error("cannot render the catalog");
		return NULL;
	}
	cfg.catalog_json = catalog;
	s = mcp_session_new(&cfg);
	free(catalog);
	return s;
}

/* Everything that needs memory, files or sigaction: before confinement. */
/* No hello by the deadline: nothing held is sent, the session ends 70. */
static void
frontend_hello_late(evutil_socket_t fd, short what, void *arg)
{
	const struct frontend *fe = arg;

	(void)fd;
	(void)what;
	if (!frontend_greeted(fe) && !fe->executor_gone)
		fatal(SP_EXIT_INTERNAL, "the executor did not answer its hello "
		    "within %d s", FRONTEND_HELLO_MS / 1000);
}

static void
frontend_setup(struct frontend *fe)
{
	const struct policy *p = fe->ctx.policy;
	const struct channel_config chan = {
		.peers = frontend_peers,
		.peer_count = sizeof(frontend_peers) / sizeof(frontend_peers[0]),
		.arg = fe,
		.limits = &fe->ctx.limits,
		.exit_status = SP_EXIT_INTERNAL,
	};

	fe->inbuf_size = p->limits.max_frame_bytes;
	if (fe->inbuf_size < FRONTEND_READ_CHUNK_MIN)
		fe->inbuf_size = FRONTEND_READ_CHUNK_MIN;
	if (fe->inbuf_size > FRONTEND_READ_CHUNK_MAX)
		fe->inbuf_size = FRONTEND_READ_CHUNK_MAX;

	/* The broker orders the end (SIGTERM); a terminal's SIGINT or
	 * SIGHUP to the whole group is its to handle, not ours. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR ||
	    signal(SIGINT, SIG_IGN) == SIG_ERR ||
	    signal(SIGHUP, SIG_IGN) == SIG_ERR ||
	    (fe->base = event_base_new()) == NULL ||
	    !frame_reader_init(&fe->reader, p->limits.max_frame_bytes) ||
	    (fe->inbuf = malloc(fe->inbuf_size)) == NULL ||
	    (fe->ctx.chan = channel_new(&chan)) == NULL)
		fatal(SP_EXIT_INTERNAL, "cannot set up the event loop");
	channel_attach(fe->ctx.chan, RECORD_ROLE_EXECUTOR, CHILD_FD_ACTION);
	channel_attach(fe->ctx.chan, RECORD_ROLE_BROKER, CHILD_FD_CONTROL);
	fe->out = writer_new(fe->base, STDOUT_FILENO, frontend_on_drained,
	    frontend_on_finished, fe);
	if (fe->out == NULL ||
	    !writer_watch_client(fe->out, frontend_on_client_lost))
		fatal(SP_EXIT_INTERNAL, "cannot set up the protocol writer");
	fe->session = frontend_session_new(&fe->ctx);
	fe->stdin_file = !fd_is_pollable(STDIN_FILENO);
	fe->ev_stdin = event_new(fe->base, fe->stdin_file ? -1 : STDIN_FILENO,
	    fe->stdin_file ? 0 : EV_READ | EV_PERSIST, frontend_on_stdin, fe);
	fe->ev_action = event_new(fe->base, CHILD_FD_ACTION,
	    EV_READ | EV_PERSIST, frontend_on_action, fe);
	fe->ev_term = evsignal_new(fe->base, SIGTERM, frontend_on_term, fe);
	fe->ev_hello = evtimer_new(fe->base, frontend_hello_late, fe);
	if (fe->session == NULL || fe->ev_stdin == NULL ||
	    fe->ev_action == NULL || fe->ev_term == NULL ||
	    fe->ev_hello == NULL || !frontend_start_progress(fe) ||
	    event_add(fe->ev_term, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot set up the session");
}

/*
 * Greets the executor and the broker.  The executor's answer is not
 * waited for: it loads its libraries meanwhile, and the session serves
 * what needs only the policy (initialize, ping, tools/list) at once.
 * frontend_hello() takes the answer as the channel's first record.
 */
static void
frontend_greet(const struct frontend *fe)
{
	const struct timeval deadline = { FRONTEND_HELLO_MS / 1000,
	    (FRONTEND_HELLO_MS % 1000) * 1000 };
	struct record_hello hello = { .role = RECORD_ROLE_FRONTEND };

	memcpy(hello.fingerprint, fe->ctx.fingerprint, HASH_SHA256_LEN);
	test_hook_stray(fe->ctx.chan, "frontend", false);
	if (!channel_send(fe->ctx.chan, RECORD_ROLE_EXECUTOR, RECORD_HELLO,
	    &hello) ||
	    !channel_send(fe->ctx.chan, RECORD_ROLE_BROKER, RECORD_HELLO,
	    &hello) ||
	    evtimer_add(fe->ev_hello, &deadline) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot greet the executor");
}

static void
frontend_free(struct frontend *fe)
{
	mcp_output_clear(&fe->items);
	mcp_output_clear(&fe->held);
	mcp_session_free(fe->session);
	writer_free(fe->out);
	if (fe->ev_stdin != NULL)
		event_free(fe->ev_stdin);
	if (fe->ev_action != NULL)
		event_free(fe->ev_action);
	if (fe->ev_hello != NULL)
		event_free(fe->ev_hello);
	if (fe->ev_progress != NULL)
		event_free(fe->ev_progress);
	frame_reader_free(&fe->reader);
	free(fe->inbuf);
	channel_free(fe->ctx.chan);
	child_context_free(&fe->ctx);
	/* ev_term and base stay: freeing them would call sigaction. */
}

/* Exit status: the session's, 0 or 65, or 70/71 on failure. */
int
main(int argc, char **argv)
{
	struct frontend fe;
	const char *profile;
	int status;

	profile = child_args(argc, argv, RECORD_ROLE_FRONTEND);
	memset(&fe, 0, sizeof(fe));
	child_context_load(&fe.ctx, RECORD_ROLE_FRONTEND, profile);
	frontend_setup(&fe);
	child_confine(&fe.ctx);
	test_hook_run("frontend");
	frontend_greet(&fe);
	if (event_add(fe.ev_action, NULL) == -1)
		fatal(SP_EXIT_INTERNAL, "cannot watch the executor channel");
	frontend_want_input(&fe);
	(void)event_base_dispatch(fe.base);
	status = fe.status != 0 ? fe.status :
	    mcp_session_exit_status(fe.session);
	frontend_free(&fe);
	test_hook_heap_report("frontend");
	return status;
}
