/*
 * Retry-After parsing.  Dates are handed to curl_getdate(), which knows
 * the three HTTP date formats; numbers are parsed here so that "12abc" or
 * "-5" is refused instead of read as a date.
 */
#include "config.h"

#include <ctype.h>
#include <curl/curl.h>
#include <string.h>

#include "executor/http_retry.h"

#define RETRY_VALUE_MAX 64

static bool
parse_delta(const char *s, size_t len, long *seconds)
{
	long v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		if (v < HTTP_RETRY_AFTER_MAX_S)
			v = v * 10 + (s[i] - '0');
	}
	*seconds = v < HTTP_RETRY_AFTER_MAX_S ? v : HTTP_RETRY_AFTER_MAX_S;
	return true;
}

static bool
parse_date(const char *s, size_t len, time_t now, long *seconds)
{
	char buf[RETRY_VALUE_MAX];
	time_t when;

	if (len == 0 || len >= sizeof(buf) || isdigit((unsigned char)s[0]))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	when = curl_getdate(buf, NULL);
	if (when == -1)
		return false;
	if (when <= now)
		*seconds = 0;
	else if (when - now > HTTP_RETRY_AFTER_MAX_S)
		*seconds = HTTP_RETRY_AFTER_MAX_S;
	else
		*seconds = (long)(when - now);
	return true;
}

bool
http_retry_after_parse(const char *value, time_t now, long *seconds)
{
	size_t len;

	while (*value == ' ' || *value == '\t')
		value++;
	len = strlen(value);
	while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len > 0 && isdigit((unsigned char)value[0]))
		return parse_delta(value, len, seconds);
	return parse_date(value, len, now, seconds);
}
