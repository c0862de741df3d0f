/*
 * The HTTP engine's watches on curl's sockets (internal to executor/http*).
 *
 * A kept-alive connection's socket stays registered with the loop between
 * transfers: when curl stops watching it (CURL_POLL_REMOVE at the end of a
 * transfer) it is "parked" with read interest instead of deleted, and the
 * next transfer on it finds it registered already.  That saves an
 * epoll_ctl DEL and ADD per call on a reused connection.  A parked socket
 * that becomes readable (the peer closed it, or sent bytes nobody asked
 * for) is unregistered once; curl's own check before reuse then finds the
 * connection dead.  Parking is safe only for sockets whose close the
 * engine sees: those it opened for curl (http_socks_opened), which curl
 * closes through http_socks_close.  Any other socket is unregistered when
 * curl stops watching it, as before.
 */
#ifndef SP_EXECUTOR_HTTP_SOCK_H
#define SP_EXECUTOR_HTTP_SOCK_H

#include <curl/curl.h>
#include <stdbool.h>

struct event_base;
struct http_socks;

/* A watched socket is ready: action is CURL_CSELECT_IN and/or _OUT. */
typedef void (*http_sock_ready_fn)(curl_socket_t s, int action, void *arg);

/*
 * The watches of one multi handle on base (both borrowed, must outlive
 * the table); ready(arg) is called from the loop.  NULL when out of
 * memory (logged).  Freed with http_socks_free after curl_multi_cleanup.
 */
struct http_socks *http_socks_new(struct event_base *base, CURLM *multi,
    http_sock_ready_fn ready, void *arg);

/* curl's socket callback (CURLMOPT_SOCKETFUNCTION): 0, or -1 on failure. */
int http_socks_update(struct http_socks *t, curl_socket_t s, int what,
    void *socketp);

/* Records s as opened by the engine; false when out of memory (logged). */
bool http_socks_opened(struct http_socks *t, curl_socket_t s);

/* curl's close-socket callback: drops s's watch, then closes s. */
int http_socks_close(struct http_socks *t, curl_socket_t s);

/* Frees every watch left (their sockets are not closed here). */
void http_socks_free(struct http_socks *t);

#endif
