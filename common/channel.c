/*
 * The record channels of a process (common/channel.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/channel.h"
#include "common/log.h"

#define CHANNEL_ROLES (RECORD_ROLE_EXECUTOR + 1)

struct channel_link {
	const struct channel_peer *row;	/* NULL: not a peer of ours */
	int fd;				/* -1: not attached */
	enum channel_state state;
};

struct channel {
	struct channel_config cfg;
	struct channel_link links[CHANNEL_ROLES];
	uint8_t *buf;			/* RECORD_MAX_BYTES, for receiving */
};

static const char *const channel_state_names[CHANNEL_STATES] = {
	[CHANNEL_HELLO] = "hello",
	[CHANNEL_READY] = "ready",
};

static struct channel_link *
channel_link(struct channel *ch, enum record_role peer)
{
	if ((unsigned)peer >= CHANNEL_ROLES || ch->links[peer].row == NULL)
		return NULL;
	return &ch->links[peer];
}

struct channel *
channel_new(const struct channel_config *cfg)
{
	struct channel *ch;
	size_t i;
	int r;

	if ((ch = calloc(1, sizeof(*ch))) == NULL ||
	    (ch->buf = malloc(RECORD_MAX_BYTES)) == NULL) {
		log_error("out of memory");
		channel_free(ch);
		return NULL;
	}
	ch->cfg = *cfg;
	for (r = 0; r < CHANNEL_ROLES; r++)
		ch->links[r].fd = -1;
	for (i = 0; i < cfg->peer_count; i++) {
		r = (int)cfg->peers[i].role;
		if (r < RECORD_ROLE_BROKER || r >= CHANNEL_ROLES ||
		    ch->links[r].row != NULL) {
			log_error("peer table row %zu: bad or repeated role", i);
			channel_free(ch);
			return NULL;
		}
		if (cfg->peers[i].audited != 0 && cfg->undecodable == NULL) {
			log_error("peer table row %zu: audited types and no "
			    "undecodable hook", i);
			channel_free(ch);
			return NULL;
		}
		ch->links[r].row = &cfg->peers[i];
	}
	return ch;
}

void
channel_free(struct channel *ch)
{
	if (ch == NULL)
		return;
	free(ch->buf);
	free(ch);
}

void
channel_attach(struct channel *ch, enum record_role peer, int fd)
{
	struct channel_link *l = channel_link(ch, peer);

	if (l == NULL) {
		log_error("%s is not a peer of this process",
		    record_role_name(peer));
		return;
	}
	l->fd = fd;
	l->state = l->row->start;
}

int
channel_fd(const struct channel *ch, enum record_role peer)
{
	if ((unsigned)peer >= CHANNEL_ROLES || ch->links[peer].row == NULL)
		return -1;
	return ch->links[peer].fd;
}

void
channel_set_state(struct channel *ch, enum record_role peer,
    enum channel_state state)
{
	struct channel_link *l = channel_link(ch, peer);

	if (l != NULL)
		l->state = state;
}

enum channel_state
channel_state(const struct channel *ch, enum record_role peer)
{
	if ((unsigned)peer >= CHANNEL_ROLES || ch->links[peer].row == NULL)
		return CHANNEL_HELLO;
	return ch->links[peer].state;
}

/* The header's two numbers, for the refusal's line; 0 when absent. */
static void
channel_header(const uint8_t *rec, size_t len, uint16_t *version,
    uint16_t *type)
{
	struct buf in;

	*version = *type = 0;
	buf_init_reader(&in, rec, len);
	if (buf_get_u16(&in, version) == RECORD_OK)
		(void)buf_get_u16(&in, type);
}

/* The record_error of a header check, as the refusal hook's fault. */
static enum channel_fault
channel_fault_of(enum record_error e)
{
	switch (e) {
	case RECORD_ERR_TOO_LONG:
		return CHANNEL_FAULT_TOO_LONG;
	case RECORD_ERR_VERSION:
		return CHANNEL_FAULT_VERSION;
	case RECORD_ERR_TYPE:
		return CHANNEL_FAULT_TYPE;
	default:
		return CHANNEL_FAULT_NO_HEADER;
	}
}

/* The one line saying what was refused, "channel PEER (STATE)" first. */
static void
channel_say_refused(const struct channel *ch, const struct channel_link *l,
    size_t n, enum channel_fault f, enum record_error e)
{
	char where[64];
	uint16_t version, type;
	size_t len = n < RECORD_MAX_BYTES ? n : RECORD_MAX_BYTES;

	(void)snprintf(where, sizeof(where), "channel %s (%s)",
	    record_role_name(l->row->role), channel_state_names[l->state]);
	channel_header(ch->buf, len, &version, &type);
	if (f == CHANNEL_FAULT_TOO_LONG)
		log_error("%s: record of %zu bytes is above "
		    "the %d-byte limit", where, n, RECORD_MAX_BYTES);
	else if (f == CHANNEL_FAULT_NO_HEADER)
		log_error("%s: record of %zu bytes has no "
		    "header", where, n);
	else if (f == CHANNEL_FAULT_VERSION)
		log_error("%s: record version %u is not "
		    "spoken here (version %d)", where, (unsigned)version,
		    RECORD_VERSION);
	else if (f == CHANNEL_FAULT_TYPE)
		log_error("%s: record type %u not permitted",
		    where, (unsigned)type);
	else
		log_error("%s: record type %u does not decode: %s",
		    where, (unsigned)type, record_error_str(e));
}

