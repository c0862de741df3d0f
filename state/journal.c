/*
 * The idempotency journal (state/journal.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "state/journal.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "common/json.h"
#include "common/log.h"

#define JOURNAL_SUMMARY_MAX 96

const char *const journal_state_names[JOURNAL_STATES] = {
	[JOURNAL_PENDING] = "pending", [JOURNAL_DONE] = "done",
	[JOURNAL_FAILED] = "failed", [JOURNAL_UNKNOWN] = "unknown",
};

struct journal_entry {
	char key[JOURNAL_KEY_HEX + 1];
	enum journal_state state;
	uint64_t ts_ms;			/* wall clock of the last change */
	uint64_t call_id;		/* the session's call that made it */
	bool ours;			/* pending for a call of this session */
	char tool[64];
	char summary[JOURNAL_SUMMARY_MAX];
};

struct journal {
	const struct policy *policy;
	struct state_file *state;	/* borrowed; NULL: in memory only */
	struct pg_state *pg;		/* borrowed; not NULL: the journal is
					 * there, and e holds our calls only */
	char profile[64];
	struct journal_entry *e;	/* owned, JOURNAL_MAX */
	size_t n;
	bool locked;
};

struct journal *
journal_new(const struct policy *policy, struct state_file *state,
    struct pg_state *pg, const char *profile)
{
	struct journal *j;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->e = calloc(JOURNAL_MAX, sizeof(*j->e))) == NULL) {
		log_error("out of memory");
		free(j);
		return NULL;
	}
	j->policy = policy;
	j->state = state;
	j->pg = pg;
	snprintf(j->profile, sizeof(j->profile), "%s", profile);
	return j;
}

void
journal_free(struct journal *j)
{
	if (j == NULL)
		return;
	free(j->e);
	free(j);
}

static struct journal_entry *
journal_find(struct journal *j, const char *key)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (strcmp(j->e[i].key, key) == 0)
			return &j->e[i];
	return NULL;
}

static const struct policy_tool *
journal_tool_named(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->tool_count; i++)
		if (strcmp(p->tools[i].name, name) == 0)
			return &p->tools[i];
	return NULL;
}

/* An entry of t made at ts_ms decides nothing any more: its window
 * passed (or its tool is gone, or keeps no journal).  An entry stamped
 * later than wall_ms (another host's clock ahead, or this one set back)
 * is inside its window: taking it as expired would send a call twice. */
static bool
journal_window_passed(const struct policy_tool *t, uint64_t ts_ms,
    uint64_t wall_ms)
{
	return t == NULL || t->idem_window_s == 0 || (wall_ms >= ts_ms &&
	    wall_ms - ts_ms >= (uint64_t)t->idem_window_s * 1000);
}

/* Nothing left to decide by e: its window passed (or its tool is gone). */
static bool
journal_expired(const struct journal *j, const struct journal_entry *e,
    uint64_t wall_ms)
{
	if (e->ours)
		return false;
	return journal_window_passed(journal_tool_named(j->policy, e->tool),
	    e->ts_ms, wall_ms);
}

static void
journal_prune(struct journal *j, uint64_t wall_ms)
{
	size_t i = 0;

	while (i < j->n)
		if (journal_expired(j, &j->e[i], wall_ms))
			j->e[i] = j->e[--j->n];
		else
			i++;
}

/* The entry for key, made when missing; NULL when the table is full. */
static struct journal_entry *
journal_slot(struct journal *j, const char *key)
{
	struct journal_entry *e = journal_find(j, key);

	if (e != NULL)
		return e;
	if (j->n == JOURNAL_MAX)
		return NULL;
	e = &j->e[j->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->key, sizeof(e->key), "%s", key);
	return e;
}

bool
journal_state_parse(const char *s, enum journal_state *out)
{
	size_t i;

	for (i = 0; s != NULL && i < JOURNAL_STATES; i++)
		if (strcmp(s, journal_state_names[i]) == 0) {
			*out = (enum journal_state)i;
			return true;
		}
	return false;
}

