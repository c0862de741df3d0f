/*
 * Challenges and their verification (executor/confirm.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "executor/confirm.h"
#include "policy/args.h"

#define CONFIRM_KEY_LEN 32
/* Domain separation: this MAC is for nothing else. */
static const char confirm_label[] = "sallyport confirm v1";

struct confirm_spent {
	uint8_t nonce[RECORD_CONFIRM_NONCE_LEN];
	uint64_t expiry_ms;
};

struct confirm_keeper {
	uint8_t key[CONFIRM_KEY_LEN];
	uint8_t issuer[CONFIRM_ISSUER_LEN];	/* each nonce's first bytes */
	/*
	 * Added to the monotonic clock for expiries: a requestState shows
	 * its expiry to the client, and the bare clock would tell it the
	 * host's uptime.  Below 2^48 ms, so no sum wraps.
	 */
	uint64_t epoch_ms;
	struct confirm_spent *spent;	/* max_spent slots */
	size_t spent_count;
	size_t max_spent;
};

static bool
confirm_random(void *out, size_t len)
{
	uint8_t *p = out;
	ssize_t n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_error("getrandom: %s", strerror(errno));
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Not all zero: the issuer id of some executor. */
static bool
confirm_issuer_named(const uint8_t issuer[CONFIRM_ISSUER_LEN])
{
	size_t i;

	for (i = 0; i < CONFIRM_ISSUER_LEN; i++)
		if (issuer[i] != 0)
			return true;
	return false;
}

/*
 * A challenge that did not verify: another executor's (its session
 * ended), or forged (this one's, changed, or unreadable).
 */
static enum confirm_decision
confirm_unverified(const struct confirm_keeper *k,
    const struct record_confirm_challenge *c)
{
	if (confirm_issuer_named(c->nonce) &&
	    memcmp(c->nonce, k->issuer, sizeof(k->issuer)) != 0)
		return CONFIRM_SESSION_ENDED;
	return CONFIRM_FORGED;
}

struct confirm_keeper *
confirm_keeper_new(size_t max_spent)
{
	struct confirm_keeper *k = calloc(1, sizeof(*k));

	if (max_spent == 0)
		max_spent = 1;
	if (k == NULL || (k->spent = calloc(max_spent,
	    sizeof(*k->spent))) == NULL) {
		log_error("out of memory for the confirmation keeper");
		free(k);
		return NULL;
	}
	k->max_spent = max_spent;
	if (!confirm_random(k->key, sizeof(k->key)) ||
	    !confirm_random(k->issuer, sizeof(k->issuer)) ||
	    !confirm_random(&k->epoch_ms, sizeof(k->epoch_ms))) {
		confirm_keeper_free(k);
		return NULL;
	}
	/* all zero is the unreadable requestState the frontend passes on */
	if (!confirm_issuer_named(k->issuer))
		k->issuer[0] = 1;
	k->epoch_ms &= (UINT64_C(1) << 48) - 1;
	return k;
}

void
confirm_keeper_free(struct confirm_keeper *k)
{
	if (k == NULL)
		return;
	explicit_bzero(k->key, sizeof(k->key));
	free(k->spent);
	free(k);
}

/*
 * The MAC over what section 8.1 binds.  The values are encoded by the
 * action record's one encoder, so "the same values" means the same
 * bytes on the wire, kind included.
 */
static bool
confirm_mac(const struct confirm_keeper *k, const struct child_context *ctx,
    uint32_t tool_index, const struct value *args, size_t arg_count,
    const struct record_confirm_challenge *c, uint8_t out[HASH_SHA256_LEN])
{
	struct record_action a;
	struct buf b;
	const char *profile = ctx->profile != NULL ? ctx->profile->name : "";
	bool ok;

	memset(&a, 0, sizeof(a));
	a.tool_index = tool_index;
	memcpy(a.fingerprint, ctx->fingerprint, HASH_SHA256_LEN);
	a.args = (struct value *)args;
	a.arg_count = arg_count;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	ok = buf_put_string(&b, confirm_label, sizeof(confirm_label) - 1) ==
	    RECORD_OK &&
	    buf_put_string(&b, profile, strlen(profile)) == RECORD_OK &&
	    record_action_encode(&a, &ctx->limits, &b) == RECORD_OK &&
	    buf_put_u64(&b, c->expiry_ms) == RECORD_OK &&
	    buf_put_raw(&b, c->nonce, sizeof(c->nonce)) == RECORD_OK &&
	    hash_hmac_sha256(k->key, sizeof(k->key), buf_ptr(&b),
	    buf_len(&b), out);
	buf_free(&b);
	if (!ok)
		log_error("cannot encode the call for its confirmation MAC");
	return ok;
}

bool
confirm_issue(struct confirm_keeper *k, const struct child_context *ctx,
    uint32_t tool_index, const struct value *args, size_t arg_count,
    uint32_t timeout_s, struct record_confirm_challenge *out)
{
	_Static_assert(RECORD_CONFIRM_NONCE_LEN >= CONFIRM_ISSUER_LEN + 12,
	    "a nonce keeps 96 random bits after the issuer id");
	memset(out, 0, sizeof(*out));
	memcpy(out->nonce, k->issuer, sizeof(k->issuer));
	if (!confirm_random(out->nonce + sizeof(k->issuer),
	    sizeof(out->nonce) - sizeof(k->issuer)))
		return false;
	out->expiry_ms = k->epoch_ms + clock_monotonic_ms() +
	    (uint64_t)timeout_s * 1000u;
	return confirm_mac(k, ctx, tool_index, args, arg_count, out, out->mac);
}

/* Forgets the nonces whose challenge expired: they cannot verify again. */
static void
confirm_spent_prune(struct confirm_keeper *k, uint64_t now)
{
	size_t i = 0;

	while (i < k->spent_count) {
		if (k->spent[i].expiry_ms <= now)
			k->spent[i] = k->spent[--k->spent_count];
		else
			i++;
	}
}

static bool
confirm_spent_has(const struct confirm_keeper *k,
    const struct record_confirm_challenge *c)
{
	size_t i;

	for (i = 0; i < k->spent_count; i++)
		if (memcmp(k->spent[i].nonce, c->nonce, sizeof(c->nonce)) == 0)
			return true;
	return false;
}

/* false when the list is full: the answer is then refused as replayed. */
static bool
confirm_spend(struct confirm_keeper *k,
    const struct record_confirm_challenge *c)
{
	if (k->spent_count >= k->max_spent) {
		log_error("%zu confirmations unexpired: refusing more",
		    k->spent_count);
		return false;
	}
	memcpy(k->spent[k->spent_count].nonce, c->nonce, sizeof(c->nonce));
	k->spent[k->spent_count].expiry_ms = c->expiry_ms;
	k->spent_count++;
	return true;
}

/* The canonical form the broker keys limits and the journal by
 * (common/value.h): "042.50" retyped is the call's "42.5". */
static bool
confirm_value_equal(const struct value *a, const struct value *b)
{
	uint8_t da[HASH_SHA256_LEN], db[HASH_SHA256_LEN];

	value_digest(a, da);
	value_digest(b, db);
	return memcmp(da, db, sizeof(da)) == 0;
}

/* The typed text, read as the retype param's value, is the call's. */
static bool
confirm_retype_ok(const struct policy_tool *tool, const struct value *args,
    size_t arg_count, const struct record_confirm_answer *answer)
{
	size_t i = tool->confirm_spec.retype;
	struct value typed;
	bool same;

	if (i == POLICY_CONFIRM_NO_RETYPE)
		return true;
	if (!answer->has_retyped || i >= arg_count ||
	    !policy_arg_from_text(&tool->params[i], answer->retyped.ptr,
	    &typed))
		return false;
	same = confirm_value_equal(&typed, &args[i]);
	value_free(&typed);
	return same;
}

/*
 * The challenge's own checks: the MAC for these values, the expiry, and
 * the nonce spent here (CONFIRM_ACCEPTED: it verified and is now spent).
 */
static enum confirm_decision
confirm_spend_verified(struct confirm_keeper *k,
    const struct child_context *ctx, uint32_t tool_index,
    const struct value *args, size_t arg_count,
    const struct record_confirm_challenge *c)
{
	uint8_t mac[HASH_SHA256_LEN];
	uint64_t now = k->epoch_ms + clock_monotonic_ms();

	if (!confirm_mac(k, ctx, tool_index, args, arg_count, c, mac) ||
	    !hash_equal_ct(mac, c->mac, sizeof(mac)))
		return confirm_unverified(k, c);
	if (c->expiry_ms <= now)
		return CONFIRM_EXPIRED;
	confirm_spent_prune(k, now);
	if (confirm_spent_has(k, c) || !confirm_spend(k, c))
		return CONFIRM_REPLAYED;
	return CONFIRM_ACCEPTED;
}

enum confirm_decision
confirm_verify(struct confirm_keeper *k, const struct child_context *ctx,
    uint32_t tool_index, const struct value *args, size_t arg_count,
    const struct record_confirm_answer *answer)
{
	const struct policy_tool *tool = &ctx->policy->tools[tool_index];
	enum confirm_decision d;

	switch (answer->verdict) {
	case RECORD_CONFIRM_ACCEPT:
		break;
	/* the human's "no" is final: its challenge is spent as an accept's
	 * is, so it cannot come back with an accept (a forged one spends
	 * nothing and is a "no" all the same) */
	case RECORD_CONFIRM_DECLINE:
		(void)confirm_spend_verified(k, ctx, tool_index, args,
		    arg_count, &answer->challenge);
		return CONFIRM_DECLINED;
	case RECORD_CONFIRM_CANCEL:
		(void)confirm_spend_verified(k, ctx, tool_index, args,
		    arg_count, &answer->challenge);
		return CONFIRM_CANCELLED;
	case RECORD_CONFIRM_UNSUPPORTED:
		return CONFIRM_UNSUPPORTED;
	case RECORD_CONFIRM_RELAYED:
		return CONFIRM_RELAYED;
	}
	d = confirm_spend_verified(k, ctx, tool_index, args, arg_count,
	    &answer->challenge);
	if (d != CONFIRM_ACCEPTED)
		return d;
	if (!confirm_retype_ok(tool, args, arg_count, answer))
		return CONFIRM_WRONG_VALUE;
	return CONFIRM_ACCEPTED;
}

const char *
confirm_decision_token(enum confirm_decision d)
{
	switch (d) {
	case CONFIRM_ASKED: return "asked";
	case CONFIRM_ACCEPTED: return "accepted";
	case CONFIRM_DECLINED: return "declined";
	case CONFIRM_CANCELLED: return "cancelled";
	case CONFIRM_UNSUPPORTED: return "unsupported";
	case CONFIRM_RELAYED: return "relayed";
	case CONFIRM_FORGED: return "forged";
	case CONFIRM_EXPIRED: return "expired";
	case CONFIRM_REPLAYED: return "replayed";
	case CONFIRM_WRONG_VALUE: return "wrong-value";
	case CONFIRM_WITHDRAWN: return "withdrawn";
	case CONFIRM_OPERATOR_ONLY: return "not-the-operator";
	case CONFIRM_OPERATOR_DENIED: return "denied";
	case CONFIRM_SESSION_ENDED: return "expired";
	}
	return "unknown";
}

const char *
confirm_decision_message(enum confirm_decision d)
{
	switch (d) {
	case CONFIRM_ASKED:
		return "waiting for a human's confirmation";
	case CONFIRM_ACCEPTED:
		return "confirmed";
	case CONFIRM_DECLINED:
		return "the human declined this action; nothing was sent";
	case CONFIRM_CANCELLED:
		return "the human dismissed the confirmation; nothing was sent";
	case CONFIRM_UNSUPPORTED:
		return "this tool needs a human's confirmation, and this client "
		    "cannot ask for one; nothing was sent";
	case CONFIRM_RELAYED:
		return "the question went to the client; the call comes again "
		    "with the answer";
	case CONFIRM_FORGED:
		return "the confirmation does not match this action and its "
		    "values; nothing was sent";
	case CONFIRM_EXPIRED:
		return "no confirmation came before it expired; nothing was "
		    "sent";
	case CONFIRM_REPLAYED:
		return "this confirmation was already used; nothing was sent";
	case CONFIRM_WRONG_VALUE:
		return "the value typed to confirm is not this call's; nothing "
		    "was sent";
	case CONFIRM_WITHDRAWN:
		return "cancelled while waiting for confirmation; nothing was "
		    "sent";
	case CONFIRM_OPERATOR_ONLY:
		return "this tool is approved by an operator through sp "
		    "approve, never through the client; nothing was sent";
	case CONFIRM_OPERATOR_DENIED:
		return "an operator denied this action (sp approve --deny); "
		    "nothing was sent";
	case CONFIRM_SESSION_ENDED:
		return "this confirmation expired with the session that issued "
		    "it (the server was restarted since); call the tool again "
		    "to be asked anew; nothing was sent";
	}
	return "not confirmed; nothing was sent";
}
