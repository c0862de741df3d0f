/*
 * What a finished attempt's response says (internal to executor/http*,
 * and the rule tests): status, type, Location, Retry-After, where a
 * redirect goes, and curl's timings.  Nothing here decides what the call
 * does next; executor/http_call.c does.
 */
#ifndef SP_EXECUTOR_HTTP_RESPONSE_H
#define SP_EXECUTOR_HTTP_RESPONSE_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "executor/http.h"

/* Longest wait the parser reports; larger values are clamped to it. */
#define HTTP_RETRY_AFTER_MAX_S	86400L

/*
 * Parses a Retry-After value into *seconds from now (a date in the past
 * gives 0).  Surrounding spaces are allowed; anything else that is not
 * a number or a date is refused (false, *seconds untouched).
 */
bool http_retry_after_parse(const char *value, time_t now, long *seconds);

/*
 * Fills r's status, content type (cut to fit, flagged), raw Location and
 * Retry-After (-1 when absent or unparsable) from easy's response.
 */
void http_response_read(CURL *easy, struct http_result *r);

/*
 * The path and query of easy's redirect target into path, when the
 * target keeps req's scheme, host and port and the path is one the
 * engine would send (executor/http_build.h); false otherwise.
 */
bool http_response_redirect_path(CURL *easy, const struct http_request *req,
    char *path, size_t size);

/* The attempt's connect, TLS, first-byte and total times from curl. */
void http_response_timings(CURL *easy, struct http_timings *t);

#endif
