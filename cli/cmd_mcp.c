/*
 * sp mcp [--config FILE] [--profile NAME]: its arguments, then the broker
 * (broker/broker.h), which runs the session.
 */
#include "config.h"

#include <unistd.h>

#include "broker/broker.h"
#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "common/log.h"

int
cmd_mcp(int argc, char **argv)
{
	struct broker_options o;
	struct cmd_args a;
	int client_out;

	/* fd 1 is set aside before anything, a usage line included, can
	 * be written. */
	client_out = broker_set_stdout_aside();
	if (!cmd_args_parse(argc, argv, CMD_ARG_PROFILE, &a)) {
		log_error("usage: sp mcp [--config FILE] [--profile NAME]");
		(void)close(client_out);
		return SP_EXIT_USAGE;
	}
	o.config = a.config;
	o.profile = a.profile;
	return broker_main(&o, client_out);
}
