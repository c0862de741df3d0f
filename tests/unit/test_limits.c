/*
 * broker/limits.h, without processes: what an intent that cannot be told
 * apart gets, and the windows of min_interval_ms and dedupe_ms measured
 * on the clocks given, not on the machine's.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "broker/limits.h"
#include "policy/load.h"

static const char limits_policy[] =
	"{\"sallyport\": 1, \"limits\": {\"dedupe_ms\": 500},\n"
	"\"targets\": {\"api\": {\"type\": \"http\", "
	"\"base_url\": \"http://127.0.0.1:9\"}},\n"
	"\"tools\": [{\"name\": \"poll\", \"description\": \"d\", "
	"\"target\": \"api\", \"scope\": \"read\",\n"
	"\"http\": {\"method\": \"GET\", \"path\": \"/p/{id}\"},\n"
	"\"limits\": {\"min_interval_ms\": 1000},\n"
	"\"params\": {\"id\": {\"type\": \"integer\"}}},\n"
	"{\"name\": \"put\", \"description\": \"d\", \"mutating\": true, "
	"\"target\": \"api\", \"scope\": \"read\",\n"
	"\"http\": {\"method\": \"PUT\", \"path\": \"/p/{id}\"},\n"
	"\"params\": {\"id\": {\"type\": \"integer\"}}}],\n"
	"\"profiles\": {\"default\": {\"scopes\": [\"read\"]}}}\n";

static struct policy *
limits_test_policy(void)
{
	struct policy_diags diags = { 0 };
	struct policy *p = policy_load("t.json", limits_policy,
	    sizeof(limits_policy) - 1, &diags);

	cr_assert_not_null(p);
	policy_diags_free(&diags);
	return p;
}

static void
intent_of(struct record_audit_event *ev, uint8_t (*digest)[HASH_SHA256_LEN],
    uint32_t tool, uint64_t call, int value)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = RECORD_AUDIT_INTENT;
	ev->tool_index = tool;
	ev->call_id = call;
	ev->shape_count = ev->digest_count = 1;
	hash_sha256(&value, sizeof(value), digest[0]);
	ev->digests = digest;
}

Test(limits, an_intent_without_digests_is_refused)
{
	struct policy *p = limits_test_policy();
	struct limits *l = limits_new(p, NULL, "uid:1");
	uint8_t digest[1][HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;

	intent_of(&ev, digest, 0, 1, 7);
	ev.digest_count = 0;
	cr_assert_eq(limits_decide(l, &ev, 0, 0, &d), LIMITS_DENIED);
	cr_assert_str_eq(d.limit, "digests");
	intent_of(&ev, digest, 1, 1, 7);
	ev.digest_count = 0;
	cr_assert_eq(limits_decide(l, &ev, 0, 0, &d), LIMITS_DENIED,
	    "not even a duplicate could be told");
	limits_free(l);
	policy_free(p);
}

Test(limits, windows_are_measured_on_the_monotonic_clock_given)
{
	struct policy *p = limits_test_policy();
	struct limits *l = limits_new(p, NULL, "uid:1");
	uint8_t digest[1][HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;

	intent_of(&ev, digest, 0, 1, 7);
	cr_assert_eq(limits_decide(l, &ev, 5000, 0, &d), LIMITS_PASS);
	limits_commit(l, &ev, &d, 5000);
	intent_of(&ev, digest, 0, 2, 7);
	cr_assert_eq(limits_decide(l, &ev, 5999, 0, &d), LIMITS_DENIED);
	cr_assert_eq(limits_decide(l, &ev, 6000, 0, &d), LIMITS_PASS);
	/* a mutating call: a duplicate while open and 500 ms after its end */
	intent_of(&ev, digest, 1, 3, 7);
	cr_assert_eq(limits_decide(l, &ev, 7000, 0, &d), LIMITS_PASS);
	limits_commit(l, &ev, &d, 7000);
	intent_of(&ev, digest, 1, 4, 7);
	cr_assert_eq(limits_decide(l, &ev, 90000, 0, &d), LIMITS_DUPLICATE);
	cr_assert_eq(d.first_call, 3);
	limits_end(l, 3, 90000);
	cr_assert_eq(limits_decide(l, &ev, 90499, 0, &d), LIMITS_DUPLICATE);
	cr_assert_eq(limits_decide(l, &ev, 90500, 0, &d), LIMITS_PASS);
	limits_free(l);
	policy_free(p);
}
