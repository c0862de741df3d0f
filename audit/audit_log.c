#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit_log.h"
#include "audit/audit_tail.h"
#include "common/audit_chain.h"
#include "common/clock.h"
#include "common/json_number.h"
#include "common/log.h"

#define REOPEN_TRIES 8		/* renames between a reopen and its lock */
/* logrotate's name for the newest rotated file (docs/sp-audit.5) */
#define PRIOR_SUFFIX ".1"


struct audit_log {
	int fd;
	int dirfd;			/* O_PATH of the log's directory */
	uid_t uid;			/* the running uid, at open */
	char *base;			/* owned: the log's name in it */
	dev_t dev;			/* of fd, to see it renamed away */
	ino_t ino;
	uint8_t *key;			/* owned, NULL for a plain chain */
	size_t key_len;
	char session[AUDIT_SESSION_MAX + 1];
	char last_hash[HASH_SHA256_HEX_LEN + 1];
	bool pending;			/* records written but not synced */
	uint64_t last_sync_ms;
	struct audit_own_line own;	/* its line is owned */
	cJSON *held_start;		/* owned: session-start not yet written */
	uint64_t bytes;			/* appended by this handle */
	uint64_t last_seq;		/* of this handle's last record */
	char last_prev[HASH_SHA256_HEX_LEN + 1];
	audit_log_observer *observer;	/* NULL: none */
	void *observer_arg;		/* borrowed */
	int prior_fd;			/* <base>.1 while the log is empty, or -1 */
};

static const char *const audit_log_reserved[] = {
	"seq", "ts", "session", "kind", "prev", "torn_tail", "rotated_from",
	"hash", "hmac",
};

static bool
audit_log_session_ok(const char *session)
{
	size_t i, n = strlen(session);

	if (n == 0 || n > AUDIT_SESSION_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (session[i] <= ' ' || session[i] > '~' || session[i] == '"' ||
		    session[i] == '\\')
			return false;
	return true;
}

/* uid is the running uid, read before confinement (no geteuid after). */
static int
audit_log_open_file(int dirfd, const char *base, const char *path,
    uid_t uid, struct stat *out)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, base, AUDIT_LOG_OPEN_FLAGS, 0600);
	if (fd == -1) {
		log_error("%s: %s", path, errno == ELOOP ? "a symbolic link, "
		    "refused" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		log_error("%s: not a regular file", path);
		close(fd);
		return -1;
	}
	/* Its owner can rewrite it (and chmod it) whatever the mode says. */
	if (st.st_uid != uid)
		log_warn("%s: owned by uid %u, not by the running uid %u: "
		    "its owner can rewrite the audit log", path,
		    (unsigned)st.st_uid, (unsigned)uid);
	if ((st.st_mode & 077) != 0)
		log_warn("%s: mode %03o opens the audit log to group or "
		    "others", path, (unsigned)(st.st_mode & 0777));
	*out = st;
	return fd;
}

/*
 * The directory is held open (O_PATH) so that a confined broker can
 * reopen the log after a rotation with openat(2) relative to it, and
 * nothing else (common/sandbox_filter.c).
 */
static bool
audit_log_open_dir(struct audit_log *log, const char *path)
{
	char *a, *b;
	bool ok = false;

	a = strdup(path);
	b = strdup(path);
	if (a != NULL && b != NULL) {
		log->base = strdup(basename(b));
		log->dirfd = open(dirname(a), O_PATH | O_DIRECTORY | O_CLOEXEC);
		ok = log->base != NULL && log->dirfd != -1;
		if (log->dirfd == -1)
			log_error("%s: its directory: %s", path, strerror(errno));
		else if (log->base == NULL)
			log_error("out of memory");
	} else
		log_error("out of memory");
	free(a);
	free(b);
	return ok;
}

/*
 * A log found empty at open (created now, or by a rotation while no
 * session ran) links its first record to the newest rotated file, by
 * logrotate's name <path>.1 (docs/sp-audit.5, ROTATION).  Opened here,
 * before confinement, read only at the first append, under its lock.
 * -1 when there is none to link to.
 */
