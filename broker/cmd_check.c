/*
 * sp check [--config FILE] [--user NAME]: validate a policy and print
 * every problem as "FILE:LINE:COL: message".  After the loader, the very
 * start-up checks sp mcp runs (policy/startcheck.h, state_dir's owners in
 * broker/state_dir.h, child/child.h's user check), so a policy that
 * passes starts; then warnings about grants.
 * With --user, sp check first becomes that user (its groups, gid and
 * uid), so the files are opened as the service that reads them will open
 * them.  Diagnostics go to stderr (stdout stays silent, as everywhere in
 * sp but the protocol writer and sp catalog); exit 0 when the policy is
 * valid (warnings allowed), 78 otherwise.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/cmd_args.h"
#include "broker/commands.h"
#include "broker/state_dir.h"
#include "child/child.h"
#include "common/log.h"
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

static int
check_policy(const char *path, const char *bytes, size_t len)
{
	struct policy_diags diags = { 0 };
	struct policy *policy;
	int status = SP_EXIT_CONFIG;

	policy = policy_load(path, bytes, len, &diags);
	if (policy != NULL) {
		(void)policy_check_start(policy, path, &diags, NULL, 0);
		(void)state_dir_check_start(policy, path, &diags, NULL, 0);
		check_users(policy, path, &diags);
		policy_check_grants(policy, path, &diags);
	}
	check_print(&diags);
	if (policy != NULL && diags.errors == 0) {
		fprintf(stderr, "%s: ok: %zu tools, %zu targets, %zu credentials, "
		    "%zu profiles\n", path, policy->tool_count,
		    policy->target_count, policy->credential_count,
		    policy->profile_count);
		status = SP_EXIT_OK;
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

	if (!cmd_args_parse(argc, argv, CMD_ARG_USER, &args)) {
		fprintf(stderr, "usage: sp check [--config FILE] [--user NAME]\n");
		return SP_EXIT_USAGE;
	}
	if (args.user != NULL && !check_become(args.user))
		return SP_EXIT_CONFIG;
	path = policy_config_path(args.config);
	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: cannot read the policy: %s\n", path, why);
		return SP_EXIT_CONFIG;
	}
	status = check_policy(path, bytes, len);
	free(bytes);
	return status;
}
