/*
 * Test hooks (broker/test_hook.h).  Compiled empty unless SP_TEST_HOOKS.
 */
#include "config.h"

#include "broker/test_hook.h"

#ifdef SP_TEST_HOOKS

#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

/* A line that must never be mistaken for protocol. */
static const char test_hook_noise[] = "NOISE from a test hook on fd 1\n";

static void
test_hook_connect(void)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(9);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* fd 0 is not a socket: only the syscall matters. */
	(void)connect(0, (struct sockaddr *)&sin, sizeof(sin));
}

static void
test_hook_act(const char *action)
{
	char *const argv[] = { (char *)"/bin/true", NULL };

	log_info("test hook: %s", action);
	if (strcmp(action, "open") == 0)
		(void)open("/etc/passwd", O_RDONLY);
	else if (strcmp(action, "open-write") == 0)
		(void)open("/tmp/sp-test-hook", O_WRONLY | O_CREAT, 0600);
	else if (strcmp(action, "socket") == 0)
		(void)socket(AF_UNIX, SOCK_STREAM, 0);
	else if (strcmp(action, "connect") == 0)
		test_hook_connect();
	else if (strcmp(action, "execve") == 0)
		(void)execve(argv[0], argv, NULL);
	else if (strcmp(action, "noise") == 0)
		(void)!write(1, test_hook_noise, sizeof(test_hook_noise) - 1);
	else
		log_error("unknown test hook action '%s'", action);
	log_info("test hook: %s returned", action);
}

void
test_hook_run(const char *role)
{
	const char *hook = getenv("SP_TEST_HOOK");
	size_t n = strlen(role);

	if (hook != NULL && strncmp(hook, role, n) == 0 && hook[n] == ':')
		test_hook_act(hook + n + 1);
}

#else

void
test_hook_run(const char *role)
{
	(void)role;
}

#endif
