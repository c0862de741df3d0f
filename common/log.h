/*
 * Diagnostics: one line each, on stderr, never on stdout (stdout is the
 * frontend's protocol stream).  Every line is "sp[role]: func: message".
 * Control characters in a message are replaced, so a value quoted into a
 * diagnostic can never start a second line or reach a terminal as escapes.
 */
#ifndef SP_COMMON_LOG_H
#define SP_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/*
 * Set once by a process's main before anything logs.  role is kept by
 * pointer and must outlive the process (a string literal).
 */
void log_init(const char *role, enum log_level max_level);

void log_msg(enum log_level level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes the line and exits with status; for startup errors only. */
void log_fatal(int status, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/*
 * For a command whose stdout carries a protocol (sp mcp, sp connect):
 * when fd 2 is the same file as fd 1 (`2>&1`, StandardError=socket) and
 * fd 1 is not a terminal, points fd 2 at /dev/null, so no diagnostic can
 * land inside the stream.  Call before anything is logged.  false (errno
 * set) when /dev/null cannot be put there; nothing can be said then.
 */
bool log_keep_off_stdout(void);

/* Formats one sanitized line (no newline) into buf; exposed for tests. */
void log_format_line(char *buf, size_t size, const char *role,
    const char *func, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __func__, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __func__, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __func__, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __func__, __VA_ARGS__)
#define fatal(status, ...) log_fatal((status), __func__, __VA_ARGS__)

#endif
