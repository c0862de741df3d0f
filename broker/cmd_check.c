/*
 * sp check [--config FILE]: validate a policy and print every problem as
 * "FILE:LINE:COL: message".  Diagnostics go to stderr (stdout stays
 * silent, as everywhere in sp but the protocol writer and sp catalog);
 * exit 0 when the policy is valid (warnings allowed), 78 otherwise.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "broker/cmd_args.h"
#include "broker/commands.h"
#include "common/log.h"
#include "policy/load.h"
#include "policy/source.h"

static void
check_print(const struct policy_diags *diags)
{
	size_t i;

	for (i = 0; i < diags->count; i++)
		fprintf(stderr, "%s\n", diags->items[i].text);
}

static int
check_policy(const char *path, const char *bytes, size_t len)
{
	struct policy_diags diags = { 0 };
	struct policy *policy;
	int status = SP_EXIT_CONFIG;

	policy = policy_load(path, bytes, len, &diags);
	if (policy != NULL) {
		policy_check_catalog_pin(policy, path, &diags);
		policy_check_credential_files(policy, path, &diags);
		policy_check_state_dir(policy, path, &diags);
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

int
cmd_check(int argc, char **argv)
{
	struct cmd_args args;
	const char *path;
	char *bytes, why[128];
	size_t len;
	int status;

	if (!cmd_args_parse(argc, argv, false, &args)) {
		fprintf(stderr, "usage: sp check [--config FILE]\n");
		return SP_EXIT_USAGE;
	}
	path = policy_config_path(args.config);
	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: cannot read the policy: %s\n", path, why);
		return SP_EXIT_CONFIG;
	}
	status = check_policy(path, bytes, len);
	free(bytes);
	return status;
}
