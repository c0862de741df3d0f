/*
 * Name resolution off the event loop: the engine's resolver (getaddrinfo
 * or a test's) runs on a resolver thread, and the answer comes back to
 * the loop through a socketpair made per job (socketpair(AF_UNIX) and
 * threads are what the executor's filter allows).  The caller bounds the
 * wait with its own timer and abandons a job it no longer wants.
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

#endif
