/*
 * The broker's limits and duplicate detection (state/limits.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state/limits.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "common/hex.h"
#include "common/json_number.h"
#include "common/log.h"

#define LIMITS_DAY_MS	86400000u
#define LIMITS_EXACT_MAX 9007199254740992.0	/* 2^53: a double's integers */

/* One param's digests seen this session: at most its max_distinct. */
struct limits_seen {
	uint8_t (*digests)[HASH_SHA256_LEN];	/* owned, cap of them */
	size_t n, cap;
};

struct limits_tool {
	uint64_t day;			/* UTC day of day_count */
	uint64_t day_count;
	struct limits_seen *seen;	/* per param when max_distinct; owned */
};

/* A call remembered for min_interval_ms and dedupe_ms: one per key. */
struct limits_recent {
	uint8_t key[HASH_SHA256_LEN];
	uint32_t tool_index;
	uint64_t call_id;
	uint64_t started_ms;		/* monotonic */
	uint64_t ended_ms;		/* when !open */
	bool open;
};

/* A call of any session of the host, read from state_dir for
 * min_interval_ms: one per key, the latest start. */
struct limits_shared {
	uint8_t key[HASH_SHA256_LEN];
	uint32_t tool_index;
	uint64_t started_ms;		/* wall clock: other processes' too */
};

struct limits {
	const struct policy *policy;
	struct state_file *state;	/* borrowed; NULL: per_day in memory */
	struct pg_state *pg;		/* borrowed; not NULL: decided there */
	char who[LIMITS_WHO_MAX];	/* "uid:1001" or "profile:ops" */
	struct limits_tool *tools;	/* owned, one per policy tool */
	struct limits_recent *recent;	/* owned, LIMITS_RECENT_MAX */
	size_t n_recent;
	struct limits_shared *shared;	/* owned, LIMITS_RECENT_MAX */
	size_t n_shared;
	/* a call read from state_dir found the table full: until then
	 * every min_interval_ms call is refused, since it may be that one */
	uint64_t shared_lost_until;	/* wall ms */
	uint64_t wall_ms;		/* of the decision reading lines */
};

struct limits *
limits_new(const struct policy *policy, struct state_file *state,
    struct pg_state *pg, const char *who)
{
	struct limits *l;
	size_t i;

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->tools = calloc(policy->tool_count + 1,
	    sizeof(*l->tools))) == NULL ||
	    (l->recent = calloc(LIMITS_RECENT_MAX, sizeof(*l->recent))) ==
	    NULL || (state != NULL && (l->shared = calloc(LIMITS_RECENT_MAX,
	    sizeof(*l->shared))) == NULL))
		goto fail;
	l->policy = policy;
	l->state = state;
	l->pg = pg;
	snprintf(l->who, sizeof(l->who), "%s", who);
	for (i = 0; i < policy->tool_count; i++)
		if (policy->tools[i].limits.max_distinct != NULL &&
		    (l->tools[i].seen = calloc(policy->tools[i].param_count + 1,
		    sizeof(*l->tools[i].seen))) == NULL)
			goto fail;
	return l;
fail:
	log_error("out of memory");
	limits_free(l);
	return NULL;
}

void
limits_free(struct limits *l)
{
	size_t i, j;

	if (l == NULL)
		return;
	for (i = 0; l->tools != NULL && i < l->policy->tool_count; i++) {
		for (j = 0; l->tools[i].seen != NULL &&
		    j < l->policy->tools[i].param_count; j++)
			free(l->tools[i].seen[j].digests);
		free(l->tools[i].seen);
	}
	free(l->tools);
	free(l->recent);
	free(l->shared);
	free(l);
}

static void
limits_key(const struct policy_tool *tool,
    const struct record_audit_event *ev, uint8_t key[HASH_SHA256_LEN])
{
	struct hash_sha256_ctx h;
	size_t i;

	hash_sha256_init(&h);
	hash_sha256_update(&h, tool->name, strlen(tool->name) + 1);
	for (i = 0; i < ev->digest_count; i++)
		hash_sha256_update(&h, ev->digests[i], HASH_SHA256_LEN);
	hash_sha256_final(&h, key);
}

