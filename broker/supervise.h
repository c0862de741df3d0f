/*
 * Supervision of a session's two children on a libevent loop (docs/design.md
 * section 1, invariant 6).  The broker reads each child's control
 * channel (a hello, then audit events, written to the audit log), reaps
 * children on SIGCHLD, and ends the session:
 *
 * - the frontend exits 0 (end of input), 65 (malformed input), 74 (its
 *   client stopped reading) or 75 (calls past the budget): the
 *   executor gets up to the call timeout to finish what is in flight and
 *   leave on its own, then is killed; the session's status is the
 *   frontend's;
 * - SIGTERM, SIGINT or SIGHUP, or the session's rejections and
 *   violations reaching AUDIT_EVENT_NOTES_MAX (audit/audit_event.h):
 *   the frontend is asked to stop (SIGTERM), then the same as above;
 *   whatever is left after a grace period is killed;
 * - any other death of either child ends the other at once and the
 *   status is 70 (71 when a child could not install its sandbox); stderr
 *   says which role died and why.
 */
#ifndef SP_BROKER_SUPERVISE_H
#define SP_BROKER_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>

#include "audit/audit_log.h"
#include "broker/children.h"
#include "common/record.h"
#include "policy/policy.h"

struct event_base;
struct supervisor;

/* What the session-end record and the exit status are made of. */
struct supervise_summary {
	int status;		/* sp mcp's exit status */
	char why[128];		/* why the session ended, one phrase */
	uint64_t rejections;	/* frames the frontend refused */
	uint64_t violations;	/* records the executor refused */
	uint64_t intents;	/* actions announced and written */
	uint64_t executions;	/* actions that ran, whatever their outcome */
	uint64_t cancellations;
	uint64_t audit_failures;/* events that could not be written */
	uint64_t audit_dropped;	/* notes past AUDIT_EVENT_NOTES_MAX */
};

/*
 * Prepares the loop on base (borrowed) and catches the signals, before
 * any child exists so no exit goes unseen.  log may be NULL (nothing is
 * audited); it, policy (whose catalog names the tools of audit events),
 * limits and fingerprint are borrowed and must outlive the
 * supervisor, as must what *scope points to.  NULL after logging.  Free
 * with supervise_free().
 */
struct state_file;
struct pg_state;
struct approvals;
/* Where limits and the journal are kept, and for whom (borrowed). */
struct supervise_scope {
	struct state_file *limits;	/* state_dir's files, or NULL: */
	struct state_file *journal;	/* in memory (state/limits.h) */
	struct pg_state *pg;		/* PostgreSQL instead, or NULL */
	const char *who;		/* per_day's requester */
	const char *profile;		/* the journal keys' profile */
	struct approvals *approvals;	/* via operator's socket, or NULL */
};
struct supervisor *supervise_new(struct event_base *base,
    struct audit_log *log, const struct policy *policy,
    const struct record_limits *limits,
    const uint8_t fingerprint[HASH_SHA256_LEN], uint32_t call_timeout_ms,
    const struct supervise_scope *scope);

/*
 * Watches kids (borrowed; pids and control fds filled by
 * children_start()) until both are reaped; fills *summary.  Closes the
 * control fds.  false only when the loop could not be run.
 */
bool supervise_run(struct supervisor *sv, struct child kids[CHILD_COUNT],
    struct supervise_summary *summary);

void supervise_free(struct supervisor *sv);

#endif
