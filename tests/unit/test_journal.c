/*
 * state/journal.h in memory, on given clocks: past JOURNAL_MAX keys, with
 * none expired, a call is refused rather than sent unrecorded.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "state/journal.h"
#include "policy/load.h"

static const char journal_policy[] =
	"{\"sallyport\": 1,\n"
	"\"limits\": {\"call_timeout_ms\": 10000},\n"
	"\"targets\": {\"api\": {\"type\": \"http\", "
	"\"base_url\": \"http://127.0.0.1:9\"}},\n"
	"\"tools\": [{\"name\": \"put\", \"description\": \"d\", "
	"\"mutating\": true, \"target\": \"api\", \"scope\": \"rw\",\n"
	"\"http\": {\"method\": \"PUT\", \"path\": \"/p/{id}\"},\n"
	"\"idempotency\": {\"window_s\": 60, "
	"\"header\": \"Idempotency-Key\"},\n"
	"\"params\": {\"id\": {\"type\": \"integer\"}}}],\n"
	"\"profiles\": {\"default\": {\"scopes\": [\"rw\"]}}}\n";

static struct policy *
journal_test_policy(void)
{
	struct policy_diags diags = { 0 };
	struct policy *p = policy_load("t.json", journal_policy,
	    sizeof(journal_policy) - 1, &diags);

	cr_assert_not_null(p);
	policy_diags_free(&diags);
	return p;
}

static void
intent_of(struct record_audit_event *ev, uint8_t (*digest)[HASH_SHA256_LEN],
    uint64_t call, int value)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = RECORD_AUDIT_INTENT;
	ev->call_id = call;
	ev->shape_count = ev->digest_count = 1;
	hash_sha256(&value, sizeof(value), digest[0]);
	ev->digests = digest;
}

#define WALL	1780000000000ull	/* 2026, in ms */

Test(journal, past_the_keys_held_a_new_call_is_refused)
{
	struct policy *p = journal_test_policy();
	struct journal *j = journal_new(p, NULL, NULL, "default");
	uint8_t digest[1][HASH_SHA256_LEN];
	char key[JOURNAL_KEY_HEX + 1], message[512];
	struct record_audit_event ev;
	int i;

	cr_assert_not_null(j);
	for (i = 0; i < JOURNAL_MAX; i++) {
		intent_of(&ev, digest, (uint64_t)i + 1, -500 + 3 * i);
		cr_assert_eq(journal_check(j, &ev, WALL, key, message,
		    sizeof(message)), JOURNAL_PASS, "call %d", i);
		cr_assert(journal_begin(j, &ev, key, WALL, message,
		    sizeof(message)));
	}
	intent_of(&ev, digest, 99999, 1 << 30);
	cr_assert_eq(journal_check(j, &ev, WALL + 1, key, message,
	    sizeof(message)), JOURNAL_REFUSED);
	cr_assert(strstr(message, "holds 4096 keys") != NULL, "%s", message);
	cr_assert_null(journal_key_of(j, 99999), "nothing pending for it");
	/* the ones held are done, and expire once window_s passed */
	for (i = 0; i < JOURNAL_MAX; i++)
		journal_end(j, (uint64_t)i + 1, RECORD_OUTCOME_OK, 201,
		    WALL + 1000);
	cr_assert_eq(journal_check(j, &ev, WALL + 60999, key, message,
	    sizeof(message)), JOURNAL_REFUSED, "none expired yet");
	cr_assert_eq(journal_check(j, &ev, WALL + 61000, key, message,
	    sizeof(message)), JOURNAL_PASS, "%s", message);
	journal_abandon(j);
	journal_free(j);
	policy_free(p);
}

/*
 * What another session's (or another host's) entry says to a call now:
 * an entry stamped ahead of this clock -- a host whose clock is ahead, or
 * this one set back -- is still inside its window, never taken as expired
 * (the subtraction wrapped, and the identical call was sent again).
 */
Test(journal, an_entry_stamped_ahead_of_the_clock_still_decides)
{
	struct policy *p = journal_test_policy();
	enum journal_state now = JOURNAL_STATES;

	cr_assert(journal_state_now(p, "put", "done", WALL + 3600000, WALL,
	    &now));
	cr_assert_eq(now, JOURNAL_DONE);
	cr_assert(journal_state_now(p, "put", "pending", WALL + 5, WALL,
	    &now));
	cr_assert_eq(now, JOURNAL_PENDING);
	/* a pending entry older than twice the budget: its broker died */
	cr_assert(journal_state_now(p, "put", "pending", WALL - 20000, WALL,
	    &now));
	cr_assert_eq(now, JOURNAL_UNKNOWN);
	cr_assert_not(journal_state_now(p, "put", "done", WALL - 60000, WALL,
	    &now), "its window of 60 s has passed");
	cr_assert_not(journal_state_now(p, "gone", "done", WALL, WALL, &now));
	cr_assert_not(journal_state_now(p, "put", "Done", WALL, WALL, &now));
	cr_assert_not(journal_state_now(p, "put", NULL, WALL, WALL, &now));
	policy_free(p);
}