/* A UTC time for people: "2026-12-02T00:00:00.000Z". */
static void
limits_format_time(uint64_t wall_ms, char *out, size_t size)
{
	time_t s = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL) {
		snprintf(out, size, "unknown");
		return;
	}
	snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (unsigned)(wall_ms % 1000));
}

/* Nothing more to check with r: both of its windows have passed. */
static bool
limits_recent_expired(const struct limits *l, const struct limits_recent *r,
    uint64_t mono_ms)
{
	const struct policy_tool *tool = &l->policy->tools[r->tool_index];

	if (r->open && tool->mutating)
		return false;
	if (mono_ms - r->started_ms < tool->limits.min_interval_ms)
		return false;
	return !tool->mutating ||
	    mono_ms - r->ended_ms >= l->policy->limits.dedupe_ms;
}

static void
limits_prune(struct limits *l, uint64_t mono_ms)
{
	size_t i = 0;

	while (i < l->n_recent)
		if (limits_recent_expired(l, &l->recent[i], mono_ms))
			l->recent[i] = l->recent[--l->n_recent];
		else
			i++;
}

static struct limits_recent *
limits_recent_find(struct limits *l, const uint8_t key[HASH_SHA256_LEN])
{
	size_t i;

	for (i = 0; i < l->n_recent; i++)
		if (memcmp(l->recent[i].key, key, HASH_SHA256_LEN) == 0)
			return &l->recent[i];
	return NULL;
}

static bool
limits_remembers(const struct policy_tool *tool)
{
	return tool->mutating || tool->limits.min_interval_ms != 0;
}

static enum limits_verdict
limits_deny(struct limits_decision *d, const char *limit, uint64_t count,
    uint64_t max)
{
	d->verdict = LIMITS_DENIED;
	d->limit = limit;
	d->count = count;
	d->max = max;
	return LIMITS_DENIED;
}

/* The recent calls: a duplicate, or one too close to this one. */
static enum limits_verdict
limits_check_recent(struct limits *l, const struct policy_tool *tool,
    uint64_t mono_ms, uint64_t wall_ms, struct limits_decision *d)
{
	struct limits_recent *r = limits_recent_find(l, d->key);

	if (r != NULL && tool->mutating && (r->open ||
	    mono_ms - r->ended_ms < l->policy->limits.dedupe_ms)) {
		d->verdict = LIMITS_DUPLICATE;
		d->first_call = r->call_id;
		return LIMITS_DUPLICATE;
	}
	if (r != NULL && mono_ms - r->started_ms <
	    tool->limits.min_interval_ms) {
		limits_format_time(wall_ms + (r->started_ms +
		    tool->limits.min_interval_ms - mono_ms), d->resets,
		    sizeof(d->resets));
		snprintf(d->message, sizeof(d->message), "denied by limit "
		    "min_interval_ms of %s: an identical call was made %" PRIu64
		    " ms ago, and %" PRIu32 " ms must pass between two; allowed "
		    "again at %s", tool->name, mono_ms - r->started_ms,
		    tool->limits.min_interval_ms, d->resets);
		return limits_deny(d, "min_interval_ms", 1, 1);
	}
	if (r == NULL && limits_remembers(tool) &&
	    l->n_recent == LIMITS_RECENT_MAX) {
		snprintf(d->resets, sizeof(d->resets), "when one expires");
		snprintf(d->message, sizeof(d->message), "denied: %d recent "
		    "calls are held for min_interval_ms and duplicate checks, "
		    "the most this session keeps; retry once one expires",
		    LIMITS_RECENT_MAX);
		return limits_deny(d, "recent_calls", LIMITS_RECENT_MAX,
		    LIMITS_RECENT_MAX);
	}
	return LIMITS_PASS;
}