static void
journal_on_reset(void *arg)
{
	struct journal *j = arg;
	size_t i = 0;

	/* what other sessions wrote is gone; our calls in flight stay */
	while (i < j->n)
		if (!j->e[i].ours)
			j->e[i] = j->e[--j->n];
		else
			i++;
}

static const char *
journal_text(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void
journal_on_line(void *arg, const char *line, size_t len)
{
	struct journal *j = arg;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const char *key = journal_text(o, "key"), *st = journal_text(o, "state");
	const char *tool = journal_text(o, "tool");
	const char *sum = journal_text(o, "summary");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "ts");
	const cJSON *call = cJSON_GetObjectItemCaseSensitive(o, "call");
	struct journal_entry *e;
	enum journal_state state;
	uint64_t ts_ms, call_id;

	if (key == NULL || strlen(key) != JOURNAL_KEY_HEX || st == NULL ||
	    !journal_state_parse(st, &state) || tool == NULL ||
	    !json_exact_uint(ts, &ts_ms) || (e = journal_slot(j, key)) == NULL)
		goto out;
	if (e->ours && state == JOURNAL_PENDING)
		goto out;	/* another session's pending can't be ours */
	e->ours = false;
	e->state = state;
	e->ts_ms = ts_ms;
	e->call_id = json_exact_uint(call, &call_id) ? call_id : 0;
	snprintf(e->tool, sizeof(e->tool), "%s", tool);
	snprintf(e->summary, sizeof(e->summary), "%s", sum != NULL ? sum : "");
out:
	cJSON_Delete(o);
}

static void
journal_key(const struct journal *j, const struct policy_tool *tool,
    const struct record_audit_event *ev, char *hex)
{
	struct hash_sha256_ctx h;
	uint8_t key[HASH_SHA256_LEN];
	size_t i;

	hash_sha256_init(&h);
	hash_sha256_update(&h, j->profile, strlen(j->profile) + 1);
	hash_sha256_update(&h, tool->name, strlen(tool->name) + 1);
	for (i = 0; i < ev->digest_count; i++)
		hash_sha256_update(&h, ev->digests[i], HASH_SHA256_LEN);
	hash_sha256_final(&h, key);
	hash_hex(key, sizeof(key), hex);
}

static void
journal_time(uint64_t wall_ms, char *out, size_t size)
{
	time_t s = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL)
		snprintf(out, size, "unknown");
	else
		snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02dZ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
}

/* A pending entry this old was left by a broker that died with its
 * call: it is taken as unknown (one stamped ahead of the clock is not
 * old: it is in flight). */
static enum journal_state
journal_state_aged(enum journal_state st, uint64_t ts_ms, uint32_t budget_ms,
    uint64_t wall_ms)
{
	if (st == JOURNAL_PENDING && wall_ms >= ts_ms &&
	    wall_ms - ts_ms >= 2ull * budget_ms)
		return JOURNAL_UNKNOWN;
	return st;
}

/* The answer e gives an identical call now; PASS when it gives none. */
static enum journal_verdict
journal_verdict_of(const struct journal_entry *e,
    const struct policy_tool *tool, uint32_t budget_ms, uint64_t wall_ms,
    char *message, size_t size)
{
	char at[64], until[64];
	enum journal_state st = e->state;

	journal_time(e->ts_ms, at, sizeof(at));
	journal_time(e->ts_ms + (uint64_t)tool->idem_window_s * 1000, until,
	    sizeof(until));
	/* in flight in this session: a duplicate (state/limits.h) */
	if (st == JOURNAL_PENDING && e->ours)
		return JOURNAL_PASS;
	st = journal_state_aged(st, e->ts_ms, budget_ms, wall_ms);
	switch (st) {
	case JOURNAL_DONE:
		snprintf(message, size, "replayed from the idempotency journal: "
		    "an identical call was done at %s (%s); it was not sent "
		    "again (journal key %s)", at, e->summary, e->key);
		return JOURNAL_REPLAY;
	case JOURNAL_UNKNOWN:
		snprintf(message, size, "denied by the idempotency journal: an "
		    "identical call's outcome is unknown (at %s); check %s's "
		    "effect on the target first, then record it with sp journal "
		    "resolve %s done|failed; until then, or until %s, it is not "
		    "sent again", at, tool->name, e->key, until);
		return JOURNAL_REFUSED;
	case JOURNAL_PENDING:
		snprintf(message, size, "denied by the idempotency journal: an "
		    "identical call is in flight since %s (journal key %s)", at,
		    e->key);
		return JOURNAL_REFUSED;
	case JOURNAL_FAILED:
	case JOURNAL_STATES:
		break;
	}
	return JOURNAL_PASS;
}

