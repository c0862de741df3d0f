/*
 * sp metrics [--config FILE] [--audit FILE]...
 *
 * Prints the Prometheus text exposition (cli/metrics_text.h) of what the
 * audit log and the shared state say now (docs/sp.1, METRICS): the
 * audit counts of cli/metrics_audit.h, over the policy's audit.path and
 * the files logrotate made of it (audit.jsonl.N ... audit.jsonl.1, then
 * audit.jsonl: sp-audit(5) ROTATION), or over the files --audit names,
 * oldest first; and the state backend's (state/state_summary.h).  Reads
 * only: nothing is written but stdout.
 *
 * Exit statuses (docs/sp.1): 0 written (a broken chain or state that
 * cannot be read is a metric, sallyport_audit_chain_intact 0 or
 * sallyport_state_up 0, so the collector still sees it); 64 usage; 66 an
 * audit file cannot be read; 74 stdout cannot be written; 78 the policy
 * does not load.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit_verify.h"
#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "cli/metrics_audit.h"
#include "cli/metrics_text.h"
#include "common/log.h"
#include "policy/load.h"
#include "state/state_summary.h"

#define METRICS_USAGE "usage: sp metrics [--config FILE] [--audit FILE]..."

static const struct metrics_family fam_state_up = {
	"sallyport_state_up", "gauge",
	"1 when the shared state was read, 0 when it could not be (absent "
	"without state_dir).", { "backend", NULL } };
static const struct metrics_family fam_spent = {
	"sallyport_limit_spent", "gauge",
	"Calls counted today (UTC) against a tool's per_day, by whose count "
	"they are.", { "tool", "limit", "who" } };
static const struct metrics_family fam_max = {
	"sallyport_limit_max", "gauge",
	"A tool's per_day limit.", { "tool", "limit", NULL } };
static const struct metrics_family fam_journal = {
	"sallyport_journal_entries", "gauge",
	"Idempotency journal entries by tool and state, as a call now would "
	"take them (a pending entry past twice the budget is unknown).",
	{ "tool", "state", NULL } };

struct metrics_args {
	const char *config;		/* borrowed from argv */
	const char **audit;		/* owned array, borrowed strings */
	size_t audit_count;
};

/* --NAME VALUE or --NAME=VALUE at argv[*i]: its value, else NULL. */
static const char *
metrics_option(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(argv[*i], name) == 0 && *i + 1 < argc)
		return argv[++*i];
	if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	return NULL;
}

static bool
metrics_parse(int argc, char **argv, struct metrics_args *a)
{
	const char *v;
	int i;

	memset(a, 0, sizeof(*a));
	if ((a->audit = calloc((size_t)argc, sizeof(*a->audit))) == NULL)
		return false;
	for (i = 1; i < argc; i++) {
		if ((v = metrics_option(argc, argv, &i, "--config")) != NULL)
			a->config = v;
		else if ((v = metrics_option(argc, argv, &i, "--audit")) !=
		    NULL && a->audit_count < AUDIT_VERIFY_FILES_MAX)
			a->audit[a->audit_count++] = v;
		else
			return false;
	}
	return true;
}

static bool
metrics_file_there(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 || errno != ENOENT;
}

/*
 * The policy's log and the rotated files logrotate left beside it,
 * oldest first, into *paths (owned, each owned); the log itself only
 * when it is there (no session yet: nothing to count).
 */
static bool
metrics_default_files(const char *log_path, char ***paths, size_t *n)
{
	char name[4096];
	size_t rotated = 0, i;

	*n = 0;
	while (rotated + 1 < AUDIT_VERIFY_FILES_MAX &&
	    (size_t)snprintf(name, sizeof(name), "%s.%zu", log_path,
	    rotated + 1) < sizeof(name) && metrics_file_there(name))
		rotated++;
	if ((*paths = calloc(rotated + 1, sizeof(**paths))) == NULL)
		return false;
	for (i = rotated; i > 0; i--) {
		snprintf(name, sizeof(name), "%s.%zu", log_path, i);
		if (((*paths)[(*n)++] = strdup(name)) == NULL)
			return false;
	}
	if (metrics_file_there(log_path) &&
	    ((*paths)[(*n)++] = strdup(log_path)) == NULL)
		return false;
	return true;
}