/* state_dir's lines (their format: state/limits.h), read under the
 * lock: the file starts over. */
static void
limits_state_reset(void *arg)
{
	struct limits *l = arg;
	size_t i;

	for (i = 0; i < l->policy->tool_count; i++) {
		l->tools[i].day = 0;
		l->tools[i].day_count = 0;
	}
	l->n_shared = 0;
	l->shared_lost_until = 0;
}

/* A start later than now (the clock was set back) has not passed. */
static bool
limits_shared_expired(const struct limits *l, const struct limits_shared *r,
    uint64_t wall_ms)
{
	return r->started_ms <= wall_ms && wall_ms - r->started_ms >=
	    l->policy->tools[r->tool_index].limits.min_interval_ms;
}

static struct limits_shared *
limits_shared_find(struct limits *l, const uint8_t key[HASH_SHA256_LEN])
{
	size_t i;

	for (i = 0; i < l->n_shared; i++)
		if (memcmp(l->shared[i].key, key, HASH_SHA256_LEN) == 0)
			return &l->shared[i];
	return NULL;
}

static void
limits_shared_prune(struct limits *l, uint64_t wall_ms)
{
	size_t i = 0;

	while (i < l->n_shared)
		if (limits_shared_expired(l, &l->shared[i], wall_ms))
			l->shared[i] = l->shared[--l->n_shared];
		else
			i++;
}

/* A call of tool_index with key started at started_ms, by any session. */
static void
limits_shared_note(struct limits *l, uint32_t tool_index,
    const uint8_t key[HASH_SHA256_LEN], uint64_t started_ms)
{
	struct limits_shared *r, note = { .tool_index = tool_index,
	    .started_ms = started_ms };
	uint64_t until;

	memcpy(note.key, key, HASH_SHA256_LEN);
	if (limits_shared_expired(l, &note, l->wall_ms))
		return;
	if ((r = limits_shared_find(l, key)) != NULL) {
		if (started_ms > r->started_ms)
			r->started_ms = started_ms;
		return;
	}
	if (l->n_shared == LIMITS_RECENT_MAX)
		limits_shared_prune(l, l->wall_ms);
	if (l->n_shared < LIMITS_RECENT_MAX) {
		l->shared[l->n_shared++] = note;
		return;
	}
	until = started_ms +
	    l->policy->tools[tool_index].limits.min_interval_ms;
	if (until > l->shared_lost_until)
		l->shared_lost_until = until;
}

static void
limits_state_line_key(struct limits *l, uint32_t tool_index, const cJSON *o)
{
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
	const cJSON *start = cJSON_GetObjectItemCaseSensitive(o, "start");
	uint8_t digest[HASH_SHA256_LEN];

	if (l->policy->tools[tool_index].limits.min_interval_ms == 0 ||
	    !cJSON_IsString(key) || !cJSON_IsNumber(start) ||
	    start->valuedouble < 0 || start->valuedouble >= LIMITS_EXACT_MAX ||
	    strlen(key->valuestring) != 2 * HASH_SHA256_LEN ||
	    !hex_is_lowercase(key->valuestring, 2 * HASH_SHA256_LEN) ||
	    !hex_decode_bytes(key->valuestring, digest, HASH_SHA256_LEN))
		return;		/* an old line, or not ours to read */
	limits_shared_note(l, tool_index, digest, (uint64_t)start->valuedouble);
}

