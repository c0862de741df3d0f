/*
 * Turning a prepared http_request into what curl takes: the URL and the
 * header list with the credential.  Also the engine's second line of
 * defence: bytes that could end a header line or change the request
 * target are refused here even though the policy already checked them.
 */
#ifndef SP_EXECUTOR_HTTP_BUILD_H
#define SP_EXECUTOR_HTTP_BUILD_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "executor/http.h"

/*
 * Checks host, path, headers and credential of req.  On refusal writes a
 * short reason (never containing a secret) into why.
 */
bool http_request_valid(const struct http_request *req, char *why,
    size_t why_size);

/* A path is '/' then visible ASCII except '#'; no space, CTL or 8-bit. */
bool http_path_valid(const char *path);

/* scheme://host:port + path into buf; false when it does not fit. */
bool http_build_url(const struct http_request *req, const char *path,
    char *buf, size_t size);

/*
 * The header list for one attempt: the request's headers, Content-Type
 * when a body is sent, the credential, and removal of curl's defaults
 * (Expect).  Returns NULL on failure (logged).  The caller frees it with
 * http_headers_free, which zeroes every line first (one holds the secret).
 */
struct curl_slist *http_build_headers(const struct http_request *req,
    bool with_body);

void http_headers_free(struct curl_slist *list);

#endif
