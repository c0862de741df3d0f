/*
 * sp state init [--config FILE] [--grant ROLE]: the shared state's schema
 * (state/schema.sql) made or upgraded in the database the policy's
 * "state" names, in one transaction, and with --grant the rights the
 * sessions' role needs (USAGE on the schema, EXECUTE on its functions;
 * docs/design.md section 9.2).  Run by an operator, as a role that may
 * create the schema: its owner.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "state/pg.h"
#include "policy/load.h"

#define STATE_USAGE "usage: sp state init [--config FILE] [--grant ROLE]\n"

/* --grant ROLE taken out of argv (in place); false when it has no value. */
static bool
state_take_grant(int *argc, char **argv, const char **role)
{
	int i, j;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--grant") != 0)
			continue;
		if (i + 1 >= *argc || argv[i + 1][0] == '\0')
			return false;
		*role = argv[i + 1];
		for (j = i; j + 2 <= *argc; j++)
			argv[j] = argv[j + 2];
		*argc -= 2;
		i--;
	}
	return true;
}

static int
state_init(const struct policy *p, const char *role)
{
	char why[PG_WHY_MAX];
	int was = 0;

	if (p->state_postgres == NULL) {
		fprintf(stderr, "sp state: the policy names no \"state\": "
		    "nothing is shared beyond this host\n");
		return SP_EXIT_CONFIG;
	}
	if (!pg_state_init(p, role, &was, why, sizeof(why))) {
		fprintf(stderr, "sp state: %s\n", why);
		return SP_EXIT_UNAVAILABLE;
	}
	if (was == PG_SCHEMA_VERSION)
		printf("schema version %d: up to date", PG_SCHEMA_VERSION);
	else
		printf("schema version %d: made (it was %d)", PG_SCHEMA_VERSION,
		    was);
	printf("%s%s\n", role != NULL ? "; granted to " : "",
	    role != NULL ? role : "");
	return SP_EXIT_OK;
}

int
cmd_state(int argc, char **argv)
{
	const char *role = NULL;
	struct cmd_args args;
	struct policy *p;
	int status;

	if (!state_take_grant(&argc, argv, &role) ||
	    !cmd_args_parse(argc, argv, CMD_ARG_WORDS, &args) ||
	    args.word_count != 1 || strcmp(args.words[0], "init") != 0) {
		fputs(STATE_USAGE, stderr);
		return SP_EXIT_USAGE;
	}
	if ((p = cmd_policy_load("sp state", args.config)) == NULL)
		return SP_EXIT_CONFIG;
	status = state_init(p, role);
	policy_free(p);
	return status;
}
