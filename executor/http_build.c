/*
 * Request building and the engine's own checks of request bytes
 * (executor/http_build.h).
 */
#include "config.h"

#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/log.h"
#include "executor/http_build.h"

#define HEADER_LINE_MAX 8192
#define HOST_MAX 253
#define URL_MAX 8192
#define PIN_ADDRS_MAX 16

/* Headers whose meaning belongs to the engine or to curl's framing. */
static const char *const reserved_headers[] = {
	"host", "content-length", "transfer-encoding", "connection",
	"expect", "upgrade", "te", "trailer", "proxy-authorization",
	"authorization", "content-type",
};

static bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool
header_name_valid(const char *name)
{
	if (name == NULL || *name == '\0' || strlen(name) > 256)
		return false;
	for (; *name != '\0'; name++)
		if (!is_tchar((unsigned char)*name))
			return false;
	return true;
}

/* Field values: visible bytes, space and tab; never CR, LF, NUL or DEL. */
static bool
header_value_valid(const char *value, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

static bool
header_reserved(const char *name, const struct http_credential *cred)
{
	for (size_t i = 0; i < sizeof(reserved_headers) /
	    sizeof(reserved_headers[0]); i++)
		if (strcasecmp(name, reserved_headers[i]) == 0)
			return true;
	return cred != NULL && cred->kind == HTTP_CREDENTIAL_HEADER &&
	    cred->header_name != NULL && strcasecmp(name, cred->header_name) == 0;
}

static bool
host_valid(const char *host)
{
	size_t len = strlen(host);
	bool v6 = strchr(host, ':') != NULL;

	if (len == 0 || len > HOST_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-')
			continue;
		if (v6 && c == ':')
			continue;
		return false;
	}
	return true;
}

bool
http_path_valid(const char *path)
{
	if (path == NULL || path[0] != '/')
		return false;
	for (; *path != '\0'; path++) {
		unsigned char c = (unsigned char)*path;
		if (c <= 0x20 || c >= 0x7f || c == '#')
			return false;
	}
	return true;
}

static bool
credential_valid(const struct http_credential *cred, char *why,
    size_t why_size)
{
	if (cred == NULL || cred->kind == HTTP_CREDENTIAL_NONE)
		return true;
	if (cred->secret == NULL || cred->secret_len == 0 ||
	    cred->secret_len > HEADER_LINE_MAX / 2 ||
	    !header_value_valid(cred->secret, cred->secret_len)) {
		snprintf(why, why_size, "the credential cannot be sent as a "
		    "header value");
		return false;
	}
	if (cred->kind == HTTP_CREDENTIAL_HEADER &&
	    (!header_name_valid(cred->header_name) ||
	    header_reserved(cred->header_name, NULL))) {
		snprintf(why, why_size, "credential header name refused");
		return false;
	}
	return true;
}

static bool
headers_valid(const struct http_request *req, char *why, size_t why_size)
{
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];

		if (!header_name_valid(h->name) || h->value == NULL) {
			snprintf(why, why_size, "header %zu: name refused", i);
			return false;
		}
		if (header_reserved(h->name, req->credential)) {
			snprintf(why, why_size, "header %s is set by the engine",
			    h->name);
			return false;
		}
		if (!header_value_valid(h->value, strlen(h->value)) ||
		    strlen(h->value) > HEADER_LINE_MAX / 2) {
			snprintf(why, why_size, "header %s: value holds a "
			    "control character (CR, LF) or is too long",
			    h->name);
			return false;
		}
	}
	if (req->content_type != NULL &&
	    !header_value_valid(req->content_type, strlen(req->content_type))) {
		snprintf(why, why_size, "content type holds a control character");
		return false;
	}
	return true;
}