static void
limits_state_line(void *arg, const char *line, size_t len)
{
	struct limits *l = arg;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const cJSON *day, *tool, *who;
	struct limits_tool *lt;
	size_t i;

	day = cJSON_GetObjectItemCaseSensitive(o, "day");
	tool = cJSON_GetObjectItemCaseSensitive(o, "tool");
	who = cJSON_GetObjectItemCaseSensitive(o, "who");
	if (!cJSON_IsNumber(day) || day->valuedouble < 0 ||
	    !cJSON_IsString(tool) || !cJSON_IsString(who) ||
	    strcmp(who->valuestring, l->who) != 0)
		goto out;	/* another's, or not ours to read: skipped */
	for (i = 0; i < l->policy->tool_count; i++)
		if (strcmp(l->policy->tools[i].name, tool->valuestring) == 0)
			break;
	if (i == l->policy->tool_count)
		goto out;
	lt = &l->tools[i];
	if ((uint64_t)day->valuedouble > lt->day) {
		lt->day = (uint64_t)day->valuedouble;
		lt->day_count = 0;
	}
	if ((uint64_t)day->valuedouble == lt->day)
		lt->day_count++;
	limits_state_line_key(l, (uint32_t)i, o);
out:
	cJSON_Delete(o);
}

/* This call's line goes in now, under the lock it was decided by. */
static bool
limits_state_append(struct limits *l, const struct policy_tool *tool,
    uint64_t day, uint64_t wall_ms, const struct limits_decision *d)
{
	char key[2 * HASH_SHA256_LEN + 1];
	cJSON *o = cJSON_CreateObject();
	char *line = NULL;
	bool ok;

	hash_hex(d->key, HASH_SHA256_LEN, key);
	ok = o != NULL && json_add_uint64(o, "day", day) &&
	    cJSON_AddStringToObject(o, "tool", tool->name) &&
	    cJSON_AddStringToObject(o, "who", l->who) &&
	    (tool->limits.min_interval_ms == 0 ||
	    (cJSON_AddStringToObject(o, "key", key) &&
	    json_add_uint64(o, "start", wall_ms))) &&
	    (line = cJSON_PrintUnformatted(o)) != NULL &&
	    state_file_append(l->state, line, strlen(line));
	cJSON_free(line);
	cJSON_Delete(o);
	return ok;
}

/* Whether counts are shared beyond this session (state_dir, PostgreSQL). */
static bool
limits_shared(const struct limits *l)
{
	return l->state != NULL || l->pg != NULL;
}

static enum limits_verdict
limits_deny_day(const struct limits *l, const struct limits_tool *lt,
    const struct policy_tool *tool, struct limits_decision *d)
{
	limits_format_time((lt->day + 1) * LIMITS_DAY_MS, d->resets,
	    sizeof(d->resets));
	snprintf(d->message, sizeof(d->message), "denied by limit per_day of "
	    "%s: %" PRIu64 " of %" PRIu32 " calls made today (UTC)%s%s; resets "
	    "at %s", tool->name, lt->day_count, tool->limits.per_day,
	    limits_shared(l) ? " by " : "", limits_shared(l) ? l->who : "",
	    d->resets);
	return limits_deny(d, "per_day", lt->day_count, tool->limits.per_day);
}

static enum limits_verdict
limits_deny_state(const struct policy_tool *tool, const char *what,
    struct limits_decision *d)
{
	snprintf(d->resets, sizeof(d->resets), "unknown");
	snprintf(d->message, sizeof(d->message), "denied: the limits of %s "
	    "could not be %s state_dir", tool->name, what);
	return limits_deny(d, tool->limits.per_day != 0 ? "per_day" :
	    "min_interval_ms", 0, tool->limits.per_day);
}

/* An identical call of any session started at started_ms, too close. */
static enum limits_verdict
limits_deny_interval(const struct limits *l, const struct policy_tool *tool,
    uint64_t started_ms, uint64_t wall_ms, struct limits_decision *d)
{
	uint64_t ago = started_ms <= wall_ms ? wall_ms - started_ms : 0;

	limits_format_time(started_ms + tool->limits.min_interval_ms,
	    d->resets, sizeof(d->resets));
	snprintf(d->message, sizeof(d->message), "denied by limit "
	    "min_interval_ms of %s: an identical call was made %" PRIu64
	    " ms ago by %s, and %" PRIu32 " ms must pass between two; "
	    "allowed again at %s", tool->name, ago, l->who,
	    tool->limits.min_interval_ms, d->resets);
	return limits_deny(d, "min_interval_ms", 1, 1);
}

