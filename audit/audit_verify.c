#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "audit/audit_verify.h"
#include "common/audit_chain.h"
#include "common/log.h"

/* Reads a file line by line, never holding more than one capped line. */
struct line_reader {
	int fd;
	char *buf;			/* owned, cap bytes */
	size_t cap, start, end;
	bool eof;
	size_t lineno;			/* of the line last returned */
};

enum line_status { LINE_OK, LINE_TORN, LINE_EOF, LINE_TOO_LONG, LINE_ERROR };

/* Distinct session ids, sorted, each owned. */
struct session_set {
	char **names;
	size_t n, cap;
};

/* Where a file said its chain came from (rotated_from), by file. */
struct file_link {
	bool rotated;
	uint64_t seq;
	char hash[HASH_SHA256_HEX_LEN + 1];
};

struct verifier {
	const uint8_t *key;		/* borrowed, NULL when none */
	size_t key_len;
	char expected_prev[HASH_SHA256_HEX_LEN + 1];
	struct session_set sessions;
	struct audit_verify_report *report;
	size_t file;			/* index of the file being read */
	struct file_link *links;	/* one per file, owned */
	bool unlinked;			/* this later file starts a new chain */
	uint64_t unlinked_expected;	/* the seq the file before led to */
	uint64_t unlinked_records;	/* intact records before that file */
	audit_verify_each_fn *each;	/* NULL for none */
	void *each_arg;			/* borrowed */
};

static const char *const audit_break_reasons[] = {
	[AUDIT_BREAK_NONE] = "intact",
	[AUDIT_BREAK_TOO_LONG] = "line too long",
	[AUDIT_BREAK_MALFORMED] = "not a record (malformed)",
	[AUDIT_BREAK_EDITED] = "edited (hash mismatch)",
	[AUDIT_BREAK_MISSING_HMAC] = "missing HMAC",
	[AUDIT_BREAK_BAD_HMAC] = "bad HMAC (wrong key or forged)",
	[AUDIT_BREAK_REMOVED] = "removed (seq gap)",
	[AUDIT_BREAK_REORDERED] = "reordered (seq out of order)",
	[AUDIT_BREAK_PREV_MISMATCH] =
	    "prev mismatch (record before it edited or replaced)",
	[AUDIT_BREAK_FILE_MISSING] =
	    "a rotated file is missing before it (rotated_from names a later "
	    "seq than the file before ends at)",
	[AUDIT_BREAK_FILE_ORDER] = "files out of order (give them oldest first)",
	[AUDIT_BREAK_FILE_REPLACED] =
	    "the file before it was edited or replaced (rotated_from names "
	    "another last record)",
	[AUDIT_BREAK_FILE_UNLINKED] =
	    "not linked to the file before it (it starts a new chain: no "
	    "rotated_from; verify it on its own)",
};

const char *
audit_break_reason(enum audit_break why)
{
	return audit_break_reasons[why];
}

static enum line_status
line_reader_fill(struct line_reader *r)
{
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap)
		return LINE_TOO_LONG;
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n == -1 && errno == EINTR);
	if (n == -1) {
		log_error("read: %s", strerror(errno));
		return LINE_ERROR;
	}
	if (n == 0)
		r->eof = true;
	r->end += (size_t)n;
	return LINE_OK;
}

static enum line_status
line_reader_next(struct line_reader *r, const char **line, size_t *len)
{
	enum line_status st;
	char *nl;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl != NULL || (r->eof && r->start < r->end)) {
			*line = r->buf + r->start;
			*len = nl != NULL ? (size_t)(nl - *line) : r->end - r->start;
			r->start = nl != NULL ? (size_t)(nl - r->buf) + 1 : r->end;
			r->lineno++;
			return nl != NULL ? LINE_OK : LINE_TORN;
		}
		if (r->eof)
			return LINE_EOF;
		if ((st = line_reader_fill(r)) != LINE_OK) {
			r->lineno++;
			return st;
		}
	}
}

static int
session_cmp(const char *a, char *const *b)
{
	return strcmp(a, *b);
}

/* Binary search; false only when out of memory. */
static bool
session_set_add(struct session_set *set, const char *name)
{
	size_t lo = 0, hi = set->n, mid;
	char **grown;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = session_cmp(name, &set->names[mid])) == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 16;
		grown = reallocarray(set->names, set->cap, sizeof(*grown));
		if (grown == NULL)
			return false;
		set->names = grown;
	}
	memmove(&set->names[lo + 1], &set->names[lo],
	    (set->n - lo) * sizeof(*set->names));
	if ((set->names[lo] = strdup(name)) == NULL)
		return false;
	set->n++;
	return true;
}

static void
session_set_free(struct session_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->names[i]);
	free(set->names);
}

/*
 * The first record of a file: where its chain comes from.  May move the
 * expected seq and prev (a first file that continues one not given, a
 * later file that starts a new chain).
 */
