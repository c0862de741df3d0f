/*
 * sp journal [--config FILE] [resolve KEY done|failed]: the idempotency
 * journal in the policy's state_dir (state/journal.h).  Without
 * arguments its lines go to stdout as they are (the last of a key wins);
 * resolve records what an operator found out about a call whose outcome
 * was unknown, so an identical call is replayed (done) or sent again
 * (failed), and writes a "journal-resolve" record to the audit log.
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
	struct policy_diags diags = { 0 };
	const char *path = policy_config_path(config);
	struct policy *p = NULL;
	char *bytes, why[128];
	size_t len;

	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: cannot read the policy: %s\n", path, why);
		return NULL;
	}
	p = policy_load(path, bytes, len, &diags);
	free(bytes);
	if (p == NULL || diags.errors > 0)
		fprintf(stderr, "%s: the policy does not load (sp check says "
		    "why)\n", path);
	if (p != NULL && diags.errors == 0 && p->state_dir == NULL)
		fprintf(stderr, "%s: names no state_dir: the journal lives in "
		    "each session and ends with it\n", path);
	if (p != NULL && (diags.errors > 0 || p->state_dir == NULL)) {
		policy_free(p);
		p = NULL;
	}
	policy_diags_free(&diags);
	return p;
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
