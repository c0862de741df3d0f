/*
 * Relaying a child's stderr (broker/child_stderr.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/child_stderr.h"
#include "common/log.h"
#include "common/utf8.h"

static const char child_stderr_cut_mark[] = " [line cut]";

/* The prefix, each kept byte as up to 4 ("\xHH"), the mark, '\n'. */
#define CHILD_STDERR_PREFIX_MAX 48
#define CHILD_STDERR_OUT_MAX (CHILD_STDERR_PREFIX_MAX + \
	4 * CHILD_STDERR_LINE_MAX + sizeof(child_stderr_cut_mark) + 1)

void
child_stderr_init(struct child_stderr *cs, const char *role, int fd, int out)
{
	memset(cs, 0, sizeof(*cs));
	cs->role = role;
	cs->fd = fd;
	cs->out = out;
}

/*
 * The length of the child's own "sp[ROLE]: " and "LEVEL: " at the start,
 * 0 when the line does not start so.  *level is the level the line
 * names: a line without one (written by a library, say) is relayed as a
 * warning, in the one format every line has.
 */
static size_t
child_stderr_own_prefix(const struct child_stderr *cs, enum log_level *level)
{
	char prefix[32];
	size_t used = 0;
	int n;

	*level = LOG_LEVEL_WARN;
	n = snprintf(prefix, sizeof(prefix), "sp[%s]: ", cs->role);
	if (n < 0 || (size_t)n >= sizeof(prefix) || cs->len < (size_t)n ||
	    memcmp(cs->line, prefix, (size_t)n) != 0)
		return 0;
	if (!log_level_parse(cs->line + n, cs->len - (size_t)n, level, &used))
		used = 0;
	return (size_t)n + used;
}

/* A C1 control (U+0080..U+009F) is C2 80..C2 9F in UTF-8. */
static bool
child_stderr_is_c1(const unsigned char *p, size_t left)
{
	return left >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

/*
 * Where the kept bytes end: a cut line loses a multibyte character the
 * cut split, so the rest can still count as UTF-8.
 */
static size_t
child_stderr_end(const struct child_stderr *cs, size_t from, bool *utf8)
{
	const uint8_t *p = (const uint8_t *)cs->line + from;
	size_t off = 0;
	enum utf8_error e;

	e = utf8_validate(p, cs->len - from, &off);
	if (e == UTF8_TRUNCATED && cs->cut) {
		*utf8 = true;
		return from + off;
	}
	*utf8 = e == UTF8_OK;
	return cs->len;
}

/*
 * Appends line[from..] to out escaped: control bytes, DEL, C1 controls
 * and, unless the line is valid UTF-8, every byte above 0x7f.
 */
static size_t
child_stderr_escape(const struct child_stderr *cs, size_t from, char *out,
    size_t o)
{
	const unsigned char *p = (const unsigned char *)cs->line;
	size_t i, end, esc = 0;
	bool utf8;

	end = child_stderr_end(cs, from, &utf8);
	for (i = from; i < end; i++) {
		if (esc == 0 && child_stderr_is_c1(p + i, end - i))
			esc = 2;
		if (esc > 0 || p[i] < 0x20 || p[i] == 0x7f ||
		    (p[i] > 0x7f && !utf8)) {
			o += (size_t)snprintf(out + o, 5, "\\x%02x", p[i]);
			if (esc > 0)
				esc--;
		} else
			out[o++] = (char)p[i];
	}
	return o;
}

/* One write(2) per line keeps lines whole on a shared stderr. */
static void
child_stderr_emit(struct child_stderr *cs)
{
	char out[CHILD_STDERR_OUT_MAX];
	enum log_level level;
	size_t o, from;

	from = child_stderr_own_prefix(cs, &level);
	if ((o = log_prefix(out, CHILD_STDERR_PREFIX_MAX, cs->role, level)) ==
	    0)
		return;
	o = child_stderr_escape(cs, from, out, o);
	if (cs->cut) {
		memcpy(out + o, child_stderr_cut_mark,
		    sizeof(child_stderr_cut_mark) - 1);
		o += sizeof(child_stderr_cut_mark) - 1;
	}
	out[o++] = '\n';
	(void)!write(cs->out, out, o);
	cs->len = 0;
}

void
child_stderr_feed(struct child_stderr *cs, const char *bytes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (bytes[i] == '\n') {
			if (!cs->cut || cs->len > 0)
				child_stderr_emit(cs);
			cs->cut = false;
		} else if (cs->cut) {
			continue;	/* the rest of a cut line */
		} else if (cs->len == sizeof(cs->line)) {
			cs->cut = true;
			child_stderr_emit(cs);
		} else
			cs->line[cs->len++] = bytes[i];
	}
}

void
child_stderr_close(struct child_stderr *cs)
{
	if (cs->len > 0)
		child_stderr_emit(cs);
	cs->cut = false;
	if (cs->ev != NULL) {
		event_free(cs->ev);
		cs->ev = NULL;
	}
	if (cs->fd >= 0)
		(void)close(cs->fd);
	cs->fd = -1;
}

/* Up to budget bytes; false once the pipe is closed (EOF or error). */
static bool
child_stderr_read(struct child_stderr *cs, size_t budget)
{
	char buf[4096];
	size_t taken = 0;
	ssize_t n;

	while (cs->fd >= 0 && taken < budget) {
		n = read(cs->fd, buf, sizeof(buf) < budget - taken ?
		    sizeof(buf) : budget - taken);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return true;
		if (n <= 0) {
			if (n == -1)
				log_error("read %s stderr: %s", cs->role,
				    strerror(errno));
			child_stderr_close(cs);
			return false;
		}
		child_stderr_feed(cs, buf, (size_t)n);
		taken += (size_t)n;
	}
	return cs->fd >= 0;
}

static void
child_stderr_on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)child_stderr_read(arg, CHILD_STDERR_READ_MAX);
}

bool
child_stderr_watch(struct child_stderr *cs, struct event_base *base)
{
	int fl;

	if (cs->fd < 0)
		return true;
	if ((fl = fcntl(cs->fd, F_GETFL)) == -1 ||
	    fcntl(cs->fd, F_SETFL, fl | O_NONBLOCK) == -1) {
		log_error("fcntl %s stderr: %s", cs->role, strerror(errno));
		return false;
	}
	if ((cs->ev = event_new(base, cs->fd, EV_READ | EV_PERSIST,
	    child_stderr_on_read, cs)) == NULL ||
	    event_add(cs->ev, NULL) == -1) {
		log_error("cannot watch the %s's stderr", cs->role);
		return false;
	}
	return true;
}

void
child_stderr_drain(struct child_stderr *cs)
{
	int fl;

	if (cs->fd < 0)
		return;
	/* Nobody writes any more: what is left is at most a pipe's worth,
	 * and non-blocking, a writer that somehow survived cannot hold us. */
	if ((fl = fcntl(cs->fd, F_GETFL)) != -1)
		(void)fcntl(cs->fd, F_SETFL, fl | O_NONBLOCK);
	(void)child_stderr_read(cs, SIZE_MAX);
	child_stderr_close(cs);
}
