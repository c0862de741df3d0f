/*
 * The HTTP engine's short memory of resolved names (internal to
 * executor/http*).  A name resolved for one call is reused by the calls
 * to the same host and port for a short time (HTTP_NAMES_TTL_MS by
 * default, as curl's own DNS cache), which saves the resolver thread's
 * hand-off and the lookup itself per call.
 *
 * What it keeps is the resolver's answer, not a verdict: every call
 * checks the cached addresses against its own target's rules exactly as
 * it checks a fresh answer, and the connected peer is checked again at
 * connect time and before anything is sent.  A name that does not
 * resolve is not remembered.
 */
#ifndef SP_EXECUTOR_HTTP_NAMES_H
#define SP_EXECUTOR_HTTP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define HTTP_NAMES_TTL_MS	60000
#define HTTP_NAMES_MAX		16	/* names remembered; the oldest goes */
#define HTTP_NAMES_ADDRS_MAX	16
#define HTTP_NAMES_HOST_MAX	256	/* a DNS name is at most 253 bytes */

struct http_names;

/* An empty cache with the default lifetime; NULL when out of memory. */
struct http_names *http_names_new(void);
void http_names_free(struct http_names *n);

/* Sets how long an answer is used (0: never); forgets every answer. */
void http_names_set_ttl(struct http_names *n, uint64_t ttl_ms);

/* Forgets every answer (the resolver changed). */
void http_names_clear(struct http_names *n);

/*
 * Copies up to max addresses remembered for host:port at now_us into
 * addrs and sets *count; false when there is no live answer.
 */
bool http_names_get(const struct http_names *n, const char *host,
    uint16_t port, uint64_t now_us, struct sockaddr_storage *addrs,
    size_t max, size_t *count);

/* Remembers count (> 0) addresses for host:port from now_us on; a host
 * longer than HTTP_NAMES_HOST_MAX - 1 bytes is not remembered. */
void http_names_put(struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us, const struct sockaddr_storage *addrs, size_t count);

#endif
