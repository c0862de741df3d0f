/*
 * Retry-After (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date.
 */
#ifndef SP_EXECUTOR_HTTP_RETRY_H
#define SP_EXECUTOR_HTTP_RETRY_H

#include <stdbool.h>
#include <time.h>

/* Longest wait the parser reports; larger values are clamped to it. */
#define HTTP_RETRY_AFTER_MAX_S	86400L

/*
 * Parses a Retry-After value into *seconds from now (a date in the past
 * gives 0).  Surrounding spaces are allowed; anything else that is not
 * a number or a date is refused (false, *seconds untouched).
 */
bool http_retry_after_parse(const char *value, time_t now, long *seconds);

#endif
