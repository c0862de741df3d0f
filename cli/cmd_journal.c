/*
 * sp journal [--config FILE] [resolve KEY done|failed]: the idempotency
 * journal in the policy's state_dir (state/journal.h).  Without
 * arguments its lines go to stdout as they are (the last of a key wins);
 * resolve records what an operator found out about a call whose outcome
 * was unknown, so an identical call is replayed (done) or sent again
 * (failed), and writes a "journal-resolve" record to the audit log.
 * With the policy's "state" the journal is PostgreSQL's (state/pg.h):
 * each entry is printed as one line of the same members.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit/audit_log.h"
#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "state/journal.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "common/clock.h"
#include "common/log.h"
#include "policy/load.h"
#include "policy/source.h"

#define JOURNAL_USAGE "usage: sp journal [--config FILE] " \
	"[resolve KEY done|failed]\n"

/* The last line naming the key being resolved, kept whole. */
struct journal_found {
	const char *key;
	cJSON *last;			/* owned */
};

static void
journal_print_reset(void *arg)
{
	(void)arg;
}

static void
journal_print_line(void *arg, const char *line, size_t len)
{
	(void)arg;
	fwrite(line, 1, len, stdout);
	fputc('\n', stdout);
}

static void
journal_found_reset(void *arg)
{
	struct journal_found *f = arg;

	cJSON_Delete(f->last);
	f->last = NULL;
}

static void
journal_found_line(void *arg, const char *line, size_t len)
{
	struct journal_found *f = arg;
	cJSON *o = cJSON_ParseWithLength(line, len);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");

	if (cJSON_IsString(k) && strcmp(k->valuestring, f->key) == 0) {
		cJSON_Delete(f->last);
		f->last = o;
	} else
		cJSON_Delete(o);
}

