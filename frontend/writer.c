/*
 * The protocol writer (frontend/writer.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "frontend/writer.h"

struct writer {
	int fd;
	struct evbuffer *queue;
	struct event *ev_write;
	writer_cb drained;
	writer_cb finished;
	void *arg;
	bool was_full;
	bool finishing;
	bool gone;		/* the client closed its end: drop output */
	bool pollable;		/* false for a regular file: write at once */
	/*
	 * An epoll set holding fd with no events asked, so it turns
	 * readable only on fd's error or hang-up; -1 when fd cannot be
	 * polled.  ev_lost watches it, and is made active by a failed
	 * write, so lost is told from the loop, never from inside a write.
	 */
	int hup_fd;
	struct event *ev_lost;
	writer_cb lost;
	bool lost_told;
};

static void
writer_mark_gone(struct writer *w)
{
	if (w->gone)
		return;
	w->gone = true;
	(void)evbuffer_drain(w->queue, evbuffer_get_length(w->queue));
	(void)event_del(w->ev_write);
	if (w->ev_lost != NULL)
		event_active(w->ev_lost, EV_READ, 0);
}

/* fd has an error or a hang-up pending, seen without blocking. */
static bool
writer_hangup_seen(const struct writer *w)
{
	struct epoll_event ev;

	return w->hup_fd != -1 && epoll_wait(w->hup_fd, &ev, 1, 0) == 1;
}

static bool
writer_is_full(const struct writer *w)
{
	return evbuffer_get_length(w->queue) > WRITER_QUEUE_RESUME;
}

static void
writer_done_if_empty(struct writer *w)
{
	if (w->finishing && (w->gone || evbuffer_get_length(w->queue) == 0)) {
		w->finishing = false;
		w->finished(w->arg);
	}
}

/* One write; false when the client is gone. */
static bool
writer_write_once(struct writer *w)
{
	if (evbuffer_write(w->queue, w->fd) != -1 || errno == EAGAIN ||
	    errno == EINTR)
		return true;
	log_error("write: %s", strerror(errno));
	writer_mark_gone(w);
	return false;
}

/*
 * Writes what is queued, in one writev when several messages wait: all
 * of it to a regular file, as much as fd takes to a pipe or socket.  Only
 * a short write arms EV_WRITE, so an answer to a client that reads costs
 * no epoll_ctl and no extra wake-up.
 */
static void
writer_write_queued(struct writer *w)
{
	while (evbuffer_get_length(w->queue) > 0 && writer_write_once(w) &&
	    !w->pollable)
		;
	if (evbuffer_get_length(w->queue) > 0 && !w->gone)
		(void)event_add(w->ev_write, NULL);
	if (w->was_full && !writer_is_full(w)) {
		w->was_full = false;
		w->drained(w->arg);
	}
	writer_done_if_empty(w);
}

static void
writer_on_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	writer_write_queued(arg);
}

struct writer *
writer_new(struct event_base *base, int fd, writer_cb drained,
    writer_cb finished, void *arg)
{
	struct writer *w;
	int flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		log_error("fcntl: %s", strerror(errno));
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->fd = fd;
	w->hup_fd = -1;
	w->pollable = fd_is_pollable(fd);
	w->drained = drained;
	w->finished = finished;
	w->arg = arg;
	w->queue = evbuffer_new();
	w->ev_write = event_new(base, fd, EV_WRITE, writer_on_writable, w);
	if (w->queue == NULL || w->ev_write == NULL) {
		log_error("out of memory");
		writer_free(w);
		return NULL;
	}
	return w;
}

bool
writer_send(struct writer *w, const char *msg, size_t len)
{
	if (w->gone)
		return false;
	if (evbuffer_add(w->queue, msg, len) == -1 ||
	    evbuffer_add(w->queue, "\n", 1) == -1) {
		log_error("out of memory queueing a line for the client");
		return false;
	}
	if (writer_is_full(w))
		w->was_full = true;
	return true;
}

void
writer_flush(struct writer *w)
{
	/* A pending EV_WRITE means fd is full: its callback writes. */
	if (w->gone || evbuffer_get_length(w->queue) == 0 ||
	    event_pending(w->ev_write, EV_WRITE, NULL))
		return;
	writer_write_queued(w);
}

size_t
writer_queued(const struct writer *w)
{
	return evbuffer_get_length(w->queue);
}

void
writer_finish(struct writer *w)
{
	w->finishing = true;
	writer_flush(w);
	writer_done_if_empty(w);
}

static void
writer_on_lost(evutil_socket_t fd, short what, void *arg)
{
	struct writer *w = arg;

	(void)fd;
	(void)what;
	if (!w->gone && writer_hangup_seen(w))
		writer_mark_gone(w);
	if (!w->gone)
		return;
	(void)event_del(w->ev_lost);	/* the hang-up stays pending */
	if (!w->lost_told) {
		w->lost_told = true;
		w->lost(w->arg);
	}
	writer_done_if_empty(w);
}

bool
writer_watch_client(struct writer *w, writer_cb lost)
{
	struct epoll_event ev = { .events = 0 };

	w->lost = lost;
	if (w->pollable) {
		if ((w->hup_fd = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
		    epoll_ctl(w->hup_fd, EPOLL_CTL_ADD, w->fd, &ev) == -1) {
			log_error("cannot watch the client's stdout: %s", strerror(errno));
			return false;
		}
	}
	w->ev_lost = event_new(event_get_base(w->ev_write), w->hup_fd,
	    w->hup_fd != -1 ? EV_READ | EV_PERSIST : 0, writer_on_lost, w);
	if (w->ev_lost == NULL ||
	    (w->hup_fd != -1 && event_add(w->ev_lost, NULL) == -1)) {
		log_error("cannot watch the client's stdout");
		return false;
	}
	return true;
}

bool
writer_client_alive(struct writer *w)
{
	if (!w->gone && writer_hangup_seen(w))
		writer_mark_gone(w);
	return !w->gone;
}

void
writer_free(struct writer *w)
{
	if (w == NULL)
		return;
	if (w->ev_lost != NULL)
		event_free(w->ev_lost);
	if (w->hup_fd != -1)
		(void)close(w->hup_fd);
	if (w->ev_write != NULL)
		event_free(w->ev_write);
	if (w->queue != NULL)
		evbuffer_free(w->queue);
	free(w);
}

bool
fd_is_pollable(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep;
	bool ok;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		log_error("epoll_create1: %s", strerror(errno));
		return true;
	}
	ok = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
	(void)close(ep);
	return ok;
}
