/*
 * Internal to the HTTP engine: what the engine (http.c, curl's multi
 * handle on the loop) and a call's life (http_call.c) need from each
 * other.  Nothing outside executor/http* includes this.
 */
#ifndef SP_EXECUTOR_HTTP_INT_H
#define SP_EXECUTOR_HTTP_INT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "executor/http.h"
#include "executor/http_resolve.h"

struct http_call;

/* The calls whose callback has not run; held by the engine, kept by
 * http_call.c (submit adds, the end or a cancel removes). */
struct http_calls {
	TAILQ_HEAD(, http_call) head;
	size_t n;
};

/* --- http_call.c --- */

void http_calls_init(struct http_calls *calls);

/* Engine shutdown: frees every call without calling its callback. */
void http_calls_abort(struct http_calls *calls);

/* The attempt of the call curl names by CURLINFO_PRIVATE ended with rc. */
void http_call_attempt_done(struct http_call *c, CURLcode rc);

/* --- http.c: the engine's services for calls --- */

struct event_base *http_engine_base(const struct http_engine *e);
struct http_calls *http_engine_calls(struct http_engine *e);
struct http_names *http_engine_names(const struct http_engine *e);

/* The engine's resolver on a thread (executor/http_resolve.h). */
struct http_resolve_job *http_engine_resolve_start(struct http_engine *e,
    const char *host, uint16_t port, size_t max, http_resolved_fn done,
    void *arg);

/*
 * An easy handle for an attempt: a pooled one (reset, no option left
 * from its last use) or a new one; NULL when out of memory.  The caller
 * owns it until it hands it back with http_engine_easy_put, which takes
 * it off the multi handle and resets it, or frees it when the pool is
 * full.  http_engine_easy_add starts its transfer; false on failure.
 */
CURL *http_engine_easy_get(struct http_engine *e);
bool http_engine_easy_add(struct http_engine *e, CURL *easy);
void http_engine_easy_put(struct http_engine *e, CURL *easy);

/*
 * curl's sockets: the call checks the address (its target's rules), the
 * engine opens the socket and watches it on the loop.  socket_open
 * returns CURL_SOCKET_BAD on failure; socket_close is curl's
 * CURLOPT_CLOSESOCKETFUNCTION with the engine as its data, for every
 * socket socket_open opened.  socket_refused counts one refused address.
 */
curl_socket_t http_engine_socket_open(struct http_engine *e,
    const struct curl_sockaddr *a);
int http_engine_socket_close(void *engine, curl_socket_t s);
void http_engine_socket_refused(struct http_engine *e);

#endif
