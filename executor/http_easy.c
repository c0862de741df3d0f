/*
 * One attempt's curl easy handle: URL, headers with the credential,
 * method and body, transport rules (http/https only, TLS verified, no
 * proxy, no redirects, the checked addresses pinned), the address check
 * at connect time, and the bounded body buffer.
 */
#include "config.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "executor/http_addr.h"
#include "executor/http_build.h"
#include "executor/http_call.h"
#include "executor/http_sock.h"

#define BODY_CHUNK_MIN		16384

/* Every socket curl opens: the address is checked once more here. */
static curl_socket_t
call_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct http_call *c = arg;
	struct http_engine_stats *st = http_engine_stats_mut(c->engine);
	enum http_addr_class k;
	curl_socket_t s;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKET_BAD;
	k = http_addr_classify(&a->addr, a->addrlen);
	if (!http_addr_permitted(k, c->req->addr_allow)) {
		c->refused_at_connect = true;
		st->connections_refused++;
		return CURL_SOCKET_BAD;
	}
	s = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (s == -1)
		return CURL_SOCKET_BAD;
	if (!http_socks_opened(http_engine_socks(c->engine), s)) {
		(void)close(s);
		return CURL_SOCKET_BAD;
	}
	st->connections_opened++;
	return s;
}

/* Every socket opened above is closed here (executor/http_sock.h). */
static int
call_close_socket(void *arg, curl_socket_t s)
{
	return http_socks_close(arg, s);
}

static bool
method_is_safe(enum http_method m)
{
	return m == HTTP_METHOD_GET || m == HTTP_METHOD_HEAD;
}

/*
 * Called each time curl is about to write a request.  curl re-sends a
 * request by itself when a reused connection dies unanswered; a mutating
 * request must never reach the target twice, so a second send is aborted.
 * The connection's peer is checked here too, before any byte is written.
 */
static int
call_before_send(void *arg, char *peer_ip, char *local_ip, int peer_port,
    int local_port)
{
	struct http_call *c = arg;

	(void)local_ip;
	(void)peer_port;
	(void)local_port;
	if (!http_addr_text_permitted(peer_ip, c->req->addr_allow)) {
		c->refused_at_connect = true;
		return CURL_PREREQFUNC_ABORT;
	}
	if (c->attempt_sends > 0 && !method_is_safe(c->method))
		return CURL_PREREQFUNC_ABORT;
	c->attempt_sends++;
	return CURL_PREREQFUNC_OK;
}

static bool
call_body_reserve(struct http_call *c, size_t need)
{
	size_t cap = c->body_cap;
	uint8_t *p;

	if (need <= cap)
		return true;
	cap = cap < BODY_CHUNK_MIN ? BODY_CHUNK_MIN : cap * 2;
	if (cap < need)
		cap = need;
	if (cap > c->req->body_max)
		cap = c->req->body_max;
	if ((p = realloc(c->body, cap)) == NULL) {
		log_error("out of memory");
		return false;
	}
	c->body = p;
	c->body_cap = cap;
	return true;
}

/* Keeps up to body_max bytes; the rest is counted and dropped. */
static size_t
call_body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_call *c = arg;
	size_t len = size * nmemb, keep = 0;
	struct http_result *r = &c->result;

	r->body_total += len;
	if (r->body_len < c->req->body_max)
		keep = c->req->body_max - r->body_len;
	if (keep > len)
		keep = len;
	if (keep > 0) {
		if (!call_body_reserve(c, r->body_len + keep))
			return 0;
		memcpy(c->body + r->body_len, data, keep);
		r->body_len += keep;
	}
	return len;
}

static bool
easy_set_method(CURL *easy, const struct http_call *c)
{
	static const char *const names[] = { "GET", "HEAD", "POST", "PUT",
	    "PATCH", "DELETE" };
	const struct http_request *req = c->req;
	bool ok = true;

	switch (c->method) {
	case HTTP_METHOD_GET:
		return curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L) == CURLE_OK;
	case HTTP_METHOD_HEAD:
		return curl_easy_setopt(easy, CURLOPT_NOBODY, 1L) == CURLE_OK;
	case HTTP_METHOD_DELETE:
		if (req->body_len == 0)
			break;
		/* FALLTHROUGH */
	case HTTP_METHOD_POST:
	case HTTP_METHOD_PUT:
	case HTTP_METHOD_PATCH:
		/* The caller's bytes, not copied (kept alive per http.h). */
		ok = curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->body_len) == CURLE_OK &&
		    curl_easy_setopt(easy, CURLOPT_POSTFIELDS,
		    req->body_len > 0 ? req->body : "") == CURLE_OK;
		break;
	}
	if (ok && c->method != HTTP_METHOD_POST)
		ok = curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST,
		    names[c->method]) == CURLE_OK;
	return ok;
}

static bool
method_sends_body(const struct http_call *c)
{
	return c->method == HTTP_METHOD_POST || c->method == HTTP_METHOD_PUT ||
	    c->method == HTTP_METHOD_PATCH ||
	    (c->method == HTTP_METHOD_DELETE && c->req->body_len > 0);
}

static bool
easy_set_transport(CURL *easy, struct http_call *c, uint64_t remaining_ms)
{
	const struct http_request *req = c->req;
	bool ok;

	ok = curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https") ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_VERBOSE, 0L) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L) == CURLE_OK &&
	    /* No proxy from the environment may see the request. */
	    curl_easy_setopt(easy, CURLOPT_PROXY, "") == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)remaining_ms) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_RESOLVE, c->resolve) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION,
	    call_open_socket) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, c) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION,
	    call_close_socket) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA,
	    http_engine_socks(c->engine)) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, call_before_send) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PREREQDATA, c) == CURLE_OK;
	if (ok && req->ca_blob != NULL) {
		/* Not copied per attempt: the bundle outlives the attempt
		 * (http.h), and curl copies it into each new connection's
		 * TLS settings itself. */
		struct curl_blob blob = { (void *)(uintptr_t)req->ca_blob,
		    req->ca_len, CURL_BLOB_NOCOPY };
		ok = curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &blob) ==
		    CURLE_OK;
	}
	return ok;
}

bool
http_easy_setup(struct http_call *c, uint64_t remaining_ms)
{
	char url[HTTP_CALL_URL_MAX];
	CURL *easy = c->easy;

	if (!http_build_url(c->req, c->path, url, sizeof(url))) {
		log_error("URL does not fit");
		return false;
	}
	if ((c->headers = http_build_headers(c->req,
	    method_sends_body(c))) == NULL)
		return false;
	return curl_easy_setopt(easy, CURLOPT_URL, url) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PRIVATE, c) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, c->errbuf) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, c->headers) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, call_body_write) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_WRITEDATA, c) == CURLE_OK &&
	    easy_set_transport(easy, c, remaining_ms) &&
	    easy_set_method(easy, c);
}
