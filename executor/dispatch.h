/*
 * The executor's dispatch (docs/design.md section 1): an action that passed
 * the executor's own checks is audited as an intent, waits for the
 * broker's acknowledgement, is expanded from the policy's templates and
 * run by the HTTP or SSH engine, and is answered with one result record;
 * an execution event follows the result.
 *
 * One dispatch per executor, on its event loop.  Everything that needs
 * files or libraries' start-up (engines, SSH targets, resolution of SSH
 * hosts) happens in dispatch_new(), before confinement.
 */
#ifndef SP_EXECUTOR_DISPATCH_H
#define SP_EXECUTOR_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child/child.h"
#include "common/record.h"
#include "executor/credentials.h"

struct event_base;
struct dispatch;

/*
 * base, ctx and creds are borrowed and must outlive the dispatch.
 * curl_global_init must have run.  NULL on failure (logged).
 */
struct dispatch *dispatch_new(struct event_base *base,
    const struct child_context *ctx, const struct credential_store *creds);

/*
 * Calls still in flight are dropped without an answer: the frontend
 * reports them as unknown once the executor is gone.
 */
void dispatch_free(struct dispatch *d);

/*
 * Takes a checked action: moves a->args into the dispatch (a is left
 * without them; the caller still calls record_action_free on it).
 */
void dispatch_action(struct dispatch *d, struct record_action *a);

/* A cancel record for call_id; unknown ids are ignored. */
void dispatch_cancel(struct dispatch *d, uint64_t call_id);

/*
 * The frontend's relay of a human's answer to a call's challenge
 * (executor/confirm.h): the call acts only when it is accepted; any
 * other answer, or one for a call not waiting, acts on nothing.
 */
void dispatch_confirm_answer(struct dispatch *d,
    const struct record_confirm_answer *a);

/* An approver's answer, relayed by the broker (section 8.3). */
void dispatch_operator_answer(struct dispatch *d,
    const struct record_operator_answer *a);

/* The broker's acknowledgement of an audit event (borrowed). */
void dispatch_audit_ack(struct dispatch *d,
    const struct record_audit_ack *ack);

/* Calls accepted and not yet answered (counted against max_inflight). */
size_t dispatch_inflight(const struct dispatch *d);

/*
 * Results that withheld a credential a target sent back (executor/redact.h);
 * at REDACT_SESSION_MAX the executor takes no more calls.
 */
size_t dispatch_withheld(const struct dispatch *d);

/* 0 while healthy; SP_EXIT_INTERNAL once a record could not be sent. */
int dispatch_status(const struct dispatch *d);

#endif
