/*
 * The HTTP engine: curl's multi handle driven by libevent, the watches on
 * curl's sockets, the pool of easy handles and the engine's resolver and
 * names.  Shaped after curl's hiperfifo example: the socket callback maps
 * CURL_POLL_* to persistent events, the timer callback arms one timer,
 * and every path back from libcurl drains curl_multi_info_read.  A call's
 * own life is executor/http_call.c.
 *
 * A kept-alive connection's socket stays registered with the loop between
 * transfers: when curl stops watching it (CURL_POLL_REMOVE at the end of a
 * transfer) it is "parked" with read interest instead of deleted, and the
 * next transfer on it finds it registered already.  That saves an
 * epoll_ctl DEL and ADD per call on a reused connection.  A parked socket
 * that becomes readable (the peer closed it, or sent bytes nobody asked
 * for) is unregistered once; curl's own check before reuse then finds the
 * connection dead.  Parking is safe only for sockets whose close the
 * engine sees: those it opened for curl (http_engine_socket_open), which
 * curl closes through http_engine_socket_close.  Any other socket is
 * unregistered when curl stops watching it.
 */
#include "config.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "executor/http.h"
#include "executor/http_int.h"
#include "executor/http_resolve.h"

/* One socket curl holds; a short list, bounded by the multi handle's
 * connection limits. */
struct sock_watch {
	struct sock_watch *next;
	struct http_engine *engine;
	curl_socket_t fd;
	struct event *ev;	/* NULL until curl first asks to watch */
	bool owned;		/* opened by the engine: its close is seen */
	bool parked;		/* curl is not watching it now */
};

struct http_engine {
	struct event_base *base;	/* borrowed */
	CURLM *multi;
	struct event *timer;
	struct sock_watch *watches;	/* curl's sockets on the loop */
	http_resolve_fn resolve;
	void *resolve_arg;
	struct http_resolver *resolver;	/* lives until the process ends */
	struct http_names *names;	/* recent answers of resolve */
	struct http_engine_stats stats;
	struct http_calls calls;
	/* Reset handles for later attempts: curl_easy_init and freeing per
	 * attempt showed up in the profile.  Each was curl_easy_reset, which
	 * clears every option (URL, method, body, header list with the
	 * credential); the connections live on in the multi handle. */
	CURL *easy_pool[HTTP_EASY_POOL_MAX];
	size_t easy_pooled;
	size_t easy_pool_max;		/* <= HTTP_EASY_POOL_MAX */
};

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
engine_socket_action(struct http_engine *e, curl_socket_t s, int action)
{
	int running;

	if (curl_multi_socket_action(e->multi, s, action, &running) !=
	    CURLM_OK)
		log_error("curl_multi_socket_action failed");
	engine_drain(e);
}

static void
engine_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	engine_socket_action(arg, CURL_SOCKET_TIMEOUT, 0);
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

static struct sock_watch *
watch_find(const struct http_engine *e, curl_socket_t fd)
{
	struct sock_watch *w;

	for (w = e->watches; w != NULL; w = w->next)
		if (w->fd == fd)
			return w;
	return NULL;
}

static struct sock_watch *
watch_new(struct http_engine *e, curl_socket_t fd, bool owned)
{
	struct sock_watch *w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	w->engine = e;
	w->fd = fd;
	w->owned = owned;
	w->next = e->watches;
	e->watches = w;
	return w;
}

static void
watch_free(struct sock_watch *w)
{
	struct sock_watch **pp;

	for (pp = &w->engine->watches; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	if (w->ev != NULL)
		event_free(w->ev);
	free(w);
}

static void
watch_ready(evutil_socket_t fd, short what, void *arg)
{
	struct sock_watch *w = arg;
	int action = 0;

	if (w->parked) {
		/* Not curl's to hear now: stop the wake-ups (a closed peer
		 * stays readable); curl finds the connection dead itself. */
		event_del(w->ev);
		return;
	}
	if (what & EV_READ)
		action |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		action |= CURL_CSELECT_OUT;
	engine_socket_action(w->engine, fd, action);
}

/* Registers w for flags unless it is registered for exactly that. */
static int
watch_set(struct sock_watch *w, short flags)
{
	struct event_base *base = w->engine->base;

	if (w->ev != NULL && event_get_events(w->ev) == flags &&
	    event_pending(w->ev, EV_READ | EV_WRITE, NULL))
		return 0;
	if (w->ev == NULL)
		w->ev = event_new(base, w->fd, flags, watch_ready, w);
	else {
		event_del(w->ev);
		event_assign(w->ev, base, w->fd, flags, watch_ready, w);
	}
	if (w->ev == NULL || event_add(w->ev, NULL) == -1) {
		log_error("cannot watch socket %d", (int)w->fd);
		return -1;
	}
	return 0;
}

/* curl stopped watching w: park an owned, read-only watch, else drop it. */
static void
watch_release(struct sock_watch *w)
{
	curl_multi_assign(w->engine->multi, w->fd, NULL);
	if (w->owned && w->ev != NULL &&
	    event_get_events(w->ev) == (EV_READ | EV_PERSIST)) {
		w->parked = true;
		return;
	}
	if (w->owned) {
		/* Writable would wake at once: unregister, keep the entry. */
		if (w->ev != NULL)
			event_free(w->ev);
		w->ev = NULL;
		w->parked = true;
		return;
	}
	watch_free(w);
}

/* libcurl asks to watch (or stop watching) socket s: 0, or -1 on failure. */
static int
engine_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct http_engine *e = userp;
	struct sock_watch *w = socketp;
	short flags = EV_PERSIST;

	(void)easy;
	if (w == NULL)
		w = watch_find(e, s);
	if (what == CURL_POLL_REMOVE) {
		if (w != NULL)
			watch_release(w);
		return 0;
	}
	if (w == NULL && (w = watch_new(e, s, false)) == NULL)
		return -1;
	if (what & CURL_POLL_IN)
		flags |= EV_READ;
	if (what & CURL_POLL_OUT)
		flags |= EV_WRITE;
	w->parked = false;
	curl_multi_assign(e->multi, s, w);
	return watch_set(w, flags);
}

