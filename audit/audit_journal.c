#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>

#include "audit/audit_journal.h"
#include "common/log.h"

#ifdef SP_HAVE_LIBSYSTEMD
const char audit_journal_feature[] = "journald";
#else
const char audit_journal_feature[] = "syslog";
#endif

/*
 * Records between two anchors at most (audit/audit_journal.h): the tail
 * a killed session leaves without a session-end anchor, which can be cut
 * unseen, is at most this many records less one, none of them durable.
 */
#define JOURNAL_ANCHOR_EVERY 16
#define JOURNAL_FIELDS_MAX 20
#define JOURNAL_VALUE_MAX 256		/* bytes of one SP_ value */
#define JOURNAL_FIELD_MAX 512		/* "KEY=value", MESSAGE included */

/* sd_journal_sendv(3), bound at run time; NULL: syslog(3) instead. */
typedef int journal_sendv_fn(const struct iovec *iov, int n);

#ifdef SP_HAVE_LIBSYSTEMD
#include <systemd/sd-journal.h>
/* The header's prototype, checked without a reference to the symbol. */
_Static_assert(__builtin_types_compatible_p(__typeof__(&sd_journal_sendv),
    journal_sendv_fn *), "sd_journal_sendv is not journal_sendv_fn");
#endif

struct audit_journal {
	enum policy_audit_journal mode;
	journal_sendv_fn *sendv;
	char *log_path;			/* owned */
	char *profile;			/* owned, NULL for none */
	uint64_t failures;		/* sends that failed */
	int last_errno;
	unsigned since_anchor;		/* records not sent since the last sent */
};

/* One entry before it is sent: each field a "KEY=value" text. */
struct journal_entry {
	int priority;
	char field[JOURNAL_FIELDS_MAX][JOURNAL_FIELD_MAX];
	size_t n;
};

/* 1..JOURNAL_VALUE_MAX bytes of [!-~]: no space, no control, no newline. */
static bool
journal_value_ok(const char *v)
{
	size_t i, n = strlen(v);

	if (n == 0 || n > JOURNAL_VALUE_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] > '~')
			return false;
	return true;
}

