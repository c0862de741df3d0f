#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_anchors.h"
#include "common/audit_chain.h"
#include "common/hash.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"

#define ANCHOR_JSON_DEPTH 4	/* an entry is an object of strings or arrays */
#define ANCHOR_ID_MAX 20	/* digits of a _UID or _PID kept */
#define SYSLOG_PREFIX "sp-audit "

enum anchor_state { ANCHOR_MISSING, ANCHOR_HELD, ANCHOR_CONTRADICTED };

struct anchor {
	uint8_t hash[HASH_SHA256_LEN];
	uint64_t seq;
	char session[AUDIT_SESSION_MAX + 1];
	char kind[AUDIT_KIND_MAX + 1];	/* "" when the entry named none */
	char uid[ANCHOR_ID_MAX + 1];	/* "" when unknown */
	char pid[ANCHOR_ID_MAX + 1];
	size_t line;			/* in the journal */
	enum anchor_state state;
	char other[HASH_SHA256_HEX_LEN + 1];	/* what contradicts it */
};

struct anchor_set {
	struct anchor *a;		/* owned, sorted by hash once read */
	size_t n, cap;
	struct anchor **by_slot;	/* owned, sorted by session and seq */
	size_t malformed;		/* anchors named as malformed */
	size_t skipped_lines;		/* over AUDIT_LINE_MAX */
};

/* A bounded line reader on stdio: a line over cap is skipped whole. */
struct anchor_reader {
	FILE *f;
	char *buf;			/* owned, cap + 2 bytes */
	size_t cap, line, skipped;
};

enum read_status { READ_LINE, READ_EOF, READ_ERROR };

static bool
reader_open(struct anchor_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->cap = AUDIT_LINE_MAX;
	r->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (r->f == NULL) {
		log_error("%s: %s", path, strerror(errno));
		return false;
	}
	if ((r->buf = malloc(r->cap + 2)) == NULL) {
		log_error("out of memory");
		return false;
	}
	return true;
}

static void
reader_close(struct anchor_reader *r)
{
	if (r->f != NULL && r->f != stdin)
		(void)fclose(r->f);
	free(r->buf);
}

/* Reads past the rest of an over-long line. */
static void
reader_skip(struct anchor_reader *r)
{
	int c;

	while ((c = getc(r->f)) != EOF && c != '\n')
		;
	r->skipped++;
}

/* The next line without its "\n" (a torn last line included). */
static enum read_status
reader_next(struct anchor_reader *r, size_t *len)
{
	for (;;) {
		if (fgets(r->buf, (int)(r->cap + 2), r->f) == NULL)
			return ferror(r->f) ? READ_ERROR : READ_EOF;
		r->line++;
		*len = strlen(r->buf);
		if (*len > 0 && r->buf[*len - 1] == '\n') {
			r->buf[--*len] = '\0';
			return READ_LINE;
		}
		if (*len <= r->cap && feof(r->f))
			return READ_LINE;	/* a last line without "\n" */
		/* Over the cap, or a NUL inside (no record has one). */
		reader_skip(r);
	}
}

/* A string member of the entry, NULL when absent or not a string. */
static const char *
entry_string(const cJSON *entry, const char *name)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(entry, name);

	return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* Digits only, 1..20 of them, copied; "" otherwise. */
static void
entry_id(const cJSON *entry, const char *name, char out[ANCHOR_ID_MAX + 1])
{
	const char *v = entry_string(entry, name);
	size_t n;

	out[0] = '\0';
	if (v == NULL || (n = strlen(v)) == 0 || n > ANCHOR_ID_MAX ||
	    strspn(v, "0123456789") != n)
		return;
	memcpy(out, v, n + 1);
}

/* The fields of an anchor, from journald's fields or the syslog line. */
struct anchor_fields {
	char session[AUDIT_SESSION_MAX + 1];
	char seq[24];
	char hash[HASH_SHA256_HEX_LEN + 1];
	char kind[AUDIT_KIND_MAX + 1];
	bool has_session, has_seq, has_hash;
};

static void
fields_set(char *dst, size_t size, bool *has, const char *v, size_t len)
{
	if (len >= size) {
		if (has != NULL)
			*has = false;	/* too long for its form: malformed */
		return;
	}
	memcpy(dst, v, len);
	dst[len] = '\0';
	if (has != NULL)
		*has = true;
}

