/*
 * The executor's side of auditing (broker/audit_event.h has the broker's):
 * an INTENT event before a tool acts, an EXECUTION event after, each on
 * the control channel (CHILD_FD_CONTROL), with the arguments rendered by
 * audit_args.h so no raw value of a "shape" param leaves the executor.
 *
 * No intent, no action: audit_client_intent() returns true only when the
 * broker acked the intent as written (and, for a mutating tool, synced);
 * on any other answer, on silence past AUDIT_CLIENT_ACK_MS or on a closed
 * channel the caller must not act and answers the call "failed".
 */
#ifndef SP_BROKER_AUDIT_CLIENT_H
#define SP_BROKER_AUDIT_CLIENT_H

#include <stdbool.h>

#include "common/record.h"
#include "policy/policy.h"

/* How long a child waits for the broker's ack. */
#define AUDIT_CLIENT_ACK_MS 10000

/*
 * Sends the intent for action a (borrowed) of tool (the catalog's entry
 * at a->tool_index) on fd and waits for the ack.  true when written.
 */
bool audit_client_intent(int fd, const struct record_limits *limits,
    const struct policy_tool *tool, const struct record_action *a);

/*
 * Sends the execution record of a's result r (both borrowed): outcome,
 * HTTP or exit status, duration.  For a mutating tool it waits for the
 * ack, so the record is durable before the result goes to the frontend;
 * false when it is not (the action happened all the same: the caller
 * still answers, the broker has logged the failure).
 */
bool audit_client_execution(int fd, const struct record_limits *limits,
    const struct policy_tool *tool, const struct record_action *a,
    const struct record_result *r);

#endif
