/*
 * Name resolution (executor/http_resolve.h).  A job is shared by the loop
 * and the queue/thread with a reference count: whichever lets go last
 * closes the socketpair and frees it, so an abandoned job whose resolver
 * is still blocked costs nothing more than the thread.  Answers kept for
 * a short time live in a fixed table, no allocation per entry, searched
 * linearly (it is small).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
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

bool
http_resolve_getaddrinfo(void *arg, const char *host, uint16_t port,
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

struct name_entry {
	char host[HTTP_NAMES_HOST_MAX];	/* "" when the slot is free */
	uint16_t port;
	uint64_t expires_us;
	struct sockaddr_storage addrs[HTTP_NAMES_ADDRS_MAX];
	size_t naddrs;
};

struct http_names {
	uint64_t ttl_us;
	struct name_entry entries[HTTP_NAMES_MAX];
};

struct http_names *
http_names_new(void)
{
	struct http_names *n;

	if ((n = calloc(1, sizeof(*n))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	n->ttl_us = (uint64_t)HTTP_NAMES_TTL_MS * 1000u;
	return n;
}

void
http_names_free(struct http_names *n)
{
	free(n);
}

void
http_names_clear(struct http_names *n)
{
	for (size_t i = 0; i < HTTP_NAMES_MAX; i++)
		n->entries[i].host[0] = '\0';
}

void
http_names_set_ttl(struct http_names *n, uint64_t ttl_ms)
{
	n->ttl_us = ttl_ms * 1000u;
	http_names_clear(n);
}

/* The slot holding host:port, or HTTP_NAMES_MAX when none does. */
static size_t
names_index(const struct http_names *n, const char *host, uint16_t port)
{
	size_t i;

	for (i = 0; i < HTTP_NAMES_MAX; i++) {
		const struct name_entry *e = &n->entries[i];

		if (e->host[0] != '\0' && e->port == port &&
		    strcmp(e->host, host) == 0)
			break;
	}
	return i;
}

bool
http_names_get(const struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us, struct sockaddr_storage *addrs, size_t max,
    size_t *count)
{
	size_t i = names_index(n, host, port);
	const struct name_entry *e = &n->entries[i];

	if (i == HTTP_NAMES_MAX || now_us >= e->expires_us || max == 0)
		return false;
	*count = e->naddrs < max ? e->naddrs : max;
	memcpy(addrs, e->addrs, *count * sizeof(addrs[0]));
	return true;
}

/* The slot for host:port: its own, a free or expired one, or the oldest. */
static struct name_entry *
names_slot(struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us)
{
	size_t i = names_index(n, host, port);
	struct name_entry *oldest = &n->entries[0], *e;

	if (i < HTTP_NAMES_MAX)
		return &n->entries[i];
	for (i = 0; i < HTTP_NAMES_MAX; i++) {
		e = &n->entries[i];
		if (e->host[0] == '\0' || now_us >= e->expires_us)
			return e;
		if (e->expires_us < oldest->expires_us)
			oldest = e;
	}
	return oldest;
}

void
http_names_put(struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us, const struct sockaddr_storage *addrs, size_t count)
{
	size_t len = strlen(host);
	struct name_entry *e;

	if (n->ttl_us == 0 || count == 0 || len >= HTTP_NAMES_HOST_MAX)
		return;
	e = names_slot(n, host, port, now_us);
	memcpy(e->host, host, len + 1);
	e->port = port;
	e->expires_us = now_us + n->ttl_us;
	e->naddrs = count < HTTP_NAMES_ADDRS_MAX ? count : HTTP_NAMES_ADDRS_MAX;
	memcpy(e->addrs, addrs, e->naddrs * sizeof(addrs[0]));
}