static void
fields_take(struct anchor_fields *f, const char *key, const char *v,
    size_t len)
{
	if (strcmp(key, "SP_SESSION") == 0)
		fields_set(f->session, sizeof(f->session), &f->has_session, v,
		    len);
	else if (strcmp(key, "SP_SEQ") == 0)
		fields_set(f->seq, sizeof(f->seq), &f->has_seq, v, len);
	else if (strcmp(key, "SP_HASH") == 0)
		fields_set(f->hash, sizeof(f->hash), &f->has_hash, v, len);
	else if (strcmp(key, "SP_KIND") == 0 && len < sizeof(f->kind))
		fields_set(f->kind, sizeof(f->kind), NULL, v, len);
}

static void
fields_from_journald(const cJSON *entry, struct anchor_fields *f)
{
	static const char *const keys[] = {
		"SP_SESSION", "SP_SEQ", "SP_HASH", "SP_KIND",
	};
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if ((v = entry_string(entry, keys[i])) != NULL)
			fields_take(f, keys[i], v, strlen(v));
}

/* "sp-audit SP_KIND=x SP_SESSION=y ...": words split on spaces. */
static void
fields_from_syslog(const char *msg, struct anchor_fields *f)
{
	const char *w = msg + strlen(SYSLOG_PREFIX), *eq, *end;
	char key[16];

	while (*w != '\0') {
		end = strchr(w, ' ');
		if (end == NULL)
			end = w + strlen(w);
		eq = memchr(w, '=', (size_t)(end - w));
		if (eq != NULL && (size_t)(eq - w) < sizeof(key)) {
			memcpy(key, w, (size_t)(eq - w));
			key[eq - w] = '\0';
			fields_take(f, key, eq + 1, (size_t)(end - eq - 1));
		}
		w = *end == ' ' ? end + 1 : end;
	}
}

/* Is the entry an anchor at all, and which form. */
static bool
entry_fields(const cJSON *entry, struct anchor_fields *f)
{
	const char *ident = entry_string(entry, "SYSLOG_IDENTIFIER");
	const char *msg = entry_string(entry, "MESSAGE");

	memset(f, 0, sizeof(*f));
	if (cJSON_GetObjectItemCaseSensitive(entry, "SP_HASH") != NULL) {
		fields_from_journald(entry, f);
		return true;
	}
	if (ident != NULL && strcmp(ident, "sp") == 0 && msg != NULL &&
	    strncmp(msg, SYSLOG_PREFIX, strlen(SYSLOG_PREFIX)) == 0) {
		fields_from_syslog(msg, f);
		return true;
	}
	return false;
}

