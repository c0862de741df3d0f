/*
 * sp metrics' counts from the audit log (cli/metrics_audit.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "audit/audit_verify.h"
#include "broker/approvals.h"
#include "cli/metrics_audit.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/log.h"

static const struct metrics_family fam_calls = {
	"sallyport_calls_total", "counter",
	"Tool calls by tool and outcome, each counted once by the audit record "
	"that ended it (sp(1) METRICS).", { "tool", "outcome", NULL } };
static const struct metrics_family fam_refusals = {
	"sallyport_refusals_total", "counter",
	"Frames and calls refused before acting, by the reason their audit "
	"record gives.", { "reason", NULL } };
static const struct metrics_family fam_confirmations = {
	"sallyport_confirmations_total", "counter",
	"Confirmation records by tool and decision (asked included).",
	{ "tool", "decision", NULL } };
static const struct metrics_family fam_cancellations = {
	"sallyport_cancellations_total", "counter",
	"Calls the client cancelled, by tool.", { "tool", NULL } };
static const struct metrics_family fam_sessions = {
	"sallyport_sessions_total", "counter",
	"Sessions started (session-start records).", { NULL } };
static const struct metrics_family fam_records = {
	"sallyport_audit_records_total", "counter",
	"Intact audit records read, by kind.", { "kind", NULL } };
static const struct metrics_family fam_files = {
	"sallyport_audit_files", "gauge",
	"Audit log files read.", { NULL } };
static const struct metrics_family fam_intact = {
	"sallyport_audit_chain_intact", "gauge",
	"1 when each file's own hash chain held (no HMAC, no link between "
	"files: not tamper detection, which is sp audit verify's); 0: a file "
	"was counted up to its first broken record.", { NULL } };
static const struct metrics_family fam_pending = {
	"sallyport_approvals_pending", "gauge",
	"Calls of live sessions waiting for an operator's sp approve.",
	{ NULL } };

/* A confirmation asked of an operator and not yet answered. */
struct asked_call {
	char session[AUDIT_SESSION_MAX + 1];
	uint64_t call;
};

struct audit_counter {
	struct metrics *m;
	const struct policy *p;
	struct asked_call *asked;	/* owned, METRICS_AUDIT_ASKED_MAX */
	size_t asked_count;
};

static const char *
member_text(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* A call's tool; "" for a rejection that named none of the catalog's. */
static const char *
member_tool(const cJSON *o)
{
	const char *tool = member_text(o, "tool");

	return tool != NULL ? tool : "";
}

static void
count_call(struct audit_counter *c, const cJSON *o, const char *outcome,
    uint64_t n)
{
	const char *v[] = { member_tool(o), outcome };

	(void)metrics_add(c->m, &fam_calls, v, n);
}

static void
count_refusal(struct audit_counter *c, const char *reason, uint64_t n)
{
	const char *v[] = { reason };

	(void)metrics_add(c->m, &fam_refusals, v, n);
}

static void
count_rejection(struct audit_counter *c, const cJSON *o)
{
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "repeated");
	const char *reason = member_text(o, "reason"), *method;
	uint64_t n = 1;

	/* N instead of N more records (sp-audit(5)) */
	if (!json_exact_uint(rep, &n) || n == 0)
		n = 1;
	count_refusal(c, reason != NULL ? reason : "", n);
	method = member_text(o, "method");
	if (method != NULL && strcmp(method, "tools/call") == 0)
		count_call(c, o, "rejected", n);
}

static bool
member_call(const cJSON *o, uint64_t *call)
{
	return json_exact_uint(cJSON_GetObjectItemCaseSensitive(o, "call"),
	    call);
}

static bool
tool_via_operator(const struct policy *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->tool_count; i++)
		if (strcmp(p->tools[i].name, name) == 0)
			return p->tools[i].confirm &&
			    p->tools[i].confirm_spec.via_operator;
	return false;
}

static void
asked_forget(struct audit_counter *c, const char *session, const cJSON *o)
{
	uint64_t call = 0;
	bool by_call = o != NULL && member_call(o, &call);
	size_t i = 0;

	while (i < c->asked_count)
		if (strcmp(c->asked[i].session, session) == 0 &&
		    (o == NULL || (by_call && c->asked[i].call == call)))
			c->asked[i] = c->asked[--c->asked_count];
		else
			i++;
}

