/*
 * Out-of-band approval (docs/design.md section 8.3): a session whose
 * policy has a tool with confirm.via "operator" listens, from before the
 * broker's confinement to the session's end, on one socket,
 * state_dir/approvals/SESSION.sock.  The directory is the broker's own:
 * made by it (0755), or refused at start when it is a symlink, another
 * uid's, or writable by others.  The socket is 0666, so that approvers
 * listed by uid alone reach it: who gets further is the kernel's word,
 * never the request's.  A connection whose SO_PEERCRED uid, gid and
 * SO_PEERGROUPS no operator tool's approvers name is told so and closed
 * before anything is read.  sp approve (cli/cmd_approve.c) connects.
 *
 * The executor tells the broker of each call that waits (OPERATOR_ASK:
 * call id, tool, the challenge, the message as the executor renders the
 * values).  A connection sends one request line of JSON and gets JSON
 * lines back, then the broker closes it:
 *
 *   {"op":"list"}   one line per waiting call the caller may approve:
 *                   {"id":"SESSION.CALL.DIGEST","tool":..,"message":..,
 *                    "requester_uid":N,"age_s":N[,"retype":"param"]}
 *   {"op":"approve","session":"SESSION","call":N,"digest":"DIGEST"
 *    [,"retyped":".."]}  or the same with "op":"deny"
 *                   one line: {"decision":"accepted"} (the executor's
 *                   decision token, once it decided) or {"error":".."}
 *
 * An answer binds to what the approver was shown: DIGEST hashes the
 * session, the call, the tool and the message; an answer whose session
 * or digest is not the waiting call's (a socket reached under another
 * session's name) is refused and nothing is passed on.  The tool's
 * approvers must name the caller (a uid listed, or a gid listed among
 * the caller's), and with others_only the uid must not be the
 * requester's (the peer uid of sp mcp's stdin, else the uid sp mcp runs
 * as).  Only then does the broker send the executor OPERATOR_ANSWER,
 * with the challenge the executor issued and the approver's uid; the
 * executor verifies the challenge (executor/confirm.h) and decides.  One
 * answer per call: a second approver is told the call is already
 * answered.
 *
 * Bounded: at most max_pending waiting calls (the session's in-flight
 * calls), APPROVALS_CLIENTS_MAX connections, each request line at most
 * APPROVALS_LINE_MAX bytes and APPROVALS_CLIENT_TIMEOUT_S seconds to
 * send it.
 *
 * Ownership: the session (broker/broker.c) owns the approvals and frees
 * them after the loop, which removes the socket; the supervisor borrows
 * them.
 */
#ifndef SP_BROKER_APPROVALS_H
#define SP_BROKER_APPROVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit_event.h"
#include "common/record.h"
#include "policy/policy.h"
#include "state/state_dir.h"	/* APPROVALS_DIR */

#define APPROVALS_SUFFIX ".sock"
/* hex digits of the question's digest in an id (SESSION.CALL.DIGEST) */
#define APPROVALS_DIGEST_HEX 16
#define APPROVALS_CLIENTS_MAX 16
#define APPROVALS_LINE_MAX (RECORD_ARG_BYTES_CAP * 6 + 256)
#define APPROVALS_CLIENT_TIMEOUT_S 10

struct approvals;
struct event_base;

/* How the broker sends an approval to the executor; false when not sent. */
typedef bool (*approvals_send_fn)(void *arg,
    const struct record_operator_answer *a);

/* Whether policy has a tool with confirm.via "operator". */
bool approvals_needed(const struct policy *policy);

/*
 * The socket, bound and listening, before confinement; policy is
 * borrowed.  NULL after logging.
 */
struct approvals *approvals_open(const struct policy *policy,
    const char *session_id, uid_t requester, size_t max_pending);

/* The fds the broker's filter pins (common/sandbox.h). */
int approvals_dir_fd(const struct approvals *ap);
int approvals_listen_fd(const struct approvals *ap);

/* Starts accepting on base; answers go out through send. */
bool approvals_start(struct approvals *ap, struct event_base *base,
    approvals_send_fn send, void *send_arg);

/* A call now waits for an approver (the executor's OPERATOR_ASK). */
void approvals_ask(struct approvals *ap, const struct record_operator_ask *a);

/*
 * A confirmation audit event of the executor: its decision ends the wait
 * (anything but "asked"); the approver, if one answered, goes into
 * *plan, and a waiting sp approve is told the decision.
 */
void approvals_decided(struct approvals *ap,
    const struct record_audit_event *ev, struct audit_event_plan *plan);

/* Closes every connection and removes the socket.  NULL is allowed. */
void approvals_free(struct approvals *ap);

#endif
