/*
 * sp: the one binary.  The first argument names a subcommand (DESIGN.md
 * section 3); each lives in its own file and is listed in sp_commands.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "broker/commands.h"
#include "executor/executor.h"
#include "frontend/frontend.h"
#include "common/log.h"

struct sp_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct sp_command sp_commands[] = {
	{ "audit", cmd_audit, "audit verify [--key FILE] [--json] FILE..." },
	{ "check", cmd_check, "check [--config FILE]" },
	{ "catalog", cmd_catalog, "catalog [--config FILE] [--profile NAME]" },
	{ "mcp", cmd_mcp, "mcp [--config FILE] [--profile NAME]" },
	{ "demo", cmd_demo, "demo" },
	{ "connect", cmd_connect, "connect SOCKET" },
	/* Internal roles the broker execs; not for people, so no usage. */
	{ ".frontend", frontend_main, NULL },
	{ ".executor", executor_main, NULL },
	{ NULL, NULL, NULL },
};

static void
sp_usage(void)
{
	const struct sp_command *c;

	fprintf(stderr, "usage: sp COMMAND [ARGS]\n");
	for (c = sp_commands; c->name != NULL; c++)
		if (c->usage != NULL)
			fprintf(stderr, "       sp %s\n", c->usage);
}

int
main(int argc, char **argv)
{
	const struct sp_command *c;

	log_init("sp", LOG_LEVEL_INFO);
	if (argc < 2) {
		sp_usage();
		return SP_EXIT_USAGE;
	}
	for (c = sp_commands; c->name != NULL; c++)
		if (strcmp(c->name, argv[1]) == 0)
			return c->run(argc - 1, argv + 1);
	log_error("unknown command '%s'", argv[1]);
	sp_usage();
	return SP_EXIT_USAGE;
}
