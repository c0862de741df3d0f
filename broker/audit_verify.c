#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/audit_verify.h"
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

struct verifier {
	const uint8_t *key;		/* borrowed, NULL when none */
	size_t key_len;
	char expected_prev[HASH_SHA256_HEX_LEN + 1];
	struct session_set sessions;
	struct audit_verify_report *report;
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

static enum audit_break
verifier_check_line(struct verifier *v, const char *line, size_t len,
    struct audit_record *rec)
{
	uint64_t expected = v->report->records + 1;
	enum audit_parse p = audit_chain_parse(line, len, rec);

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
	rep->records++;
	if (rec->repaired_torn_tail)
		rep->repaired++;
	if (!session_set_add(&v->sessions, rec->session)) {
		log_error("out of memory");
		return false;
	}
	rep->sessions = v->sessions.n;
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
	v->report->break_line = lineno;
	return AUDIT_VERIFY_BROKEN;
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
		rep->expected_seq = rep->records + 1;
		why = verifier_check_line(v, line, len, &rec);
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
		rep->torn_line = r->lineno;
		rep->torn_bytes = len;
	}
	if (st == LINE_TOO_LONG)
		return verifier_break(v, AUDIT_BREAK_TOO_LONG, r->lineno);
	return st == LINE_ERROR ? AUDIT_VERIFY_UNREADABLE : AUDIT_VERIFY_OK;
}

enum audit_verify_status
audit_verify_file(const char *path, const uint8_t *key, size_t key_len,
    struct audit_verify_report *report)
{
	struct line_reader r = { .cap = AUDIT_LINE_MAX + 1 };
	struct verifier v = { .key = key, .key_len = key_len, .report = report };
	enum audit_verify_status st;

	memset(report, 0, sizeof(*report));
	audit_chain_genesis(report->last_hash);
	audit_chain_genesis(v.expected_prev);
	if ((r.fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		log_error("%s: %s", path, strerror(errno));
		return AUDIT_VERIFY_UNREADABLE;
	}
	if ((r.buf = malloc(r.cap)) == NULL) {
		log_error("out of memory");
		close(r.fd);
		return AUDIT_VERIFY_UNREADABLE;
	}
	st = verifier_run(&v, &r);
	free(r.buf);
	close(r.fd);
	session_set_free(&v.sessions);
	return st;
}