static void
journal_add(struct journal_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Adds one field; one that does not fit is left out, never cut. */
static void
journal_add(struct journal_entry *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (e->n == JOURNAL_FIELDS_MAX)
		return;
	va_start(ap, fmt);
	n = vsnprintf(e->field[e->n], JOURNAL_FIELD_MAX, fmt, ap);
	va_end(ap);
	if (n > 0 && n < JOURNAL_FIELD_MAX)
		e->n++;
}

/* SP_<key>=value when value is a well-formed one. */
static void
journal_add_value(struct journal_entry *e, const char *key, const char *value)
{
	if (value != NULL && journal_value_ok(value))
		journal_add(e, "SP_%s=%s", key, value);
}

/* A string member of the record, by name: NULL when absent or not one. */
static const char *
journal_member(const cJSON *members, const char *name)
{
	const cJSON *m;

	if (members == NULL)
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(members, name);
	return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* The call id is a number member (raw text for 64 bits). */
static void
journal_add_call(struct journal_entry *e, const cJSON *members)
{
	const cJSON *m;

	if (members == NULL)
		return;
	m = cJSON_GetObjectItemCaseSensitive(members, "call");
	if (cJSON_IsRaw(m))
		journal_add_value(e, "CALL", m->valuestring);
	else if (cJSON_IsNumber(m) && m->valuedouble >= 0 &&
	    m->valuedouble < 9007199254740992.0)
		journal_add(e, "SP_CALL=%" PRIu64, (uint64_t)m->valuedouble);
}

/* The SP_ fields, in the order of audit/audit_journal.h. */
static void
journal_add_fields(const struct audit_journal *j,
    const struct audit_log_note *note, struct journal_entry *e)
{
	journal_add_value(e, "KIND", note->kind);
	journal_add_value(e, "SESSION", note->session);
	journal_add(e, "SP_SEQ=%" PRIu64, note->seq);
	journal_add_value(e, "HASH", note->hash);
	journal_add_value(e, "PREV", note->prev);
	journal_add_value(e, "LOG", j->log_path);
	journal_add_value(e, "PROFILE", j->profile);
	journal_add_call(e, note->members);
	journal_add_value(e, "TOOL", journal_member(note->members, "tool"));
	journal_add_value(e, "TARGET", journal_member(note->members, "target"));
	journal_add_value(e, "OUTCOME",
	    journal_member(note->members, "outcome"));
	journal_add_value(e, "REASON", journal_member(note->members, "reason"));
}

/*
 * With journal true: the session's ends, each durable record (the intent
 * and execution of a mutating tool, synced before the action goes on or
 * its result is told), and at least every JOURNAL_ANCHOR_EVERY-th
 * record, so a session killed before its end leaves a bounded tail that
 * no anchor vouches for.
 */
static bool
journal_wanted(struct audit_journal *j, const struct audit_log_note *note)
{
	if (j->mode == POLICY_JOURNAL_ALL || note->durable ||
	    strcmp(note->kind, "session-start") == 0 ||
	    strcmp(note->kind, "session-end") == 0 ||
	    ++j->since_anchor >= JOURNAL_ANCHOR_EVERY) {
		j->since_anchor = 0;
		return true;
	}
	return false;
}

#ifdef SP_HAVE_LIBSYSTEMD
/*
 * The MESSAGE_ID of each kind: fixed for good (a collector's queries name
 * them), documented in docs/sp.1.  A kind not listed (a later version's)
 * gets the last one.
 */
static const struct {
	const char *kind;
	const char *id;
} journal_ids[] = {
	{ "session-start", "6ebb132352eb4bdeb63ac8b3a673ee0d" },
	{ "session-end", "3692b1a875904463b92a31543d6d524d" },
	{ "rejection", "3b78c9ccd2db48ea9cf8019fa1667d72" },
	{ "intent", "ce8c78ddab0f4576b68bee3f75aa0033" },
	{ "execution", "2190673d152749a1acbd7915340225cb" },
	{ "violation", "c0879024de04409282c3967fc4b76ce7" },
	{ "cancellation", "acd02916a90f4d39a60694e634c774fc" },
	{ NULL, "ff9956c84431487fa06abe455805b3fc" },
};
/* The broker's opening entry, which is no record. */
#define JOURNAL_ID_OPENING "b819a138c673419ca1b3138660b16b64"

static const char *
journal_message_id(const char *kind)
{
	size_t i;

	for (i = 0; journal_ids[i].kind != NULL; i++)
		if (strcmp(journal_ids[i].kind, kind) == 0)
			break;
	return journal_ids[i].id;
}

static void
journal_failed(struct audit_journal *j, int err)
{
	if (j->failures++ == 0)
		log_warn("audit anchor not sent: %s; later failures are only "
		    "counted", strerror(err));
	j->last_errno = err;
}

/* The fields of e, then the journal's own, as one datagram. */
static void
journal_send_journald(struct audit_journal *j,
    const struct audit_log_note *note, const struct journal_entry *e)
{
	struct iovec iov[JOURNAL_FIELDS_MAX + 4];
	char head[4][JOURNAL_FIELD_MAX];
	size_t i, n = 0;
	int rc;

	(void)snprintf(head[0], sizeof(head[0]), "MESSAGE_ID=%s",
	    journal_message_id(note->kind));
	(void)snprintf(head[1], sizeof(head[1]), "PRIORITY=%d", e->priority);
	(void)snprintf(head[2], sizeof(head[2]), "SYSLOG_IDENTIFIER=sp");
	(void)snprintf(head[3], sizeof(head[3]), "MESSAGE=audit %s: session "
	    "%s seq %" PRIu64 " hash %s", note->kind, note->session, note->seq,
	    note->hash);
	for (i = 0; i < 4; i++)
		iov[n++] = (struct iovec){ head[i], strlen(head[i]) };
	for (i = 0; i < e->n; i++)
		iov[n++] = (struct iovec){ (void *)e->field[i],
		    strlen(e->field[i]) };
	if ((rc = j->sendv(iov, (int)n)) < 0)
		journal_failed(j, -rc);
}

/*
 * The broker's first entry, sent before confinement: libsystemd makes its
 * socket on the first send, and the session-start record is now held
 * until the session is in use, after the filter is loaded.  It names the
 * session, log and profile; it is no anchor (no SP_HASH), and a session
 * whose anchors never follow it was killed or ended unused.
 */
static void
journal_send_opening(struct audit_journal *j, const char *session)
{
	struct journal_entry e;
	struct iovec iov[JOURNAL_FIELDS_MAX];
	size_t i;
	int rc;

	memset(&e, 0, sizeof(e));
	journal_add(&e, "MESSAGE_ID=%s", JOURNAL_ID_OPENING);
	journal_add(&e, "PRIORITY=%d", LOG_INFO);
	journal_add(&e, "SYSLOG_IDENTIFIER=sp");
	journal_add(&e, "MESSAGE=audit: session %s started", session);
	journal_add_value(&e, "SESSION", session);
	journal_add_value(&e, "LOG", j->log_path);
	journal_add_value(&e, "PROFILE", j->profile);
	for (i = 0; i < e.n; i++)
		iov[i] = (struct iovec){ e.field[i], strlen(e.field[i]) };
	if ((rc = j->sendv(iov, (int)e.n)) < 0)
		journal_failed(j, -rc);
}

/*
 * libsystemd.so.0 is opened here, in the broker, not linked: a DT_NEEDED
 * entry would map it and its six dependencies (libgcrypt, liblzma,
 * libzstd, ...) in every sp command, measured at 0.7 ms more per
 * `sp check`.  By soname, RTLD_NOW,
 * before confinement; never unloaded.  Not there at run time: syslog(3).
 */
static void
journal_load(struct audit_journal *j)
{
	void *lib, *fn = NULL;
	const char *why;

	if ((lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL)) == NULL ||
	    (fn = dlsym(lib, "sd_journal_sendv")) == NULL) {
		why = dlerror();
		log_warn("cannot load libsystemd.so.0 (%s): audit anchors go "
		    "to syslog", why != NULL ? why : "no sd_journal_sendv");
		return;
	}
	/* POSIX lets a dlsym() result be used as a function pointer. */
	memcpy(&j->sendv, &fn, sizeof(fn));
}
#endif

/* "sp-audit SP_KIND=... ...", the fields of e joined by spaces. */
static void
journal_send_syslog(const struct journal_entry *e)
{
	char line[JOURNAL_FIELDS_MAX * JOURNAL_FIELD_MAX];
	size_t i, len;

	len = (size_t)snprintf(line, sizeof(line), "sp-audit");
	for (i = 0; i < e->n && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s",
		    e->field[i]);
	syslog(e->priority, "%s", line);
}

/*
 * syslog(3) says nothing of a failed send: failures stay 0.
 * Connects now (LOG_NDELAY), while socket() and connect() are allowed;
 * tzset() reads the zone file syslog(3) would otherwise open on its
 * first message.  No LOG_CONS: the broker may not open the console.
 */
static void
journal_connect_syslog(void)
{
	tzset();
	openlog("sp", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
}
/* The observer of audit/audit_log.h. */
static void
journal_note(void *arg, const struct audit_log_note *note)
{
	struct audit_journal *j = arg;
	struct journal_entry e;

	if (!journal_wanted(j, note))
		return;
	memset(&e, 0, sizeof(e));
	e.priority = strcmp(note->kind, "rejection") == 0 ||
	    strcmp(note->kind, "violation") == 0 ? LOG_NOTICE : LOG_INFO;
	journal_add_fields(j, note, &e);
#ifdef SP_HAVE_LIBSYSTEMD
	if (j->sendv != NULL) {
		journal_send_journald(j, note, &e);
		return;
	}
#endif
	journal_send_syslog(&e);
}

struct audit_journal *
audit_journal_open(enum policy_audit_journal mode, const char *log_path,
    const char *profile, const char *session)
{
	struct audit_journal *j;

	if (mode == POLICY_JOURNAL_OFF)
		return NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->log_path = strdup(log_path)) == NULL ||
	    (profile != NULL && (j->profile = strdup(profile)) == NULL)) {
		log_error("out of memory");
		audit_journal_free(j);
		return NULL;
	}
	j->mode = mode;
#ifdef SP_HAVE_LIBSYSTEMD
	journal_load(j);
	if (j->sendv != NULL) {
		journal_send_opening(j, session);
		return j;
	}
#else
	(void)session;
#endif
	journal_connect_syslog();
	return j;
}

void
audit_journal_attach(struct audit_journal *j, struct audit_log *log)
{
	if (j != NULL && log != NULL)
		audit_log_observe(log, journal_note, j);
}

void
audit_journal_free(struct audit_journal *j)
{
	if (j == NULL)
		return;
	if (j->failures > 0)
		log_warn("%" PRIu64 " audit anchors were not sent (last: %s)",
		    j->failures, strerror(j->last_errno));
	free(j->log_path);
	free(j->profile);
	free(j);
}
