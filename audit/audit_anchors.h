/*
 * sp audit verify --anchors JOURNAL: are the anchors kept off the host
 * (audit/audit_journal.h) still in the log files?  (docs/design.md
 * section 6.)
 *
 * JOURNAL is `journalctl -o json` output ("-" for stdin): one JSON object
 * per line, parsed with the strict parser of common/json.h.  An entry is
 * an anchor when it has an SP_HASH field (journald), or when its
 * SYSLOG_IDENTIFIER is "sp" and its MESSAGE begins "sp-audit " (syslog(3)
 * through journald); every other entry is skipped.  An anchor must carry
 * SP_SESSION, SP_SEQ and SP_HASH as strings of the audit log's forms, or
 * it is named as malformed.
 *
 * Each anchor is then looked for among the intact records of the log
 * files (any order, rotated files too): held when a record has its hash,
 * session and seq; contradicted when a record has its hash with another
 * session or seq, or its session and seq with another hash (the log was
 * rolled back and written again); missing otherwise (the log was cut or
 * the file holding it is gone).  Each anchor not held is named on stdout,
 * one line, with the journal line and, when the entry has them, the
 * sender's _UID and _PID as journald saw them (an entry another local
 * user forged shows another uid).  Records that are not intact are left
 * to the chain check.  A session whose last anchor is not its
 * session-end (killed, or still running) is named with that anchor's
 * seq: records after it are vouched for by no anchor (said, not a
 * failure).
 *
 * At most AUDIT_ANCHORS_MAX anchors (narrow with journalctl --since or
 * SP_LOG=PATH); lines of either input over AUDIT_LINE_MAX are skipped and
 * counted.
 */
#ifndef SP_AUDIT_AUDIT_ANCHORS_H
#define SP_AUDIT_AUDIT_ANCHORS_H

#include <stddef.h>

#define AUDIT_ANCHORS_MAX (1u << 20)

enum audit_anchors_status {
	AUDIT_ANCHORS_HELD,		/* every anchor is in the files */
	AUDIT_ANCHORS_NOT_HELD,		/* some are missing, contradicted or malformed */
	AUDIT_ANCHORS_MALFORMED,	/* the journal is not journalctl -o json */
	AUDIT_ANCHORS_UNREADABLE,	/* a file cannot be read (logged) */
};

/* Checks the anchors of journal_path against the n_logs files of logs. */
enum audit_anchors_status audit_anchors_check(const char *journal_path,
    char *const *logs, size_t n_logs);

#endif
