/*
 * Logging to stderr.  The role and level are the only process-wide state;
 * they are set by main through log_init() and read-only afterwards.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

#define LOG_LINE_MAX 1024

static const char *log_role = "sp";
static enum log_level log_max_level = LOG_LEVEL_INFO;

void
log_init(const char *role, enum log_level max_level)
{
	log_role = role;
	log_max_level = max_level;
}

/* Bytes below 0x20 and DEL become '?': a diagnostic is always one line. */
static void
log_sanitize(char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			*s = '?';
	}
}

void
log_format_line(char *buf, size_t size, const char *role, const char *func,
    const char *fmt, va_list ap)
{
	int n;

	n = snprintf(buf, size, "sp[%s]: %s: ", role, func);
	if (n < 0 || (size_t)n >= size) {
		buf[0] = '\0';
		return;
	}
	vsnprintf(buf + n, size - (size_t)n, fmt, ap);
	log_sanitize(buf);
}

static void
log_write_line(const char *func, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX + 1];
	size_t len;
	int saved_errno = errno;

	log_format_line(line, sizeof(line) - 1, log_role, func, fmt, ap);
	len = strlen(line);
	line[len++] = '\n';
	/* One write(2) per line keeps lines whole when processes share stderr. */
	(void)!write(STDERR_FILENO, line, len);
	errno = saved_errno;
}

void
log_msg(enum log_level level, const char *func, const char *fmt, ...)
{
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	log_write_line(func, fmt, ap);
	va_end(ap);
}

void
log_fatal(int status, const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write_line(func, fmt, ap);
	va_end(ap);
	exit(status);
}

bool
log_keep_off_stdout(void)
{
	struct stat out, err;
	int fd;

	if (fstat(STDOUT_FILENO, &out) == -1 ||
	    fstat(STDERR_FILENO, &err) == -1 ||
	    out.st_dev != err.st_dev || out.st_ino != err.st_ino ||
	    isatty(STDOUT_FILENO))
		return true;
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return false;
	if (dup2(fd, STDERR_FILENO) == -1) {
		(void)close(fd);
		return false;
	}
	(void)close(fd);
	return true;
}
