/*
 * sp connect SOCKET: relay stdin/stdout to a Sallyport unix socket
 * (docs/design.md section 7), for a client whose assistant config cannot speak
 * to a socket itself.  The socket is a system instance's
 * (contrib/systemd/sallyport.socket): each connection is its own `sp mcp`,
 * which picks the profile from this process's uid by SO_PEERCRED.
 *
 * Bytes are copied unchanged in both directions through two fixed
 * buffers; nothing is parsed.  EOF on stdin half-closes the socket
 * (shutdown SHUT_WR), so the server sees the end of its input and can
 * still answer; EOF from the socket ends the relay once stdout is
 * flushed.
 *
 * stdout here is the relay's protocol output: besides the frontend's
 * protocol writer (and sp catalog's report for an operator), this is the
 * one place in sp that writes to fd 1.  So diagnostics are dropped when
 * stderr is the same file as stdout (`2>&1`), as sp mcp does.
 *
 * Exit statuses: 0 the server ended the stream (whatever its own status:
 * a system instance's is in its journal); 64 usage, or a path that does
 * not fit a unix socket address; 69 (EX_UNAVAILABLE) the socket cannot be
 * connected; 74 (EX_IOERR) stdin or stdout is not open, or a read or
 * write failed while relaying.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/log.h"

/* Per direction; small enough to stay bounded, large enough for a frame
 * to pass in a few reads. */
#define RELAY_BUF_BYTES 65536

/* One direction of the relay: bytes read from `from`, pending for `to`. */
struct relay_dir {
	const char *name;	/* "stdin" or "socket", for diagnostics */
	int from;
	int to;
	unsigned char buf[RELAY_BUF_BYTES];
	size_t off;		/* first pending byte */
	size_t len;		/* pending bytes from off */
	bool eof;		/* `from` ended; nothing more will be read */
};

/* Both directions and the socket; allocated by relay_run, freed there. */
struct relay {
	struct relay_dir up;	/* stdin to the socket */
	struct relay_dir down;	/* the socket to stdout */
	int sock;		/* borrowed from cmd_connect, which closes it */
	bool shut;		/* SHUT_WR sent */
};

enum relay_step {
	RELAY_MORE,
	RELAY_DONE,
	RELAY_FAILED,
};

/* A connected socket, or -1.  The caller checked that path fits sun_path. */
static int
connect_socket(const char *path)
{
	struct sockaddr_un sun;
	size_t len = strlen(path);
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, len);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_error("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_error("cannot connect to %s: %s", path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Reads once into an empty buffer; false on a read error. */
static bool
relay_fill(struct relay_dir *d)
{
	ssize_t n;

	n = read(d->from, d->buf, sizeof(d->buf));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n == -1 && errno == ECONNRESET && d->from != STDIN_FILENO) {
		/* The server closed with our input unread (sp mcp ends a
		 * session after malformed input): what it sent came first. */
		log_info("%s: the server reset the connection", d->name);
		d->eof = true;
		return true;
	}
	if (n == -1) {
		log_error("read from %s: %s", d->name, strerror(errno));
		return false;
	}
	if (n == 0)
		d->eof = true;
	d->off = 0;
	d->len = (size_t)n;
	return true;
}

/*
 * Writes what is pending, once.  A server that stopped reading (EPIPE on
 * the socket) drops our remaining input, but what it already sent is
 * still delivered; a client that stopped reading stdout is an I/O error.
 */
static bool
relay_flush(struct relay_dir *d)
{
	ssize_t n;

	n = write(d->to, d->buf + d->off, d->len);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n == -1 && errno == EPIPE && d->to != STDOUT_FILENO) {
		log_info("%s: the server stopped reading; input dropped",
		    d->name);
		d->len = 0;
		d->eof = true;
		return true;
	}
	if (n == -1) {
		log_error("write from %s: %s", d->name, strerror(errno));
		return false;
	}
	d->off += (size_t)n;
	d->len -= (size_t)n;
	return true;
}

/* What d waits for: its source while its buffer is empty, else its sink. */
static void
relay_want(const struct relay_dir *d, struct pollfd *in, struct pollfd *out)
{
	in->fd = -1;
	out->fd = -1;
	if (d->len > 0) {
		out->fd = d->to;
		out->events = POLLOUT;
	} else if (!d->eof) {
		in->fd = d->from;
		in->events = POLLIN;
	}
}

