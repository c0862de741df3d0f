/*
 * Turning a prepared http_request into what curl takes: the URL, the
 * header list with the credential, the pin of the checked addresses, the
 * method and body, and the transport rules.  Also the engine's second
 * line of defence: bytes that could end a header line or change the
 * request target are refused here even though the policy already checked
 * them.
 */
#ifndef SP_EXECUTOR_HTTP_BUILD_H
#define SP_EXECUTOR_HTTP_BUILD_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "executor/http.h"

/*
 * Checks host, path, headers and credential of req.  On refusal writes a
 * short reason (never containing a secret) into why.
 */
bool http_request_valid(const struct http_request *req, char *why,
    size_t why_size);

/* A path is '/' then visible ASCII except '#'; no space, CTL or 8-bit. */
bool http_path_valid(const char *path);

/*
 * The CURLOPT_RESOLVE list that pins req's host:port to addrs[0..n) (the
 * checked addresses) into *pin, owned by the caller; a literal host needs
 * none (*pin NULL).  False when it does not fit or memory runs out.
 */
bool http_build_pin(const struct http_request *req,
    const struct sockaddr_storage *addrs, size_t n, struct curl_slist **pin);

/*
 * Sets easy (fresh or reset) up for one attempt of req with method and
 * path: URL, header list, method and body, transport rules (http and https
 * only, TLS verified, no proxy, curl follows no redirect), pin (borrowed,
 * kept alive for the attempt), CA bundle and a timeout of remaining_ms.
 * The header list goes to *headers, owned by the caller even on failure,
 * freed with http_headers_free once the attempt is over.  The caller adds
 * its own callbacks.  False on failure (logged).
 */
bool http_build_attempt(CURL *easy, const struct http_request *req,
    enum http_method method, const char *path, struct curl_slist *pin,
    uint64_t remaining_ms, struct curl_slist **headers);

/* Zeroes every line (one holds the secret), then frees the list. */
void http_headers_free(struct curl_slist *list);

#endif
