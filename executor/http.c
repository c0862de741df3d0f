/*
 * The HTTP engine: curl multi driven by libevent, and the life of one call
 * (resolve and check, attempts, Retry-After wait, same-origin redirects,
 * one result).  Shaped after curl's hiperfifo example: the socket callback
 * maps CURL_POLL_* to persistent events (executor/http_sock.h), the timer
 * callback arms one timer, and every path back from libcurl drains
 * curl_multi_info_read.
 */
#include "config.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include "common/log.h"
#include "executor/http.h"
#include "executor/http_addr.h"
#include "executor/http_build.h"
#include "executor/http_call.h"
#include "executor/http_names.h"
#include "executor/http_resolve.h"
#include "executor/http_sock.h"

struct http_engine {
	struct event_base *base;	/* borrowed */
	CURLM *multi;
	struct http_socks *socks;	/* curl's sockets on the loop */
	struct event *timer;
	http_resolve_fn resolve;
	void *resolve_arg;
	struct http_resolver *resolver;	/* lives until the process ends */
	struct http_names *names;	/* recent answers of resolve */
	struct http_engine_stats stats;
	TAILQ_HEAD(, http_call) calls;
	size_t ncalls;
	/* Reset handles for later attempts: curl_easy_init and freeing per
	 * attempt showed up in the profile.  Each was curl_easy_reset, which
	 * clears every option (URL, method, body, header list with the
	 * credential); the connections live on in the multi handle. */
	CURL *easy_pool[HTTP_EASY_POOL_MAX];
	size_t easy_pooled;
	size_t easy_pool_max;		/* <= HTTP_EASY_POOL_MAX */
};

static bool resolve_getaddrinfo(void *, const char *, uint16_t,
    struct sockaddr_storage *, size_t, size_t *);

/* libcurl asks to watch (or stop watching) socket s. */
static int
engine_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct http_engine *e = userp;

	(void)easy;
	return http_socks_update(e->socks, s, what, socketp);
}

/* libcurl asks for a call-back in timeout_ms; libcurl is not called here. */
static int
engine_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct http_engine *e = userp;
	struct timeval tv;

	(void)multi;
	if (timeout_ms < 0) {
		evtimer_del(e->timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	if (evtimer_add(e->timer, &tv) == -1) {
		log_error("evtimer_add failed");
		return -1;
	}
	return 0;
}

static void
engine_drain(struct http_engine *e)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(e->multi, &left)) != NULL) {
		CURL *easy = msg->easy_handle;
		CURLcode rc = msg->data.result;
		char *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv) !=
		    CURLE_OK || priv == NULL) {
			log_error("finished transfer without its call");
			continue;
		}
		http_call_attempt_done((struct http_call *)priv, rc);
	}
}

static void
engine_socket_ready(curl_socket_t s, int action, void *arg)
{
	struct http_engine *e = arg;
	int running;

	if (curl_multi_socket_action(e->multi, s, action, &running) !=
	    CURLM_OK)
		log_error("curl_multi_socket_action failed");
	engine_drain(e);
}

static void
engine_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	struct http_engine *e = arg;
	int running;

	(void)fd;
	(void)what;
	if (curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0,
	    &running) != CURLM_OK)
		log_error("curl_multi_socket_action failed");
	engine_drain(e);
}

static bool
engine_multi_setup(struct http_engine *e, long max_host_connections)
{
	if (max_host_connections <= 0)
		max_host_connections = 8;
	if (curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION,
	    engine_socket_cb) != CURLM_OK ||
	    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e) != CURLM_OK ||
	    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION,
	    engine_timer_cb) != CURLM_OK ||
	    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e) != CURLM_OK ||
	    curl_multi_setopt(e->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    max_host_connections) != CURLM_OK ||
	    curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS,
	    max_host_connections * 4) != CURLM_OK) {
		log_error("curl_multi_setopt failed");
		return false;
	}
	return true;
}

