/*
 * A stand-in for a Sallyport child, for tests of the whole start-up chain
 * in a fresh image: exec'd by spawn_child() with fd 3 (ready, written once
 * confined) and fd 4 (hold, read until the test closes it), it runs the
 * start-up order of common/sandbox.h as `sandbox_child ROLE ACTION
 * [CHROOT]` and then does ACTION:
 *
 *   wait     read fd 4 until EOF, exit 0
 *   stdout   write a line to stdout (which must land on stderr), exit 0
 *   open     open /etc/passwd           socket   socket(AF_INET)
 *   openw    open /dev/null for write   execve   exec /bin/true
 *
 * A forbidden ACTION is killed by SIGSYS; if it returns, exit 0.  Exits
 * 71 (and says why on stderr) when confinement fails, 64 on bad usage.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/log.h"
#include "common/sandbox.h"

#define READY_FD 3
#define HOLD_FD 4

static bool
role_by_name(const char *name, enum record_role *role)
{
	if (strcmp(name, "frontend") == 0)
		*role = RECORD_ROLE_FRONTEND;
	else if (strcmp(name, "executor") == 0)
		*role = RECORD_ROLE_EXECUTOR;
	else if (strcmp(name, "broker") == 0)
		*role = RECORD_ROLE_BROKER;
	else
		return false;
	return true;
}

static void
confine(enum record_role role, const char *chroot_dir)
{
	struct sandbox_spec spec = { .role = role, .mode = SANDBOX_REQUIRED,
	    .chroot_dir = chroot_dir, .parent = getppid() };
	struct sandbox_report report;

	if (geteuid() == 0 && !sandbox_user_ids("nobody", &spec.uid,
	    &spec.gid))
		fatal(SP_EXIT_SANDBOX, "no user to drop to");
	if (!sandbox_confine(&spec, &report))
		fatal(SP_EXIT_SANDBOX, "sandbox: %s", report.text);
}

static int
act(const char *action)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };
	char c;

	if (strcmp(action, "wait") == 0) {
		while (read(HOLD_FD, &c, 1) > 0)
			continue;
	} else if (strcmp(action, "stdout") == 0) {
		printf("noise on stdout \"$(id)\"\n");
		fflush(stdout);
	} else if (strcmp(action, "open") == 0)
		(void)open("/etc/passwd", O_RDONLY);
	else if (strcmp(action, "openw") == 0)
		(void)open("/dev/null", O_WRONLY);
	else if (strcmp(action, "socket") == 0)
		(void)socket(AF_INET, SOCK_STREAM, 0);
	else if (strcmp(action, "execve") == 0)
		(void)execve("/bin/true", argv, envp);
	return 0;
}

int
main(int argc, char **argv)
{
	enum record_role role;

	log_init("sandbox_child", LOG_LEVEL_INFO);
	if (argc < 3 || argc > 4 || !role_by_name(argv[1], &role))
		fatal(SP_EXIT_USAGE, "usage: sandbox_child ROLE ACTION [CHROOT]");
	/* Invariant 1: only the frontend keeps fd 1. */
	if (role != RECORD_ROLE_FRONTEND && !sandbox_stdout_to_stderr())
		fatal(SP_EXIT_SANDBOX, "cannot point stdout at stderr");
	confine(role, argc == 4 ? argv[3] : NULL);
	if (write(READY_FD, "r", 1) != 1)
		return SP_EXIT_INTERNAL;
	return act(argv[2]);
}