bool
http_request_valid(const struct http_request *req, char *why,
    size_t why_size)
{
	if (http_method_name(req->method) == NULL ||
	    req->scheme > HTTP_SCHEME_HTTP) {
		snprintf(why, why_size, "unknown method or scheme");
		return false;
	}
	if (req->host == NULL || !host_valid(req->host)) {
		snprintf(why, why_size, "host name refused");
		return false;
	}
	if (req->port == 0) {
		snprintf(why, why_size, "port 0 refused");
		return false;
	}
	if (!http_path_valid(req->path)) {
		snprintf(why, why_size, "path refused: it must start with '/' "
		    "and hold only visible ASCII (CR, LF, space, '#' and 8-bit "
		    "bytes must be percent-encoded)");
		return false;
	}
	if (req->body_len > 0 && req->body == NULL) {
		snprintf(why, why_size, "body length without a body");
		return false;
	}
	if (req->ca_blob != NULL && req->ca_len == 0) {
		snprintf(why, why_size, "empty CA bundle");
		return false;
	}
	return headers_valid(req, why, why_size) &&
	    credential_valid(req->credential, why, why_size);
}

/* scheme://host:port + path into buf; false when it does not fit. */
static bool
build_url(const struct http_request *req, const char *path, char *buf,
    size_t size)
{
	const char *scheme = req->scheme == HTTP_SCHEME_HTTP ? "http" : "https";
	bool v6 = strchr(req->host, ':') != NULL;
	int n;

	n = snprintf(buf, size, "%s://%s%s%s:%u%s", scheme, v6 ? "[" : "",
	    req->host, v6 ? "]" : "", (unsigned)req->port, path);
	return n > 0 && (size_t)n < size;
}

/* Appends "name: value" built in a scratch buffer that is zeroed after. */
static bool
append_secret_line(struct curl_slist **list, const char *name,
    const char *prefix, const char *secret, size_t secret_len)
{
	size_t len = strlen(name) + 2 + strlen(prefix) + secret_len + 1;
	struct curl_slist *next;
	char *line;

	if (len > HEADER_LINE_MAX || (line = malloc(len)) == NULL) {
		log_error("credential header does not fit");
		return false;
	}
	snprintf(line, len, "%s: %s", name, prefix);
	memcpy(line + strlen(line), secret, secret_len);
	line[len - 1] = '\0';
	next = curl_slist_append(*list, line);
	explicit_bzero(line, len);
	free(line);
	if (next == NULL) {
		log_error("out of memory");
		return false;
	}
	*list = next;
	return true;
}

static bool
append_basic(struct curl_slist **list, const struct http_credential *cred)
{
	size_t enc_len = base64_encode_size(cred->secret_len);
	char *enc;
	bool ok;

	if (enc_len == 0 || (enc = malloc(enc_len)) == NULL) {
		log_error("out of memory");
		return false;
	}
	if (!base64_encode(cred->secret, cred->secret_len, enc, enc_len)) {
		log_error("cannot encode the credential");
		free(enc);
		return false;
	}
	ok = append_secret_line(list, "Authorization", "Basic ", enc,
	    strlen(enc));
	explicit_bzero(enc, enc_len);
	free(enc);
	return ok;
}

static bool
append_credential(struct curl_slist **list, const struct http_credential *c)
{
	if (c == NULL)
		return true;
	switch (c->kind) {
	case HTTP_CREDENTIAL_NONE:
		return true;
	case HTTP_CREDENTIAL_BEARER:
		return append_secret_line(list, "Authorization", "Bearer ",
		    c->secret, c->secret_len);
	case HTTP_CREDENTIAL_BASIC:
		return append_basic(list, c);
	case HTTP_CREDENTIAL_HEADER:
		return append_secret_line(list, c->header_name, "", c->secret,
		    c->secret_len);
	}
	return false;
}

static bool
append_line(struct curl_slist **list, const char *line)
{
	struct curl_slist *next;

	if ((next = curl_slist_append(*list, line)) == NULL) {
		log_error("out of memory");
		return false;
	}
	*list = next;
	return true;
}

static bool
append_plain(struct curl_slist **list, const char *name, const char *value)
{
	char line[HEADER_LINE_MAX];
	int n;

	/* "Name;" is curl's way to send a header with an empty value. */
	if (*value == '\0')
		n = snprintf(line, sizeof(line), "%s;", name);
	else
		n = snprintf(line, sizeof(line), "%s: %s", name, value);
	if (n < 0 || (size_t)n >= sizeof(line)) {
		log_error("header %s does not fit", name);
		return false;
	}
	return append_line(list, line);
}