struct http_engine *
http_engine_new(struct event_base *base, long max_host_connections)
{
	struct http_engine *e;

	if ((e = calloc(1, sizeof(*e))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	e->base = base;
	TAILQ_INIT(&e->calls);
	e->easy_pool_max = HTTP_EASY_POOL_DEFAULT;
	e->resolve = resolve_getaddrinfo;
	if ((e->resolver = http_resolver_new()) == NULL ||
	    (e->names = http_names_new()) == NULL ||
	    (e->multi = curl_multi_init()) == NULL ||
	    (e->socks = http_socks_new(base, e->multi, engine_socket_ready,
	    e)) == NULL ||
	    (e->timer = evtimer_new(base, engine_timer_fired, e)) == NULL ||
	    !engine_multi_setup(e, max_host_connections)) {
		log_error("cannot set up the engine");
		http_engine_free(e);
		return NULL;
	}
	return e;
}

void
http_engine_set_resolver(struct http_engine *e, http_resolve_fn fn, void *arg)
{
	e->resolve = fn != NULL ? fn : resolve_getaddrinfo;
	e->resolve_arg = fn != NULL ? arg : NULL;
	http_names_clear(e->names);
}

void
http_engine_set_name_ttl(struct http_engine *e, uint32_t ttl_ms)
{
	http_names_set_ttl(e->names, ttl_ms);
}

struct http_names *
http_engine_names(const struct http_engine *e)
{
	return e->names;
}

void
http_engine_set_easy_pool(struct http_engine *e, size_t max)
{
	if (max > HTTP_EASY_POOL_MAX)
		max = HTTP_EASY_POOL_MAX;
	while (e->easy_pooled > max)
		curl_easy_cleanup(e->easy_pool[--e->easy_pooled]);
	e->easy_pool_max = max;
}

CURL *
http_engine_easy_get(struct http_engine *e)
{
	if (e->easy_pooled > 0)
		return e->easy_pool[--e->easy_pooled];
	return curl_easy_init();
}

void
http_engine_easy_put(struct http_engine *e, CURL *easy)
{
	if (e->easy_pooled >= e->easy_pool_max) {
		curl_easy_cleanup(easy);
		return;
	}
	curl_easy_reset(easy);
	e->easy_pool[e->easy_pooled++] = easy;
}

int
http_engine_submit(struct http_engine *e, const struct http_request *req,
    http_done_fn done, void *arg)
{
	struct http_call *c;

	if ((c = http_call_new(e, req, done, arg)) == NULL)
		return -1;
	TAILQ_INSERT_TAIL(&e->calls, c, entry);
	e->ncalls++;
	return 0;
}

bool
http_engine_cancel(struct http_engine *e, const void *arg, bool *maybe_sent)
{
	struct http_call *c;

	TAILQ_FOREACH(c, &e->calls, entry)
		if (c->arg == arg)
			break;
	if (c == NULL)
		return false;
	*maybe_sent = c->attempt_sends > 0 || c->mutation_sent || c->waited ||
	    c->result.redirects > 0;
	http_engine_call_ended(e, c);
	http_call_free(c);
	return true;
}

void
http_engine_call_ended(struct http_engine *e, struct http_call *c)
{
	TAILQ_REMOVE(&e->calls, c, entry);
	e->ncalls--;
}

CURLM *
http_engine_multi(const struct http_engine *e)
{
	return e->multi;
}

struct http_socks *
http_engine_socks(const struct http_engine *e)
{
	return e->socks;
}

struct event_base *
http_engine_base(const struct http_engine *e)
{
	return e->base;
}

struct http_engine_stats *
http_engine_stats_mut(struct http_engine *e)
{
	return &e->stats;
}

size_t
http_engine_inflight(const struct http_engine *e)
{
	return e->ncalls;
}

void
http_engine_stats(const struct http_engine *e, struct http_engine_stats *out)
{
	*out = e->stats;
}

void
http_engine_free(struct http_engine *e)
{
	struct http_call *c;

	if (e == NULL)
		return;
	while ((c = TAILQ_FIRST(&e->calls)) != NULL) {
		http_engine_call_ended(e, c);
		http_call_free(c);
	}
	/* Cleanup calls the socket and close callbacks, which need e and
	 * its table intact. */
	if (e->multi != NULL)
		curl_multi_cleanup(e->multi);
	http_socks_free(e->socks);
	http_names_free(e->names);
	while (e->easy_pooled > 0)
		curl_easy_cleanup(e->easy_pool[--e->easy_pooled]);
	if (e->timer != NULL)
		event_free(e->timer);
	free(e);
}

struct http_resolve_job *
http_engine_resolve_start(struct http_engine *e, const char *host,
    uint16_t port, size_t max, http_resolved_fn done, void *arg)
{
	return http_resolve_start(e->resolver, e->base, e->resolve, e->resolve_arg, host,
	    port, max, done, arg);
}

static bool
resolve_getaddrinfo(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n)
{
	struct addrinfo hints, *res, *ai;
	char service[8];
	int rc;

	(void)arg;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	if ((rc = getaddrinfo(host, service, &hints, &res)) != 0) {
		log_error("%s: %s", host, gai_strerror(rc));
		return false;
	}
	*n = 0;
	for (ai = res; ai != NULL && *n < max; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(addrs[0]))
			continue;
		memset(&addrs[*n], 0, sizeof(addrs[0]));
		memcpy(&addrs[*n], ai->ai_addr, ai->ai_addrlen);
		(*n)++;
	}
	freeaddrinfo(res);
	return *n > 0;
}
