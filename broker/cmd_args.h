/*
 * The options sp check, sp catalog and sp mcp share: --config FILE and
 * --profile NAME, each also as --config=FILE and --profile=NAME, so an
 * operator can write either form to any of the three.
 */
#ifndef SP_BROKER_CMD_ARGS_H
#define SP_BROKER_CMD_ARGS_H

#include <stdbool.h>

struct cmd_args {
	const char *config;	/* points into argv; NULL when not given */
	const char *profile;	/* points into argv; NULL when not given */
};

/*
 * Parses argv[1..argc-1] (argv[0] is the subcommand's name) into a;
 * with_profile false refuses --profile (sp check has none).  A later
 * repeat of an option wins, as with most commands.  false on anything
 * else: an unknown word, or an option with no value after it.
 */
bool cmd_args_parse(int argc, char **argv, bool with_profile,
    struct cmd_args *a);

#endif
