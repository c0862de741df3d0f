/*
 * sp check [--config FILE] [--user NAME] [--dump]: validate a policy and print
 * every problem as "FILE:LINE:COL: message".  After the loader, the very
 * start-up checks sp mcp runs (policy/startcheck.h, state_dir's owners in
 * state/state_dir.h, child/child.h's user check), so a policy that
 * passes starts; then warnings about grants.
 * With --user, sp check first becomes that user (its groups, gid and
 * uid), so the files are opened as the service that reads them will open
 * them.  Diagnostics go to stderr; stdout stays silent but for --dump,
 * which prints the effective policy there once it is valid (as sshd -T
 * does: policy/dump.h).  Exit 0 when the policy is valid (warnings
 * allowed), 78 otherwise.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "child/child.h"
#include "common/log.h"
#include "policy/dump.h"
#include "policy/load.h"
#include "policy/source.h"
#include "policy/startcheck.h"

static void
check_print(const struct policy_diags *diags)
{
	size_t i;

	for (i = 0; i < diags->count; i++)
		fprintf(stderr, "%s\n", diags->items[i].text);
}

/* The user check of sp mcp, placed at server.run_as. */
/*
 * The shared state as sp mcp connects to it (state/pg.h): the conninfo,
 * the password file, the schema's version and the role's rights.  A
 * database sp mcp would start without (down now) is an error here: the
 * operator asked whether it works.
 */
static void
check_shared_state(const struct policy *policy, const char *path,
    struct policy_diags *diags)
{
	char why[PG_WHY_MAX];
	struct pg_state *pg;
	enum pg_open how;

	if (policy->state_postgres == NULL)
		return;
	pg = pg_state_open(policy, &how, why, sizeof(why));
	pg_state_free(pg);
	if (how != PG_OPEN_UP)
		policy_diags_add(diags, POLICY_DIAG_ERROR, path,
		    policy->state_line, policy->state_col, why);
}

static void
check_users(const struct policy *policy, const char *path,
    struct policy_diags *diags)
{
	char why[POLICY_WHY_MAX * 2];
	int status;

	status = child_drop_users_check(policy, why, sizeof(why));
	if (why[0] == '\0')
		return;
	policy_diags_add(diags, status == SP_EXIT_OK ? POLICY_DIAG_WARNING :
	    POLICY_DIAG_ERROR, path, policy->run_as_line ? policy->run_as_line :
	    1, policy->run_as_col ? policy->run_as_col : 1, why);
}

/*
 * As root without --user, root opens every file, and a secret owned by
 * the service user fails as "owned by uid N" while the service itself
 * would pass: one warning, at the first such file, naming the user to
 * check as.  Only sp check says it; sp mcp runs as who it runs as.
 */
static void
check_user_hint(const struct policy *policy, const char *path,
    struct policy_diags *diags)
{
	const struct policy_file *f;
	struct passwd *pw;
	struct stat st;
	char message[POLICY_WHY_MAX + PATH_MAX];
	size_t i;

	if (geteuid() != 0)
		return;
	for (i = 0; i < policy->file_count; i++) {
		f = &policy->files[i];
		if (lstat(f->path, &st) == -1 || st.st_uid == 0 ||
		    (pw = getpwuid(st.st_uid)) == NULL)
			continue;
		snprintf(message, sizeof(message), "%s belongs to %s (uid %lu) "
		    "and sp check runs as root: sp check --user %s opens the "
		    "files as a service running as %s does", f->path,
		    pw->pw_name, (unsigned long)st.st_uid, pw->pw_name,
		    pw->pw_name);
		policy_diags_add(diags, POLICY_DIAG_WARNING, path, f->line,
		    f->col, message);
		return;
	}
}

/* The effective policy on stdout (sp check --dump), once it is valid. */
static bool
check_dump(const struct policy *policy)
{
	cJSON *tree = policy_dump(policy);
	char *text = tree != NULL ? cJSON_Print(tree) : NULL;
	bool ok = text != NULL && printf("%s\n", text) >= 0 &&
	    fflush(stdout) == 0;

	if (!ok)
		log_error("--dump: %s", text == NULL ? "out of memory" :
		    strerror(errno));
	cJSON_free(text);
	cJSON_Delete(tree);
	return ok;
}

static int
check_policy(const char *path, const char *bytes, size_t len,
    const struct cmd_args *args)
{
	struct policy_diags diags = { 0 };
	struct policy *policy;
	int status = SP_EXIT_CONFIG;

	policy = policy_load(path, bytes, len, &diags);
	if (policy != NULL) {
		(void)policy_check_start(policy, path, &diags, NULL, 0);
		(void)state_dir_check_start(policy, path, &diags, NULL, 0);
		check_shared_state(policy, path, &diags);
		check_users(policy, path, &diags);
		if (args->user == NULL)
			check_user_hint(policy, path, &diags);
		policy_check_grants(policy, path, &diags);
	}
	check_print(&diags);
	if (policy != NULL && diags.errors == 0) {
		fprintf(stderr, "%s: ok: %zu tools, %zu targets, %zu credentials, "
		    "%zu profiles\n", path, policy->tool_count,
		    policy->target_count, policy->credential_count,
		    policy->profile_count);
		status = !args->dump || check_dump(policy) ? SP_EXIT_OK :
		    SP_EXIT_IOERR;
	}
	policy_free(policy);
	policy_diags_free(&diags);
	return status;
}

/* Becomes name for good: its supplementary groups, gid, then uid. */
static bool
check_become(const char *name)
{
	struct passwd *pw;

	errno = 0;
	if ((pw = getpwnam(name)) == NULL) {
		log_error("--user %s: %s", name, errno != 0 ?
		    strerror(errno) : "no such user");
		return false;
	}
	if (pw->pw_uid == geteuid())
		return true;
	if (initgroups(pw->pw_name, pw->pw_gid) == -1 ||
	    setgid(pw->pw_gid) == -1 || setuid(pw->pw_uid) == -1) {
		log_error("cannot become user %s: %s (only root can)", name,
		    strerror(errno));
		return false;
	}
	return true;
}

int
cmd_check(int argc, char **argv)
{
	struct cmd_args args;
	const char *path;
	char *bytes, why[128];
	size_t len;
	int status;

	if (!cmd_args_parse(argc, argv, CMD_ARG_USER | CMD_ARG_DUMP, &args)) {
		fprintf(stderr, "usage: sp check [--config FILE] [--user NAME] "
		    "[--dump]\n");
		return SP_EXIT_USAGE;
	}
	if (args.user != NULL && !check_become(args.user))
		return SP_EXIT_CONFIG;
	path = policy_config_path(args.config);
	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: cannot read the policy: %s\n", path, why);
		return SP_EXIT_CONFIG;
	}
	status = check_policy(path, bytes, len, &args);
	free(bytes);
	return status;
}
