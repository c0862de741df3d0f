/*
 * What the two halves of a session's supervision share: the supervisor
 * itself, owned by broker/supervise.c (the children's lives, their
 * channels, the session's end), and what broker/supervise_audit.c (each
 * audit event a child sends: limits, the write, the ack) calls back.
 * Only those two files include it.
 */
#ifndef SP_BROKER_SUPERVISE_INT_H
#define SP_BROKER_SUPERVISE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit_event.h"
#include "broker/child_stderr.h"
#include "broker/open_calls.h"
#include "broker/supervise.h"

#define SUPERVISE_NSIGNALS 4	/* SIGCHLD, SIGTERM, SIGINT, SIGHUP */

struct event;
struct limits;
struct journal;

struct supervisor {
	struct event_base *base;
	struct audit_log *log;
	const struct policy *policy;
	const struct record_limits *limits;
	const uint8_t *fingerprint;
	uint32_t call_timeout_ms;
	struct event *ev_signal[SUPERVISE_NSIGNALS];
	struct event *ev_control[CHILD_COUNT];
	struct event *ev_grace;		/* ends what is left, at once */
	struct event *ev_settle;	/* ends the rest after a death */
	struct event *ev_tick;		/* audit group sync */
	struct channel *chan;		/* to both children */
	bool killed[CHILD_COUNT];	/* ended by the broker: expected */
	bool abnormal;			/* a child died unasked */
	unsigned settle_waits;		/* ev_settle re-armed for a child
					 * on its way out */
	bool ending;			/* the session is ending in order */
	char end_why[32];		/* "signal TERM" when ending */
	bool status_set;
	struct child *kids;
	struct supervise_summary *sum;
	struct audit_event_session audit;	/* folding, the note budget */
	struct child_stderr err[CHILD_COUNT];	/* children's stderr relays */
	struct open_calls open;		/* intents without an execution */
	struct limits *lim;		/* per-tool limits, duplicates; owned */
	struct journal *journal;	/* idempotency journal; owned */
	struct approvals *approvals;	/* borrowed, or NULL */
};

/* The session's exit status and why, unless one is set already. */
void supervise_set_status(struct supervisor *sv, int status, const char *why);
/* Kills both children (their deaths are then expected). */
void supervise_kill_all(struct supervisor *sv);
/* Ends the session in order: the frontend first, then the executor. */
void supervise_end(struct supervisor *sv, const char *why);

/* One audit event from child c (borrowed): decided, written, acked. */
void supervise_audit_event(struct supervisor *sv, const struct child *c,
    const struct record_audit_event *ev);
/* An execution record "unknown" for each intent still open at the end. */
void supervise_end_open_calls(struct supervisor *sv);

#endif
