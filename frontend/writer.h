/*
 * The protocol writer: the one place that writes fd 1 (docs/design.md
 * invariant 1).  Messages are queued whole, each followed by '\n', and
 * written by writer_flush(): at once, several in one writev, and only
 * what fd 1 does not take waits for it to become writable.  The writer
 * does not decide when input stops: the loop asks mcp_session_may_read()
 * with writer_queued().  Once
 * the queue has held more than WRITER_QUEUE_RESUME bytes, the drained
 * callback fires when it falls back below, so the loop asks again.
 */
#ifndef SP_FRONTEND_WRITER_H
#define SP_FRONTEND_WRITER_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct writer;

#define WRITER_QUEUE_RESUME (4u * 1024 * 1024)

/*
 * Called when the queue drops back below WRITER_QUEUE_RESUME and
 * when it is empty after writer_finish() (end the session).  arg is
 * borrowed.
 */
typedef void (*writer_cb)(void *arg);

/*
 * A writer on fd (set non-blocking), driven by base (borrowed).  The
 * caller owns the result and frees it with writer_free().  NULL after
 * logging.
 */
struct writer *writer_new(struct event_base *base, int fd, writer_cb drained,
    writer_cb finished, void *arg);

/* Queues one message (len bytes, no newline inside; a '\n' is added);
 * nothing is written before writer_flush().  false when the client is
 * gone (the message is dropped) or on allocation failure (logged). */
bool writer_send(struct writer *w, const char *msg, size_t len);

/*
 * Writes what is queued now, unless fd is already known full (then it
 * goes when fd is writable).  The loop calls it once per wake-up, after
 * every message of that wake-up was queued, so they share one writev.
 */
void writer_flush(struct writer *w);

/* Bytes queued and not yet written to fd. */
size_t writer_queued(const struct writer *w);

/* No more messages: call finished once everything queued is written
 * (at once when the queue is empty or the client is gone). */
void writer_finish(struct writer *w);

/*
 * Calls lost (once, from the loop, arg as given to writer_new()) when
 * the client can no longer read fd: a write failed (EPIPE), or fd
 * reports an error or hang-up while nothing is written (the write end
 * of a pipe whose read end was closed does, at once; a socket does when
 * its peer closed it whole).  Needs epoll_create1, so it runs before
 * confinement.  false after logging.
 */
bool writer_watch_client(struct writer *w, writer_cb lost);

/*
 * Whether the client may still read fd, asked now without blocking (one
 * epoll_wait): the loop asks before it acts on input, so a frame read
 * after the client closed its end starts nothing.  When it says false,
 * lost is also called from the loop.
 */
bool writer_client_alive(struct writer *w);

void writer_free(struct writer *w);

/*
 * Whether epoll can watch fd.  Regular files and some devices
 * (/dev/null) cannot; they never block, so they are read or written
 * directly.  Needs epoll_create1, so it runs before confinement.
 */
bool fd_is_pollable(int fd);

#endif