static enum audit_break
verifier_check_link(struct verifier *v, const struct audit_record *rec)
{
	struct audit_verify_report *rep = v->report;
	struct file_link *link = &v->links[v->file];
	/* files before that held no record leave this one the first */
	bool first = v->file == 0 || rep->records == 0;

	link->rotated = rec->rotated;
	link->seq = rec->rotated_seq;
	memcpy(link->hash, rec->rotated_hash, sizeof(link->hash));
	if (first && rec->rotated) {
		rep->continues = true;
		rep->continues_file = v->file;
		rep->continues_seq = rec->rotated_seq;
		memcpy(rep->continues_hash, rec->rotated_hash,
		    sizeof(rep->continues_hash));
		rep->last_seq = rec->rotated_seq;
		memcpy(v->expected_prev, rec->prev, sizeof(v->expected_prev));
		return AUDIT_BREAK_NONE;
	}
	if (first)
		return AUDIT_BREAK_NONE;
	if (!rec->rotated) {
		/* judged at the file's end: out of order, or not linked */
		if (rec->seq == 1) {
			v->unlinked = true;
			v->unlinked_expected = rep->last_seq + 1;
			v->unlinked_records = rep->records;
			rep->last_seq = 0;
			audit_chain_genesis(v->expected_prev);
		}
		return AUDIT_BREAK_NONE;
	}
	if (rec->rotated_seq > rep->last_seq)
		return AUDIT_BREAK_FILE_MISSING;
	if (rec->rotated_seq < rep->last_seq)
		return AUDIT_BREAK_FILE_ORDER;
	if (strcmp(rec->rotated_hash, rep->last_hash) != 0 ||
	    strcmp(rec->prev, v->expected_prev) != 0)
		return AUDIT_BREAK_FILE_REPLACED;
	return AUDIT_BREAK_NONE;
}

/* A file just read ends where an earlier file said its chain came from. */
static bool
verifier_out_of_order(const struct verifier *v)
{
	const struct audit_verify_report *rep = v->report;
	size_t i;

	for (i = 0; i < v->file; i++)
		if (v->links[i].rotated && v->links[i].seq == rep->last_seq &&
		    strcmp(v->links[i].hash, rep->last_hash) == 0)
			return true;
	return false;
}

static enum audit_break
verifier_check_line(struct verifier *v, const char *line, size_t len,
    struct audit_record *rec, bool first)
{
	uint64_t expected;
	enum audit_parse p = audit_chain_parse(line, len, rec);
	enum audit_break why;

	if (p == AUDIT_PARSE_MALFORMED)
		return AUDIT_BREAK_MALFORMED;
	v->report->break_has_seq = true;
	v->report->break_seq = rec->seq;
	if (p == AUDIT_PARSE_HASH_MISMATCH)
		return AUDIT_BREAK_EDITED;
	if (v->key != NULL && !rec->has_hmac)
		return AUDIT_BREAK_MISSING_HMAC;
	if (v->key != NULL && !audit_chain_hmac_ok(rec, v->key, v->key_len))
		return AUDIT_BREAK_BAD_HMAC;
	if (first && (why = verifier_check_link(v, rec)) != AUDIT_BREAK_NONE)
		return why;
	expected = v->report->expected_seq = v->report->last_seq + 1;
	if (rec->seq < expected)
		return AUDIT_BREAK_REORDERED;
	if (rec->seq > expected)
		return AUDIT_BREAK_REMOVED;	/* until a later line says otherwise */
	if (strcmp(rec->prev, v->expected_prev) != 0)
		return AUDIT_BREAK_PREV_MISMATCH;
	v->report->break_has_seq = false;
	return AUDIT_BREAK_NONE;
}

static bool
verifier_accept(struct verifier *v, const char *line, size_t len,
    const struct audit_record *rec)
{
	struct audit_verify_report *rep = v->report;

	audit_chain_line_digest(line, len, v->expected_prev);
	memcpy(rep->last_hash, rec->hash, sizeof(rep->last_hash));
	rep->last_seq = rec->seq;
	rep->records++;
	if (rec->repaired_torn_tail)
		rep->repaired++;
	if (!session_set_add(&v->sessions, rec->session)) {
		log_error("out of memory");
		return false;
	}
	rep->sessions = v->sessions.n;
	if (v->each != NULL)
		v->each(v->each_arg, v->file, line, len, rec);
	return true;
}

/*
 * A seq gap at the first break is a removal unless a missing seq (in
 * [expected, found)) shows up further down: then records were moved.
 * Reads the rest of the file.
 */
static enum audit_break
verifier_classify_gap(struct line_reader *r, uint64_t expected, uint64_t found)
{
	struct audit_record rec;
	enum audit_parse p;
	const char *line;
	size_t len;

	while (line_reader_next(r, &line, &len) == LINE_OK) {
		p = audit_chain_parse(line, len, &rec);
		if (p != AUDIT_PARSE_MALFORMED && rec.seq >= expected &&
		    rec.seq < found)
			return AUDIT_BREAK_REORDERED;
	}
	return AUDIT_BREAK_REMOVED;
}

static enum audit_verify_status
verifier_break(struct verifier *v, enum audit_break why, size_t lineno)
{
	v->report->why = why;
	v->report->break_file = v->file;
	v->report->break_line = lineno;
	return AUDIT_VERIFY_BROKEN;
}

