/*
 * The record channels of a process (docs/design.md section 1), in the
 * manner of OpenSSH's monitor_read() and tmux's proc.c: each process
 * declares one table of its peers, and for each peer which record types
 * it accepts in each state and the handler of each.  One receive path
 * reads a record (bounded, MSG_TRUNC), checks its length, header and
 * version and that its type is permitted from this peer in this state,
 * then calls the handler.  Anything else ends the process: one line
 *
 *   sp[broker]: channel frontend (ready): record type 2 not permitted
 *
 * then the exit status the process gave (70, internal error), unless
 * its refusal hook ends it in order itself (the broker, which must end
 * its children first).  One send path encodes and sends; a process can
 * send a peer only the types its table says it sends.
 */
#ifndef SP_COMMON_CHANNEL_H
#define SP_COMMON_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/record.h"

/* A set of record types, for a peer table. */
#define CHANNEL_TYPE(t) (1u << (t))

enum channel_state {
	CHANNEL_HELLO,		/* only the peer's hello is accepted */
	CHANNEL_READY,		/* greeted: what the peer may send */
	CHANNEL_STATES,
};

/*
 * Takes one record of an accepted type: len bytes, a checked header;
 * the body is the handler's to decode.  false: stop reading this
 * channel for now (the handler dealt with what went wrong).
 */
typedef bool (*channel_handler)(void *arg, enum record_role from,
    const uint8_t *rec, size_t len);

/* One row of a process's peer table; static, never changed. */
struct channel_peer {
	enum record_role role;		/* who is at the other end */
	enum channel_state start;	/* CHANNEL_HELLO unless no hello comes */
	uint32_t accept[CHANNEL_STATES];/* CHANNEL_TYPE() sets */
	uint32_t sends;			/* what this process sends it */
	channel_handler on[RECORD_TYPE_LAST + 1];	/* by record type */
};

/*
 * Called after the refusal's line: true when the process ends itself in
 * order with the internal-error status (the broker), false to have the
 * channel exit at once.  rec is what was read (at most RECORD_MAX_BYTES
 * of it), e why it was refused: RECORD_ERR_TOO_LONG, _SHORT, _VERSION
 * or _TYPE.
 */
typedef bool (*channel_refused_fn)(void *arg, enum record_role from,
    const uint8_t *rec, size_t len, enum record_error e);

struct channel_config {
	const struct channel_peer *peers;	/* the table, borrowed */
	size_t peer_count;
	void *arg;			/* handed to every callback */
	const struct record_limits *limits;	/* for encoding, borrowed */
	int exit_status;		/* after a refused record */
	channel_refused_fn refused;	/* may be NULL */
};

struct channel;

/* A process's channels, none attached yet; NULL after logging. */
struct channel *channel_new(const struct channel_config *cfg);

/* Frees ch; does not close the fds it was given.  NULL is allowed. */
void channel_free(struct channel *ch);

/* fd (borrowed) is now the channel to peer, in the row's start state. */
void channel_attach(struct channel *ch, enum record_role peer, int fd);

/* -1 when none is attached. */
int channel_fd(const struct channel *ch, enum record_role peer);

/* A hello handler moves its peer on once the hello was right. */
void channel_set_state(struct channel *ch, enum record_role peer,
    enum channel_state state);
enum channel_state channel_state(const struct channel *ch,
    enum record_role peer);

enum channel_read {
	CHANNEL_OPEN,		/* nothing more for now, or max taken */
	CHANNEL_CLOSED,		/* the peer closed its end */
	CHANNEL_BROKEN,		/* recv failed */
	CHANNEL_STOPPED,	/* a handler or the refusal hook said stop */
};

/*
 * Takes up to max records waiting from peer without blocking (the event
 * loop calls again for the rest: a busy peer cannot starve the others),
 * each checked and handed to its handler.  A refused record does not
 * return unless the refusal hook said so (CHANNEL_STOPPED).
 */
enum channel_read channel_read(struct channel *ch, enum record_role peer,
    size_t max);

/*
 * Encodes rec, a struct record_hello, _action, _result, _cancel,
 * _audit_event, _audit_ack, _confirm_challenge_msg or _confirm_answer
 * as type says, and sends it to peer as one
 * datagram.  false after logging.
 */
bool channel_send(struct channel *ch, enum record_role peer,
    enum record_type type, const void *rec);

/* Sends an already encoded record; false after logging. */
bool channel_send_encoded(struct channel *ch, enum record_role peer,
    const uint8_t *rec, size_t len);

#endif