/*
 * The header list for one attempt: the request's headers, Content-Type
 * when a body is sent, the credential, and removal of curl's defaults
 * (Expect).  NULL on failure (logged).
 */
static struct curl_slist *
build_headers(const struct http_request *req, bool with_body)
{
	struct curl_slist *list = NULL;
	bool ok = true;

	for (size_t i = 0; ok && i < req->nheaders; i++)
		ok = append_plain(&list, req->headers[i].name,
		    req->headers[i].value);
	/* An empty "Name:" line removes a header curl would add itself. */
	if (ok)
		ok = append_line(&list, "Expect:");
	if (ok && with_body)
		ok = req->content_type != NULL ?
		    append_plain(&list, "Content-Type", req->content_type) :
		    append_line(&list, "Content-Type:");
	if (ok)
		ok = append_credential(&list, req->credential);
	if (!ok) {
		http_headers_free(list);
		return NULL;
	}
	return list;
}

void
http_headers_free(struct curl_slist *list)
{
	for (struct curl_slist *l = list; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(list);
}

static bool
host_is_literal(const char *host)
{
	struct sockaddr_storage ss;

	return http_addr_literal(host, 0, &ss);
}

bool
http_build_pin(const struct http_request *req,
    const struct sockaddr_storage *addrs, size_t naddrs,
    struct curl_slist **pin)
{
	char line[PIN_ADDRS_MAX * (NI_MAXHOST + 3) + 300];
	char text[NI_MAXHOST];
	size_t off;
	int n;

	*pin = NULL;
	if (host_is_literal(req->host))
		return true;
	n = snprintf(line, sizeof(line), "%s:%u:", req->host,
	    (unsigned)req->port);
	if (n < 0 || (size_t)n >= sizeof(line) || naddrs > PIN_ADDRS_MAX)
		return false;
	off = (size_t)n;
	for (size_t i = 0; i < naddrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];
		bool v6 = addrs[i].ss_family == AF_INET6;

		if (!http_addr_format(sa, sizeof(addrs[i]), text, sizeof(text)))
			return false;
		n = snprintf(line + off, sizeof(line) - off, "%s%s%s%s",
		    i > 0 ? "," : "", v6 ? "[" : "", text, v6 ? "]" : "");
		if (n < 0 || (size_t)n >= sizeof(line) - off)
			return false;
		off += (size_t)n;
	}
	*pin = curl_slist_append(NULL, line);
	return *pin != NULL;
}

static bool
method_sends_body(enum http_method m, const struct http_request *req)
{
	return m == HTTP_METHOD_POST || m == HTTP_METHOD_PUT ||
	    m == HTTP_METHOD_PATCH ||
	    (m == HTTP_METHOD_DELETE && req->body_len > 0);
}

static bool
easy_set_method(CURL *easy, const struct http_request *req,
    enum http_method m)
{
	bool ok = true;

	switch (m) {
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
	if (ok && m != HTTP_METHOD_POST)
		ok = curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST,
		    http_method_name(m)) == CURLE_OK;
	return ok;
}

static bool
easy_set_transport(CURL *easy, const struct http_request *req,
    struct curl_slist *pin, uint64_t remaining_ms)
{
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
	    curl_easy_setopt(easy, CURLOPT_RESOLVE, pin) == CURLE_OK;
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
http_build_attempt(CURL *easy, const struct http_request *req,
    enum http_method method, const char *path, struct curl_slist *pin,
    uint64_t remaining_ms, struct curl_slist **headers)
{
	char url[URL_MAX];

	*headers = NULL;
	if (!build_url(req, path, url, sizeof(url))) {
		log_error("URL does not fit");
		return false;
	}
	if ((*headers = build_headers(req, method_sends_body(method,
	    req))) == NULL)
		return false;
	return curl_easy_setopt(easy, CURLOPT_URL, url) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, *headers) == CURLE_OK &&
	    easy_set_transport(easy, req, pin, remaining_ms) &&
	    easy_set_method(easy, req, method);
}
