/*
 * The shared state as sp metrics shows it (state/state_summary.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "state/journal.h"
#include "state/limits.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "state/state_summary.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"

/* limits.jsonl's "day": the UTC day, wall ms / this (state/limits.h) */
#define STATE_SUMMARY_DAY_MS 86400000u
/* open addressing, at most half full */
#define STATE_SUMMARY_SLOTS (2 * STATE_SUMMARY_KEYS_MAX)

static const char *const summary_backend_names[] = {
	[STATE_SUMMARY_NONE] = "none", [STATE_SUMMARY_DIR] = "state_dir",
	[STATE_SUMMARY_PG] = "postgres",
};

/* The last line of one journal key: the last line of a key wins. */
struct summary_key {
	char key[JOURNAL_KEY_HEX + 1];	/* "" for a free slot */
	size_t tool;			/* index into policy's tools */
	enum journal_state state;
	uint64_t ts_ms;
};

/* What one reader fills, for one file of state_dir. */
struct summary_reader {
	const struct policy *p;
	struct state_summary *out;
	struct summary_key *keys;	/* owned, STATE_SUMMARY_SLOTS */
	size_t key_count;
	uint64_t wall_ms;		/* the moment counted */
};

enum state_summary_backend
state_summary_backend_of(const struct policy *p)
{
	if (p->state_postgres != NULL)
		return STATE_SUMMARY_PG;
	return p->state_dir != NULL ? STATE_SUMMARY_DIR : STATE_SUMMARY_NONE;
}

const char *
state_summary_backend_name(enum state_summary_backend b)
{
	return summary_backend_names[b];
}

static bool
summary_tool_named(const struct policy *p, const char *name, size_t *index)
{
	size_t i;

	for (i = 0; name != NULL && i < p->tool_count; i++)
		if (strcmp(p->tools[i].name, name) == 0) {
			*index = i;
			return true;
		}
	return false;
}

static bool
summary_tool(const struct policy *p, const cJSON *name, size_t *index)
{
	return summary_tool_named(p, cJSON_GetStringValue(name), index);
}

static void
summary_spend_reset(void *arg)
{
	struct summary_reader *r = arg;
	struct state_summary *s = r->out;
	size_t i;

	for (i = 0; i < s->spend_count; i++)
		free(s->spend[i].who);
	s->spend_count = 0;
}

/* n calls that passed today, counted for their tool and who. */
static void
summary_spend_add(struct state_summary *s, size_t tool, const char *who,
    uint64_t n)
{
	struct state_spend *e;
	size_t i;

	for (i = 0; i < s->spend_count; i++)
		if (s->spend[i].tool == tool &&
		    strcmp(s->spend[i].who, who) == 0) {
			s->spend[i].spent += n;
			return;
		}
	if (s->spend_count == STATE_SUMMARY_SPEND_MAX) {
		s->truncated = true;
		return;
	}
	e = &s->spend[s->spend_count];
	if ((e->who = strdup(who)) == NULL) {
		log_error("state summary: out of memory");
		s->truncated = true;
		return;
	}
	e->tool = tool;
	e->spent = n;
	s->spend_count++;
}

/* {"day":D,"tool":"name","who":"uid:1001",...} (state/limits.h) */
static void
summary_spend_line(void *arg, const char *line, size_t len)
{
	struct summary_reader *r = arg;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const cJSON *day = cJSON_GetObjectItemCaseSensitive(o, "day");
	const cJSON *who = cJSON_GetObjectItemCaseSensitive(o, "who");
	uint64_t d;
	size_t tool;

	if (json_exact_uint(day, &d) && d == r->out->day &&
	    cJSON_IsString(who) && summary_tool(r->p,
	    cJSON_GetObjectItemCaseSensitive(o, "tool"), &tool) &&
	    r->p->tools[tool].limits.per_day != 0)
		summary_spend_add(r->out, tool, who->valuestring, 1);
	cJSON_Delete(o);
}