/* A record of its own, in a session of its own (sp journal is no sp mcp). */
static bool
journal_audit_write(const struct policy *p, const cJSON *members)
{
	uint8_t key[AUDIT_KEY_MAX], raw[16];
	char session[33];
	size_t key_len = 0;
	struct audit_log *log;
	bool ok;

	if (p->audit_path == NULL)
		return true;
	if ((p->audit_key_file != NULL &&
	    !audit_key_read(p->audit_key_file, key, &key_len)) ||
	    getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return false;
	hash_hex(raw, sizeof(raw), session);
	log = audit_log_open(p->audit_path, p->audit_key_file != NULL ? key :
	    NULL, key_len, session);
	explicit_bzero(key, sizeof(key));
	if (log == NULL)
		return false;
	ok = audit_log_append(log, "journal-resolve", members, true);
	return audit_log_close(log) && ok;
}

/* The record says what was resolved, as what, and by whom. */
static bool
journal_audit(const struct policy *p, const cJSON *line)
{
	static const char *const keep[] = { "key", "tool", "call", "state",
	    NULL };
	cJSON *members = cJSON_CreateObject();
	const cJSON *v;
	size_t i;
	bool ok;

	for (i = 0; members != NULL && keep[i] != NULL; i++)
		if ((v = cJSON_GetObjectItemCaseSensitive(line, keep[i])) !=
		    NULL)
			cJSON_AddItemToObject(members, keep[i],
			    cJSON_Duplicate(v, true));
	ok = members != NULL && cJSON_AddNumberToObject(members, "by_uid",
	    (double)geteuid()) != NULL && journal_audit_write(p, members);
	cJSON_Delete(members);
	return ok;
}

static int
journal_resolve(const struct policy *p, struct state_file *sf,
    const char *key, const char *state)
{
	struct journal_found f = { key, NULL };
	const struct state_reader r = { journal_found_reset,
	    journal_found_line, &f };
	char summary[64], *text = NULL;
	int status = SP_EXIT_CONFIG;

	if (!state_file_lock(sf, &r))
		return SP_EXIT_INTERNAL;
	if (f.last == NULL) {
		fprintf(stderr, "sp journal: no entry %s\n", key);
		goto out;
	}
	snprintf(summary, sizeof(summary), "resolved by an operator (uid %u)",
	    (unsigned)geteuid());
	cJSON_DeleteItemFromObjectCaseSensitive(f.last, "state");
	cJSON_DeleteItemFromObjectCaseSensitive(f.last, "ts");
	cJSON_DeleteItemFromObjectCaseSensitive(f.last, "summary");
	if (cJSON_AddStringToObject(f.last, "state", state) == NULL ||
	    cJSON_AddNumberToObject(f.last, "ts",
	    (double)clock_wall_ms()) == NULL ||
	    cJSON_AddStringToObject(f.last, "summary", summary) == NULL ||
	    (text = cJSON_PrintUnformatted(f.last)) == NULL ||
	    !state_file_append(sf, text, strlen(text))) {
		status = SP_EXIT_INTERNAL;
		goto out;
	}
	status = SP_EXIT_OK;
	if (!journal_audit(p, f.last)) {
		fprintf(stderr, "sp journal: resolved, but not audited\n");
		status = SP_EXIT_INTERNAL;
	}
out:
	state_file_unlock(sf);
	cJSON_free(text);
	cJSON_Delete(f.last);
	return status;
}

static struct policy *
journal_policy(const char *config)
{
	struct policy *p = cmd_policy_load("sp journal", config);

	if (p == NULL || p->state_dir != NULL || p->state_postgres != NULL)
		return p;
	fprintf(stderr, "sp journal: the policy names no state_dir or state: "
	    "the journal lives in each session and ends with it\n");
	policy_free(p);
	return NULL;
}

static void
journal_pg_print(void *arg, const struct pg_journal_row *row)
{
	cJSON *o = cJSON_CreateObject();
	char *text = NULL;

	(void)arg;
	if (o != NULL && cJSON_AddStringToObject(o, "key", row->key) &&
	    cJSON_AddStringToObject(o, "state", row->state) &&
	    cJSON_AddNumberToObject(o, "ts", (double)row->ts_ms) &&
	    cJSON_AddStringToObject(o, "tool", row->tool) &&
	    cJSON_AddStringToObject(o, "summary", row->summary) &&
	    (text = cJSON_PrintUnformatted(o)) != NULL)
		printf("%s\n", text);
	cJSON_free(text);
	cJSON_Delete(o);
}

static int
journal_pg_resolve(const struct policy *p, struct pg_state *pg,
    const char *key, const char *state)
{
	char summary[64], was[16];
	bool found = false;
	cJSON *line;
	int status;

	snprintf(summary, sizeof(summary), "resolved by an operator (uid %u)",
	    (unsigned)geteuid());
	if (!pg_journal_resolve(pg, key, state, clock_wall_ms(), summary,
	    &found, was))
		return SP_EXIT_UNAVAILABLE;
	if (!found) {
		fprintf(stderr, "sp journal: no entry %s\n", key);
		return SP_EXIT_CONFIG;
	}
	status = SP_EXIT_OK;
	if ((line = cJSON_CreateObject()) == NULL ||
	    !cJSON_AddStringToObject(line, "key", key) ||
	    !cJSON_AddStringToObject(line, "state", state) ||
	    !journal_audit(p, line)) {
		fprintf(stderr, "sp journal: resolved, but not audited\n");
		status = SP_EXIT_INTERNAL;
	}
	cJSON_Delete(line);
	return status;
}

/* The journal in PostgreSQL: connected as sp mcp connects. */
static int
journal_pg(const struct policy *p, int argc, char **argv, int n)
{
	char why[PG_WHY_MAX];
	struct pg_state *pg;
	enum pg_open how;
	int status;

	if ((pg = pg_state_open(p, &how, why, sizeof(why))) == NULL ||
	    how != PG_OPEN_UP) {
		fprintf(stderr, "sp journal: %s\n", why);
		pg_state_free(pg);
		return how == PG_OPEN_REFUSED ? SP_EXIT_CONFIG :
		    SP_EXIT_UNAVAILABLE;
	}
	if (n < argc)
		status = journal_pg_resolve(p, pg, argv[n + 1], argv[n + 2]);
	else
		status = pg_journal_list(pg, journal_pg_print, NULL) ?
		    SP_EXIT_OK : SP_EXIT_UNAVAILABLE;
	pg_state_free(pg);
	return status;
}

int
cmd_journal(int argc, char **argv)
{
	const struct state_reader print = { journal_print_reset,
	    journal_print_line, NULL };
	struct cmd_args args;
	struct state_file *sf;
	struct policy *p;
	int n = 1, status;

	while (n < argc && strcmp(argv[n], "resolve") != 0)
		n++;
	if (!cmd_args_parse(n, argv, false, &args) || (n < argc &&
	    (argc - n != 3 || strlen(argv[n + 1]) != JOURNAL_KEY_HEX ||
	    (strcmp(argv[n + 2], "done") != 0 &&
	    strcmp(argv[n + 2], "failed") != 0)))) {
		fputs(JOURNAL_USAGE, stderr);
		return SP_EXIT_USAGE;
	}
	if ((p = journal_policy(args.config)) == NULL)
		return SP_EXIT_CONFIG;
	if (p->state_postgres != NULL) {
		status = journal_pg(p, argc, argv, n);
		policy_free(p);
		return status;
	}
	if ((sf = state_file_open(p->state_dir, JOURNAL_STATE_FILE)) == NULL) {
		policy_free(p);
		return SP_EXIT_CONFIG;
	}
	if (n < argc)
		status = journal_resolve(p, sf, argv[n + 1], argv[n + 2]);
	else if (state_file_lock(sf, &print)) {
		state_file_unlock(sf);
		status = SP_EXIT_OK;
	} else
		status = SP_EXIT_INTERNAL;
	state_file_free(sf);
	policy_free(p);
	return status;
}