static uint32_t
journal_budget_ms(const struct policy *p, const struct policy_tool *tool)
{
	if (tool->timeout_ms != 0)
		return tool->timeout_ms;
	if (p->targets[tool->target_index].timeout_ms != 0)
		return p->targets[tool->target_index].timeout_ms;
	return p->limits.call_timeout_ms;
}

static const char journal_pg_unavailable[] = "denied: the shared state "
    "(PostgreSQL) is unavailable, so the idempotency journal cannot be "
    "consulted; nothing was sent";

/* The answer the database's entry for key gives an identical call now:
 * a read only, the entry is taken by journal_begin(). */
static enum journal_verdict
journal_check_pg(struct journal *j, const struct policy_tool *tool,
    const char *key, uint64_t wall_ms, char *message, size_t message_size)
{
	struct pg_journal_row row;
	struct journal_entry e = { .ours = false };
	bool found = false;

	if (!pg_journal_peek(j->pg, key, &row, &found)) {
		snprintf(message, message_size, "%s", journal_pg_unavailable);
		return JOURNAL_REFUSED;
	}
	if (!found || !journal_state_parse(row.state, &e.state))
		return JOURNAL_PASS;
	snprintf(e.key, sizeof(e.key), "%s", key);
	e.ts_ms = row.ts_ms;
	e.ours = row.ours;
	snprintf(e.summary, sizeof(e.summary), "%s", row.summary);
	if (!e.ours && journal_window_passed(tool, e.ts_ms, wall_ms))
		return JOURNAL_PASS;
	return journal_verdict_of(&e, tool, journal_budget_ms(j->policy, tool),
	    wall_ms, message, message_size);
}

bool
journal_state_now(const struct policy *p, const char *tool,
    const char *state, uint64_t ts_ms, uint64_t wall_ms,
    enum journal_state *now)
{
	const struct policy_tool *t = journal_tool_named(p, tool);

	if (journal_window_passed(t, ts_ms, wall_ms) ||
	    !journal_state_parse(state, now))
		return false;
	*now = journal_state_aged(*now, ts_ms, journal_budget_ms(p, t),
	    wall_ms);
	return true;
}

enum journal_verdict
journal_check(struct journal *j, const struct record_audit_event *intent,
    uint64_t wall_ms, char *key, char *message, size_t message_size)
{
	const struct policy_tool *tool = &j->policy->tools[intent->tool_index];
	const struct state_reader reader = { journal_on_reset, journal_on_line,
	    j };
	struct journal_entry *e;
	enum journal_verdict v;

	if (tool->idem_window_s == 0)
		return JOURNAL_NONE;
	journal_key(j, tool, intent, key);
	if (j->pg != NULL)
		return journal_check_pg(j, tool, key, wall_ms, message,
		    message_size);
	if (j->state != NULL && !state_file_lock(j->state, &reader)) {
		snprintf(message, message_size, "denied: the idempotency "
		    "journal could not be read; nothing was sent");
		return JOURNAL_REFUSED;
	}
	j->locked = j->state != NULL;
	journal_prune(j, wall_ms);
	e = journal_find(j, key);
	v = e == NULL ? JOURNAL_PASS : journal_verdict_of(e, tool,
	    journal_budget_ms(j->policy, tool), wall_ms, message,
	    message_size);
	if (v == JOURNAL_PASS && e == NULL && j->n == JOURNAL_MAX) {
		snprintf(message, message_size, "denied: the idempotency "
		    "journal holds %d keys, the most it keeps; retry once one "
		    "expires", JOURNAL_MAX);
		v = JOURNAL_REFUSED;
	}
	if (v != JOURNAL_PASS)
		journal_abandon(j);
	return v;
}

