/*
 * Internals shared by executor/dispatch*.c and executor/exec_audit.c;
 * nothing outside the dispatch includes this.
 */
#ifndef SP_EXECUTOR_DISPATCH_INT_H
#define SP_EXECUTOR_DISPATCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/confirm.h"
#include "executor/dispatch.h"
#include "executor/http.h"
#include "executor/ssh.h"

/* Bounds of expanded pieces; a template whose expansion is longer fails. */
#define DISPATCH_PATH_MAX	8192
#define DISPATCH_HEADER_MAX	8192
#define DISPATCH_BODY_MAX	(1024u * 1024)
#define DISPATCH_COMMAND_MAX	SSH_COMMAND_MAX
#define DISPATCH_WHY_MAX	256

enum call_state {
	CALL_WAITING_JOURNAL,	/* confirm with a journal: "asked" sent with
				 * the values; no challenge until the
				 * journal's answer (docs/design.md 9) */
	CALL_WAITING_CONFIRM,	/* challenge sent; no intent yet (confirm) */
	CALL_WAITING_ACK,	/* intent sent; nothing done yet */
	CALL_RUNNING,		/* handed to an engine */
	CALL_WAITING_RECORD,	/* mutating: result held until the broker
				 * acks the execution record as synced */
	CALL_WAITING_FIRST,	/* a duplicate: answered with the result of
				 * call dup_of when it comes */
};

/*
 * The answers of the last mutating calls, kept for their duplicates
 * (state/limits.h decides which call is one, and of which).
 */
#define DISPATCH_KEPT_MAX	32

struct dispatch_kept {
	uint64_t call_id;		/* 0: empty slot */
	struct buf result;		/* the encoded RESULT; owned */
};

/* The expanded HTTP request; every pointer owned by the call. */
struct call_http {
	struct http_request req;
	char *path;
	char *body;
	struct http_header *headers;
	char **header_values;
	size_t nheaders;
	struct http_credential credential;
};

/* One action from its arrival to its answer; owned by the dispatch. */
struct dispatch_call {
	struct dispatch *d;
	struct dispatch_call *next;
	uint64_t call_id;
	uint32_t tool_index;
	const struct policy_tool *tool;	/* in the policy */
	struct value *args;		/* owned, arg_count values */
	size_t arg_count;
	enum call_state state;
	bool cancelled;
	uint32_t budget_ms;
	uint64_t start_us;		/* arrival, monotonic */
	struct event *ack_timer;	/* the budget, while the ack is awaited;
					 * the expiry, while a confirmation is */
	struct buf result;		/* encoded, while CALL_WAITING_RECORD */
	struct call_http http;
	struct ssh_call *ssh;		/* engine's handle while running */
	struct record_text *shapes;	/* the audit's, rendered once; owned */
	size_t shape_count;
	uint64_t dup_of;		/* CALL_WAITING_FIRST: the first call */
	char idem_key[65];		/* the journal's key, for the target's
					 * idempotency header; "" for none */
};

struct dispatch {
	struct event_base *base;
	const struct child_context *ctx;
	const struct credential_store *creds;
	struct http_engine *http;
	struct ssh_engine *ssh;
	int *ssh_target_ids;		/* per policy target; -1 for none */
	struct dispatch_call *calls;
	struct confirm_keeper *confirm;	/* owned */
	struct dispatch_kept kept[DISPATCH_KEPT_MAX];	/* a ring */
	size_t kept_next;
	size_t withheld;		/* results that withheld a credential */
	int status;
};

/*
 * Encodes r, sends an execution event to the broker and r to the
 * frontend (a read-only tool's r first, then the event; a mutating
 * tool's r once the broker acked the event); frees
 * the call, now or then.  status is the HTTP or exit status for the
 * audit (0 when none).
 */
void dispatch_finish(struct dispatch_call *c, struct record_result *r,
    int32_t status);

/* Sends c's encoded result to the frontend and frees c. */
void dispatch_send_result(struct dispatch_call *c);

/* executor/dispatch_dup.c: duplicates (see there).  keep: c's result is
 * being sent; kept for, and copied to, its duplicates.  wait: the broker
 * said c duplicates first_id. */
void dispatch_dup_keep(struct dispatch_call *c);
void dispatch_dup_wait(struct dispatch_call *c, uint64_t first_id);
void dispatch_dup_free(struct dispatch *d);

/* Answers without acting: outcome and message only. */
void dispatch_answer(struct dispatch_call *c, enum record_outcome outcome,
    uint32_t flags, const char *message);

/*
 * Writes the intent and waits for its ack within the call's budget;
 * false answered already.
 */
bool dispatch_await_intent(struct dispatch_call *c);

struct dispatch_call *dispatch_call_find(struct dispatch *d, uint64_t call_id);

/* executor/dispatch_confirm.c: asks for the challenge's answer (false
 * answered already); the answer or a cancel while it waits. */
bool dispatch_confirm_ask(struct dispatch_call *c);
void dispatch_confirm_withdraw(struct dispatch_call *c);
/* The journal's answer to c's "asked" (CALL_WAITING_JOURNAL). */
void dispatch_confirm_journal(struct dispatch_call *c,
    const struct record_audit_ack *ack);

/* Answers c as ack says when it is no WRITTEN (denied, replayed, not
 * recorded); false for WRITTEN.  Not for DUPLICATE. */
bool dispatch_ack_answers(struct dispatch_call *c,
    const struct record_audit_ack *ack);

/* executor/dispatch_http.c: builds and submits; false answered already. */
bool dispatch_http_start(struct dispatch_call *c);
void dispatch_http_clear(struct call_http *h);

/* executor/dispatch_ssh.c */
bool dispatch_ssh_targets(struct dispatch *d);
bool dispatch_ssh_start(struct dispatch_call *c);

/* executor/exec_audit.c: the executor's audit events (see there).  The
 * intent renders the argument shapes into c, the execution event reuses
 * them, and exec_audit_forget frees them (dispatch_call_free). */
bool exec_audit_intent(struct dispatch_call *c);
/* ev (kind and reason set by the caller) with c's shapes and digests;
 * ev's shapes stay c's.  false when it could not be sent. */
bool exec_audit_with_values(struct dispatch_call *c,
    struct record_audit_event *ev);
void exec_audit_forget(struct dispatch_call *c);
/* false when the event could not be sent. */
bool exec_audit_execution(struct dispatch_call *c,
    enum record_outcome outcome, int32_t status, uint64_t duration_us);

#endif