/* Under the lock: an identical call of any session too close to this. */
static enum limits_verdict
limits_check_shared_interval(struct limits *l, const struct policy_tool *tool,
    uint64_t wall_ms, struct limits_decision *d)
{
	const struct limits_shared *r;

	if (tool->limits.min_interval_ms == 0)
		return LIMITS_PASS;
	if ((r = limits_shared_find(l, d->key)) != NULL &&
	    !limits_shared_expired(l, r, wall_ms))
		return limits_deny_interval(l, tool, r->started_ms, wall_ms, d);
	if (wall_ms < l->shared_lost_until) {
		limits_format_time(l->shared_lost_until, d->resets,
		    sizeof(d->resets));
		snprintf(d->message, sizeof(d->message), "denied: more than %d "
		    "recent calls in state_dir for min_interval_ms, the most "
		    "this session holds; allowed again at %s",
		    LIMITS_RECENT_MAX, d->resets);
		return limits_deny(d, "recent_calls", LIMITS_RECENT_MAX,
		    LIMITS_RECENT_MAX);
	}
	return LIMITS_PASS;
}

/* per_day and min_interval_ms with state_dir: decided, and the call's
 * line appended, under one lock, so two sessions never both pass. */
static enum limits_verdict
limits_check_state(struct limits *l, struct limits_tool *lt,
    const struct policy_tool *tool, uint64_t wall_ms,
    struct limits_decision *d)
{
	const struct state_reader reader = { limits_state_reset,
	    limits_state_line, l };
	uint64_t day = wall_ms / LIMITS_DAY_MS;
	enum limits_verdict v;

	l->wall_ms = wall_ms;
	if (!state_file_lock(l->state, &reader))
		return limits_deny_state(tool, "read from", d);
	limits_shared_prune(l, wall_ms);
	if (lt->day != day) {
		lt->day = day;
		lt->day_count = 0;
	}
	if ((v = limits_check_shared_interval(l, tool, wall_ms, d)) !=
	    LIMITS_PASS || (tool->limits.per_day != 0 &&
	    lt->day_count >= tool->limits.per_day &&
	    (v = limits_deny_day(l, lt, tool, d)) != LIMITS_PASS)) {
		state_file_unlock(l->state);
		return v;
	}
	if (!limits_state_append(l, tool, day, wall_ms, d)) {
		state_file_unlock(l->state);
		return limits_deny_state(tool, "written to", d);
	}
	lt->day_count++;	/* our line is not read back */
	if (tool->limits.min_interval_ms != 0)
		limits_shared_note(l, (uint32_t)(tool - l->policy->tools),
		    d->key, wall_ms);
	d->counted = true;
	state_file_unlock(l->state);
	return LIMITS_PASS;
}

/*
 * per_day and min_interval_ms in PostgreSQL (state/pg.h): decided and
 * counted by one call there.  No answer is a refusal: the count cannot
 * be known, so nothing is sent.
 */
static enum limits_verdict
limits_check_pg(struct limits *l, struct limits_tool *lt,
    const struct policy_tool *tool, uint64_t wall_ms,
    struct limits_decision *d)
{
	char key[2 * HASH_SHA256_LEN + 1];
	struct pg_limits_answer a;

	hash_hex(d->key, HASH_SHA256_LEN, key);
	if (!pg_take_limits(l->pg, l->who, tool->name, key, wall_ms,
	    tool->limits.per_day, tool->limits.min_interval_ms, &a)) {
		snprintf(d->resets, sizeof(d->resets), "unknown");
		snprintf(d->message, sizeof(d->message), "denied: the shared "
		    "state (PostgreSQL) is unavailable, so the limits of %s "
		    "cannot be decided; nothing was sent", tool->name);
		return limits_deny(d, tool->limits.per_day != 0 ? "per_day" :
		    "min_interval_ms", 0, tool->limits.per_day);
	}
	lt->day = wall_ms / LIMITS_DAY_MS;
	lt->day_count = a.spent;
	switch (a.verdict) {
	case PG_LIMITS_PER_DAY:
		return limits_deny_day(l, lt, tool, d);
	case PG_LIMITS_INTERVAL:
		return limits_deny_interval(l, tool, a.last_start, wall_ms, d);
	case PG_LIMITS_PASS:
		break;
	}
	d->counted = true;
	return LIMITS_PASS;
}