static void
summary_keys_reset(void *arg)
{
	struct summary_reader *r = arg;

	memset(r->keys, 0, STATE_SUMMARY_SLOTS * sizeof(*r->keys));
	r->key_count = 0;
}

/* key's slot: its own, or the free one it would take. */
static struct summary_key *
summary_key_slot(struct summary_reader *r, const char *key)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */
	size_t i;

	for (i = 0; key[i] != '\0'; i++)
		h = (h ^ (uint8_t)key[i]) * 1099511628211ull;
	for (i = h % STATE_SUMMARY_SLOTS; r->keys[i].key[0] != '\0' &&
	    strcmp(r->keys[i].key, key) != 0; i = (i + 1) % STATE_SUMMARY_SLOTS)
		;
	return &r->keys[i];
}

/* {"key","state","ts","call","tool","summary"} (state/journal.h) */
static void
summary_journal_line(void *arg, const char *line, size_t len)
{
	struct summary_reader *r = arg;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "ts");
	const cJSON *word = cJSON_GetObjectItemCaseSensitive(o, "state");
	struct summary_key *k;
	enum journal_state st, now;
	uint64_t ts_ms;
	size_t tool;

	if (!cJSON_IsString(key) || strlen(key->valuestring) !=
	    JOURNAL_KEY_HEX || !json_exact_uint(ts, &ts_ms) ||
	    !journal_state_parse(cJSON_GetStringValue(word), &st) ||
	    !summary_tool(r->p,
	    cJSON_GetObjectItemCaseSensitive(o, "tool"), &tool))
		goto out;
	k = summary_key_slot(r, key->valuestring);
	/* the file keeps every key it ever held: one whose window passed
	 * takes no slot, or years of history would crowd out live ones */
	if (k->key[0] == '\0' && !journal_state_now(r->p, r->p->tools[tool].name,
	    journal_state_names[st], ts_ms, r->wall_ms, &now))
		goto out;
	if (k->key[0] == '\0' && r->key_count == STATE_SUMMARY_KEYS_MAX) {
		r->out->truncated = true;
		goto out;
	}
	if (k->key[0] == '\0') {
		memcpy(k->key, key->valuestring, JOURNAL_KEY_HEX + 1);
		r->key_count++;
	}
	k->tool = tool;
	k->state = st;
	k->ts_ms = ts_ms;
out:
	cJSON_Delete(o);
}

/* One entry of tool counted by the state it has for a call now. */
static void
summary_journal_add(const struct policy *p, struct state_summary *out,
    const char *tool, const char *state, uint64_t ts_ms, uint64_t wall_ms)
{
	enum journal_state now;
	size_t i;

	if (summary_tool_named(p, tool, &i) &&
	    journal_state_now(p, tool, state, ts_ms, wall_ms, &now))
		out->journal[i][now]++;
}

/* Each key's last line, counted by the state it has now. */
static void
summary_journal_count(struct summary_reader *r, uint64_t wall_ms)
{
	size_t i;

	for (i = 0; i < STATE_SUMMARY_SLOTS; i++)
		if (r->keys[i].key[0] != '\0')
			summary_journal_add(r->p, r->out,
			    r->p->tools[r->keys[i].tool].name,
			    journal_state_names[r->keys[i].state],
			    r->keys[i].ts_ms, wall_ms);
}

/*
 * Reads state_dir/name under its lock; a file not there yet holds
 * nothing (and is not made: sp metrics writes nothing).
 */
static bool
summary_read_file(const struct policy *p, const char *name,
    const struct state_reader *reader, char *why, size_t why_size)
{
	struct state_file *sf;
	struct stat st;
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->state_dir,
	    name) >= sizeof(path)) {
		snprintf(why, why_size, "state_dir %s: path too long",
		    p->state_dir);
		return false;
	}
	if (lstat(path, &st) == -1 && errno == ENOENT)
		return true;
	if ((sf = state_file_open(p->state_dir, name)) == NULL ||
	    !state_file_lock(sf, reader)) {
		snprintf(why, why_size, "state_dir %s: cannot read %s",
		    p->state_dir, name);
		state_file_free(sf);
		return false;
	}
	state_file_unlock(sf);
	state_file_free(sf);
	return true;
}

