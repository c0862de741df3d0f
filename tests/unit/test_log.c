#include "config.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "common/log.h"

static void
format(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_format_line(buf, size, "frontend", "frame_reader_feed", fmt, ap);
	va_end(ap);
}

Test(log, line_names_role_and_function)
{
	char buf[128];

	format(buf, sizeof(buf), "frame %d refused", 3);
	cr_assert_str_eq(buf, "sp[frontend]: frame_reader_feed: frame 3 refused");
}

Test(log, control_characters_cannot_start_a_new_line)
{
	char buf[128];

	format(buf, sizeof(buf), "value '%s'", "a\nb\r\x1b[31m\x7f");
	cr_assert_str_eq(buf, "sp[frontend]: frame_reader_feed: value 'a?b??[31m?'");
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
