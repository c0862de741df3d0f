/*
 * Watches on curl's sockets with parking of idle kept-alive sockets
 * (executor/http_sock.h).  The table is a short list: one entry per
 * socket curl holds, which the multi handle's connection limits bound.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "executor/http_sock.h"

struct sock_watch {
	struct sock_watch *next;
	struct http_socks *table;
	curl_socket_t fd;
	struct event *ev;	/* NULL until curl first asks to watch */
	bool owned;		/* opened by the engine: its close is seen */
	bool parked;		/* curl is not watching it now */
};

struct http_socks {
	struct event_base *base;
	CURLM *multi;
	http_sock_ready_fn ready;
	void *arg;
	struct sock_watch *head;
};

struct http_socks *
http_socks_new(struct event_base *base, CURLM *multi,
    http_sock_ready_fn ready, void *arg)
{
	struct http_socks *t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		log_error("http_socks_new: out of memory");
		return NULL;
	}
	t->base = base;
	t->multi = multi;
	t->ready = ready;
	t->arg = arg;
	return t;
}

static struct sock_watch *
watch_find(const struct http_socks *t, curl_socket_t fd)
{
	struct sock_watch *w;

	for (w = t->head; w != NULL; w = w->next)
		if (w->fd == fd)
			return w;
	return NULL;
}

static struct sock_watch *
watch_new(struct http_socks *t, curl_socket_t fd, bool owned)
{
	struct sock_watch *w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_error("watch_new: out of memory");
		return NULL;
	}
	w->table = t;
	w->fd = fd;
	w->owned = owned;
	w->next = t->head;
	t->head = w;
	return w;
}

static void
watch_free(struct sock_watch *w)
{
	struct sock_watch **pp;

	for (pp = &w->table->head; *pp != NULL; pp = &(*pp)->next)
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
	w->table->ready(fd, action, w->table->arg);
}

/* Registers w for flags unless it is registered for exactly that. */
static int
watch_set(struct sock_watch *w, short flags)
{
	if (w->ev != NULL && event_get_events(w->ev) == flags &&
	    event_pending(w->ev, EV_READ | EV_WRITE, NULL))
		return 0;
	if (w->ev == NULL)
		w->ev = event_new(w->table->base, w->fd, flags, watch_ready, w);
	else {
		event_del(w->ev);
		event_assign(w->ev, w->table->base, w->fd, flags, watch_ready,
		    w);
	}
	if (w->ev == NULL || event_add(w->ev, NULL) == -1) {
		log_error("watch_set: cannot watch socket %d", (int)w->fd);
		return -1;
	}
	return 0;
}

/* curl stopped watching w: park an owned, read-only watch, else drop it. */
static void
watch_release(struct sock_watch *w)
{
	curl_multi_assign(w->table->multi, w->fd, NULL);
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

int
http_socks_update(struct http_socks *t, curl_socket_t s, int what,
    void *socketp)
{
	struct sock_watch *w = socketp;
	short flags = EV_PERSIST;

	if (w == NULL)
		w = watch_find(t, s);
	if (what == CURL_POLL_REMOVE) {
		if (w != NULL)
			watch_release(w);
		return 0;
	}
	if (w == NULL && (w = watch_new(t, s, false)) == NULL)
		return -1;
	if (what & CURL_POLL_IN)
		flags |= EV_READ;
	if (what & CURL_POLL_OUT)
		flags |= EV_WRITE;
	w->parked = false;
	curl_multi_assign(t->multi, s, w);
	return watch_set(w, flags);
}

bool
http_socks_opened(struct http_socks *t, curl_socket_t s)
{
	return watch_new(t, s, true) != NULL;
}

int
http_socks_close(struct http_socks *t, curl_socket_t s)
{
	struct sock_watch *w = watch_find(t, s);

	/* Unregistered before the close, so the loop never holds a number
	 * the kernel may hand out again. */
	if (w != NULL)
		watch_free(w);
	return close(s);
}

void
http_socks_free(struct http_socks *t)
{
	if (t == NULL)
		return;
	while (t->head != NULL)
		watch_free(t->head);
	free(t);
}