/* The session's approval socket is there: the session still runs. */
static bool
session_live(const struct policy *p, const char *session)
{
	char path[4096];
	struct stat st;

	/* a session id is the writer's hex: nothing else names a path */
	if (p->state_dir == NULL || session[0] == '\0' ||
	    strlen(session) > AUDIT_SESSION_MAX ||
	    !hex_is_lowercase(session, strlen(session)) ||
	    (size_t)snprintf(path, sizeof(path),
	    "%s/%s/%s%s", p->state_dir, APPROVALS_DIR, session,
	    APPROVALS_SUFFIX) >= sizeof(path))
		return false;
	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * The table is full: the asked calls of sessions that ended without a
 * session-end (killed) leave it, so a live session's call still counts.
 */
static void
asked_forget_dead(struct audit_counter *c)
{
	size_t i = 0;

	while (i < c->asked_count)
		if (!session_live(c->p, c->asked[i].session))
			c->asked[i] = c->asked[--c->asked_count];
		else
			i++;
}

static void
asked_note(struct audit_counter *c, const char *session, const cJSON *o)
{
	struct asked_call *a;
	uint64_t call;

	if (!tool_via_operator(c->p, member_tool(o)) || !member_call(o, &call))
		return;
	if (c->asked_count == METRICS_AUDIT_ASKED_MAX)
		asked_forget_dead(c);
	if (c->asked_count == METRICS_AUDIT_ASKED_MAX) {
		metrics_mark_truncated(c->m);
		return;
	}
	a = &c->asked[c->asked_count++];
	snprintf(a->session, sizeof(a->session), "%s", session);
	a->call = call;
}

/* Decisions after which the call goes on: no refusal, not its end. */
static bool
decision_goes_on(const char *d)
{
	return strcmp(d, "asked") == 0 || strcmp(d, "accepted") == 0;
}

static void
count_confirmation(struct audit_counter *c, const char *session,
    const cJSON *o)
{
	const char *d = member_text(o, "decision");
	const char *v[] = { member_tool(o), d };

	if (d == NULL)
		return;
	(void)metrics_add(c->m, &fam_confirmations, v, 1);
	if (strcmp(d, "asked") == 0) {
		asked_note(c, session, o);
		return;
	}
	asked_forget(c, session, o);
	if (decision_goes_on(d))
		return;
	if (strcmp(d, "relayed") == 0) {
		count_call(c, o, "relayed", 1);
		return;
	}
	count_refusal(c, d, 1);
	count_call(c, o, "unconfirmed", 1);
}

static void
count_intent(struct audit_counter *c, const cJSON *o)
{
	if (cJSON_GetObjectItemCaseSensitive(o, "duplicate_of") != NULL)
		count_call(c, o, "duplicate", 1);
	else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "replay")))
		count_call(c, o, "replayed", 1);
}

static void
count_kind(struct audit_counter *c, const char *kind, const char *session,
    const cJSON *o)
{
	const char *word;

	if (strcmp(kind, "session-start") == 0)
		(void)metrics_add(c->m, &fam_sessions, NULL, 1);
	else if (strcmp(kind, "session-end") == 0)
		asked_forget(c, session, NULL);
	else if (strcmp(kind, "rejection") == 0)
		count_rejection(c, o);
	else if (strcmp(kind, "confirmation") == 0)
		count_confirmation(c, session, o);
	else if (strcmp(kind, "intent") == 0)
		count_intent(c, o);
	else if (strcmp(kind, "limit") == 0 &&
	    (word = member_text(o, "limit")) != NULL) {
		count_refusal(c, word, 1);
		count_call(c, o, "limit", 1);
	} else if (strcmp(kind, "execution") == 0 &&
	    (word = member_text(o, "outcome")) != NULL)
		count_call(c, o, word, 1);
	else if (strcmp(kind, "cancellation") == 0) {
		const char *v[] = { member_tool(o) };

		(void)metrics_add(c->m, &fam_cancellations, v, 1);
	}
}

/* audit_verify_each_fn: one intact record. */
static void
count_record(void *arg, size_t file, const char *line, size_t len,
    const struct audit_record *rec)
{
	struct audit_counter *c = arg;
	const char *kind[] = { rec->kind };
	cJSON *o;

	(void)file;
	(void)metrics_add(c->m, &fam_records, kind, 1);
	if ((o = cJSON_ParseWithLength(line, len)) == NULL)
		return;		/* its hash held: not ours to second-guess */
	count_kind(c, rec->kind, rec->session, o);
	cJSON_Delete(o);
}

static void
count_pending(struct audit_counter *c)
{
	uint64_t pending = 0;
	size_t i;

	for (i = 0; i < c->asked_count; i++)
		if (session_live(c->p, c->asked[i].session))
			pending++;
	(void)metrics_set(c->m, &fam_pending, NULL, pending);
}

static void
declare_families(struct metrics *m)
{
	static const struct metrics_family *const all[] = { &fam_calls,
	    &fam_refusals, &fam_confirmations, &fam_cancellations,
	    &fam_sessions, &fam_records, &fam_files, &fam_intact,
	    &fam_pending };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		(void)metrics_declare(m, all[i]);
}

bool
metrics_audit_count(struct metrics *m, const struct policy *p,
    const char *const *paths, size_t n)
{
	struct audit_counter c = { .m = m, .p = p };
	struct audit_verify_report rep;
	enum audit_verify_status st = AUDIT_VERIFY_OK;
	bool intact = true;
	size_t i;

	declare_families(m);
	if ((c.asked = calloc(METRICS_AUDIT_ASKED_MAX,
	    sizeof(*c.asked))) == NULL) {
		log_error("metrics: out of memory");
		return false;
	}
	/* the health gauges first: past METRICS_SERIES_MAX a series made
	 * after the counts would be lost, and an alert on it never fire */
	(void)metrics_set(m, &fam_files, NULL, n);
	(void)metrics_set(m, &fam_intact, NULL, 0);
	(void)metrics_set(m, &fam_pending, NULL, 0);
	(void)metrics_add(m, &fam_sessions, NULL, 0);
	for (i = 0; i < n && st != AUDIT_VERIFY_UNREADABLE; i++) {
		st = audit_verify_files_each(&paths[i], 1, NULL, 0, &rep,
		    count_record, &c);
		if (st == AUDIT_VERIFY_BROKEN) {
			log_warn("%s: line %zu: %s; counted up to it",
			    paths[i], rep.break_line,
			    audit_break_reason(rep.why));
			intact = false;
		}
	}
	count_pending(&c);
	(void)metrics_set(m, &fam_files, NULL, n);
	(void)metrics_set(m, &fam_intact, NULL, intact ? 1 : 0);
	free(c.asked);
	return st != AUDIT_VERIFY_UNREADABLE;
}
