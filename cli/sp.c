/*
 * sp: the command a person or an MCP client runs (docs/design.md section
 * 3).  The first argument names a subcommand; each lives in its own file
 * and is listed in sp_commands.  The children of `sp mcp` are programs of
 * their own (broker/children.h).
 * `sp help`, `sp COMMAND --help` and `sp --version` write to stdout:
 * they are asked for by a person, never by an MCP client, and stdout
 * carries the protocol only inside `sp mcp` (docs/design.md section 3).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_journal.h"
#include "cli/commands.h"
#include "common/log.h"

typedef int sp_main_fn(int argc, char **argv);

struct sp_command {
	const char *name;
	sp_main_fn *run;
	const char *usage;
	const char *summary;	/* one line for `sp help COMMAND` */
};

static int sp_help(int, char **);
static int sp_version(int, char **);

static const struct sp_command sp_commands[] = {
	{ "audit", cmd_audit, "audit verify [--key FILE] [--json] [--anchors JOURNAL] FILE...",
	    "Check an audit log's hash chain (and its HMACs with --key)." },
	{ "check", cmd_check, "check [--config FILE] [--user NAME] [--dump]",
	    "Validate a policy file; one line per problem on stderr." },
	{ "catalog", cmd_catalog, "catalog [--config FILE] [--profile NAME]",
	    "Print the tools a profile is offered, as an MCP client sees them." },
	{ "mcp", cmd_mcp, "mcp [--config FILE] [--profile NAME]",
	    "Serve MCP on stdin and stdout (what an MCP client starts)." },
	{ "journal", cmd_journal, "journal [--config FILE] [resolve KEY done|failed]",
	    "Print the idempotency journal, or record a call's real outcome." },
	{ "state", cmd_state, "state init [--config FILE] [--grant ROLE]",
	    "Make or upgrade the shared state's schema in PostgreSQL." },
	{ "call", cmd_call, "call [--config FILE] [--profile NAME] TOOL [ARGS_JSON]",
	    "Make one tool call through a full session; its result on stdout." },
	{ "approve", cmd_approve, "approve [--config FILE | --state-dir DIR] --list | ID [--deny]",
	    "List the calls waiting for an operator, or approve or deny one." },
	{ "metrics", cmd_metrics, "metrics [--config FILE] [--audit FILE]...",
	    "Print counts from the audit log and the shared state for "
	    "Prometheus." },
	{ "demo", cmd_demo, "demo",
	    "Run a short MCP session against a local target and print it." },
	{ "connect", cmd_connect, "connect SOCKET",
	    "Relay stdin and stdout to a system instance's unix socket." },
	{ "help", sp_help, "help [COMMAND]",
	    "Print the usage of every command, or of one." },
	{ "--version", sp_version, "--version",
	    "Print the version and the features this sp was built with." },
	{ NULL, NULL, NULL, NULL },
};

/* The command a person may name, or NULL. */
static const struct sp_command *
sp_command_find(const char *name)
{
	const struct sp_command *c;

	for (c = sp_commands; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static void
sp_usage(FILE *fp)
{
	const struct sp_command *c;

	fprintf(fp, "usage: sp COMMAND [ARGS]\n");
	for (c = sp_commands; c->name != NULL; c++)
		fprintf(fp, "       sp %s\n", c->usage);
}

/* Output a person asked for: a failed write is an I/O error (sp(1)). */
static int
sp_stdout_status(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error("cannot write to standard output");
		return SP_EXIT_IOERR;
	}
	return SP_EXIT_OK;
}

static int
sp_command_help(const struct sp_command *c)
{
	printf("usage: sp %s\n%s\nSee sp(1) for the details.\n", c->usage,
	    c->summary);
	return sp_stdout_status();
}

/* sp help [COMMAND] (argv[0] is "help" or "--help") */
static int
sp_help(int argc, char **argv)
{
	const struct sp_command *c;

	if (argc == 1) {
		sp_usage(stdout);
		return sp_stdout_status();
	}
	if (argc == 2 && (c = sp_command_find(argv[1])) != NULL)
		return sp_command_help(c);
	if (argc == 2)
		log_error("unknown command '%s'", argv[1]);
	sp_usage(stderr);
	return SP_EXIT_USAGE;
}

/*
 * The features a bug report needs: sanitizers (from configure's CFLAGS),
 * the test hooks (tests/sp-test only), and journald: yes when the audit
 * anchors go there (built with libsystemd), no when they go to syslog(3)
 * (audit/audit_journal.h); postgres: the policy's "state" can be used
 * (built with libpq, state/pg.h).
 */
static int
sp_version(int argc, char **argv)
{
	bool hooks = false, postgres = false;

	(void)argv;
	if (argc != 1) {
		sp_usage(stderr);
		return SP_EXIT_USAGE;
	}
#ifdef SP_TEST_HOOKS
	hooks = true;
#endif
#ifdef SP_HAVE_LIBPQ
	postgres = true;
#endif
	printf("sp (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
	printf("features: sanitizers=%s test-hooks=%s journald=%s "
	    "postgres=%s\n", SP_BUILD_SANITIZERS, hooks ? "yes" : "no",
	    strcmp(audit_journal_feature, "journald") == 0 ? "yes" : "no",
	    postgres ? "yes" : "no");
	return sp_stdout_status();
}

/* True if --help is one of the command's words (argv[0] is its name). */
static bool
sp_asks_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0)
			return true;
	return false;
}

/*
 * SP_LOG_LEVEL (sp(1)): read here alone; sp mcp hands the level to its
 * children on their command line (child/child.h).  Unset or empty: info.
 */
static bool
sp_log_init(void)
{
	const char *word = getenv("SP_LOG_LEVEL");
	enum log_level level = LOG_LEVEL_INFO;
	bool ok;

	ok = word == NULL || word[0] == '\0' || log_level_by_name(word, &level);
	log_init("sp", level);
	if (ok)
		return true;
	/* Said before any command ran: not into a protocol on stdout. */
	if (log_keep_off_stdout())
		log_error("SP_LOG_LEVEL must be error, warning, info or debug");
	return false;
}

int
main(int argc, char **argv)
{
	const struct sp_command *c;

	if (!sp_log_init())
		return SP_EXIT_USAGE;
	if (argc < 2) {
		sp_usage(stderr);
		return SP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0)
		return sp_help(argc - 1, argv + 1);
	c = sp_command_find(argv[1]);
	if (c != NULL && sp_asks_help(argc - 1, argv + 1))
		return sp_command_help(c);
	if (c != NULL)
		return c->run(argc - 1, argv + 1);
	log_error("unknown command '%s'", argv[1]);
	sp_usage(stderr);
	return SP_EXIT_USAGE;
}
