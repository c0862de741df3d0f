/*
 * Diagnostics: one line each, on stderr, never on stdout (stdout is the
 * frontend's protocol stream).  Every line is "sp[ROLE]: LEVEL: message"
 * (LEVEL one of error, warning, info, debug); when stderr is the journal
 * (JOURNAL_STREAM set, docs/design.md section 10) it is
 * "<N>sp[ROLE]: message" instead, N the syslog priority journald reads
 * (sd-daemon(3): 3 error, 4 warning, 6 info, 7 debug).  Control
 * characters in a message are replaced, so a value quoted into a
 * diagnostic can never start a second line or reach a terminal as
 * escapes.  Messages name what happened for an operator, never a C
 * function.
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
 * Set once by a process's main before anything logs: the role, the
 * most verbose level written, and (read from the environment here)
 * whether stderr is the journal.  role is kept by pointer and must
 * outlive the process (a string literal).
 */
void log_init(const char *role, enum log_level max_level);

/* The level log_init() set. */
enum log_level log_level_max(void);

/*
 * A level by its word ("error", "warning", "info", "debug"), for
 * SP_LOG_LEVEL (sp(1)) and a child's command line: false for any other
 * string.
 */
bool log_level_by_name(const char *name, enum log_level *level);

/* The word of level (a static string). */
const char *log_level_name(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Writes the line at error level and exits with status; for startup
 * errors only. */
void log_fatal(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/*
 * For a command whose stdout carries a protocol (sp mcp, sp connect):
 * when fd 2 is the same file as fd 1 (`2>&1`, StandardError=socket) and
 * fd 1 is not a terminal, points fd 2 at /dev/null, so no diagnostic can
 * land inside the stream.  Call before anything is logged.  false (errno
 * set) when /dev/null cannot be put there; nothing can be said then.
 */
bool log_keep_off_stdout(void);

/*
 * The start of a line for role at level, in this process's form
 * ("sp[ROLE]: LEVEL: " or "<N>sp[ROLE]: "), into buf; its length, 0 when
 * it does not fit.  For the broker's relay of its children's lines.
 */
size_t log_prefix(char *buf, size_t size, const char *role,
    enum log_level level);

/*
 * Reads "LEVEL: " (the word form) at the start of s[0..len): true, the
 * level and the bytes it took when one is there.
 */
bool log_level_parse(const char *s, size_t len, enum log_level *level,
    size_t *used);

/* Formats one sanitized line (no newline) into buf, in the journal form
 * or not; exposed for tests. */
void log_format_line(char *buf, size_t size, const char *role,
    enum log_level level, bool journal, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define fatal(status, ...) log_fatal((status), __VA_ARGS__)

#endif
