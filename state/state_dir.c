/*
 * A shared state file (state/state_dir.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/journal.h"
#include "state/limits.h"
#include "state/state_dir.h"
#include "child/test_hook.h"
#include "common/log.h"
#include "common/sandbox.h"

#define STATE_READ_CHUNK 65536

struct state_file {
	int dirfd;			/* O_PATH, held for reopening */
	bool own_dir;			/* else the sibling's, borrowed */
	int fd;
	uid_t owner;			/* who its files must belong to */
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
	char why[160];

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
	/* another user's file would let them spend or reset what it holds */
	if (!state_dir_entry_trusted(st, sf->owner, why, sizeof(why))) {
		log_error("state_dir %s %s", sf->name, why);
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
	sf->owner = geteuid();	/* before confinement: its filter has none */
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

static bool
state_file_dir_ok(const struct state_file *sf, const char *dir)
{
	struct stat st;
	char why[200];
	bool open_to_all;

	if (fstat(sf->dirfd, &st) == -1) {
		log_error("state_dir %s: %s", dir, strerror(errno));
		return false;
	}
	if (state_dir_dir_trusted(&st, sf->owner, &open_to_all, why,
	    sizeof(why)))
		return true;
	log_error("state_dir %s %s", dir, why);
	return false;
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
	if (!state_file_dir_ok(sf, dir)) {
		state_file_free(sf);
		return NULL;
	}
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

bool
state_dir_entry_trusted(const struct stat *st, uid_t owner, char *why,
    size_t why_size)
{
	if (S_ISLNK(st->st_mode))
		snprintf(why, why_size, "is a symbolic link: rm it, sp makes "
		    "its own");
	else if (st->st_uid != owner)
		snprintf(why, why_size, "is owned by uid %lu, not the running "
		    "user (uid %lu): run sp as its owner if that is sp's user "
		    "(sp check --user NAME), else rm it or chown %lu it",
		    (unsigned long)st->st_uid, (unsigned long)owner,
		    (unsigned long)owner);
	else if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
		snprintf(why, why_size, "is writable by group or others (mode "
		    "%04o): chmod go-w it", (unsigned)(st->st_mode & 07777));
	else if (S_ISREG(st->st_mode) && st->st_nlink != 1)
		snprintf(why, why_size, "has %lu names (hard links): rm it, sp "
		    "makes its own", (unsigned long)st->st_nlink);
	else
		return true;
	return false;
}

bool
state_dir_dir_trusted(const struct stat *st, uid_t owner, bool *open,
    char *why, size_t why_size)
{
	*open = false;
	if (st->st_uid != owner && st->st_uid != 0) {
		snprintf(why, why_size, "is owned by uid %lu, neither the "
		    "running user (uid %lu) nor root, who could replace what "
		    "sp keeps there: chown %lu it", (unsigned long)st->st_uid,
		    (unsigned long)owner, (unsigned long)owner);
		return false;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return true;
	if ((st->st_mode & S_ISVTX) == 0) {
		snprintf(why, why_size, "is writable by group or others without "
		    "the sticky bit (mode %04o), so they could replace what sp "
		    "keeps there: chmod go-w it", (unsigned)(st->st_mode & 07777));
		return false;
	}
	*open = true;
	snprintf(why, why_size, "lets others add names (mode %04o): one who "
	    "makes a file sp uses first keeps sessions from starting; chmod "
	    "go-w it", (unsigned)(st->st_mode & 07777));
	return true;
}

/* One problem of state_dir, at the place the policy names it. */
static void
state_dir_report(const struct policy *policy, const char *display_name,
    struct policy_diags *diags, enum policy_diag_severity severity,
    const char *name, const char *why, char *sentence, size_t sentence_size)
{
	char message[PATH_MAX + 256];

	if (severity == POLICY_DIAG_ERROR && sentence != NULL &&
	    sentence[0] == '\0')
		snprintf(sentence, sentence_size, "the state_dir named at line "
		    "%u of its policy: %s%s%s", policy->state_dir_line,
		    name != NULL ? name : "", name != NULL ? " " : "", why);
	snprintf(message, sizeof(message), "state_dir %s%s%s %s",
	    policy->state_dir, name != NULL ? ": " : "",
	    name != NULL ? name : "", why);
	policy_diags_add(diags, severity, display_name, policy->state_dir_line,
	    policy->state_dir_col, message);
}

bool
state_dir_check_start(const struct policy *policy, const char *display_name,
    struct policy_diags *diags, char *sentence, size_t sentence_size)
{
	static const char *const names[] = { LIMITS_STATE_FILE,
	    JOURNAL_STATE_FILE, APPROVALS_DIR };
	size_t before = diags->errors, i;
	char why[200];
	struct stat st;
	bool open_to_all;
	int fd;

	if (policy->state_dir == NULL)
		return true;
	/* missing or not a directory: policy_check_start() said so */
	if ((fd = open(policy->state_dir, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return true;
	if (fstat(fd, &st) == 0 && (!state_dir_dir_trusted(&st, geteuid(),
	    &open_to_all, why, sizeof(why)) || open_to_all))
		state_dir_report(policy, display_name, diags, open_to_all ?
		    POLICY_DIAG_WARNING : POLICY_DIAG_ERROR, NULL, why,
		    sentence, sentence_size);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !state_dir_entry_trusted(&st, geteuid(), why, sizeof(why)))
			state_dir_report(policy, display_name, diags,
			    POLICY_DIAG_ERROR, names[i], why, sentence,
			    sentence_size);
	(void)close(fd);
	return diags->errors == before;
}
