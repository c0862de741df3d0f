/*
 * Locating and reading the policy file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/load.h"
#include "policy/source.h"

const char *
policy_config_path(const char *option)
{
	const char *env;

	if (option != NULL)
		return option;
	env = getenv("SP_CONFIG");
	if (env != NULL && env[0] != '\0')
		return env;
	return POLICY_SYSTEM_PATH;
}

/* Reads up to max bytes of fd; one more means the file is too large. */
static bool
read_bounded(int fd, char *buf, size_t max, size_t *len)
{
	ssize_t n;

	*len = 0;
	while (*len <= max) {
		n = read(fd, buf + *len, max + 1 - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return false;
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	return true;
}

bool
policy_read_file(const char *path, char **bytes, size_t *len, char *why,
    size_t why_size)
{
	char *buf;
	int fd;

	*bytes = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(why, why_size, "%s", strerror(errno));
		return false;
	}
	if ((buf = malloc(POLICY_TEXT_MAX + 2)) == NULL) {
		snprintf(why, why_size, "out of memory");
		close(fd);
		return false;
	}
	if (!read_bounded(fd, buf, POLICY_TEXT_MAX, len)) {
		snprintf(why, why_size, "%s", strerror(errno));
		free(buf);
		close(fd);
		return false;
	}
	close(fd);
	if (*len > POLICY_TEXT_MAX) {
		snprintf(why, why_size, "larger than %u bytes", POLICY_TEXT_MAX);
		free(buf);
		return false;
	}
	buf[*len] = '\0';
	*bytes = buf;
	return true;
}
