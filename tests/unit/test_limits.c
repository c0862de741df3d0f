/*
 * state/limits.h, without processes: what an intent that cannot be told
 * apart gets, the windows of min_interval_ms and dedupe_ms measured on
 * the clocks given, not on the machine's, min_interval_ms shared through
 * a state_dir, and the recent-calls caps in memory and from state_dir.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state/limits.h"
#include "state/state_dir.h"
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
	struct limits *l = limits_new(p, NULL, NULL, "uid:1");
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
	struct limits *l = limits_new(p, NULL, NULL, "uid:1");
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

/* Calls remembered past LIMITS_RECENT_MAX, none expired: the next new one
 * is refused, not let through unchecked; a known one is still told. */
Test(limits, past_the_recent_calls_kept_a_new_call_is_refused)
{
	struct policy *p = limits_test_policy();
	struct limits *l = limits_new(p, NULL, NULL, "uid:1");
	uint8_t digest[1][HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;
	int i;

	for (i = 0; i < LIMITS_RECENT_MAX; i++) {
		intent_of(&ev, digest, 1, (uint64_t)i + 1, 1000 + i);
		cr_assert_eq(limits_decide(l, &ev, 7000, 0, &d), LIMITS_PASS,
		    "call %d", i);
		limits_commit(l, &ev, &d, 7000);
	}
	intent_of(&ev, digest, 1, 99999, -3);
	cr_assert_eq(limits_decide(l, &ev, 7001, 0, &d), LIMITS_DENIED);
	cr_assert_str_eq(d.limit, "recent_calls");
	cr_assert_eq(d.count, LIMITS_RECENT_MAX);
	intent_of(&ev, digest, 0, 99999, -3);
	cr_assert_eq(limits_decide(l, &ev, 7001, 0, &d), LIMITS_DENIED,
	    "a min_interval_ms call is held there too");
	intent_of(&ev, digest, 1, 99999, 1000 + 17);
	cr_assert_eq(limits_decide(l, &ev, 7001, 0, &d), LIMITS_DUPLICATE);
	cr_assert_eq(d.first_call, 18);
	/* one ends, and once dedupe_ms passed its place is free */
	limits_end(l, 18, 8000);
	intent_of(&ev, digest, 1, 99999, -3);
	cr_assert_eq(limits_decide(l, &ev, 8499, 0, &d), LIMITS_DENIED);
	cr_assert_eq(limits_decide(l, &ev, 8500, 0, &d), LIMITS_PASS);
	limits_free(l);
	policy_free(p);
}

static char *
limits_test_dir(void)
{
	static char dir[] = "/tmp/sp-test-limits-XXXXXX";

	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static void
limits_test_rmdir(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, LIMITS_STATE_FILE);
	(void)unlink(path);
	(void)rmdir(dir);
}

#define WALL	1780000000000ull	/* 2026, in ms */

/* Two sessions on one state_dir: min_interval_ms is the host's. */
Test(limits, min_interval_is_shared_through_state_dir)
{
	struct policy *p = limits_test_policy();
	char *dir = limits_test_dir();
	struct state_file *fa = state_file_open(dir, LIMITS_STATE_FILE);
	struct state_file *fb = state_file_open(dir, LIMITS_STATE_FILE);
	struct limits *a = limits_new(p, fa, NULL, "uid:1");
	struct limits *b = limits_new(p, fb, NULL, "uid:1");
	struct limits *other = limits_new(p, fb, NULL, "uid:2");
	uint8_t digest[1][HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;

	cr_assert(fa != NULL && fb != NULL && a != NULL && b != NULL);
	intent_of(&ev, digest, 0, 1, 7);
	cr_assert_eq(limits_decide(a, &ev, 100, WALL, &d), LIMITS_PASS);
	limits_commit(a, &ev, &d, 100);
	/* b's own memory has never seen it: the file told it */
	cr_assert_eq(limits_decide(b, &ev, 5, WALL + 999, &d), LIMITS_DENIED);
	cr_assert_str_eq(d.limit, "min_interval_ms");
	cr_assert(strstr(d.message, "999 ms ago by uid:1") != NULL, "%s",
	    d.message);
	cr_assert_eq(limits_decide(b, &ev, 5, WALL - 60000, &d), LIMITS_DENIED,
	    "a clock set back has not passed the interval");
	cr_assert_eq(limits_decide(other, &ev, 5, WALL + 10, &d), LIMITS_PASS,
	    "another uid's calls are its own");
	intent_of(&ev, digest, 0, 2, 8);
	cr_assert_eq(limits_decide(b, &ev, 5, WALL + 10, &d), LIMITS_PASS,
	    "another value");
	intent_of(&ev, digest, 0, 3, 7);
	cr_assert_eq(limits_decide(b, &ev, 5, WALL + 1000, &d), LIMITS_PASS);
	limits_commit(b, &ev, &d, 5);
	/* and a sees b's, though its own memory holds an older one */
	cr_assert_eq(limits_decide(a, &ev, 1100, WALL + 1500, &d),
	    LIMITS_DENIED);
	cr_assert_eq(limits_decide(a, &ev, 1100, WALL + 2000, &d),
	    LIMITS_PASS);
	limits_free(a);
	limits_free(b);
	limits_free(other);
	state_file_free(fa);
	state_file_free(fb);
	limits_test_rmdir(dir);
	policy_free(p);
}

/* More keys in state_dir than a session holds, none expired: every
 * min_interval_ms call is refused until the last one read expires. */
Test(limits, past_the_shared_calls_held_a_new_call_is_refused)
{
	struct policy *p = limits_test_policy();
	char *dir = limits_test_dir();
	char path[256], hex[2 * HASH_SHA256_LEN + 1];
	uint8_t digest[1][HASH_SHA256_LEN], key[HASH_SHA256_LEN];
	struct record_audit_event ev;
	struct limits_decision d;
	struct state_file *sf;
	struct limits *l;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, LIMITS_STATE_FILE);
	cr_assert_not_null(f = fopen(path, "w"));
	for (i = 0; i <= LIMITS_RECENT_MAX; i++) {
		hash_sha256(&i, sizeof(i), key);
		hash_hex(key, sizeof(key), hex);
		fprintf(f, "{\"day\":%llu,\"tool\":\"poll\",\"who\":\"uid:1\","
		    "\"key\":\"%s\",\"start\":%llu}\n", WALL / 86400000,
		    hex, WALL + (i == LIMITS_RECENT_MAX ? 500 : 0));
	}
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(sf = state_file_open(dir, LIMITS_STATE_FILE));
	cr_assert_not_null(l = limits_new(p, sf, NULL, "uid:1"));
	intent_of(&ev, digest, 0, 1, 7);
	cr_assert_eq(limits_decide(l, &ev, 0, WALL + 10, &d), LIMITS_DENIED);
	cr_assert_str_eq(d.limit, "recent_calls");
	cr_assert(strstr(d.message, "allowed again at") != NULL, "%s",
	    d.message);
	cr_assert_eq(limits_decide(l, &ev, 0, WALL + 1499, &d), LIMITS_DENIED,
	    "until the interval of the last call read ends");
	cr_assert_eq(limits_decide(l, &ev, 0, WALL + 1500, &d), LIMITS_PASS);
	limits_free(l);
	state_file_free(sf);
	limits_test_rmdir(dir);
	policy_free(p);
}
