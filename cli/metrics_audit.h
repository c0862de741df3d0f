/*
 * sp metrics' counts from audit log files (sp-audit(5) KINDS), read
 * record by record by the verifier (audit/audit_verify.h), each file on
 * its own: a record is counted only when its hash and its place in its
 * file's chain hold, and a file whose chain breaks is counted up to the
 * break (sallyport_audit_chain_intact 0).  Files rotated under another
 * name, or whose link to the file before was lost, still add up.
 *
 * Each call is counted once in sallyport_calls_total, by the record that
 * ends it: an execution (its outcome: ok, failed, unknown, denied,
 * invalid); an intent that did not act (duplicate: duplicate_of;
 * replayed: replay); a limit record (limit); a confirmation whose
 * decision ended the call (unconfirmed; relayed for a 2026-07-28
 * question sent back in a result, whose retry is a call of its own); a
 * rejection of a tools/call frame (rejected, times its "repeated").  A
 * call cancelled before any of these is only in
 * sallyport_cancellations_total.
 *
 * sallyport_refusals_total{reason} uses the words of the records: a
 * rejection's reason (every rejection, calls or not), a limit record's
 * limit, a confirmation's decision when it ended the call (not accepted,
 * asked or relayed).  These three vocabularies share no word.
 *
 * sallyport_approvals_pending: "asked" confirmations of a tool whose
 * confirm.via is "operator" with no decision after them, in a session
 * that wrote no session-end and whose approval socket
 * (state_dir/approvals/SESSION.sock) is still there: a live session's
 * call waiting for sp approve.  Read from the log, so no approver's
 * rights are needed.
 */
#ifndef SP_CLI_METRICS_AUDIT_H
#define SP_CLI_METRICS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/metrics_text.h"
#include "policy/policy.h"

/* waiting calls followed at once; more are not counted as pending */
#define METRICS_AUDIT_ASKED_MAX 4096

/*
 * Declares the audit families in m and counts the records of the n
 * files at paths (oldest first; n may be 0) into them; p (borrowed)
 * names the tools and state_dir.  false when a file could not be read
 * (logged): then m is not to be written.
 */
bool metrics_audit_count(struct metrics *m, const struct policy *p,
    const char *const *paths, size_t n);

#endif
