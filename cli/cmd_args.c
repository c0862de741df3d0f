/* cli/cmd_args.h: the options sp check, sp catalog and sp mcp share. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd_args.h"
#include "policy/load.h"
#include "policy/source.h"

/*
 * Matches argv[*i] against --NAME VALUE or --NAME=VALUE; on a match sets
 * *value (advancing *i past a separate value) and returns true.  *bad is
 * set when --NAME is the last word, with no value after it.
 */
static bool
cmd_args_option(int argc, char **argv, int *i, const char *name,
    const char **value, bool *bad)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strcmp(arg, name) == 0) {
		if (*i + 1 >= argc) {
			*bad = true;
			return true;
		}
		*value = argv[++*i];
		return true;
	}
	if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
		*value = arg + n + 1;
		return true;
	}
	return false;
}

bool
cmd_args_parse(int argc, char **argv, unsigned options, struct cmd_args *a)
{
	bool bad = false;
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc && !bad; i++) {
		if (cmd_args_option(argc, argv, &i, "--config", &a->config,
		    &bad))
			continue;
		if ((options & CMD_ARG_PROFILE) != 0 && cmd_args_option(argc,
		    argv, &i, "--profile", &a->profile, &bad))
			continue;
		if ((options & CMD_ARG_USER) != 0 && cmd_args_option(argc,
		    argv, &i, "--user", &a->user, &bad))
			continue;
		if ((options & CMD_ARG_DUMP) != 0 &&
		    strcmp(argv[i], "--dump") == 0) {
			a->dump = true;
			continue;
		}
		if ((options & CMD_ARG_WORDS) != 0 &&
		    strncmp(argv[i], "--", 2) != 0 && a->word_count < 2) {
			a->words[a->word_count++] = argv[i];
			continue;
		}
		return false;
	}
	return !bad;
}

struct policy *
cmd_policy_load(const char *command, const char *config)
{
	struct policy_diags diags = { 0 };
	const char *path = policy_config_path(config);
	struct policy *p = NULL;
	char *bytes, why[128];
	size_t len;

	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: %s: cannot read the policy: %s\n", command,
		    path, why);
		return NULL;
	}
	p = policy_load(path, bytes, len, &diags);
	free(bytes);
	if (p != NULL && diags.errors > 0) {
		policy_free(p);
		p = NULL;
	}
	if (p == NULL)
		fprintf(stderr, "%s: %s: the policy does not load (sp check "
		    "says why)\n", command, path);
	policy_diags_free(&diags);
	return p;
}
