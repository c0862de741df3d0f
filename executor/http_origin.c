/*
 * Where a call goes (executor/http_call.h): its addresses (a literal
 * parsed, resolved ones checked against the target's rules, pinned for
 * curl), and what a response says about where to go next (Location,
 * Retry-After, a same-origin redirect's path).
 */
#include "config.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "executor/http_addr.h"
#include "executor/http_build.h"
#include "executor/http_call.h"
#include "executor/http_retry.h"

/*
 * A literal host is its own (only) address: no resolver, no getaddrinfo.
 * It then meets exactly the checks a resolved address meets, at
 * submission, in the open-socket callback and on the connected peer.
 * False when host is not a literal (a name, or v6 with a zone).
 */
bool
http_literal_address(const char *host, uint16_t port,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return true;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return true;
	}
	return false;
}

static bool
host_is_literal(const char *host)
{
	struct sockaddr_storage ss;

	return http_literal_address(host, 0, &ss);
}

/* The CURLOPT_RESOLVE line that pins host:port to the checked addresses. */
bool
http_call_pin_addresses(struct http_call *c)
{
	char line[HTTP_CALL_ADDRS_MAX * (NI_MAXHOST + 3) + 300];
	char text[NI_MAXHOST];
	size_t off;
	int n;

	if (host_is_literal(c->req->host))
		return true;
	n = snprintf(line, sizeof(line), "%s:%u:", c->req->host,
	    (unsigned)c->req->port);
	if (n < 0 || (size_t)n >= sizeof(line))
		return false;
	off = (size_t)n;
	for (size_t i = 0; i < c->naddrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		bool v6 = c->addrs[i].ss_family == AF_INET6;

		if (!http_addr_format(sa, sizeof(c->addrs[i]), text,
		    sizeof(text)))
			return false;
		n = snprintf(line + off, sizeof(line) - off, "%s%s%s%s",
		    i > 0 ? "," : "", v6 ? "[" : "", text, v6 ? "]" : "");
		if (n < 0 || (size_t)n >= sizeof(line) - off)
			return false;
		off += (size_t)n;
	}
	c->resolve = curl_slist_append(NULL, line);
	return c->resolve != NULL;
}


/*
 * The rule the first refused address breaks (its index and class in *i
 * and *k), or NULL when every address passes.
 */
const char *
http_call_address_refusal(const struct http_call *c, size_t *i,
    enum http_addr_class *k)
{
	for (*i = 0; *i < c->naddrs; (*i)++) {
		*k = http_addr_classify((const struct sockaddr *)&c->addrs[*i],
		    sizeof(c->addrs[*i]));
		if (!http_addr_permitted(*k, c->req->addr_allow))
			return "the target does not allow it";
		if (c->req->scheme == HTTP_SCHEME_HTTP &&
		    *k != HTTP_ADDR_LOOPBACK)
			return "plain http is for loopback only";
	}
	return NULL;
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
http_call_read_response(struct http_call *c)
{
	struct http_result *r = &c->result;
	char retry[64];
	char *ct = NULL;
	long seconds;

	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (curl_easy_getinfo(c->easy, CURLINFO_CONTENT_TYPE, &ct) ==
	    CURLE_OK && ct != NULL)
		r->content_type_cut = copy_text(r->content_type,
		    sizeof(r->content_type), ct);
	r->location_cut = copy_header(c->easy, "Location", r->location,
	    sizeof(r->location));
	(void)copy_header(c->easy, "Retry-After", retry, sizeof(retry));
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

/* Path of the redirect target when it has the call's origin. */
bool
http_call_redirect_path(struct http_call *c, char *path, size_t size)
{
	char *url = NULL, *scheme = NULL, *host = NULL, *port = NULL;
	char *p = NULL, *query = NULL;
	const char *want = c->req->scheme == HTTP_SCHEME_HTTP ? "http" : "https";
	CURLU *u;
	bool ok = false;
	int n;

	if (curl_easy_getinfo(c->easy, CURLINFO_REDIRECT_URL, &url) !=
	    CURLE_OK || url == NULL || (u = curl_url()) == NULL)
		return false;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &p, 0) == CURLUE_OK &&
	    strcmp(scheme, want) == 0 && same_host(host, c->req->host) &&
	    strtoul(port, NULL, 10) == c->req->port) {
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

