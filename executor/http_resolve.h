/*
 * Name resolution for the HTTP engine (internal to executor/http*).
 *
 * Off the event loop: the engine's resolver (getaddrinfo or a test's)
 * runs on a resolver thread, and the answer comes back to the loop
 * through a socketpair made per job (socketpair(AF_UNIX) and threads are
 * what the executor's filter allows).  The caller bounds the wait with
 * its own timer and abandons a job it no longer wants.
 *
 * A short memory of answers: a name resolved for one call is reused by
 * the calls to the same host and port for a short time (HTTP_NAMES_TTL_MS
 * by default, as curl's own DNS cache), which saves the resolver thread's
 * hand-off and the lookup itself per call.  What it keeps is the
 * resolver's answer, not a verdict: every call checks the cached
 * addresses against its own target's rules exactly as it checks a fresh
 * answer, and the connected peer is checked again at connect time and
 * before anything is sent.  A name that does not resolve is not
 * remembered.
 */
#ifndef SP_EXECUTOR_HTTP_RESOLVE_H
#define SP_EXECUTOR_HTTP_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "executor/http.h"

struct event_base;
struct http_resolve_job;
struct http_resolver;

/*
 * A fixed set of resolver threads and their queue, started before
 * confinement: starting (and under ASan, ending) a thread needs system
 * calls the executor's filter forbids.  The threads wait for work until
 * the process ends, so the resolver is never freed: one per engine, and
 * the engine lives as long as the executor.  NULL on failure (logged).
 */
struct http_resolver *http_resolver_new(void);

/*
 * Called once on the loop with the answer; addrs is valid only during
 * the call.  Never called after http_resolve_abandon().
 */
typedef void (*http_resolved_fn)(void *arg, bool ok,
    const struct sockaddr_storage *addrs, size_t n);

/*
 * Queues host:port (host copied) for fn(fn_arg, ...) on one of r's
 * threads; fn must be safe to call from one.  At most max (<= 16)
 * addresses.  Returns the job, owned jointly by the caller and the
 * thread: the caller's share ends when done runs or when it calls
 * http_resolve_abandon().  NULL on failure (logged; done never runs).
 */
struct http_resolve_job *http_resolve_start(struct http_resolver *r,
    struct event_base *base, http_resolve_fn fn, void *fn_arg, const char *host, uint16_t port,
    size_t max, http_resolved_fn done, void *arg);

/* The caller gives up: done will not run; a queued job is skipped. */
void http_resolve_abandon(struct http_resolve_job *j);

/* The default resolver (an http_resolve_fn): getaddrinfo, arg unused. */
bool http_resolve_getaddrinfo(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n);

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