static enum limits_verdict
limits_check_day(struct limits *l, struct limits_tool *lt,
    const struct policy_tool *tool, uint64_t wall_ms,
    struct limits_decision *d)
{
	uint64_t day = wall_ms / LIMITS_DAY_MS;

	if (l->pg != NULL && (tool->limits.per_day != 0 ||
	    tool->limits.min_interval_ms != 0))
		return limits_check_pg(l, lt, tool, wall_ms, d);
	if (l->state != NULL && (tool->limits.per_day != 0 ||
	    tool->limits.min_interval_ms != 0))
		return limits_check_state(l, lt, tool, wall_ms, d);
	if (tool->limits.per_day == 0)
		return LIMITS_PASS;
	if (lt->day != day) {
		lt->day = day;
		lt->day_count = 0;
	}
	if (lt->day_count < tool->limits.per_day)
		return LIMITS_PASS;
	return limits_deny_day(l, lt, tool, d);
}

static bool
limits_seen_has(const struct limits_seen *s, const uint8_t *digest)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (memcmp(s->digests[i], digest, HASH_SHA256_LEN) == 0)
			return true;
	return false;
}

static enum limits_verdict
limits_check_distinct(struct limits_tool *lt, const struct policy_tool *tool,
    const struct record_audit_event *ev, struct limits_decision *d)
{
	const struct limits_seen *s;
	uint32_t max;
	size_t i;

	for (i = 0; lt->seen != NULL && i < ev->digest_count; i++) {
		s = &lt->seen[i];
		max = tool->limits.max_distinct[i];
		if (max == 0 || s->n < max ||
		    limits_seen_has(s, ev->digests[i]))
			continue;
		d->param = tool->params[i].name;
		snprintf(d->resets, sizeof(d->resets), "session-end");
		snprintf(d->message, sizeof(d->message), "denied by limit "
		    "max_distinct of %s.%s: %zu of %" PRIu32 " different values "
		    "asked this session; a value already asked still may be; "
		    "resets when the session ends", tool->name, d->param, s->n,
		    max);
		return limits_deny(d, "max_distinct", s->n, max);
	}
	return LIMITS_PASS;
}

enum limits_verdict
limits_decide(struct limits *l, const struct record_audit_event *intent,
    uint64_t mono_ms, uint64_t wall_ms, struct limits_decision *d)
{
	const struct policy_tool *tool = &l->policy->tools[intent->tool_index];
	struct limits_tool *lt = &l->tools[intent->tool_index];
	enum limits_verdict v;

	char journal[sizeof(d->journal)];

	memcpy(journal, d->journal, sizeof(journal));	/* the caller's */
	memset(d, 0, sizeof(*d));
	memcpy(d->journal, journal, sizeof(journal));
	d->verdict = LIMITS_PASS;
	if (!tool->limits.any && !tool->mutating)
		return LIMITS_PASS;
	/* without a digest per param nothing could be told apart: refused */
	if (intent->digest_count != tool->param_count) {
		snprintf(d->resets, sizeof(d->resets), "never");
		snprintf(d->message, sizeof(d->message), "denied: the call's "
		    "values could not be checked against the limits of %s",
		    tool->name);
		return limits_deny(d, "digests", intent->digest_count,
		    tool->param_count);
	}
	limits_key(tool, intent, d->key);
	limits_prune(l, mono_ms);
	if ((v = limits_check_recent(l, tool, mono_ms, wall_ms, d)) !=
	    LIMITS_PASS ||
	    (v = limits_check_distinct(lt, tool, intent, d)) != LIMITS_PASS)
		return v;
	/* last: with state_dir a call that passes is counted there now */
	return limits_check_day(l, lt, tool, wall_ms, d);
}

