/*
 * Resolution on resolver threads (executor/http_resolve.h).  A job is
 * shared by the loop and the queue/thread with a reference count: whichever
 * lets go last closes the socketpair and frees it, so an abandoned job
 * whose resolver is still blocked costs nothing more than the thread.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "executor/http_resolve.h"

#define RESOLVE_ADDRS_MAX 16
/* Names stuck at once before others wait (each still ends at its budget). */
#define RESOLVE_THREADS 4

struct http_resolver {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct http_resolve_job *head, **tailp;	/* queued, under mu */
	int started;				/* threads running, under mu */
};

struct http_resolve_job {
	atomic_int refs;		/* the loop's share and the thread's */
	atomic_bool abandoned;
	struct http_resolve_job *next;	/* in the queue, under its mutex */
	int fds[2];			/* [0] watched by the loop, [1] the thread's */
	struct event *ev;		/* while the loop waits */
	char *host;
	uint16_t port;
	http_resolve_fn fn;
	void *fn_arg;
	struct sockaddr_storage addrs[RESOLVE_ADDRS_MAX];
	size_t max, n;
	bool ok;			/* written by the thread before it signals */
	http_resolved_fn done;
	void *arg;
};

static void
job_unref(struct http_resolve_job *j)
{
	if (atomic_fetch_sub(&j->refs, 1) != 1)
		return;
	if (j->ev != NULL)
		event_free(j->ev);
	(void)close(j->fds[0]);
	(void)close(j->fds[1]);
	free(j->host);
	free(j);
}

static void
job_run(struct http_resolve_job *j)
{
	char one = 1;

	if (!atomic_load(&j->abandoned)) {
		j->ok = j->fn(j->fn_arg, j->host, j->port, j->addrs, j->max,
		    &j->n);
		/* The send orders the writes above before the loop's read. */
		(void)send(j->fds[1], &one, 1, MSG_NOSIGNAL);
	}
	job_unref(j);
}

static void *
resolver_worker(void *arg)
{
	struct http_resolver *r = arg;
	struct http_resolve_job *j;

	(void)pthread_mutex_lock(&r->mu);
	r->started++;
	(void)pthread_cond_broadcast(&r->cv);
	(void)pthread_mutex_unlock(&r->mu);
	for (;;) {
		(void)pthread_mutex_lock(&r->mu);
		while (r->head == NULL)
			(void)pthread_cond_wait(&r->cv, &r->mu);
		j = r->head;
		if ((r->head = j->next) == NULL)
			r->tailp = &r->head;
		(void)pthread_mutex_unlock(&r->mu);
		job_run(j);
	}
	return NULL;
}

struct http_resolver *
http_resolver_new(void)
{
	struct http_resolver *r;
	pthread_t t;
	int i, rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	r->tailp = &r->head;
	if ((rc = pthread_mutex_init(&r->mu, NULL)) != 0 ||
	    (rc = pthread_cond_init(&r->cv, NULL)) != 0) {
		log_error("%s", strerror(rc));
		free(r);
		return NULL;
	}
	for (i = 0; i < RESOLVE_THREADS; i++)
		if ((rc = pthread_create(&t, NULL, resolver_worker, r)) != 0 ||
		    (rc = pthread_detach(t)) != 0) {
			/* Threads already started keep r: it stays. */
			log_error("cannot start a resolver thread: %s",
			    strerror(rc));
			return NULL;
		}
	/* A thread's own start-up (ASan's sigaltstack) must be over before
	 * the filter, which applies to every thread, is installed. */
	(void)pthread_mutex_lock(&r->mu);
	while (r->started < RESOLVE_THREADS)
		(void)pthread_cond_wait(&r->cv, &r->mu);
	(void)pthread_mutex_unlock(&r->mu);
	return r;
}

static void
job_answered(evutil_socket_t fd, short what, void *arg)
{
	struct http_resolve_job *j = arg;
	http_resolved_fn done = j->done;
	char one;

	(void)what;
	if (recv(fd, &one, 1, 0) != 1 && (errno == EAGAIN || errno == EINTR))
		return;
	event_free(j->ev);
	j->ev = NULL;
	j->done = NULL;
	done(j->arg, j->ok && j->n > 0, j->addrs, j->ok ? j->n : 0);
	job_unref(j);
}

static struct http_resolve_job *
job_new(struct event_base *base, const char *host)
{
	struct http_resolve_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->fds[0] = j->fds[1] = -1;
	if ((j->host = strdup(host)) == NULL ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    j->fds) == -1 ||
	    (j->ev = event_new(base, j->fds[0], EV_READ | EV_PERSIST,
	    job_answered, j)) == NULL || event_add(j->ev, NULL) == -1) {
		log_error("%s: %s", host, strerror(errno));
		atomic_init(&j->refs, 1);
		job_unref(j);
		return NULL;
	}
	return j;
}

struct http_resolve_job *
http_resolve_start(struct http_resolver *r, struct event_base *base,
    http_resolve_fn fn, void *fn_arg, const char *host, uint16_t port,
    size_t max, http_resolved_fn done, void *arg)
{
	struct http_resolve_job *j;

	if ((j = job_new(base, host)) == NULL)
		return NULL;
	j->port = port;
	j->fn = fn;
	j->fn_arg = fn_arg;
	j->max = max < RESOLVE_ADDRS_MAX ? max : RESOLVE_ADDRS_MAX;
	j->done = done;
	j->arg = arg;
	atomic_init(&j->abandoned, false);
	atomic_init(&j->refs, 2);
	(void)pthread_mutex_lock(&r->mu);
	*r->tailp = j;
	r->tailp = &j->next;
	(void)pthread_cond_signal(&r->cv);
	(void)pthread_mutex_unlock(&r->mu);
	return j;
}

void
http_resolve_abandon(struct http_resolve_job *j)
{
	if (j->ev != NULL) {
		event_free(j->ev);
		j->ev = NULL;
	}
	j->done = NULL;
	atomic_store(&j->abandoned, true);
	job_unref(j);
}