/*
 * The line, then the refusal hook; exits unless the hook ends the
 * process itself.
 */
static void
channel_refuse(struct channel *ch, const struct channel_link *l, size_t n,
    enum channel_fault f, enum record_error e)
{
	size_t len = n < RECORD_MAX_BYTES ? n : RECORD_MAX_BYTES;

	channel_say_refused(ch, l, n, f, e);
	if (ch->cfg.refused != NULL && ch->cfg.refused(ch->cfg.arg,
	    l->row->role, ch->buf, len, f))
		return;
	exit(ch->cfg.exit_status);
}

bool
channel_undecodable(struct channel *ch, enum record_role from,
    const uint8_t *rec, size_t len, enum record_error e)
{
	struct channel_link *l = channel_link(ch, from);
	enum record_type type;

	if (l == NULL || rec != ch->buf ||
	    record_peek(rec, len, NULL, &type) != RECORD_OK) {
		/* not a record this channel handed over: a bug here */
		log_error("channel_undecodable: not the record being read");
		exit(ch->cfg.exit_status);
	}
	if (l->state == CHANNEL_READY &&
	    (l->row->audited & CHANNEL_TYPE(type)) != 0 &&
	    ch->cfg.undecodable != NULL)
		return ch->cfg.undecodable(ch->cfg.arg, from, type, rec, len);
	channel_refuse(ch, l, len, CHANNEL_FAULT_BODY, e);
	return false;
}

/* Length, header, version, then the type against the peer's table. */
static enum record_error
channel_check(const struct channel_link *l, const uint8_t *rec, size_t n,
    enum record_type *type)
{
	enum record_error e;

	if (n > RECORD_MAX_BYTES)
		return RECORD_ERR_TOO_LONG;
	if ((e = record_peek(rec, n, NULL, type)) != RECORD_OK)
		return e;
	if ((l->row->accept[l->state] & CHANNEL_TYPE(*type)) == 0 ||
	    l->row->on[*type] == NULL)
		return RECORD_ERR_TYPE;
	return RECORD_OK;
}

/* One record; false when the reading must stop, *end saying why. */
static bool
channel_take(struct channel *ch, struct channel_link *l,
    enum channel_read *end)
{
	enum record_type type;
	enum record_error e;
	ssize_t n;

	do {
		n = recv(l->fd, ch->buf, RECORD_MAX_BYTES,
		    MSG_TRUNC | MSG_DONTWAIT);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		*end = CHANNEL_OPEN;
		return false;
	}
	if (n <= 0) {	/* ECONNRESET when the peer died: the caller says */
		*end = n == 0 ? CHANNEL_CLOSED : CHANNEL_BROKEN;
		return false;
	}
	if ((e = channel_check(l, ch->buf, (size_t)n, &type)) != RECORD_OK) {
		channel_refuse(ch, l, (size_t)n, channel_fault_of(e), e);
		*end = CHANNEL_STOPPED;
		return false;
	}
	if (!l->row->on[type](ch->cfg.arg, l->row->role, ch->buf,
	    (size_t)n)) {
		*end = CHANNEL_STOPPED;
		return false;
	}
	return true;
}

enum channel_read
channel_read(struct channel *ch, enum record_role peer, size_t max)
{
	struct channel_link *l = channel_link(ch, peer);
	enum channel_read end = CHANNEL_OPEN;
	size_t taken;

	if (l == NULL || l->fd < 0)
		return CHANNEL_BROKEN;
	for (taken = 0; taken < max; taken++)
		if (!channel_take(ch, l, &end))
			break;
	return end;
}

bool
channel_send(struct channel *ch, enum record_role peer,
    enum record_type type, const void *rec)
{
	struct buf out;
	bool ok;

	buf_init_writer(&out, RECORD_MAX_BYTES);
	ok = record_encode(type, rec, ch->cfg.limits, &out) == RECORD_OK &&
	    channel_send_encoded(ch, peer, buf_ptr(&out), buf_len(&out));
	buf_free(&out);
	return ok;
}

bool
channel_send_encoded(struct channel *ch, enum record_role peer,
    const uint8_t *rec, size_t len)
{
	struct channel_link *l = channel_link(ch, peer);
	enum record_type type;
	ssize_t n;

	if (l == NULL || record_peek(rec, len, NULL, &type) != RECORD_OK ||
	    (l->row->sends & CHANNEL_TYPE(type)) == 0) {
		log_error("not a record this process sends to %s",
		    record_role_name(peer));
		return false;
	}
	if (l->fd < 0) {
		log_error("the channel to %s is closed", record_role_name(peer));
		return false;
	}
	do {
		n = send(l->fd, rec, len, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	if (n == -1 || (size_t)n != len) {
		log_error("send to %s: %s", record_role_name(peer),
		    n == -1 ? strerror(errno) : "short");
		return false;
	}
	return true;
}
