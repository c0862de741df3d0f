/*
 * Reading a response (executor/http_response.h).  Retry-After dates are
 * handed to curl_getdate(), which knows the three HTTP date formats;
 * numbers are parsed here so that "12abc" or "-5" is refused instead of
 * read as a date.
 */
#include "config.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "executor/http_build.h"
#include "executor/http_response.h"

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

/* true when the value did not fit and was cut. */
static bool
copy_text(char *buf, size_t size, const char *value)
{
	int n = snprintf(buf, size, "%s", value);

	return n < 0 || (size_t)n >= size;
}

static bool
copy_header(CURL *easy, const char *name, char *buf, size_t size)
{
	struct curl_header *h;

	buf[0] = '\0';
	if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &h) == CURLHE_OK)
		return copy_text(buf, size, h->value);
	return false;
}

void
http_response_read(CURL *easy, struct http_result *r)
{
	char retry[RETRY_VALUE_MAX];
	char *ct = NULL;
	long seconds;

	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK &&
	    ct != NULL)
		r->content_type_cut = copy_text(r->content_type,
		    sizeof(r->content_type), ct);
	r->location_cut = copy_header(easy, "Location", r->location,
	    sizeof(r->location));
	(void)copy_header(easy, "Retry-After", retry, sizeof(retry));
	if (retry[0] != '\0' &&
	    http_retry_after_parse(retry, time(NULL), &seconds))
		r->retry_after_s = seconds;
}

static bool
same_host(const char *url_host, const char *host)
{
	size_t len = strlen(url_host);

	if (len >= 2 && url_host[0] == '[' && url_host[len - 1] == ']')
		return strlen(host) == len - 2 &&
		    strncasecmp(url_host + 1, host, len - 2) == 0;
	return strcasecmp(url_host, host) == 0;
}

bool
http_response_redirect_path(CURL *easy, const struct http_request *req,
    char *path, size_t size)
{
	char *url = NULL, *scheme = NULL, *host = NULL, *port = NULL;
	char *p = NULL, *query = NULL;
	const char *want = req->scheme == HTTP_SCHEME_HTTP ? "http" : "https";
	CURLU *u;
	bool ok = false;
	int n;

	if (curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &url) !=
	    CURLE_OK || url == NULL || (u = curl_url()) == NULL)
		return false;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &p, 0) == CURLUE_OK &&
	    strcmp(scheme, want) == 0 && same_host(host, req->host) &&
	    strtoul(port, NULL, 10) == req->port) {
		if (curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK)
			query = NULL;
		n = snprintf(path, size, "%s%s%s", p, query ? "?" : "",
		    query ? query : "");
		ok = n > 0 && (size_t)n < size && http_path_valid(path);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(p);
	curl_free(query);
	curl_url_cleanup(u);
	return ok;
}

static uint64_t
info_us(CURL *easy, CURLINFO what)
{
	curl_off_t v = 0;

	if (curl_easy_getinfo(easy, what, &v) != CURLE_OK || v < 0)
		return 0;
	return (uint64_t)v;
}

void
http_response_timings(CURL *easy, struct http_timings *t)
{
	t->connect_us = info_us(easy, CURLINFO_CONNECT_TIME_T);
	t->tls_us = info_us(easy, CURLINFO_APPCONNECT_TIME_T);
	t->first_byte_us = info_us(easy, CURLINFO_STARTTRANSFER_TIME_T);
	t->transfer_us = info_us(easy, CURLINFO_TOTAL_TIME_T);
}
