/*
 * The `sp` subcommands.  Each takes the arguments after its own name
 * (argv[0] is the subcommand name) and returns a sysexits(3) status.
 */
#ifndef SP_CLI_COMMANDS_H
#define SP_CLI_COMMANDS_H

#include "common/exit.h"

/* sp audit verify [--key FILE] FILE (cli/cmd_audit.c) */
int cmd_audit(int argc, char **argv);

/* sp check [--config FILE]: validate a policy (cli/cmd_check.c). */
int cmd_check(int argc, char **argv);

/* sp journal [--config FILE] [resolve KEY done|failed] (cli/cmd_journal.c). */
int cmd_journal(int argc, char **argv);

/* sp state init [--config FILE] [--grant ROLE]: the shared state's schema
 * in PostgreSQL (cli/cmd_state.c). */
int cmd_state(int argc, char **argv);

/* sp approve [--config FILE | --state-dir DIR] --list | ID [--deny]
 * (cli/cmd_approve.c) */
int cmd_approve(int argc, char **argv);

/* sp catalog [--config FILE] [--profile NAME] (cli/cmd_catalog.c). */
int cmd_catalog(int argc, char **argv);

/* sp call [--config FILE] [--profile NAME] TOOL [ARGS_JSON]: one call
 * through an sp mcp session (cli/cmd_call.c); 0 when its outcome is
 * ok, 1 for any other. */
int cmd_call(int argc, char **argv);

/* sp metrics [--config FILE] [--audit FILE]...: the Prometheus text of
 * the audit log and the shared state (cli/cmd_metrics.c). */
int cmd_metrics(int argc, char **argv);

/* sp mcp [--config FILE] [--profile NAME] (cli/cmd_mcp.c) */
int cmd_mcp(int argc, char **argv);

/* sp demo: a short MCP session against a local target (cli/cmd_demo.c) */
int cmd_demo(int argc, char **argv);

/* sp connect SOCKET: relay stdin/stdout to a unix socket
 * (cli/cmd_connect.c); 69 when it cannot connect, 74 on an I/O
 * error. */
int cmd_connect(int argc, char **argv);

#endif
