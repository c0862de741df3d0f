/*
 * Resolution on a worker thread (executor/http_resolve.h).  The job is
 * shared by the loop and the thread with a reference count: whichever
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

struct http_resolve_job {
	atomic_int refs;		/* the loop's share and the thread's */
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

static void *
job_run(void *arg)
{
	struct http_resolve_job *j = arg;
	char one = 1;

	j->ok = j->fn(j->fn_arg, j->host, j->port, j->addrs, j->max, &j->n);
	/* The send orders the writes above before the loop's read. */
	(void)send(j->fds[1], &one, 1, MSG_NOSIGNAL);
	job_unref(j);
	return NULL;
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

static void *
prepare_run(void *arg)
{
	return arg;
}

bool
http_resolve_prepare(void)
{
	pthread_t t;
	int rc;

	if ((rc = pthread_create(&t, NULL, prepare_run, NULL)) != 0 ||
	    (rc = pthread_join(t, NULL)) != 0) {
		log_error("cannot start a thread: %s", strerror(rc));
		return false;
	}
	return true;
}

struct http_resolve_job *
http_resolve_start(struct event_base *base, http_resolve_fn fn, void *fn_arg,
    const char *host, uint16_t port, size_t max, http_resolved_fn done,
    void *arg)
{
	struct http_resolve_job *j;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if ((j = job_new(base, host)) == NULL)
		return NULL;
	j->port = port;
	j->fn = fn;
	j->fn_arg = fn_arg;
	j->max = max < RESOLVE_ADDRS_MAX ? max : RESOLVE_ADDRS_MAX;
	j->done = done;
	j->arg = arg;
	atomic_init(&j->refs, 2);
	if ((rc = pthread_attr_init(&attr)) == 0) {
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, job_run, j);
		(void)pthread_attr_destroy(&attr);
	}
	if (rc != 0) {
		log_error("%s: cannot start a resolver thread: %s", host,
		    strerror(rc));
		atomic_store(&j->refs, 1);
		job_unref(j);
		return NULL;
	}
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
	job_unref(j);
}