curl_socket_t
http_engine_socket_open(struct http_engine *e, const struct curl_sockaddr *a)
{
	curl_socket_t s;

	s = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (s == -1)
		return CURL_SOCKET_BAD;
	if (watch_new(e, s, true) == NULL) {
		(void)close(s);
		return CURL_SOCKET_BAD;
	}
	e->stats.connections_opened++;
	return s;
}

int
http_engine_socket_close(void *engine, curl_socket_t s)
{
	struct sock_watch *w = watch_find(engine, s);

	/* Unregistered before the close, so the loop never holds a number
	 * the kernel may hand out again. */
	if (w != NULL)
		watch_free(w);
	return close(s);
}

void
http_engine_socket_refused(struct http_engine *e)
{
	e->stats.connections_refused++;
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
	http_calls_init(&e->calls);
	e->easy_pool_max = HTTP_EASY_POOL_DEFAULT;
	e->resolve = http_resolve_getaddrinfo;
	if ((e->resolver = http_resolver_new()) == NULL ||
	    (e->names = http_names_new()) == NULL ||
	    (e->multi = curl_multi_init()) == NULL ||
	    (e->timer = evtimer_new(base, engine_timer_fired, e)) == NULL ||
	    !engine_multi_setup(e, max_host_connections)) {
		log_error("cannot set up the engine");
		http_engine_free(e);
		return NULL;
	}
	return e;
}

void
http_engine_free(struct http_engine *e)
{
	if (e == NULL)
		return;
	http_calls_abort(&e->calls);
	/* Cleanup calls the socket and close callbacks, which need e and
	 * its watches intact. */
	if (e->multi != NULL)
		curl_multi_cleanup(e->multi);
	while (e->watches != NULL)
		watch_free(e->watches);
	http_names_free(e->names);
	while (e->easy_pooled > 0)
		curl_easy_cleanup(e->easy_pool[--e->easy_pooled]);
	if (e->timer != NULL)
		event_free(e->timer);
	free(e);
}

void
http_engine_set_resolver(struct http_engine *e, http_resolve_fn fn, void *arg)
{
	e->resolve = fn != NULL ? fn : http_resolve_getaddrinfo;
	e->resolve_arg = fn != NULL ? arg : NULL;
	http_names_clear(e->names);
}

void
http_engine_set_name_ttl(struct http_engine *e, uint32_t ttl_ms)
{
	http_names_set_ttl(e->names, ttl_ms);
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

size_t
http_engine_inflight(const struct http_engine *e)
{
	return e->calls.n;
}

void
http_engine_stats(const struct http_engine *e, struct http_engine_stats *out)
{
	*out = e->stats;
}

struct event_base *
http_engine_base(const struct http_engine *e)
{
	return e->base;
}

struct http_calls *
http_engine_calls(struct http_engine *e)
{
	return &e->calls;
}

struct http_names *
http_engine_names(const struct http_engine *e)
{
	return e->names;
}

struct http_resolve_job *
http_engine_resolve_start(struct http_engine *e, const char *host,
    uint16_t port, size_t max, http_resolved_fn done, void *arg)
{
	return http_resolve_start(e->resolver, e->base, e->resolve,
	    e->resolve_arg, host, port, max, done, arg);
}

CURL *
http_engine_easy_get(struct http_engine *e)
{
	if (e->easy_pooled > 0)
		return e->easy_pool[--e->easy_pooled];
	return curl_easy_init();
}

bool
http_engine_easy_add(struct http_engine *e, CURL *easy)
{
	if (curl_multi_add_handle(e->multi, easy) != CURLM_OK)
		return false;
	e->stats.requests_started++;
	return true;
}

void
http_engine_easy_put(struct http_engine *e, CURL *easy)
{
	curl_multi_remove_handle(e->multi, easy);
	if (e->easy_pooled >= e->easy_pool_max) {
		curl_easy_cleanup(easy);
		return;
	}
	curl_easy_reset(easy);
	e->easy_pool[e->easy_pooled++] = easy;
}