/* The audit log's own forms: see common/audit_chain.h. */
static bool
fields_valid(const struct anchor_fields *f, struct anchor *a)
{
	char *end;
	size_t i, n = strlen(f->session);

	if (!f->has_session || !f->has_seq || !f->has_hash || n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (f->session[i] <= ' ' || f->session[i] > '~' ||
		    f->session[i] == '"' || f->session[i] == '\\')
			return false;
	if (f->seq[0] < '1' || f->seq[0] > '9' ||
	    strspn(f->seq, "0123456789") != strlen(f->seq))
		return false;
	errno = 0;
	a->seq = strtoull(f->seq, &end, 10);
	if (errno != 0 || *end != '\0' || a->seq >= AUDIT_SEQ_MAX)
		return false;
	if (strlen(f->hash) != HASH_SHA256_HEX_LEN ||
	    !hex_is_lowercase(f->hash, HASH_SHA256_HEX_LEN) ||
	    !hash_parse_hex_sha256(f->hash, HASH_SHA256_HEX_LEN, a->hash))
		return false;
	memcpy(a->session, f->session, n + 1);
	n = strspn(f->kind, "abcdefghijklmnopqrstuvwxyz-");
	if (n == strlen(f->kind))
		memcpy(a->kind, f->kind, n + 1);
	return true;
}

static bool
set_push(struct anchor_set *set, const struct anchor *a)
{
	struct anchor *grown;

	if (set->n == AUDIT_ANCHORS_MAX) {
		log_error("more than %u anchors: narrow the journal (journalctl "
		    "--since, SP_LOG=PATH)", AUDIT_ANCHORS_MAX);
		return false;
	}
	if (set->n == set->cap) {
		set->cap = set->cap != 0 ? set->cap * 2 : 64;
		if ((grown = reallocarray(set->a, set->cap,
		    sizeof(*grown))) == NULL) {
			log_error("out of memory");
			return false;
		}
		set->a = grown;
	}
	set->a[set->n++] = *a;
	return true;
}

/* One line of the journal: skipped, an anchor, or a malformed one. */
static enum audit_anchors_status
set_add_line(struct anchor_set *set, const char *path, const char *line,
    size_t len, size_t lineno)
{
	struct json_doc doc = { 0 };
	struct json_error err;
	struct anchor_fields f;
	struct anchor a;
	bool ok = true;

	if (!json_parse_frame((const uint8_t *)line, len, ANCHOR_JSON_DEPTH,
	    &doc, &err) || !cJSON_IsObject(doc.root)) {
		log_error("%s: line %zu: not journalctl -o json output (%s at "
		    "byte %zu)", path, lineno, doc.root == NULL ? err.reason :
		    "not an object", doc.root == NULL ? err.offset : 0);
		json_doc_free(&doc);
		return AUDIT_ANCHORS_MALFORMED;
	}
	if (entry_fields(doc.root, &f)) {
		memset(&a, 0, sizeof(a));
		a.line = lineno;
		entry_id(doc.root, "_UID", a.uid);
		entry_id(doc.root, "_PID", a.pid);
		if (fields_valid(&f, &a))
			ok = set_push(set, &a);
		else {
			printf("anchor malformed: %s line %zu (uid %s): an sp "
			    "entry without a well-formed SP_SESSION, SP_SEQ and "
			    "SP_HASH\n", path, lineno, a.uid[0] ? a.uid : "?");
			set->malformed++;
		}
	}
	json_doc_free(&doc);
	return ok ? AUDIT_ANCHORS_HELD : AUDIT_ANCHORS_UNREADABLE;
}

static enum audit_anchors_status
set_read(struct anchor_set *set, const char *path)
{
	struct anchor_reader r;
	enum audit_anchors_status st = AUDIT_ANCHORS_HELD;
	enum read_status rs;
	size_t len;

	if (!reader_open(&r, path)) {
		reader_close(&r);
		return AUDIT_ANCHORS_UNREADABLE;
	}
	while (st == AUDIT_ANCHORS_HELD &&
	    (rs = reader_next(&r, &len)) == READ_LINE)
		if (len > 0)
			st = set_add_line(set, path, r.buf, len, r.line);
	if (st == AUDIT_ANCHORS_HELD && rs == READ_ERROR) {
		log_error("%s: %s", path, strerror(errno));
		st = AUDIT_ANCHORS_UNREADABLE;
	}
	set->skipped_lines += r.skipped;
	reader_close(&r);
	return st;
}

static int
anchor_hash_cmp(const void *x, const void *y)
{
	const struct anchor *a = x, *b = y;

	return memcmp(a->hash, b->hash, sizeof(a->hash));
}

static int
anchor_slot_cmp(const void *x, const void *y)
{
	const struct anchor *a = *(struct anchor *const *)x;
	const struct anchor *b = *(struct anchor *const *)y;
	int c = strcmp(a->session, b->session);

	if (c != 0)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool
set_index(struct anchor_set *set)
{
	size_t i;

	qsort(set->a, set->n, sizeof(*set->a), anchor_hash_cmp);
	if (set->n == 0)
		return true;
	if ((set->by_slot = calloc(set->n, sizeof(*set->by_slot))) == NULL) {
		log_error("out of memory");
		return false;
	}
	for (i = 0; i < set->n; i++)
		set->by_slot[i] = &set->a[i];
	qsort(set->by_slot, set->n, sizeof(*set->by_slot), anchor_slot_cmp);
	return true;
}

/* The first anchor whose hash is not below hash. */
static size_t
set_lower_hash(const struct anchor_set *set, const uint8_t *hash)
{
	size_t lo = 0, hi = set->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (memcmp(set->a[mid].hash, hash, HASH_SHA256_LEN) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first anchor whose (session, seq) is not below the record's. */
static size_t
set_lower_slot(const struct anchor_set *set, const struct anchor *key)
{
	size_t lo = 0, hi = set->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (anchor_slot_cmp(&set->by_slot[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
anchor_contradict(struct anchor *a, const char *hash_hex_text)
{
	if (a->state == ANCHOR_HELD)
		return;
	a->state = ANCHOR_CONTRADICTED;
	memcpy(a->other, hash_hex_text, sizeof(a->other));
}

/* One intact record of a log: which anchors it holds or contradicts. */
static void
set_match(struct anchor_set *set, const struct audit_record *rec)
{
	struct anchor key;
	const struct anchor *kp = &key;
	struct anchor *a;
	size_t i;

	if (!hash_parse_hex_sha256(rec->hash, HASH_SHA256_HEX_LEN, key.hash))
		return;
	memcpy(key.session, rec->session, sizeof(key.session));
	key.seq = rec->seq;
	for (i = set_lower_hash(set, key.hash); i < set->n &&
	    memcmp(set->a[i].hash, key.hash, HASH_SHA256_LEN) == 0; i++) {
		a = &set->a[i];
		if (a->seq == rec->seq && strcmp(a->session, rec->session) == 0)
			a->state = ANCHOR_HELD;
		else
			anchor_contradict(a, rec->hash);
	}
	for (i = set_lower_slot(set, kp); i < set->n &&
	    anchor_slot_cmp(&set->by_slot[i], &kp) == 0;
	    i++)
		if (memcmp(set->by_slot[i]->hash, key.hash, HASH_SHA256_LEN) != 0)
			anchor_contradict(set->by_slot[i], rec->hash);
}

static bool
set_scan_log(struct anchor_set *set, const char *path)
{
	struct anchor_reader r;
	struct audit_record rec;
	enum read_status rs;
	size_t len;
	bool ok = true;

	if (!reader_open(&r, path)) {
		reader_close(&r);
		return false;
	}
	while ((rs = reader_next(&r, &len)) == READ_LINE)
		if (audit_chain_parse(r.buf, len, &rec) == AUDIT_PARSE_OK)
			set_match(set, &rec);
	if (rs == READ_ERROR) {
		log_error("%s: %s", path, strerror(errno));
		ok = false;
	}
	set->skipped_lines += r.skipped;
	reader_close(&r);
	return ok;
}

static void
anchor_print(const char *journal, const struct anchor *a)
{
	char hex[HASH_SHA256_HEX_LEN + 1];

	hash_hex(a->hash, sizeof(a->hash), hex);
	printf("anchor %s: session %s seq %" PRIu64 " hash %s (%s, %s line "
	    "%zu, uid %s, pid %s): ", a->state == ANCHOR_MISSING ? "missing" :
	    "contradicted", a->session, a->seq, hex, a->kind[0] ? a->kind :
	    "kind unknown", journal, a->line, a->uid[0] ? a->uid : "?",
	    a->pid[0] ? a->pid : "?");
	if (a->state == ANCHOR_MISSING)
		printf("no log file holds it\n");
	else
		printf("the logs hold hash %s in its place\n", a->other);
}

/*
 * A session whose last anchor is not its session-end was killed (or
 * still runs): what it wrote after that anchor is vouched for by
 * nothing, and a cut there is not seen.  Said, not a failure: a killed
 * session is not tampering.  by_slot is sorted by session, then seq.
 */
static void
set_report_gaps(const struct anchor_set *set)
{
	const struct anchor *last;
	char hex[HASH_SHA256_HEX_LEN + 1];
	size_t i;

	for (i = 0; i < set->n; i++) {
		last = set->by_slot[i];
		if (i + 1 < set->n &&
		    strcmp(set->by_slot[i + 1]->session, last->session) == 0)
			continue;
		if (strcmp(last->kind, "session-end") == 0)
			continue;
		hash_hex(last->hash, sizeof(last->hash), hex);
		printf("session %s ended without a session-end anchor (killed, "
		    "or still running): its last anchor is seq %" PRIu64
		    " (%s, hash %s); records after it are vouched for by no "
		    "anchor\n", last->session, last->seq, last->kind[0] ?
		    last->kind : "kind unknown", hex);
	}
}

static enum audit_anchors_status
set_report(const struct anchor_set *set, const char *journal)
{
	size_t i, bad = 0;

	for (i = 0; i < set->n; i++)
		if (set->a[i].state != ANCHOR_HELD) {
			anchor_print(journal, &set->a[i]);
			bad++;
		}
	set_report_gaps(set);
	printf("anchors: %zu checked, %zu held, %zu not held, %zu malformed\n",
	    set->n, set->n - bad, bad, set->malformed);
	if (set->n == 0 && set->malformed == 0)
		log_warn("%s holds no sp anchor: is it journalctl -o json of "
		    "the right span and SP_LOG?", journal);
	if (set->skipped_lines > 0)
		log_warn("%zu lines over %d bytes were skipped",
		    set->skipped_lines, AUDIT_LINE_MAX);
	return bad > 0 || set->malformed > 0 ? AUDIT_ANCHORS_NOT_HELD :
	    AUDIT_ANCHORS_HELD;
}

enum audit_anchors_status
audit_anchors_check(const char *journal_path, char *const *logs,
    size_t n_logs)
{
	struct anchor_set set;
	enum audit_anchors_status st;
	size_t i;

	memset(&set, 0, sizeof(set));
	st = set_read(&set, journal_path);
	if (st == AUDIT_ANCHORS_HELD && !set_index(&set))
		st = AUDIT_ANCHORS_UNREADABLE;
	for (i = 0; st == AUDIT_ANCHORS_HELD && i < n_logs; i++)
		if (!set_scan_log(&set, logs[i]))
			st = AUDIT_ANCHORS_UNREADABLE;
	if (st == AUDIT_ANCHORS_HELD)
		st = set_report(&set, journal_path);
	(void)fflush(stdout);
	free(set.by_slot);
	free(set.a);
	return st;
}