void
journal_abandon(struct journal *j)
{
	if (j->locked)
		state_file_unlock(j->state);
	j->locked = false;
}

/* One change, in memory and (locked) in the file; false when it is not
 * in the file (logged). */
static bool
journal_put(struct journal *j, struct journal_entry *e)
{
	cJSON *o = cJSON_CreateObject();
	char *line = NULL;
	bool ok = true;

	if (j->state == NULL)
		goto out;
	ok = o != NULL && cJSON_AddStringToObject(o, "key", e->key) &&
	    cJSON_AddStringToObject(o, "state",
	    journal_state_names[e->state]) &&
	    cJSON_AddNumberToObject(o, "ts", (double)e->ts_ms) &&
	    cJSON_AddNumberToObject(o, "call", (double)e->call_id) &&
	    cJSON_AddStringToObject(o, "tool", e->tool) &&
	    cJSON_AddStringToObject(o, "summary", e->summary) &&
	    (line = cJSON_PrintUnformatted(o)) != NULL &&
	    state_file_append(j->state, line, strlen(line));
	if (!ok)
		log_error("journal key %s: %s not written", e->key,
		    journal_state_names[e->state]);
out:
	cJSON_free(line);
	cJSON_Delete(o);
	return ok;
}

/*
 * The pending entry is taken in the database by one call, only when no
 * entry answers the key: of two sessions that both passed
 * journal_check_pg(), one takes it, and the other is refused here with
 * what the entry says now.
 */
static bool
journal_begin_pg(struct journal *j, const struct record_audit_event *intent,
    const char *key, uint64_t wall_ms, char *message, size_t message_size)
{
	const struct policy_tool *tool = &j->policy->tools[intent->tool_index];
	struct journal_entry *e;
	bool taken = false;

	if (!pg_journal_take(j->pg, key, tool->name, intent->call_id, wall_ms,
	    (uint64_t)tool->idem_window_s * 1000, &taken)) {
		snprintf(message, message_size, "%s", journal_pg_unavailable);
		return false;
	}
	if (!taken) {
		if (journal_check_pg(j, tool, key, wall_ms, message,
		    message_size) == JOURNAL_PASS)
			snprintf(message, message_size, "denied by the "
			    "idempotency journal: an identical call was taken "
			    "by another session at the same time (journal key "
			    "%s); nothing was sent", key);
		return false;
	}
	if ((e = journal_slot(j, key)) == NULL) {
		/* taken but not tracked: never sent, and the database's
		 * entry turns unknown for an operator to resolve */
		snprintf(message, message_size, "denied: %d calls of this "
		    "session are in the idempotency journal, the most it "
		    "tracks; nothing was sent", JOURNAL_MAX);
		return false;
	}
	e->state = JOURNAL_PENDING;
	e->ts_ms = wall_ms;
	e->call_id = intent->call_id;
	e->ours = true;
	snprintf(e->tool, sizeof(e->tool), "%s", tool->name);
	return true;
}

bool
journal_begin(struct journal *j, const struct record_audit_event *intent,
    const char *key, uint64_t wall_ms, char *message, size_t message_size)
{
	struct journal_entry *e = journal_find(j, key), was;
	bool existed = e != NULL, ok;

	if (j->pg != NULL)
		return journal_begin_pg(j, intent, key, wall_ms, message,
		    message_size);
	if (existed)
		was = *e;
	else
		e = journal_slot(j, key);
	if ((ok = e != NULL)) {
		e->state = JOURNAL_PENDING;
		e->ts_ms = wall_ms;
		e->call_id = intent->call_id;
		e->ours = true;
		e->summary[0] = '\0';
		snprintf(e->tool, sizeof(e->tool), "%s",
		    j->policy->tools[intent->tool_index].name);
		/* unrecorded, a call could be sent again by the next session
		 * whatever its outcome: it is not sent at all */
		if (!(ok = journal_put(j, e)) && existed)
			*e = was;
		else if (!ok)
			*e = j->e[--j->n];	/* the slot just made, last */
	}
	if (!ok)
		snprintf(message, message_size, "denied: the idempotency "
		    "journal could not record this call in state_dir (is it "
		    "full?); nothing was sent");
	journal_abandon(j);
	return ok;
}

