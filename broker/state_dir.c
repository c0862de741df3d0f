/*
 * A shared state file (broker/state_dir.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/state_dir.h"
#include "child/test_hook.h"
#include "common/log.h"
#include "common/sandbox.h"

#define STATE_READ_CHUNK 65536

struct state_file {
	int dirfd;			/* O_PATH, held for reopening */
	bool own_dir;			/* else the sibling's, borrowed */
	int fd;
	char *name;			/* inside dirfd; owned */
	dev_t dev;
	ino_t ino;
	off_t pos;			/* after the last complete line read */
	char line[STATE_LINE_MAX + 1];	/* a line across two reads */
	size_t line_len;		/* bytes of it kept */
	size_t line_total;		/* bytes of it read */
	bool line_long;			/* the line in progress is skipped */
};

static int
state_file_open_fd(struct state_file *sf, struct stat *st)
{
	int fd = openat(sf->dirfd, sf->name, SANDBOX_AUDIT_LOG_FLAGS, 0600);

	if (fd == -1) {
		log_error("state_dir %s: %s", sf->name, errno == ELOOP ?
		    "a symbolic link, refused" : strerror(errno));
		return -1;
	}
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode)) {
		log_error("state_dir %s: not a regular file", sf->name);
		close(fd);
		return -1;
	}
	return fd;
}

static struct state_file *
state_file_new(const char *name)
{
	struct state_file *sf;

	if ((sf = calloc(1, sizeof(*sf))) == NULL ||
	    (sf->name = strdup(name)) == NULL) {
		log_error("out of memory");
		free(sf);
		return NULL;
	}
	sf->fd = -1;
	sf->dirfd = -1;
	return sf;
}

static struct state_file *
state_file_finish(struct state_file *sf)
{
	struct stat st;

	if ((sf->fd = state_file_open_fd(sf, &st)) == -1) {
		state_file_free(sf);
		return NULL;
	}
	sf->dev = st.st_dev;
	sf->ino = st.st_ino;
	return sf;
}

struct state_file *
state_file_open(const char *dir, const char *name)
{
	struct state_file *sf = state_file_new(name);

	if (sf == NULL)
		return NULL;
	if ((sf->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_error("state_dir %s: %s", dir, strerror(errno));
		state_file_free(sf);
		return NULL;
	}
	sf->own_dir = true;
	return state_file_finish(sf);
}

struct state_file *
state_file_open_beside(const struct state_file *sibling, const char *name)
{
	struct state_file *sf = state_file_new(name);

	if (sf == NULL)
		return NULL;
	sf->dirfd = sibling->dirfd;
	return state_file_finish(sf);
}

void
state_file_free(struct state_file *sf)
{
	if (sf == NULL)
		return;
	if (sf->fd != -1)
		(void)close(sf->fd);
	if (sf->own_dir && sf->dirfd != -1)
		(void)close(sf->dirfd);
	free(sf->name);
	free(sf);
}

int
state_file_dir_fd(const struct state_file *sf)
{
	return sf->dirfd;
}

static void
state_file_start_over(struct state_file *sf, const struct state_reader *r)
{
	sf->pos = 0;
	r->reset(r->arg);
}

/* The name now names another file: read that one from its start. */
static bool
state_file_follow(struct state_file *sf, const struct state_reader *r)
{
	struct stat st;
	int fd;

	if (fstatat(sf->dirfd, sf->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == sf->dev && st.st_ino == sf->ino)
		return true;
	if ((fd = state_file_open_fd(sf, &st)) == -1)
		return false;
	(void)flock(sf->fd, LOCK_UN);
	(void)close(sf->fd);
	sf->fd = fd;
	sf->dev = st.st_dev;
	sf->ino = st.st_ino;
	if (flock(sf->fd, LOCK_EX) == -1) {
		log_error("state_dir %s: flock: %s", sf->name, strerror(errno));
		return false;
	}
	state_file_start_over(sf, r);
	return true;
}

/* Bytes of one read: complete lines go out, the rest waits for more. */
static void
state_file_feed(struct state_file *sf, const struct state_reader *r,
    const char *data, size_t n)
{
	const char *nl;
	size_t take;

	while (n > 0) {
		nl = memchr(data, '\n', n);
		take = nl != NULL ? (size_t)(nl - data) : n;
		sf->line_total += take;
		if (sf->line_len + take > STATE_LINE_MAX)
			sf->line_long = true;
		else {
			memcpy(sf->line + sf->line_len, data, take);
			sf->line_len += take;
		}
		if (nl == NULL)
			return;
		sf->pos += (off_t)(sf->line_total + 1);
		sf->line[sf->line_len] = '\0';
		if (!sf->line_long)
			r->line(r->arg, sf->line, sf->line_len);
		sf->line_len = 0;
		sf->line_total = 0;
		sf->line_long = false;
		data += take + 1;
		n -= take + 1;
	}
}

/* From pos to the end; a torn last line stays unread (pos before it). */
static bool
state_file_read_new(struct state_file *sf, const struct state_reader *r,
    off_t size)
{
	char buf[STATE_READ_CHUNK];
	off_t at = sf->pos;
	ssize_t got;

	sf->line_len = 0;
	sf->line_total = 0;
	sf->line_long = false;
	while (at < size) {
		got = pread(sf->fd, buf, sizeof(buf), at);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0) {
			log_error("state_dir %s: read: %s", sf->name,
			    got == 0 ? "short" : strerror(errno));
			return false;
		}
		at += got;
		state_file_feed(sf, r, buf, (size_t)got);
	}
	return true;
}

bool
state_file_lock(struct state_file *sf, const struct state_reader *r)
{
	struct stat st;

	if (flock(sf->fd, LOCK_EX) == -1) {
		log_error("state_dir %s: flock: %s", sf->name, strerror(errno));
		return false;
	}
	if (!state_file_follow(sf, r) || fstat(sf->fd, &st) == -1) {
		state_file_unlock(sf);
		return false;
	}
	if (st.st_size < sf->pos)
		state_file_start_over(sf, r);	/* truncated */
	if (!state_file_read_new(sf, r, st.st_size)) {
		state_file_unlock(sf);
		return false;
	}
	return true;
}

static bool
state_file_write_all(struct state_file *sf, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(sf->fd, p, n)) == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			log_error("state_dir %s: write: %s", sf->name,
			    w == 0 ? "short" : strerror(errno));
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

bool
state_file_append(struct state_file *sf, const char *line, size_t len)
{
	char out[STATE_LINE_MAX + 2];
	struct stat st;
	size_t n = 0;
	char last = '\n';

	test_hook_state_append(sf->name);
	if (len > STATE_LINE_MAX || fstat(sf->fd, &st) == -1) {
		log_error("state_dir %s: cannot append", sf->name);
		return false;
	}
	/* a torn last line (a writer killed mid-line) ends before ours */
	if (st.st_size > 0 && pread(sf->fd, &last, 1, st.st_size - 1) != 1)
		last = '\0';
	if (last != '\n')
		out[n++] = '\n';
	memcpy(out + n, line, len);
	n += len;
	out[n++] = '\n';
	if (!state_file_write_all(sf, out, n))
		return false;
	sf->pos = st.st_size + (off_t)n;
	return true;
}

void
state_file_unlock(struct state_file *sf)
{
	(void)flock(sf->fd, LOCK_UN);
}