static void
limits_seen_add(struct limits_seen *s, const uint8_t *digest)
{
	uint8_t (*grown)[HASH_SHA256_LEN];
	size_t cap;

	if (limits_seen_has(s, digest))
		return;
	if (s->n == s->cap) {
		cap = s->cap == 0 ? 8 : s->cap * 2;
		if ((grown = realloc(s->digests, cap * sizeof(*grown))) ==
		    NULL) {
			log_error("out of memory: a value not counted");
			return;
		}
		s->digests = grown;
		s->cap = cap;
	}
	memcpy(s->digests[s->n++], digest, HASH_SHA256_LEN);
}

void
limits_commit(struct limits *l, const struct record_audit_event *intent,
    const struct limits_decision *d, uint64_t mono_ms)
{
	const struct policy_tool *tool = &l->policy->tools[intent->tool_index];
	struct limits_tool *lt = &l->tools[intent->tool_index];
	struct limits_recent *r;
	size_t i;

	if (!tool->limits.any && !tool->mutating)
		return;
	if (!d->counted)
		lt->day_count++;
	for (i = 0; lt->seen != NULL && i < intent->digest_count; i++)
		if (tool->limits.max_distinct[i] != 0)
			limits_seen_add(&lt->seen[i], intent->digests[i]);
	if (!limits_remembers(tool))
		return;
	if ((r = limits_recent_find(l, d->key)) == NULL) {
		if (l->n_recent == LIMITS_RECENT_MAX)
			return;		/* limits_decide() refused that */
		r = &l->recent[l->n_recent++];
	}
	memcpy(r->key, d->key, HASH_SHA256_LEN);
	r->tool_index = intent->tool_index;
	r->call_id = intent->call_id;
	r->started_ms = mono_ms;
	r->ended_ms = 0;
	r->open = true;
}

void
limits_end(struct limits *l, uint64_t call_id, uint64_t mono_ms)
{
	size_t i;

	for (i = 0; i < l->n_recent; i++)
		if (l->recent[i].open && l->recent[i].call_id == call_id) {
			l->recent[i].open = false;
			l->recent[i].ended_ms = mono_ms;
			return;
		}
}

void
limits_journal_verdict(struct limits_decision *d, bool replay)
{
	d->verdict = LIMITS_DENIED;
	d->replay = replay;
	d->limit = "idempotency";
	d->count = 1;
	d->max = 1;
	snprintf(d->resets, sizeof(d->resets), "see message");
}

bool
limits_add_members(cJSON *m, const struct limits_decision *d)
{
	char n[32];

	if (cJSON_AddStringToObject(m, "limit", d->limit) == NULL ||
	    (d->param != NULL &&
	    cJSON_AddStringToObject(m, "param", d->param) == NULL))
		return false;
	snprintf(n, sizeof(n), "%" PRIu64, d->count);
	if (cJSON_AddRawToObject(m, "count", n) == NULL)
		return false;
	snprintf(n, sizeof(n), "%" PRIu64, d->max);
	return cJSON_AddRawToObject(m, "max", n) != NULL &&
	    cJSON_AddStringToObject(m, "resets", d->resets) != NULL;
}

void
limits_say_scope(const struct policy *policy)
{
	size_t i;

	if (policy->state_dir != NULL || policy->state_postgres != NULL)
		return;
	for (i = 0; i < policy->tool_count; i++)
		if (policy->tools[i].limits.any ||
		    policy->tools[i].idem_window_s != 0) {
			log_info("no state_dir: tool limits and the idempotency "
			    "journal are kept in this process and end with it");
			return;
		}
}