static void
metrics_files_free(char **paths, size_t n)
{
	size_t i;

	for (i = 0; paths != NULL && i < n; i++)
		free(paths[i]);
	free(paths);
}

static bool
metrics_audit(struct metrics *m, const struct policy *p,
    const struct metrics_args *a)
{
	char **paths = NULL;
	size_t n = 0;
	bool ok;

	if (a->audit_count > 0)
		return metrics_audit_count(m, p, a->audit, a->audit_count);
	if (p->audit_path != NULL &&
	    !metrics_default_files(p->audit_path, &paths, &n)) {
		log_error("metrics: out of memory");
		metrics_files_free(paths, n);
		return false;
	}
	ok = metrics_audit_count(m, p, (const char *const *)paths, n);
	metrics_files_free(paths, n);
	return ok;
}

static void
metrics_state_counts(struct metrics *m, const struct policy *p,
    const struct state_summary *s)
{
	const char *v[3];
	size_t i, st;

	for (i = 0; i < p->tool_count; i++) {
		v[0] = p->tools[i].name;
		v[1] = "per_day";
		if (p->tools[i].limits.per_day != 0)
			(void)metrics_set(m, &fam_max, v, p->tools[i].limits.per_day);
		for (st = 0; p->tools[i].idem_window_s != 0 &&
		    st < JOURNAL_STATES; st++) {
			v[1] = journal_state_names[st];
			(void)metrics_set(m, &fam_journal, v, s->journal[i][st]);
		}
	}
	for (i = 0; i < s->spend_count; i++) {
		v[0] = p->tools[s->spend[i].tool].name;
		v[1] = "per_day";
		v[2] = s->spend[i].who;
		(void)metrics_set(m, &fam_spent, v, s->spend[i].spent);
	}
}

/*
 * The state's families, and sallyport_state_up at 0 until it is read:
 * made before the audit counts, which could otherwise fill
 * METRICS_SERIES_MAX and leave the gauge an alert watches without a
 * sample.  Without shared state, nothing of it is written.
 */
static void
metrics_state_declare(struct metrics *m, const struct policy *p)
{
	const char *v[1];

	if (state_summary_backend_of(p) == STATE_SUMMARY_NONE)
		return;
	(void)metrics_declare(m, &fam_state_up);
	(void)metrics_declare(m, &fam_spent);
	(void)metrics_declare(m, &fam_max);
	(void)metrics_declare(m, &fam_journal);
	v[0] = state_summary_backend_name(state_summary_backend_of(p));
	(void)metrics_set(m, &fam_state_up, v, 0);
}

static void
metrics_state(struct metrics *m, const struct policy *p)
{
	struct state_summary s;
	const char *v[1];
	char why[256];
	bool up;

	if (state_summary_backend_of(p) == STATE_SUMMARY_NONE)
		return;
	if (!(up = state_summary_read(p, &s, why, sizeof(why))))
		log_error("metrics: %s", why);
	v[0] = state_summary_backend_name(state_summary_backend_of(p));
	(void)metrics_set(m, &fam_state_up, v, up ? 1 : 0);
	if (up)
		metrics_state_counts(m, p, &s);
	if (s.truncated)
		metrics_mark_truncated(m);
	state_summary_free(&s);
}

int
cmd_metrics(int argc, char **argv)
{
	struct metrics_args a;
	struct metrics *m = NULL;
	struct policy *p = NULL;
	int status = SP_EXIT_NOINPUT;

	if (!metrics_parse(argc, argv, &a)) {
		log_error(METRICS_USAGE);
		free(a.audit);
		return SP_EXIT_USAGE;
	}
	if ((p = cmd_policy_load("metrics", a.config)) == NULL)
		status = SP_EXIT_CONFIG;
	else if ((m = metrics_new()) == NULL)
		status = SP_EXIT_INTERNAL;
	else if (metrics_state_declare(m, p), metrics_audit(m, p, &a)) {
		metrics_state(m, p);
		status = metrics_write(m, stdout) ? SP_EXIT_OK : SP_EXIT_INTERNAL;
		if (fflush(stdout) != 0 || ferror(stdout)) {
			log_error("cannot write to standard output");
			status = SP_EXIT_IOERR;
		}
	}
	metrics_free(m);
	policy_free(p);
	free(a.audit);
	return status;
}
