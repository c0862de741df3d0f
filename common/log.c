/*
 * Logging to stderr (common/log.h).  The role, level and journal flag are
 * the only process-wide state; they are set by main through log_init()
 * and read-only afterwards.
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
static bool log_journal;	/* stderr is the journal: "<N>" prefixes */

static const struct {
	const char *word;
	int priority;		/* syslog(3), as sd-daemon(3) prefixes it */
} log_levels[] = {
	[LOG_LEVEL_ERROR] = { "error", 3 },
	[LOG_LEVEL_WARN] = { "warning", 4 },
	[LOG_LEVEL_INFO] = { "info", 6 },
	[LOG_LEVEL_DEBUG] = { "debug", 7 },
};

void
log_init(const char *role, enum log_level max_level)
{
	const char *stream = getenv("JOURNAL_STREAM");

	log_role = role;
	log_max_level = max_level;
	log_journal = stream != NULL && stream[0] != '\0';
}

enum log_level
log_level_max(void)
{
	return log_max_level;
}

bool
log_level_by_name(const char *name, enum log_level *level)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (strcmp(name, log_levels[i].word) == 0) {
			*level = (enum log_level)i;
			return true;
		}
	return false;
}

const char *
log_level_name(enum log_level level)
{
	return log_levels[level].word;
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

static size_t
log_prefix_as(char *buf, size_t size, const char *role, enum log_level level,
    bool journal)
{
	int n;

	if (journal)
		n = snprintf(buf, size, "<%d>sp[%s]: ",
		    log_levels[level].priority, role);
	else
		n = snprintf(buf, size, "sp[%s]: %s: ", role,
		    log_levels[level].word);
	if (n < 0 || (size_t)n >= size) {
		if (size > 0)
			buf[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

size_t
log_prefix(char *buf, size_t size, const char *role, enum log_level level)
{
	return log_prefix_as(buf, size, role, level, log_journal);
}

bool
log_level_parse(const char *s, size_t len, enum log_level *level,
    size_t *used)
{
	size_t i, n;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++) {
		n = strlen(log_levels[i].word);
		if (len >= n + 2 && memcmp(s, log_levels[i].word, n) == 0 &&
		    s[n] == ':' && s[n + 1] == ' ') {
			*level = (enum log_level)i;
			*used = n + 2;
			return true;
		}
	}
	return false;
}

void
log_format_line(char *buf, size_t size, const char *role,
    enum log_level level, bool journal, const char *fmt, va_list ap)
{
	size_t n;

	if ((n = log_prefix_as(buf, size, role, level, journal)) == 0)
		return;
	vsnprintf(buf + n, size - n, fmt, ap);
	log_sanitize(buf);
}

static void
log_write_line(enum log_level level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX + 1];
	size_t len;
	int saved_errno = errno;

	log_format_line(line, sizeof(line) - 1, log_role, level, log_journal,
	    fmt, ap);
	len = strlen(line);
	line[len++] = '\n';
	/* One write(2) per line keeps lines whole when processes share stderr. */
	(void)!write(STDERR_FILENO, line, len);
	errno = saved_errno;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	log_write_line(level, fmt, ap);
	va_end(ap);
}

void
log_fatal(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write_line(LOG_LEVEL_ERROR, fmt, ap);
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
