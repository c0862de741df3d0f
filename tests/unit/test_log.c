#include "config.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "common/log.h"

static void
format_as(char *buf, size_t size, enum log_level level, bool journal,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_format_line(buf, size, "frontend", level, journal, fmt, ap);
	va_end(ap);
}

#define format(buf, size, ...) \
	format_as((buf), (size), LOG_LEVEL_ERROR, false, __VA_ARGS__)

Test(log, line_names_role_and_level)
{
	char buf[128];

	format(buf, sizeof(buf), "frame %d refused", 3);
	cr_assert_str_eq(buf, "sp[frontend]: error: frame 3 refused");
	format_as(buf, sizeof(buf), LOG_LEVEL_WARN, false, "%s", "x");
	cr_assert_str_eq(buf, "sp[frontend]: warning: x");
	format_as(buf, sizeof(buf), LOG_LEVEL_INFO, false, "%s", "x");
	cr_assert_str_eq(buf, "sp[frontend]: info: x");
	format_as(buf, sizeof(buf), LOG_LEVEL_DEBUG, false, "%s", "x");
	cr_assert_str_eq(buf, "sp[frontend]: debug: x");
}

/* sd-daemon(3): the syslog priority journald reads, in the level's place. */
Test(log, journal_form_carries_the_priority)
{
	char buf[128];

	format_as(buf, sizeof(buf), LOG_LEVEL_ERROR, true, "it's %s", "$(x)");
	cr_assert_str_eq(buf, "<3>sp[frontend]: it's $(x)");
	format_as(buf, sizeof(buf), LOG_LEVEL_WARN, true, "w");
	cr_assert_str_eq(buf, "<4>sp[frontend]: w");
	format_as(buf, sizeof(buf), LOG_LEVEL_INFO, true, "i");
	cr_assert_str_eq(buf, "<6>sp[frontend]: i");
	format_as(buf, sizeof(buf), LOG_LEVEL_DEBUG, true, "d\n<3>x");
	cr_assert_str_eq(buf, "<7>sp[frontend]: d?<3>x");
}

Test(log, level_words_parse_back)
{
	enum log_level level;
	size_t used;

	cr_assert(log_level_parse("warning: x", 10, &level, &used));
	cr_assert_eq(level, LOG_LEVEL_WARN);
	cr_assert_eq(used, 9);
	cr_assert(log_level_parse("error: ", 7, &level, &used));
	cr_assert_eq(level, LOG_LEVEL_ERROR);
	cr_assert_not(log_level_parse("error:", 6, &level, &used));
	cr_assert_not(log_level_parse("errors: x", 9, &level, &used));
	cr_assert_not(log_level_parse("mcp_report: x", 13, &level, &used));
}

Test(log, control_characters_cannot_start_a_new_line)
{
	char buf[128];

	format(buf, sizeof(buf), "value '%s'", "a\nb\r\x1b[31m\x7f");
	cr_assert_str_eq(buf, "sp[frontend]: error: value 'a?b??[31m?'");
	cr_assert_null(strchr(buf, '\n'));
}

Test(log, long_message_is_cut_not_overflowed)
{
	char buf[40];
	char big[200];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	format(buf, sizeof(buf), "%s", big);
	cr_assert_eq(strlen(buf), sizeof(buf) - 1);
}
