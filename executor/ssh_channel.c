/*
 * One call's channel: wait for a slot -> open -> exec -> stdin -> eof ->
 * read stdout and stderr -> close -> exit status -> free.  A detached call
 * (its result already given, by timeout or cancel) finishes the libssh2
 * step it is in, because libssh2 insists on the same call being repeated
 * after EAGAIN, and then only closes and frees its channel.
 *
 * stdin is written whole before output is read; it is meant for small
 * secrets, far below the server's channel window.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "executor/ssh_int.h"

#define READ_CHUNK 32768
#define READS_PER_STEP 64	/* then let the other channels have a turn */

static enum step_result
blocked(struct ssh_call *call)
{
	ssh_conn_note_eagain(call->conn, call);
	return STEP_BLOCKED;
}

/*
 * Errors that mean the session, not just this channel, is gone.  A packet
 * that fails its MAC or cannot be decrypted or parsed is dropped by
 * libssh2, which then carries on: whatever it held (another channel's
 * exit status, its close) is lost, so the session is not trusted again.
 */
static bool
session_lost(int rc)
{
	return rc == LIBSSH2_ERROR_SOCKET_SEND ||
	    rc == LIBSSH2_ERROR_SOCKET_RECV ||
	    rc == LIBSSH2_ERROR_SOCKET_DISCONNECT ||
	    rc == LIBSSH2_ERROR_SOCKET_TIMEOUT ||
	    rc == LIBSSH2_ERROR_TIMEOUT ||
	    rc == LIBSSH2_ERROR_BAD_USE ||
	    rc == LIBSSH2_ERROR_INVALID_MAC ||
	    rc == LIBSSH2_ERROR_DECRYPT ||
	    rc == LIBSSH2_ERROR_ENCRYPT ||
	    rc == LIBSSH2_ERROR_PROTO ||
	    rc == LIBSSH2_ERROR_OUT_OF_BOUNDARY ||
	    rc == LIBSSH2_ERROR_KEX_FAILURE ||
	    rc == LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE;
}

static const char *
last_error(struct ssh_call *call)
{
	char *msg = NULL;

	libssh2_session_last_error(call->conn->session, &msg, NULL, 0);
	return msg != NULL ? msg : "unknown error";
}

bool
ssh_channel_active(const struct ssh_call *call)
{
	return call->state >= CALL_OPENING && call->state <= CALL_FREEING;
}

static bool
slot_free(const struct ssh_call *call)
{
	const struct ssh_call *c;
	unsigned active = 0;

	TAILQ_FOREACH(c, &call->conn->calls, entry) {
		if (c->state == CALL_OPENING)
			return false;	/* libssh2 opens one at a time */
		if (ssh_channel_active(c))
			active++;
	}
	return active < call->engine->config.max_channels;
}

static enum step_result
step_waiting(struct ssh_call *call)
{
	if (call->detached) {
		call->state = CALL_GONE;
		return STEP_PROGRESS;
	}
	if (!slot_free(call))
		return STEP_BLOCKED;
	call->state = CALL_OPENING;
	return STEP_PROGRESS;
}

static enum step_result
step_opening(struct ssh_call *call)
{
	LIBSSH2_SESSION *session = call->conn->session;
	int rc;

	call->channel = libssh2_channel_open_session(session);
	if (call->channel == NULL) {
		rc = libssh2_session_last_errno(session);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return blocked(call);
		if (session_lost(rc))
			return STEP_CONN_LOST;
		ssh_call_finish(call, SSH_FAILED, "server refused a channel: %s",
		    last_error(call));
		call->state = CALL_GONE;
		return STEP_PROGRESS;
	}
	call->opened_ms = clock_monotonic_ms();
	call->state = call->detached ? CALL_CLOSING : CALL_EXEC;
	return STEP_PROGRESS;
}