static int
audit_log_open_prior(const struct audit_log *log, const char *path,
    const struct stat *log_st)
{
	char name[NAME_MAX + 1];
	struct stat st;
	int fd, n;

	n = snprintf(name, sizeof(name), "%s" PRIOR_SUFFIX, log->base);
	if (n < 0 || (size_t)n >= sizeof(name))
		return -1;
	if ((fd = openat(log->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1) {
		if (errno != ENOENT)
			log_warn("%s" PRIOR_SUFFIX ": %s: the log's next record "
			    "starts a new chain", path, errno == ELOOP ?
			    "a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_dev == log_st->st_dev && st.st_ino == log_st->st_ino)) {
		log_warn("%s" PRIOR_SUFFIX ": not a rotated log file: the log's "
		    "next record starts a new chain", path);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Locks <path>.1 and reads where its chain ends into *prior, before the
 * log's own lock (older files are locked first, as audit_log_follow
 * does).  false, with the file let go, when it cannot be read: the log
 * then starts a new chain, which sp audit verify refuses after a file.
 */
static bool
audit_log_lock_prior(struct audit_log *log, struct audit_tail *prior)
{
	if (flock(log->prior_fd, LOCK_EX) == -1 ||
	    !audit_tail_find(log->prior_fd, NULL, prior)) {
		log_warn("%s" PRIOR_SUFFIX ": its last record cannot be read: "
		    "the log's next record starts a new chain", log->base);
		close(log->prior_fd);
		log->prior_fd = -1;
		return false;
	}
	return true;
}

struct audit_log *
audit_log_open(const char *path, const uint8_t *key, size_t key_len,
    const char *session)
{
	struct audit_log *log;
	struct stat st;

	if (!audit_log_session_ok(session) || (key != NULL &&
	    (key_len == 0 || key_len > AUDIT_KEY_MAX))) {
		log_error("bad session id or key length");
		return NULL;
	}
	if ((log = calloc(1, sizeof(*log))) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	if (key != NULL) {
		if ((log->key = malloc(key_len)) == NULL) {
			log_error("out of memory");
			free(log);
			return NULL;
		}
		memcpy(log->key, key, key_len);
		log->key_len = key_len;
	}
	memcpy(log->session, session, strlen(session) + 1);	/* checked above */
	audit_chain_genesis(log->last_hash);
	log->last_sync_ms = clock_monotonic_ms();
	/* glibc's gmtime_r() reads the zone file at its first call: make
	 * that call now, since the first record may come after the broker's
	 * confinement (session-start is written late). */
	tzset();
	log->fd = -1;
	log->dirfd = -1;
	log->prior_fd = -1;
	log->uid = geteuid();
	if (!audit_log_open_dir(log, path) || (log->fd = audit_log_open_file(
	    log->dirfd, log->base, path, log->uid, &st)) == -1) {
		audit_log_close(log);
		return NULL;
	}
	log->dev = st.st_dev;
	log->ino = st.st_ino;
	if (st.st_size == 0)
		log->prior_fd = audit_log_open_prior(log, path, &st);
	return log;
}

static bool
audit_log_add_ts(cJSON *rec)
{
	uint64_t ms = clock_wall_ms();
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[64];

	if (gmtime_r(&s, &tm) == NULL)
		return false;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return cJSON_AddStringToObject(rec, "ts", buf) != NULL;
}

static bool
audit_log_add_header(cJSON *rec, const struct audit_log *log,
    const char *kind, const struct audit_tail *tail)
{
	return json_add_uint64(rec, "seq", tail->seq + 1) &&
	    audit_log_add_ts(rec) &&
	    cJSON_AddStringToObject(rec, "session", log->session) != NULL &&
	    cJSON_AddStringToObject(rec, "kind", kind) != NULL &&
	    cJSON_AddStringToObject(rec, "prev", tail->digest) != NULL;
}

static bool
audit_log_add_torn(cJSON *rec, const struct audit_tail *tail)
{
	cJSON *torn;

	if (tail->torn_bytes == 0)
		return true;
	if ((torn = cJSON_AddObjectToObject(rec, "torn_tail")) == NULL)
		return false;
	return cJSON_AddNumberToObject(torn, "bytes",
	    (double)tail->torn_bytes) != NULL &&
	    cJSON_AddStringToObject(torn, "sha256", tail->torn_digest) != NULL;
}

/* The first record of a file that follows a rotated one links to it. */
static bool
audit_log_add_rotated(cJSON *rec, const struct audit_tail *tail)
{
	cJSON *from;

	if (!tail->rotated)
		return true;
	if ((from = cJSON_AddObjectToObject(rec, "rotated_from")) == NULL)
		return false;
	return json_add_uint64(from, "seq", tail->seq) &&
	    cJSON_AddStringToObject(from, "hash", tail->hash) != NULL;
}

/* Checked before locking: the caller's members may not pose as the writer's. */
static bool
audit_log_members_ok(const cJSON *members)
{
	const cJSON *m;
	size_t i;

	if (members == NULL)
		return true;
	if (!cJSON_IsObject(members))
		return false;
	cJSON_ArrayForEach(m, members)
		for (i = 0; i < sizeof(audit_log_reserved) /
		    sizeof(audit_log_reserved[0]); i++)
			if (strcmp(m->string, audit_log_reserved[i]) == 0) {
				log_error("member '%s' is the writer's", m->string);
				return false;
			}
	return true;
}

static bool
audit_log_add_members(cJSON *rec, const cJSON *members)
{
	const cJSON *m;
	cJSON *copy;

	if (members == NULL)
		return true;
	cJSON_ArrayForEach(m, members) {
		if ((copy = cJSON_Duplicate(m, true)) == NULL)
			return false;
		cJSON_AddItemToObject(rec, m->string, copy);
	}
	return true;
}

/* Builds and seals the line; the caller frees it. */
static char *
audit_log_build_line(struct audit_log *log, const char *kind,
    const cJSON *members, const struct audit_tail *tail, size_t *len,
    char hash[HASH_SHA256_HEX_LEN + 1])
{
	cJSON *rec;
	char *body, *line = NULL;

	if ((rec = cJSON_CreateObject()) == NULL)
		return NULL;
	if (audit_log_add_header(rec, log, kind, tail) &&
	    audit_log_add_torn(rec, tail) && audit_log_add_rotated(rec, tail) &&
	    audit_log_add_members(rec, members) &&
	    (body = cJSON_PrintUnformatted(rec)) != NULL) {
		line = audit_chain_seal(body, strlen(body), log->key,
		    log->key_len, len, hash);
		free(body);
	}
	cJSON_Delete(rec);
	return line;
}

/* One write(2); a short one is cut back so no torn tail of ours remains. */
static bool
audit_log_write_line(int fd, const char *line, size_t len, off_t end)
{
	ssize_t n;

	do
		n = write(fd, line, len);
	while (n == -1 && errno == EINTR);
	if (n >= 0 && (size_t)n == len)
		return true;
	log_error("write: %s", n == -1 ? strerror(errno) : "short write");
	if (n > 0 && ftruncate(fd, end) == -1)
		log_error("ftruncate: %s", strerror(errno));
	return false;
}

static bool
audit_log_kind_ok(const char *kind)
{
	size_t i, n = strlen(kind);

	if (n == 0 || n > AUDIT_KIND_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((kind[i] >= 'a' && kind[i] <= 'z') || kind[i] == '-'))
			return false;
	return true;
}

/*
 * The tail after line (len bytes, '\n' last) was appended at tail->end.
 * Takes ownership of line.
 */
static void
audit_log_remember_tail(struct audit_log *log, const struct audit_tail *tail,
    char *line, size_t len)
{
	free(log->own.line);
	log->own.line = line;
	log->own.len = len;
	memset(&log->own.tail, 0, sizeof(log->own.tail));
	log->own.tail.end = tail->end + (off_t)len;
	log->own.tail.seq = tail->seq + 1;
	audit_chain_line_digest(line, len - 1, log->own.tail.digest);
	memcpy(log->own.tail.hash, log->last_hash, sizeof(log->own.tail.hash));
	log->own.valid = true;
}

/*
 * Called with the lock held.  from is the tail of the file this one
 * replaced (a rotation seen by this append), or NULL: an empty file then
 * continues its chain, seq and prev, and says so in rotated_from.
 */
static bool
audit_log_append_locked(struct audit_log *log, const char *kind,
    const cJSON *members, const struct audit_tail *from)
{
	struct audit_tail tail;
	char hash[HASH_SHA256_HEX_LEN + 1];
	char *line;
	size_t len;
	bool ok;

	if (!audit_tail_find(log->fd, &log->own, &tail))
		return false;
	if (from != NULL && from->seq > 0 && tail.end == 0) {
		tail.seq = from->seq;
		memcpy(tail.digest, from->digest, sizeof(tail.digest));
		memcpy(tail.hash, from->hash, sizeof(tail.hash));
		tail.rotated = true;
		if (tail.torn_bytes == 0 && from->torn_bytes > 0) {
			/* the old file's cut is said where the chain goes on */
			tail.torn_bytes = from->torn_bytes;
			memcpy(tail.torn_digest, from->torn_digest,
			    sizeof(tail.torn_digest));
		}
	}
	log->own.valid = false;	/* until this line is in the file */
	if (tail.seq + 1 >= AUDIT_SEQ_MAX) {
		log_error("seq exhausted; rotate the log");
		return false;
	}
	if ((line = audit_log_build_line(log, kind, members, &tail, &len,
	    hash)) == NULL) {
		log_error("cannot build the record");
		return false;
	}
	ok = audit_log_write_line(log->fd, line, len, tail.end);
	if (ok) {
		log->bytes += len;
		memcpy(log->last_hash, hash, sizeof(log->last_hash));
		memcpy(log->last_prev, tail.digest, sizeof(log->last_prev));
		log->last_seq = tail.seq + 1;
		audit_log_remember_tail(log, &tail, line, len);
		if (tail.rotated)
			log_info("audit: the log was rotated; its new file "
			    "continues at seq %" PRIu64, tail.seq + 1);
	} else
		free(line);
	return ok;
}

/* 1 when the path no longer names the open file, 0 when it does, -1. */
static int
audit_log_renamed(int dirfd, const char *base, dev_t dev, ino_t ino)
{
	struct stat st;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 1;
		log_error("%s: %s", base, strerror(errno));
		return -1;
	}
	return st.st_dev != dev || st.st_ino != ino;
}

/*
 * Opens and locks the file now at the path, until the one locked is the
 * one there (another rename may come between the open and the lock).
 * Returns the fd, locked, or -1.
 */
static int
audit_log_reopen_locked(struct audit_log *log, struct stat *st)
{
	int fd, tries, r;

	for (tries = 0; tries < REOPEN_TRIES; tries++) {
		if ((fd = audit_log_open_file(log->dirfd, log->base, log->base,
		    log->uid, st)) == -1)
			return -1;
		if (flock(fd, LOCK_EX) == -1) {
			log_error("flock: %s", strerror(errno));
			close(fd);
			return -1;
		}
		if ((r = audit_log_renamed(log->dirfd, log->base, st->st_dev,
		    st->st_ino)) == 0)
			return fd;
		close(fd);	/* unlocks */
		if (r == -1)
			return -1;
	}
	log_error("%s: renamed %d times while reopening", log->base, tries);
	return -1;
}

/*
 * Called with log->fd locked, before a locked turn's appends: when the
 * path no longer names that file (a rotation), reads the old file's tail
 * into *from, under its lock, then locks the file now at the path before
 * letting go of the old one, and appends go there.  So no record can
 * follow *from in the old file (every writer checks the path under the
 * old lock before it writes), and the writer that links the new file
 * holds it before any other writer of the old one can look.  *rotated
 * says whether *from is to be linked; the caller's unlock then goes to
 * the new fd.
 */
static bool
audit_log_follow(struct audit_log *log, struct audit_tail *from,
    bool *rotated)
{
	struct stat st;
	int fd, r;

	*rotated = false;
	if ((r = audit_log_renamed(log->dirfd, log->base, log->dev,
	    log->ino)) != 1)
		return r == 0;
	if (!audit_tail_find(log->fd, &log->own, from))
		return false;
	if ((fd = audit_log_reopen_locked(log, &st)) == -1)
		return false;
	if (log->pending && fdatasync(log->fd) == -1)
		log_error("fdatasync of the rotated file: %s", strerror(errno));
	close(log->fd);		/* unlocks the old file */
	log->fd = fd;
	log->dev = st.st_dev;
	log->ino = st.st_ino;
	log->own.valid = false;
	*rotated = true;
	return true;
}

static bool
audit_log_sync(struct audit_log *log, uint64_t now_ms)
{
	if (fdatasync(log->fd) == -1) {
		log_error("fdatasync: %s", strerror(errno));
		return false;
	}
	log->pending = false;
	log->last_sync_ms = now_ms;
	return true;
}

/* What the observer is told of a record: copied when it is appended. */
struct audit_log_mark {
	uint64_t seq;
	char prev[HASH_SHA256_HEX_LEN + 1];
	char hash[HASH_SHA256_HEX_LEN + 1];
};

static void
audit_log_mark(const struct audit_log *log, struct audit_log_mark *mark)
{
	mark->seq = log->last_seq;
	memcpy(mark->prev, log->last_prev, sizeof(mark->prev));
	memcpy(mark->hash, log->last_hash, sizeof(mark->hash));
}

static void
audit_log_notify(const struct audit_log *log, const char *kind,
    const cJSON *members, const struct audit_log_mark *mark, bool durable)
{
	struct audit_log_note note = {
		.session = log->session, .kind = kind, .members = members,
		.seq = mark->seq, .prev = mark->prev, .hash = mark->hash,
		.durable = durable,
	};

	if (log->observer != NULL)
		log->observer(log->observer_arg, &note);
}

bool
audit_log_append(struct audit_log *log, const char *kind, const cJSON *members,
    bool durable)
{
	struct audit_log_mark start_mark, mark;
	cJSON *start = NULL;		/* the held start, once in the file */
	struct audit_tail from, prior;
	const struct audit_tail *link;
	bool ok, rotated, have_prior;

	if (!audit_log_kind_ok(kind) || !audit_log_members_ok(members)) {
		log_error("bad kind or members");
		return false;
	}
	have_prior = log->prior_fd != -1 && audit_log_lock_prior(log, &prior);
	if (flock(log->fd, LOCK_EX) == -1) {
		log_error("flock: %s", strerror(errno));
		if (have_prior)
			(void)flock(log->prior_fd, LOCK_UN);
		return false;
	}
	/* a rotation is followed first: both records go to the new file */
	ok = audit_log_follow(log, &from, &rotated);
	link = rotated && from.seq > 0 ? &from : have_prior ? &prior : NULL;
	/* the held session-start goes first, in the same locked turn */
	ok = ok && (log->held_start == NULL || audit_log_append_locked(log,
	    "session-start", log->held_start, link));
	if (ok && log->held_start != NULL) {
		start = log->held_start;	/* it is in the file */
		log->held_start = NULL;
		audit_log_mark(log, &start_mark);
	}
	ok = ok && audit_log_append_locked(log, kind, members, link);
	if (ok)
		audit_log_mark(log, &mark);
	if (flock(log->fd, LOCK_UN) == -1)
		log_error("flock unlock: %s", strerror(errno));
	if (ok && log->prior_fd != -1) {
		close(log->prior_fd);	/* unlocks: the log is linked or not empty */
		log->prior_fd = -1;
	} else if (have_prior && flock(log->prior_fd, LOCK_UN) == -1)
		log_error("flock unlock: %s", strerror(errno));
	if (ok) {
		log->pending = true;
		/* Syncing after unlocking keeps other writers from waiting on
		 * the disk. */
		ok = durable ? audit_log_sync(log, clock_monotonic_ms()) :
		    audit_log_tick(log, clock_monotonic_ms());
	}
	/* Both records are told, in order, once they are in the file. */
	if (ok && start != NULL)
		audit_log_notify(log, "session-start", start, &start_mark,
		    durable);
	if (ok)
		audit_log_notify(log, kind, members, &mark, durable);
	cJSON_Delete(start);
	return ok;
}

void
audit_log_observe(struct audit_log *log, audit_log_observer *fn, void *arg)
{
	log->observer = fn;
	log->observer_arg = arg;
}

bool
audit_log_hold_start(struct audit_log *log, const cJSON *members)
{
	if (!audit_log_members_ok(members)) {
		log_error("bad session-start members");
		return false;
	}
	cJSON_Delete(log->held_start);
	if ((log->held_start = cJSON_Duplicate(members, true)) == NULL) {
		log_error("out of memory");
		return false;
	}
	return true;
}

bool
audit_log_begin(struct audit_log *log)
{
	cJSON *start = log->held_start;
	bool ok;

	if (start == NULL)
		return true;
	log->held_start = NULL;
	ok = audit_log_append(log, "session-start", start, true);
	if (!ok)
		log->held_start = start;	/* the next record tries again */
	else
		cJSON_Delete(start);
	return ok;
}

bool
audit_log_start_held(const struct audit_log *log)
{
	return log->held_start != NULL;
}

bool
audit_log_tick(struct audit_log *log, uint64_t now_ms)
{
	/* Compared by addition: a now_ms before the last sync is not "late". */
	if (!log->pending || now_ms < log->last_sync_ms + AUDIT_LOG_SYNC_MS)
		return true;
	return audit_log_sync(log, now_ms);
}

int
audit_log_dir_fd(const struct audit_log *log)
{
	return log->dirfd;
}

uint64_t
audit_log_bytes(const struct audit_log *log)
{
	return log->bytes;
}

const char *
audit_log_last_hash(const struct audit_log *log)
{
	return log->last_hash;
}

bool
audit_log_close(struct audit_log *log)
{
	bool ok = true;

	if (log == NULL)
		return true;
	if (log->fd != -1) {
		if (log->pending)
			ok = audit_log_sync(log, clock_monotonic_ms());
		close(log->fd);
	}
	if (log->dirfd != -1)
		close(log->dirfd);
	if (log->prior_fd != -1)
		close(log->prior_fd);
	free(log->base);
	if (log->key != NULL) {
		explicit_bzero(log->key, log->key_len);
		free(log->key);
	}
	free(log->own.line);
	cJSON_Delete(log->held_start);
	free(log);
	return ok;
}

bool
audit_key_read(const char *path, uint8_t key[AUDIT_KEY_MAX], size_t *key_len)
{
	uint8_t extra;
	ssize_t n;
	int fd, read_errno;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		log_error("%s: %s", path, strerror(errno));
		return false;
	}
	n = read(fd, key, AUDIT_KEY_MAX);
	read_errno = errno;
	if (n == AUDIT_KEY_MAX && read(fd, &extra, 1) != 0)
		n = -2;
	close(fd);
	if (n <= 0) {
		log_error("%s: %s", path, n == 0 ? "empty" : n == -2 ?
		    "longer than the key limit" : strerror(read_errno));
		return false;
	}
	*key_len = (size_t)n;
	return true;
}
