/*
 * The broker of `sp mcp` (docs/design.md section 1): what the command line
 * (cli/cmd_mcp.c) calls, in this order.
 */
#ifndef SP_BROKER_BROKER_H
#define SP_BROKER_BROKER_H

/* What the command line chose; the strings are the caller's. */
struct broker_options {
	const char *config;	/* --config, or NULL for the lookup order */
	const char *profile;	/* --profile, or NULL: chosen by the peer */
};

/*
 * First of all: files made under umask 077, fd 2 checked, fd 1 set aside
 * for the frontend and pointed at stderr.  Returns the set-aside copy of
 * fd 1 (close-on-exec), which the caller passes to broker_main(); ends the
 * process when it cannot.
 */
int broker_set_stdout_aside(void);

/*
 * Runs one session to its end and returns its sysexits(3) status.
 * Takes client_out (the set-aside fd 1) and closes it.
 */
int broker_main(const struct broker_options *o, int client_out);

#endif