static enum step_result
step_exec(struct ssh_call *call)
{
	int rc;

	call->sent = true;
	rc = libssh2_channel_exec(call->channel, call->command);
	if (rc == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	if (session_lost(rc))
		return STEP_CONN_LOST;
	/* only the server's own "no" proves the command did not start */
	if (rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED) {
		ssh_call_finish(call, SSH_FAILED, "server refused to run the "
		    "command: %s", last_error(call));
		call->state = CALL_CLOSING;
	} else if (rc != 0) {
		ssh_call_finish(call, SSH_UNKNOWN, "no answer to the command "
		    "request (%s); it may have run", last_error(call));
		call->state = CALL_CLOSING;
	} else if (call->detached)
		call->state = CALL_CLOSING;
	else
		call->state = call->stdin_len > 0 ? CALL_STDIN : CALL_SEND_EOF;
	return STEP_PROGRESS;
}

static enum step_result
step_stdin(struct ssh_call *call)
{
	ssize_t n;

	n = libssh2_channel_write(call->channel,
	    call->stdin_data + call->stdin_off,
	    call->stdin_len - call->stdin_off);
	if (n == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	if (n < 0 && session_lost((int)n))
		return STEP_CONN_LOST;
	if (n < 0) {
		ssh_call_finish(call, SSH_UNKNOWN, "writing stdin failed: %s",
		    last_error(call));
		call->state = CALL_CLOSING;
		return STEP_PROGRESS;
	}
	call->stdin_off += (size_t)n;
	if (call->detached)
		call->state = CALL_CLOSING;
	else if (call->stdin_off == call->stdin_len)
		call->state = CALL_SEND_EOF;
	return STEP_PROGRESS;
}

static enum step_result
step_send_eof(struct ssh_call *call)
{
	int rc = libssh2_channel_send_eof(call->channel);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	if (session_lost(rc))
		return STEP_CONN_LOST;
	call->state = call->detached ? CALL_CLOSING : CALL_READING;
	return STEP_PROGRESS;
}

/* Keeps what fits under the limit; counts everything. */
static bool
buffer_append(struct ssh_buffer *b, const char *data, size_t n)
{
	size_t keep, want;
	char *p;

	b->total += n;
	keep = b->limit - b->len < n ? b->limit - b->len : n;
	if (keep == 0)
		return true;
	if (b->len + keep > b->cap) {
		want = b->cap * 2 > b->len + keep ? b->cap * 2 : b->len + keep;
		if (want < 4096)
			want = 4096;
		if (want > b->limit)
			want = b->limit;
		if ((p = realloc(b->data, want)) == NULL) {
			log_error("out of memory");
			return false;
		}
		b->data = p;
		b->cap = want;
	}
	memcpy(b->data + b->len, data, keep);
	b->len += keep;
	return true;
}

/* One read of one stream: > 0 bytes taken, 0 none now, < 0 an error. */
static ssize_t
read_stream(struct ssh_call *call, int stream, struct ssh_buffer *b)
{
	char chunk[READ_CHUNK];
	ssize_t n;

	n = libssh2_channel_read_ex(call->channel, stream, chunk, sizeof(chunk));
	if (n == LIBSSH2_ERROR_EAGAIN)
		return 0;
	if (n > 0 && !buffer_append(b, chunk, (size_t)n))
		return LIBSSH2_ERROR_ALLOC;
	return n;
}

static enum step_result
step_reading(struct ssh_call *call)
{
	ssize_t o = 1, e = 1;
	int i;

	if (call->detached && !call->resuming_send) {
		call->state = CALL_CLOSING;
		return STEP_PROGRESS;
	}
	for (i = 0; i < READS_PER_STEP && (o > 0 || e > 0); i++) {
		o = read_stream(call, 0, &call->out);
		e = o < 0 ? 0 : read_stream(call, SSH_EXTENDED_DATA_STDERR,
		    &call->err);
		if (o < 0 || e < 0)
			break;
	}
	if (o < 0 || e < 0) {
		if (session_lost((int)(o < 0 ? o : e)))
			return STEP_CONN_LOST;
		ssh_call_finish(call, SSH_UNKNOWN, "reading output failed: %s",
		    last_error(call));
		call->state = CALL_CLOSING;
		return STEP_PROGRESS;
	}
	if (o > 0 || e > 0)
		return STEP_PROGRESS;	/* more may be there: come back */
	if (libssh2_channel_eof(call->channel)) {
		call->state = CALL_CLOSING;
		return STEP_PROGRESS;
	}
	return i > 1 ? STEP_PROGRESS : blocked(call);
}

static enum step_result
step_closing(struct ssh_call *call)
{
	int rc = libssh2_channel_close(call->channel);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	if (rc != 0)
		return STEP_CONN_LOST;
	/* wait_closed insists on the server's EOF, which a detached call may
	 * never have seen */
	call->state = call->detached ? CALL_FREEING : CALL_WAIT_CLOSED;
	return STEP_PROGRESS;
}

/*
 * RFC 4254 names signals bare ("TERM"), but OpenSSH sends "SIG@openssh.com"
 * for any signal outside its short list (BUS, SYS, XCPU, ...), and another
 * server may send anything: only a name of [A-Z0-9] is passed on, others
 * become "UNKNOWN", which is all a result record can carry.
 */
static void
signal_name_copy(char *out, size_t size, const char *sig, size_t len)
{
	size_t i;
	bool plain = len > 0 && len < size;

	for (i = 0; plain && i < len; i++)
		plain = (sig[i] >= 'A' && sig[i] <= 'Z') ||
		    (sig[i] >= '0' && sig[i] <= '9');
	snprintf(out, size, "%.*s", plain ? (int)len : 7,
	    plain ? sig : "UNKNOWN");
}

static void
collect_exit(struct ssh_call *call)
{
	char *sig = NULL;
	size_t sig_len = 0;

	libssh2_channel_get_exit_signal(call->channel, &sig, &sig_len,
	    NULL, NULL, NULL, NULL);
	if (sig != NULL) {
		signal_name_copy(call->signal, sizeof(call->signal), sig,
		    sig_len);
		ssh_call_finish(call, SSH_OK, "killed by signal %s",
		    call->signal);
	} else {
		/* libssh2 1.10 cannot tell "status 0" from "no status sent" */
		call->exited = true;
		call->exit_status = libssh2_channel_get_exit_status(
		    call->channel);
		ssh_call_finish(call, SSH_OK, "exited with status %d",
		    call->exit_status);
	}
	if (sig != NULL)
		libssh2_free(call->conn->session, sig);
}

static enum step_result
step_wait_closed(struct ssh_call *call)
{
	int rc = libssh2_channel_wait_closed(call->channel);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	if (rc != 0)
		return STEP_CONN_LOST;
	collect_exit(call);
	call->state = CALL_FREEING;
	return STEP_PROGRESS;
}

static enum step_result
step_freeing(struct ssh_call *call)
{
	int rc = libssh2_channel_free(call->channel);

	if (rc == LIBSSH2_ERROR_EAGAIN)
		return blocked(call);
	call->channel = NULL;
	call->state = CALL_GONE;
	return rc == 0 ? STEP_PROGRESS : STEP_CONN_LOST;
}

enum step_result
ssh_channel_step(struct ssh_call *call)
{
	switch (call->state) {
	case CALL_WAITING:
		return step_waiting(call);
	case CALL_OPENING:
		return step_opening(call);
	case CALL_EXEC:
		return step_exec(call);
	case CALL_STDIN:
		return step_stdin(call);
	case CALL_SEND_EOF:
		return step_send_eof(call);
	case CALL_READING:
		return step_reading(call);
	case CALL_CLOSING:
		return step_closing(call);
	case CALL_WAIT_CLOSED:
		return step_wait_closed(call);
	case CALL_FREEING:
		return step_freeing(call);
	case CALL_GONE:
		break;
	}
	return STEP_BLOCKED;
}