/*
 * A later file that starts a new chain, read whole without another
 * break: its first line is named.  Its records are not counted as
 * intact: nothing shows they followed the file before.
 */
static enum audit_verify_status
verifier_unlinked(struct verifier *v)
{
	struct audit_verify_report *rep = v->report;

	rep->break_has_seq = true;
	rep->break_seq = 1;
	rep->expected_seq = v->unlinked_expected;
	rep->records = v->unlinked_records;
	return verifier_break(v, AUDIT_BREAK_FILE_UNLINKED, 1);
}

static enum audit_verify_status
verifier_run(struct verifier *v, struct line_reader *r)
{
	struct audit_verify_report *rep = v->report;
	struct audit_record rec;
	enum audit_break why;
	enum line_status st;
	const char *line;
	size_t len;

	while ((st = line_reader_next(r, &line, &len)) == LINE_OK) {
		rep->expected_seq = rep->last_seq + 1;
		why = verifier_check_line(v, line, len, &rec, r->lineno == 1);
		if (why == AUDIT_BREAK_REMOVED) {
			rep->break_line = r->lineno;
			why = verifier_classify_gap(r, rep->expected_seq, rec.seq);
			return verifier_break(v, why, rep->break_line);
		}
		if (why != AUDIT_BREAK_NONE)
			return verifier_break(v, why, r->lineno);
		if (!verifier_accept(v, line, len, &rec))
			return AUDIT_VERIFY_UNREADABLE;
	}
	if (st == LINE_TORN) {
		rep->torn_tail = true;
		rep->torn_file = v->file;
		rep->torn_line = r->lineno;
		rep->torn_bytes = len;
	}
	if (st == LINE_TOO_LONG)
		return verifier_break(v, AUDIT_BREAK_TOO_LONG, r->lineno);
	if (st == LINE_ERROR)
		return AUDIT_VERIFY_UNREADABLE;
	if (r->lineno > 0 && verifier_out_of_order(v))
		return verifier_break(v, AUDIT_BREAK_FILE_ORDER, r->lineno);
	if (v->unlinked)
		return verifier_unlinked(v);
	return AUDIT_VERIFY_OK;
}

/*
 * path opened for reading only when it is a regular file: a FIFO or a
 * device put among the logs would block a scrape or a verify for ever
 * (O_NONBLOCK makes the open return, fstat then refuses it).  -1 after
 * one line saying why.
 */
static int
verifier_open(const char *path)
{
	struct stat st;
	int fd, flags;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1 ||
	    fstat(fd, &st) == -1) {
		log_error("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		log_error("%s: not a regular file", path);
		goto fail;
	}
	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
		log_error("%s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd != -1)
		close(fd);
	return -1;
}

/* One file of the chain, read with the verifier's state. */
static enum audit_verify_status
verifier_file(struct verifier *v, const char *path, char *buf, size_t cap)
{
	struct line_reader r = { .buf = buf, .cap = cap };
	enum audit_verify_status st;

	if ((r.fd = verifier_open(path)) == -1)
		return AUDIT_VERIFY_UNREADABLE;
	v->report->files = v->file + 1;
	st = verifier_run(v, &r);
	close(r.fd);
	return st;
}

enum audit_verify_status
audit_verify_files_each(const char *const *paths, size_t n,
    const uint8_t *key, size_t key_len, struct audit_verify_report *report,
    audit_verify_each_fn *each, void *each_arg)
{
	struct verifier v = { .key = key, .key_len = key_len, .report = report,
	    .each = each, .each_arg = each_arg };
	enum audit_verify_status st = AUDIT_VERIFY_UNREADABLE;
	size_t cap = AUDIT_LINE_MAX + 1;
	char *buf;

	memset(report, 0, sizeof(*report));
	report->hmac_checked = key != NULL;
	audit_chain_genesis(report->last_hash);
	audit_chain_genesis(v.expected_prev);
	if (n == 0 || n > AUDIT_VERIFY_FILES_MAX) {
		log_error("%zu files: give 1 to %d", n, AUDIT_VERIFY_FILES_MAX);
		return AUDIT_VERIFY_UNREADABLE;
	}
	buf = malloc(cap);
	v.links = calloc(n, sizeof(*v.links));
	if (buf == NULL || v.links == NULL)
		log_error("out of memory");
	else
		for (v.file = 0; v.file < n; v.file++)
			if ((st = verifier_file(&v, paths[v.file], buf, cap)) !=
			    AUDIT_VERIFY_OK)
				break;
	free(buf);
	free(v.links);
	session_set_free(&v.sessions);
	return st;
}

enum audit_verify_status
audit_verify_files(const char *const *paths, size_t n, const uint8_t *key,
    size_t key_len, struct audit_verify_report *report)
{
	return audit_verify_files_each(paths, n, key, key_len, report, NULL,
	    NULL);
}

enum audit_verify_status
audit_verify_file(const char *path, const uint8_t *key, size_t key_len,
    struct audit_verify_report *report)
{
	return audit_verify_files(&path, 1, key, key_len, report);
}
