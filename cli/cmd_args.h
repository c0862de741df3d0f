/*
 * The options sp check, sp catalog and sp mcp share: --config FILE,
 * --profile NAME and (sp check) --user NAME and --dump, each option with
 * a value also as --config=FILE,
 * so an operator can write either form to any of them.
 */
#ifndef SP_CLI_CMD_ARGS_H
#define SP_CLI_CMD_ARGS_H

#include <stdbool.h>

struct cmd_args {
	const char *config;	/* points into argv; NULL when not given */
	const char *profile;	/* points into argv; NULL when not given */
	const char *user;	/* points into argv; NULL when not given */
	bool dump;		/* CMD_ARG_DUMP: --dump was given */
	const char *words[2];	/* CMD_ARG_WORDS: the other words, in order */
	int word_count;
};

#define CMD_ARG_PROFILE 0x1	/* --profile is taken */
#define CMD_ARG_USER 0x2	/* --user is taken */
#define CMD_ARG_WORDS 0x4	/* up to two words not starting "--" */
#define CMD_ARG_DUMP 0x8	/* --dump is taken (a flag, no value) */

/*
 * Parses argv[1..argc-1] (argv[0] is the subcommand's name) into a;
 * options (CMD_ARG_*) says which beyond --config are taken.  A later
 * repeat of an option wins, as with most commands.  false on anything
 * else: an unknown word, or an option with no value after it.
 */
bool cmd_args_parse(int argc, char **argv, unsigned options,
    struct cmd_args *a);

struct policy;
/*
 * The policy at config (NULL: the default path), read and loaded; NULL
 * after one stderr line, prefixed with command, when it cannot be read
 * or does not load (sp check says why).  The caller frees it
 * (policy_free).
 */
struct policy *cmd_policy_load(const char *command, const char *config);

#endif
