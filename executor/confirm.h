/*
 * The executor's side of a human confirmation (docs/design.md section
 * 8.1): it alone decides that an action may run, so it issues each
 * challenge and verifies each answer.
 *
 * A challenge is a random nonce, an expiry (ms on this process's
 * monotonic clock shifted by a random offset, so a client that sees it
 * learns nothing of the host's uptime: now + the tool's timeout_s) and an HMAC-SHA-256 under
 * a key drawn from getrandom(2) when the executor starts, never sent
 * anywhere, over: the catalog fingerprint, the session's profile, the
 * call's canonical action (tool index and typed values as the action
 * record encodes them, with the call id zeroed), the expiry and the
 * nonce.  One executor serves one session, so the key is the session's:
 * a challenge from another session never verifies here.  The nonce's
 * first CONFIRM_ISSUER_LEN bytes are the keeper's issuer id, random per
 * executor, the rest random per challenge: a challenge that does not
 * verify and names another issuer came from a session that has ended (a
 * 2026-07-28 requestState kept across a restart), and is refused as
 * such, not as forged.  The call id is
 * left out so that the single-use rule, not the MAC, is what stops a
 * challenge from being spent on a second identical call.
 *
 * An answer is accepted only when, in this order: the human accepted;
 * the MAC verifies (constant-time compare) for the values this executor
 * holds for the call; the expiry has not passed; the nonce was never
 * spent; and, with retype, the typed text read as the param's canonical
 * value equals the call's value.  A nonce is spent by the human's
 * answer -- an accept, a decline or a cancel -- whose MAC verified and
 * which came before the expiry, whatever the retype check then says, and
 * remembered until its expiry: a "no" cannot come back as a "yes".  Only
 * "relayed" (the 2026-07-28 question went out in a result; the client
 * brings the same challenge back with its retry) and "unsupported" (no
 * human was asked) leave it unspent.
 *
 * Ownership: the keeper is the dispatch's (executor/dispatch.h); it owns
 * its key (zeroed when freed) and its bounded list of spent nonces.
 */
#ifndef SP_EXECUTOR_CONFIRM_H
#define SP_EXECUTOR_CONFIRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "child/child.h"
#include "common/record.h"

enum confirm_decision {
	CONFIRM_ASKED,		/* not a decision: the challenge went out */
	CONFIRM_ACCEPTED,
	CONFIRM_DECLINED,
	CONFIRM_CANCELLED,	/* the human dismissed the question */
	CONFIRM_UNSUPPORTED,	/* the client cannot ask a human */
	CONFIRM_RELAYED,	/* asked in a result: the retry answers */
	CONFIRM_FORGED,		/* MAC does not verify for these values */
	CONFIRM_EXPIRED,
	CONFIRM_REPLAYED,	/* the challenge was already spent */
	CONFIRM_WRONG_VALUE,	/* the retyped value is not the call's */
	CONFIRM_WITHDRAWN,	/* the client cancelled the call */
	CONFIRM_OPERATOR_ONLY,	/* via operator: the frontend answered */
	CONFIRM_OPERATOR_DENIED,	/* sp approve --deny */
	CONFIRM_SESSION_ENDED,	/* issued by another session's executor */
};

#define CONFIRM_ISSUER_LEN 4

struct confirm_keeper;

/*
 * max_spent bounds the spent nonces remembered at once (calls_per_session
 * is enough: each accepted call spends at most one).  NULL after logging.
 */
struct confirm_keeper *confirm_keeper_new(size_t max_spent);
void confirm_keeper_free(struct confirm_keeper *k);

/* What the call's confirmation must carry; false after logging. */
bool confirm_issue(struct confirm_keeper *k, const struct child_context *ctx,
    uint32_t tool_index, const struct value *args, size_t arg_count,
    uint32_t timeout_s, struct record_confirm_challenge *out);

/* The decision for an answer to the call (tool_index, args). */
enum confirm_decision confirm_verify(struct confirm_keeper *k,
    const struct child_context *ctx, uint32_t tool_index,
    const struct value *args, size_t arg_count,
    const struct record_confirm_answer *answer);

/* The audit's token: "accepted", "wrong-value", ...; never NULL. */
const char *confirm_decision_token(enum confirm_decision d);

/* For the model, why the call did not run; never NULL. */
const char *confirm_decision_message(enum confirm_decision d);


#endif
