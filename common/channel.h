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
 * its children first).  The handler decodes the body; when its decoder
 * refuses it, the handler hands it to channel_undecodable(), which
 * applies the peer's row: fatal as above, or, for the types the row
 * lists as audited, the process's undecodable hook (docs/design.md
 * section 1).  One send path encodes (record_encode()) and sends; a
 * process can send a peer only the types its table says it sends.
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
 * the body is the handler's to decode, and a body its decoder refuses
 * goes to channel_undecodable().  false: stop reading this channel for
 * now (the handler dealt with what went wrong).
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
	/*
	 * The types whose undecodable body, once greeted, goes to the
	 * undecodable hook (audited, its call answered) and reading goes
	 * on; any other undecodable body, and any before the hello, is
	 * fatal as a refused header is.
	 */
	uint32_t audited;
};

/* Why a record was refused: its header, or a body that does not decode. */
enum channel_fault {
	CHANNEL_FAULT_TOO_LONG,		/* above RECORD_MAX_BYTES */
	CHANNEL_FAULT_NO_HEADER,	/* shorter than a header */
	CHANNEL_FAULT_VERSION,		/* not RECORD_VERSION */
	CHANNEL_FAULT_TYPE,		/* not permitted from peer now */
	CHANNEL_FAULT_BODY,		/* permitted, but does not decode */
};

/*
 * Called after the refusal's line: true when the process ends itself in
 * order with the internal-error status (the broker), false to have the
 * channel exit at once.  rec is what was read (at most RECORD_MAX_BYTES
 * of it), f why it was refused.
 */
typedef bool (*channel_refused_fn)(void *arg, enum record_role from,
    const uint8_t *rec, size_t len, enum channel_fault f);

/*
 * An undecodable body of a type the row lists as audited: the process
 * audits it and answers its call if it can; returns what a handler
 * does.
 */
typedef bool (*channel_undecodable_fn)(void *arg, enum record_role from,
    enum record_type type, const uint8_t *rec, size_t len);

struct channel_config {
	const struct channel_peer *peers;	/* the table, borrowed */
	size_t peer_count;
	void *arg;			/* handed to every callback */
	const struct record_limits *limits;	/* for encoding, borrowed */
	int exit_status;		/* after a refused record */
	channel_refused_fn refused;	/* may be NULL */
	channel_undecodable_fn undecodable;	/* needed by audited rows */
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
 * A handler's decoder refused the body of rec (the record it was
 * handed; e the decoder's error): applies from's row (struct
 * channel_peer's audited).  Fatal: one line, the refusal hook with
 * CHANNEL_FAULT_BODY, then exit unless the hook ends the process in
 * order (returns false then).  Audited: returns what the undecodable
 * hook does.  The handler returns what this returns.
 */
bool channel_undecodable(struct channel *ch, enum record_role from,
    const uint8_t *rec, size_t len, enum record_error e);

/*
 * Encodes rec (record_encode()) and sends it to peer as one datagram.
 * false after logging.
 */
bool channel_send(struct channel *ch, enum record_role peer,
    enum record_type type, const void *rec);

/* Sends an already encoded record; false after logging. */
bool channel_send_encoded(struct channel *ch, enum record_role peer,
    const uint8_t *rec, size_t len);

#endif