static bool
relay_ready(const struct pollfd *p)
{
	/* POLLNVAL too: an fd closed under us fails its read or write
	 * once, instead of waking poll for ever. */
	return p->fd != -1 && (p->revents &
	    (POLLIN | POLLOUT | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* One poll round over both directions. */
static enum relay_step
relay_step(struct relay *r)
{
	struct relay_dir *up = &r->up, *down = &r->down;
	struct pollfd p[4];
	int i;

	relay_want(up, &p[0], &p[1]);
	relay_want(down, &p[2], &p[3]);
	for (i = 0; i < 4; i++)
		p[i].revents = 0;
	if (poll(p, 4, -1) == -1) {
		if (errno == EINTR)
			return RELAY_MORE;
		log_error("poll: %s", strerror(errno));
		return RELAY_FAILED;
	}
	if ((relay_ready(&p[0]) && !relay_fill(up)) ||
	    (relay_ready(&p[1]) && !relay_flush(up)) ||
	    (relay_ready(&p[2]) && !relay_fill(down)) ||
	    (relay_ready(&p[3]) && !relay_flush(down)))
		return RELAY_FAILED;
	if (up->eof && up->len == 0 && !r->shut) {
		/* The server reads EOF and may still answer. */
		if (shutdown(r->sock, SHUT_WR) == -1 && errno != ENOTCONN) {
			log_error("shutdown: %s", strerror(errno));
			return RELAY_FAILED;
		}
		r->shut = true;
	}
	if (down->eof && down->len == 0)
		return RELAY_DONE;
	return RELAY_MORE;
}

/*
 * Relays until the server ends the stream.  The socket is made
 * non-blocking (it is ours alone) so that a write the server cannot take
 * yet never stops us reading what it sends; stdin and stdout stay as the
 * client made them, since their file descriptions are shared with it.
 */
static int
relay_run(int sock)
{
	struct relay *r;
	enum relay_step st;
	int flags;

	if ((flags = fcntl(sock, F_GETFL)) == -1 ||
	    fcntl(sock, F_SETFL, flags | O_NONBLOCK) == -1) {
		log_error("fcntl: %s", strerror(errno));
		return SP_EXIT_INTERNAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error("calloc: %s", strerror(errno));
		return SP_EXIT_INTERNAL;
	}
	r->sock = sock;
	r->up.name = "stdin";
	r->up.from = STDIN_FILENO;
	r->up.to = sock;
	r->down.name = "socket";
	r->down.from = sock;
	r->down.to = STDOUT_FILENO;
	while ((st = relay_step(r)) == RELAY_MORE)
		;
	free(r);
	return st == RELAY_DONE ? SP_EXIT_OK : SP_EXIT_IOERR;
}

/*
 * Both ends of the relay must be open: a closed fd 0 or 1 would be
 * reused by the socket, and the relay would talk to itself.  A closed
 * fd 2 would be reused too, and every diagnostic would go to the server
 * as input: it gets /dev/null instead (whoever closed it wants none).
 */
static bool
stdio_open(void)
{
	int fd;

	if (fcntl(STDERR_FILENO, F_GETFD) == -1 &&
	    ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    (fd != STDERR_FILENO && (dup2(fd, STDERR_FILENO) == -1 ||
	    close(fd) == -1))))
		return false;	/* nowhere to say so */
	if (fcntl(STDIN_FILENO, F_GETFD) == -1) {
		log_error("stdin is not open: %s", strerror(errno));
		return false;
	}
	if (fcntl(STDOUT_FILENO, F_GETFD) == -1) {
		log_error("stdout is not open: %s", strerror(errno));
		return false;
	}
	return true;
}

int
cmd_connect(int argc, char **argv)
{
	struct sockaddr_un sun;
	int sock, status;

	/* Before anything is logged: stdout is the client's stream. */
	if (!log_keep_off_stdout())
		return SP_EXIT_IOERR;
	if (argc != 2 || argv[1][0] == '\0') {
		log_error("usage: sp connect SOCKET");
		return SP_EXIT_USAGE;
	}
	if (strlen(argv[1]) >= sizeof(sun.sun_path)) {
		log_error("%s: longer than a unix socket path may be (%zu)",
		    argv[1], sizeof(sun.sun_path) - 1);
		return SP_EXIT_USAGE;
	}
	if (!stdio_open())
		return SP_EXIT_IOERR;
	/* A peer gone is an EPIPE to handle, not a signal that kills. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		log_error("signal: %s", strerror(errno));
		return SP_EXIT_INTERNAL;
	}
	if ((sock = connect_socket(argv[1])) == -1)
		return SP_EXIT_UNAVAILABLE;
	status = relay_run(sock);
	(void)close(sock);
	return status;
}
