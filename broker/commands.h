/*
 * The `sp` subcommands.  Each takes the arguments after its own name
 * (argv[0] is the subcommand name) and returns a sysexits(3) status.
 */
#ifndef SP_BROKER_COMMANDS_H
#define SP_BROKER_COMMANDS_H

/* Exit statuses of DESIGN.md section 3 (sysexits). */
#define SP_EXIT_OK 0
#define SP_EXIT_USAGE 64
#define SP_EXIT_MALFORMED 65
#define SP_EXIT_INTERNAL 70
#define SP_EXIT_SANDBOX 71
#define SP_EXIT_CONFIG 78
#define SP_EXIT_AUDIT_BROKEN 1	/* sp audit verify: the chain is broken */
#define SP_EXIT_NOINPUT 66	/* a file to read cannot be read */

/* sp audit verify [--key FILE] FILE (broker/cmd_audit.c) */
int cmd_audit(int argc, char **argv);

/* sp check [--config FILE]: validate a policy (broker/cmd_check.c). */
int cmd_check(int argc, char **argv);

/* sp catalog [--config FILE] [--profile NAME] (broker/cmd_catalog.c). */
int cmd_catalog(int argc, char **argv);

/* sp mcp [--config FILE] [--profile NAME] (broker/mcp.c) */
int cmd_mcp(int argc, char **argv);

/* sp demo: a short MCP session against a local target (broker/cmd_demo.c) */
int cmd_demo(int argc, char **argv);

/* sp connect SOCKET: relay stdin/stdout to a unix socket
 * (broker/cmd_connect.c); 69 when it cannot connect, 74 on an I/O
 * error. */
#define SP_EXIT_UNAVAILABLE 69
#define SP_EXIT_IOERR 74
#define SP_EXIT_BUDGET 75	/* sp mcp: calls went on past calls_per_session */
int cmd_connect(int argc, char **argv);

#endif