static bool
summary_read_dir(const struct policy *p, struct state_summary *out,
    char *why, size_t why_size)
{
	struct summary_reader r = { .p = p, .out = out,
	    .wall_ms = clock_wall_ms() };
	const struct state_reader spend = { summary_spend_reset,
	    summary_spend_line, &r };
	const struct state_reader keys = { summary_keys_reset,
	    summary_journal_line, &r };
	bool ok;

	out->day = r.wall_ms / STATE_SUMMARY_DAY_MS;
	if ((r.keys = calloc(STATE_SUMMARY_SLOTS, sizeof(*r.keys))) == NULL) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	ok = summary_read_file(p, LIMITS_STATE_FILE, &spend, why, why_size) &&
	    summary_read_file(p, JOURNAL_STATE_FILE, &keys, why, why_size);
	if (ok)
		summary_journal_count(&r, r.wall_ms);
	free(r.keys);
	return ok;
}

/* What summary_read_pg()'s callbacks fill. */
struct summary_pg {
	const struct policy *p;
	struct state_summary *out;
	uint64_t wall_ms;
};

static void
summary_pg_spent(void *arg, const char *who, const char *tool,
    uint64_t spent)
{
	struct summary_pg *r = arg;
	size_t i;

	if (summary_tool_named(r->p, tool, &i) &&
	    r->p->tools[i].limits.per_day != 0)
		summary_spend_add(r->out, i, who, spent);
}

static void
summary_pg_entry(void *arg, const struct pg_journal_row *row)
{
	struct summary_pg *r = arg;

	summary_journal_add(r->p, r->out, row->tool, row->state, row->ts_ms,
	    r->wall_ms);
}

/*
 * The fleet's counts, read in the database as the policy's role.  A
 * database that is down, or refuses, is a state that cannot be read:
 * why, and sallyport_state_up 0.
 */
static bool
summary_read_pg(const struct policy *p, struct state_summary *out,
    char *why, size_t why_size)
{
	struct summary_pg r = { .p = p, .out = out,
	    .wall_ms = clock_wall_ms() };
	struct pg_state *pg;
	enum pg_open how;
	bool ok;

	out->day = r.wall_ms / STATE_SUMMARY_DAY_MS;
	pg = pg_state_open(p, &how, why, why_size);
	if (pg == NULL || how != PG_OPEN_UP) {
		pg_state_free(pg);
		return false;
	}
	ok = pg_day_spent(pg, out->day, summary_pg_spent, &r) &&
	    pg_journal_list(pg, summary_pg_entry, &r);
	if (!ok)
		snprintf(why, why_size, "the shared state (PostgreSQL) did not "
		    "answer");
	pg_state_free(pg);
	return ok;
}

bool
state_summary_read(const struct policy *p, struct state_summary *out,
    char *why, size_t why_size)
{
	memset(out, 0, sizeof(*out));
	out->backend = state_summary_backend_of(p);
	if ((out->spend = calloc(STATE_SUMMARY_SPEND_MAX,
	    sizeof(*out->spend))) == NULL || (out->journal = calloc(
	    p->tool_count + 1, sizeof(*out->journal))) == NULL) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	switch (out->backend) {
	case STATE_SUMMARY_NONE:
		return true;
	case STATE_SUMMARY_DIR:
		return summary_read_dir(p, out, why, why_size);
	case STATE_SUMMARY_PG:
		return summary_read_pg(p, out, why, why_size);
	}
	snprintf(why, why_size, "unknown state backend");
	return false;
}

void
state_summary_free(struct state_summary *s)
{
	size_t i;

	if (s->spend != NULL)
		for (i = 0; i < s->spend_count; i++)
			free(s->spend[i].who);
	free(s->spend);
	free(s->journal);
	memset(s, 0, sizeof(*s));
}