static struct journal_entry *
journal_ours(const struct journal *j, uint64_t call_id)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (j->e[i].ours && j->e[i].call_id == call_id)
			return &j->e[i];
	return NULL;
}

const char *
journal_key_of(const struct journal *j, uint64_t call_id)
{
	const struct journal_entry *e = journal_ours(j, call_id);

	return e != NULL ? e->key : NULL;
}

static void
journal_summary(const struct policy_tool *tool, enum record_outcome outcome,
    int32_t status, char *out, size_t size)
{
	static const char *const names[] = { "none", "ok", "failed",
	    "unknown", "denied", "invalid" };

	snprintf(out, size, "%s, %s %" PRId32, outcome <= RECORD_OUTCOME_INVALID ?
	    names[outcome] : "?", tool != NULL && tool->kind == TOOL_SSH ?
	    "exit status" : "HTTP", status);
}

static enum journal_state
journal_state_of(enum record_outcome outcome)
{
	return outcome == RECORD_OUTCOME_OK ? JOURNAL_DONE :
	    outcome == RECORD_OUTCOME_UNKNOWN ? JOURNAL_UNKNOWN : JOURNAL_FAILED;
}

/* As in state_dir: an outcome the database did not take leaves its
 * pending entry, refused elsewhere as in flight, then unknown. */
static void
journal_end_pg(struct journal *j, struct journal_entry *e,
    enum record_outcome outcome, int32_t status, uint64_t wall_ms)
{
	enum journal_state st = journal_state_of(outcome);
	char summary[JOURNAL_SUMMARY_MAX];

	journal_summary(journal_tool_named(j->policy, e->tool), outcome,
	    status, summary, sizeof(summary));
	if (!pg_journal_end(j->pg, e->key, journal_state_names[st], wall_ms,
	    summary))
		log_error("journal key %s: the outcome %s is not in the shared "
		    "state, which still says pending: other sessions refuse "
		    "the identical call until its window passes or sp journal "
		    "resolve %s", e->key, journal_state_names[st], e->key);
	*e = j->e[--j->n];
}

/*
 * An outcome that cannot be written leaves the file's pending line: other
 * sessions refuse the identical call as in flight, then (past twice the
 * budget) as unknown, until window_s passes or sp journal resolve; this
 * session keeps the outcome in memory.  Never sent blindly.
 */
void
journal_end(struct journal *j, uint64_t call_id, enum record_outcome outcome,
    int32_t status, uint64_t wall_ms)
{
	const struct state_reader reader = { journal_on_reset, journal_on_line,
	    j };
	struct journal_entry *e = journal_ours(j, call_id), keep;
	bool locked;

	if (e == NULL)
		return;
	if (j->pg != NULL) {
		journal_end_pg(j, e, outcome, status, wall_ms);
		return;
	}
	keep = *e;
	/* read first: the change goes after what others wrote since */
	locked = j->state != NULL && state_file_lock(j->state, &reader);
	if ((e = journal_slot(j, keep.key)) != NULL) {
		*e = keep;
		e->ours = false;
		e->ts_ms = wall_ms;
		e->state = journal_state_of(outcome);
		journal_summary(journal_tool_named(j->policy, e->tool), outcome,
		    status, e->summary, sizeof(e->summary));
		if (j->state != NULL && (!locked || !journal_put(j, e)))
			log_error("journal key %s: the outcome %s is not in "
			    "state_dir, which still says pending: other "
			    "sessions refuse the identical call until its "
			    "window passes or sp journal resolve %s",
			    keep.key, journal_state_names[e->state], keep.key);
	}
	if (locked)
		state_file_unlock(j->state);
}
