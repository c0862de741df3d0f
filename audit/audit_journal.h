/*
 * Audit anchors off the host (docs/design.md section 6, "Off the host").
 * A chain in a file can be rewritten by whoever owns the file; a copy of
 * its hashes kept by journald (and shipped by the tools a fleet already
 * runs) cannot.  With audit.journal true (the default) the session-start
 * and session-end records, every durable record (the intent and the
 * execution of a mutating tool) and at least every 16th record are sent
 * as structured entries, with "all" every record; false sends nothing.
 * A session killed before its end leaves at most 15 records, none of
 * them durable, after its last anchor: those can be cut unseen.  A build with libsystemd sends with
 * sd_journal_sendv(); one without sends the same fields with syslog(3).
 *
 * Each entry carries MESSAGE_ID (a fixed id per kind, listed in docs/sp.1),
 * SYSLOG_IDENTIFIER=sp, PRIORITY (notice for rejections and violations,
 * else info), MESSAGE (one human line) and SP_KIND, SP_SESSION, SP_SEQ,
 * SP_HASH, SP_PREV, then, when known, SP_LOG (the audit path), SP_PROFILE,
 * SP_CALL, SP_TOOL, SP_TARGET, SP_OUTCOME and SP_REASON.  Only these: never
 * an argument, a shape or a credential.  A value that is not 1..256 bytes
 * of printable ASCII without spaces is left out, so no entry can carry a
 * second line or a forged field.  Over syslog the message is
 * "sp-audit SP_KIND=... SP_SESSION=... ..." with the same fields, which
 * `sp audit verify --anchors` (audit/audit_anchors.h) reads as well.
 *
 * Opening before confinement: libsystemd creates its datagram socket on
 * the first send and glibc's syslog(3) connects in openlog(LOG_NDELAY);
 * the broker's seccomp filter allows neither socket() nor connect()
 * (common/sandbox_filter.c).  So audit_journal_open(), called before the
 * filter is loaded, connects syslog or sends journald one opening entry
 * (MESSAGE_ID b819a138c673419ca1b3138660b16b64, SP_SESSION, SP_LOG,
 * SP_PROFILE, no SP_HASH: no anchor).  A send that fails is counted and
 * said once on stderr; it never stops a record or an action.
 */
#ifndef SP_AUDIT_AUDIT_JOURNAL_H
#define SP_AUDIT_AUDIT_JOURNAL_H

#include "audit/audit_log.h"
#include "policy/policy.h"

/* "journald" or "syslog": where this build sends anchors (sp --version). */
extern const char audit_journal_feature[];

struct audit_journal;

/*
 * A journal for mode (POLICY_JOURNAL_OFF gives NULL, which
 * audit_journal_attach ignores), opened for session (borrowed; the log's
 * session id): call before confinement.  log_path and profile (NULL for
 * none) are copied.  NULL after logging when out of memory.  The caller owns the
 * result and frees it with audit_journal_free() after the log is closed.
 */
struct audit_journal *audit_journal_open(enum policy_audit_journal mode,
    const char *log_path, const char *profile, const char *session);

/* Makes every record log appends reach j (borrowed; NULL: none). */
void audit_journal_attach(struct audit_journal *j, struct audit_log *log);

/* Says how many sends failed, if any, and frees j (NULL allowed). */
void audit_journal_free(struct audit_journal *j);

#endif
