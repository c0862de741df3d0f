/*
 * Rendering children's audit events as audit log records
 * (audit/audit_event.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit_event.h"
#include "common/hash.h"
#include "common/json_number.h"
#include "common/log.h"

static const char *
audit_event_kind_name(enum record_audit_kind kind)
{
	switch (kind) {
	case RECORD_AUDIT_REJECTION: return "rejection";
	case RECORD_AUDIT_INTENT: return "intent";
	case RECORD_AUDIT_EXECUTION: return "execution";
	case RECORD_AUDIT_VIOLATION: return "violation";
	case RECORD_AUDIT_CANCELLATION: return "cancellation";
	case RECORD_AUDIT_OPENED: return "session-start";
	case RECORD_AUDIT_CLIENT: return "client";
	case RECORD_AUDIT_CONFIRMATION: return "confirmation";
	case RECORD_AUDIT_LIMIT: return "limit";
	}
	return NULL;
}

static const char *
audit_event_outcome_name(enum record_outcome outcome)
{
	switch (outcome) {
	case RECORD_OUTCOME_OK: return "ok";
	case RECORD_OUTCOME_FAILED: return "failed";
	case RECORD_OUTCOME_UNKNOWN: return "unknown";
	case RECORD_OUTCOME_DENIED: return "denied";
	case RECORD_OUTCOME_INVALID: return "invalid";
	case RECORD_OUTCOME_NONE: break;
	}
	return "none";
}

/* The frontend sees frames, the executor acts: neither speaks for the other. */
static bool
audit_event_role_may(enum record_role role, enum record_audit_kind kind)
{
	if (kind == RECORD_AUDIT_CANCELLATION)
		return true;
	if (role == RECORD_ROLE_FRONTEND)
		return kind == RECORD_AUDIT_REJECTION ||
		    kind == RECORD_AUDIT_OPENED ||
		    kind == RECORD_AUDIT_CLIENT;
	return kind == RECORD_AUDIT_INTENT || kind == RECORD_AUDIT_EXECUTION ||
	    kind == RECORD_AUDIT_VIOLATION ||
	    kind == RECORD_AUDIT_CONFIRMATION;
}

static bool
audit_event_names_tool(enum record_audit_kind kind)
{
	return kind == RECORD_AUDIT_INTENT || kind == RECORD_AUDIT_EXECUTION ||
	    kind == RECORD_AUDIT_CANCELLATION ||
	    kind == RECORD_AUDIT_CONFIRMATION;
}

/*
 * Only the "asked" confirmation of a tool with confirm and a journal
 * carries the call's values, all of them, as its intent will: the broker
 * asks the journal before a human is asked (docs/design.md section 9),
 * and the executor waits for that answer.  It gates no action, so it is
 * not synced.
 */
static bool
audit_event_plan_confirmation(const struct policy_tool *tool,
    const struct record_audit_event *ev, struct audit_event_plan *plan)
{
	bool asked = ev->reason.len == 5 &&
	    memcmp(ev->reason.ptr, "asked", 5) == 0;
	bool values = ev->digest_count == tool->param_count &&
	    ev->shape_count == tool->param_count;

	plan->journal_first = asked && tool->confirm &&
	    tool->idem_window_s != 0;
	plan->acked = plan->journal_first;
	if (plan->journal_first ? values : ev->digest_count == 0)
		return true;
	if (plan->journal_first)
		log_error("confirmation asked for %s with %zu values for %zu "
		    "params", tool->name, ev->digest_count, tool->param_count);
	else
		log_error("confirmation of %s with values: only one asked for "
		    "a tool with a journal has them", tool->name);
	return false;
}

bool
audit_event_plan(const struct policy *policy, enum record_role role,
    const struct record_audit_event *ev, struct audit_event_plan *plan)
{
	const struct policy_tool *tool = NULL;

	memset(plan, 0, sizeof(*plan));
	plan->kind = audit_event_kind_name(ev->kind);
	plan->acked = ev->kind == RECORD_AUDIT_INTENT;
	plan->opens = ev->kind == RECORD_AUDIT_OPENED;
	if (plan->kind == NULL || !audit_event_role_may(role, ev->kind)) {
		log_error("%s may not send %s events", record_role_name(role),
		    plan->kind != NULL ? plan->kind : "unknown");
		return false;
	}
	if (audit_event_names_tool(ev->kind)) {
		if (ev->tool_index >= policy->tool_count) {
			log_error("%s event for tool %" PRIu32 " of %zu",
			    plan->kind, ev->tool_index, policy->tool_count);
			return false;
		}
		tool = &policy->tools[ev->tool_index];
	}
	if ((ev->flags & AUDIT_HAS_TOOL) != 0 &&
	    ev->tool_index >= policy->tool_count) {
		log_error("rejection naming tool %" PRIu32 " of %zu",
		    ev->tool_index, policy->tool_count);
		return false;
	}
	if (tool != NULL && tool->mutating &&
	    ev->kind == RECORD_AUDIT_EXECUTION)
		plan->acked = true;
	plan->durable = tool != NULL && tool->mutating && plan->acked;
	if (ev->kind == RECORD_AUDIT_CONFIRMATION &&
	    !audit_event_plan_confirmation(tool, ev, plan))
		return false;
	/* one client record per session, unless the frontend is not itself:
	 * then the note budget bounds it like any note */
	plan->note = ev->kind == RECORD_AUDIT_REJECTION ||
	    ev->kind == RECORD_AUDIT_VIOLATION ||
	    ev->kind == RECORD_AUDIT_CLIENT;
	if (ev->kind == RECORD_AUDIT_INTENT &&
	    ev->shape_count != tool->param_count) {
		log_error("intent with %zu shapes for %zu params",
		    ev->shape_count, tool->param_count);
		return false;
	}
	return true;
}

/*
 * One shape: the compact JSON of audit_args.h's rendering, a string, a
 * number or a boolean, nothing else (an object could pose as more).
 */
static cJSON *
audit_event_parse_shape(const struct record_text *shape)
{
	const char *end = NULL;
	cJSON *v;

	v = cJSON_ParseWithLengthOpts(shape->ptr, shape->len, &end, false);
	if (v != NULL && end == shape->ptr + shape->len &&
	    (cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v)))
		return v;
	cJSON_Delete(v);
	log_error("a shape is not a JSON scalar");
	return NULL;
}

/* {param name: shape}: names from the catalog, shapes re-rendered. */
static bool
audit_event_add_args(cJSON *m, const struct policy_tool *tool,
    const struct record_audit_event *ev)
{
	cJSON *args, *v;
	size_t i;

	if (ev->shape_count != tool->param_count)
		return ev->kind != RECORD_AUDIT_INTENT;
	if ((args = cJSON_AddObjectToObject(m, "args")) == NULL)
		return false;
	for (i = 0; i < tool->param_count; i++) {
		if ((v = audit_event_parse_shape(&ev->shapes[i])) == NULL)
			return false;
		cJSON_AddItemToObject(args, tool->params[i].name, v);
	}
	return true;
}

/*
 * What was asked or decided (a token, never a value) and, when the human
 * retyped a value, its shape: the retyped text is the human's, and the
 * log keeps what it keeps of arguments, a shape.
 */
static bool
audit_event_add_confirmation(cJSON *m, const struct record_audit_event *ev)
{
	cJSON *v;

	if (ev->reason.len == 0 || cJSON_AddStringToObject(m, "decision",
	    ev->reason.ptr) == NULL)
		return false;
	/* with digests the shapes are the call's values, which its intent
	 * writes: asked, a question, names none (audit_event_plan()) */
	if (ev->shape_count == 0 || ev->digest_count != 0)
		return true;
	if (ev->shape_count > 1)
		return false;
	if ((v = audit_event_parse_shape(&ev->shapes[0])) == NULL)
		return false;
	cJSON_AddItemToObject(m, "retyped", v);
	return true;
}

static bool
audit_event_add_call(cJSON *m, const struct policy *policy,
    const struct record_audit_event *ev)
{
	const struct policy_tool *tool = &policy->tools[ev->tool_index];

	if (!json_add_uint64(m, "call", ev->call_id) ||
	    cJSON_AddStringToObject(m, "tool", tool->name) == NULL ||
	    cJSON_AddStringToObject(m, "target",
	    policy->targets[tool->target_index].name) == NULL)
		return false;
	switch (ev->kind) {
	case RECORD_AUDIT_INTENT:
		return cJSON_AddBoolToObject(m, "mutating",
		    tool->mutating) != NULL && audit_event_add_args(m, tool, ev);
	case RECORD_AUDIT_EXECUTION:
		return cJSON_AddStringToObject(m, "outcome",
		    audit_event_outcome_name(ev->outcome)) != NULL &&
		    cJSON_AddNumberToObject(m, tool->kind == TOOL_SSH ?
		    "exit_status" : "http_status", ev->status) != NULL &&
		    json_add_uint64(m, "duration_us", ev->duration_us) &&
		    audit_event_add_args(m, tool, ev);
	case RECORD_AUDIT_CONFIRMATION:
		return audit_event_add_confirmation(m, ev);
	default:
		return cJSON_AddBoolToObject(m, "started",
		    (ev->flags & AUDIT_STARTED) != 0) != NULL;
	}
}

/*
 * A rejection's shapes: the named tool's params first, by the catalog's
 * names, then "extra_args", the shapes of what the tool does not declare
 * (or of everything when no tool is named), in the order sent: their
 * names are the client's, so they are not written.
 */
static bool
audit_event_add_rejected_args(cJSON *m, const struct policy *policy,
    const struct record_audit_event *ev)
{
	const struct policy_tool *tool = NULL;
	cJSON *args = NULL, *extra = NULL, *v;
	size_t i, named = 0;

	if ((ev->flags & AUDIT_HAS_TOOL) != 0) {
		tool = &policy->tools[ev->tool_index];
		named = ev->shape_count < tool->param_count ?
		    ev->shape_count : tool->param_count;
		/* a folded run carries no shapes: no empty "args" for it */
		if (named > 0 &&
		    (args = cJSON_AddObjectToObject(m, "args")) == NULL)
			return false;
	}
	if (ev->shape_count > named &&
	    (extra = cJSON_AddArrayToObject(m, "extra_args")) == NULL)
		return false;
	for (i = 0; i < ev->shape_count; i++) {
		if ((v = audit_event_parse_shape(&ev->shapes[i])) == NULL)
			return false;
		if (i < named)
			cJSON_AddItemToObject(args, tool->params[i].name, v);
		else
			cJSON_AddItemToArray(extra, v);
	}
	return true;
}

/* What a rejection names beyond its reason: method, tool, arguments. */
static bool
audit_event_add_rejected(cJSON *m, const struct policy *policy,
    const struct record_audit_event *ev)
{
	if (!json_add_uint64(m, "frame", ev->frame_no) ||
	    cJSON_AddNumberToObject(m, "code", ev->code) == NULL)
		return false;
	if (ev->method.len > 0 &&
	    cJSON_AddStringToObject(m, "method", ev->method.ptr) == NULL)
		return false;
	if ((ev->flags & AUDIT_HAS_TOOL) != 0 &&
	    (cJSON_AddStringToObject(m, "tool",
	    policy->tools[ev->tool_index].name) == NULL ||
	    cJSON_AddStringToObject(m, "target", policy->targets[
	    policy->tools[ev->tool_index].target_index].name) == NULL))
		return false;
	return audit_event_add_rejected_args(m, policy, ev);
}

/* Rejections and violations: what was refused, by hash only. */
static bool
audit_event_add_refusal(cJSON *m, const struct policy *policy,
    const struct record_audit_event *ev)
{
	char hex[HASH_SHA256_HEX_LEN + 1];

	if (ev->kind == RECORD_AUDIT_REJECTION &&
	    !audit_event_add_rejected(m, policy, ev))
		return false;
	if (ev->kind == RECORD_AUDIT_VIOLATION && ev->call_id != 0 &&
	    !json_add_uint64(m, "call", ev->call_id))
		return false;
	if (ev->reason.len > 0 &&
	    cJSON_AddStringToObject(m, "reason", ev->reason.ptr) == NULL)
		return false;
	if ((ev->flags & AUDIT_HAS_SHA256) == 0)
		return true;
	hash_hex(ev->sha256, sizeof(ev->sha256), hex);
	return cJSON_AddStringToObject(m, "sha256", hex) != NULL;
}

/*
 * A text the client chose, for a reader's terminal: printable ASCII
 * kept, every other byte (control, escape, non-ASCII) a '?', cut to
 * AUDIT_EVENT_CLIENT_TEXT_MAX bytes with "..." said.
 */
static bool
audit_event_add_client_text(cJSON *obj, const char *name,
    const struct record_text *t)
{
	char buf[AUDIT_EVENT_CLIENT_TEXT_MAX + 4];
	size_t i, n = t->len < AUDIT_EVENT_CLIENT_TEXT_MAX ? t->len :
	    AUDIT_EVENT_CLIENT_TEXT_MAX;

	for (i = 0; i < n; i++)
		buf[i] = t->ptr[i] >= ' ' && t->ptr[i] <= '~' ? t->ptr[i] : '?';
	if (t->len > n) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return cJSON_AddStringToObject(obj, name, buf) != NULL;
}

static bool
audit_event_add_client(cJSON *m, const struct record_audit_event *ev)
{
	cJSON *info;

	if ((info = cJSON_AddObjectToObject(m, "client_info")) == NULL)
		return false;
	return audit_event_add_client_text(info, "name", &ev->shapes[0]) &&
	    audit_event_add_client_text(info, "version", &ev->shapes[1]) &&
	    audit_event_add_client_text(m, "protocol_version", &ev->shapes[2]);
}

cJSON *
audit_event_members(const struct policy *policy, enum record_role role,
    const struct record_audit_event *ev)
{
	cJSON *m;
	bool ok;

	if ((m = cJSON_CreateObject()) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	ok = cJSON_AddStringToObject(m, "from", record_role_name(role)) != NULL;
	if (ok && audit_event_names_tool(ev->kind))
		ok = audit_event_add_call(m, policy, ev);
	else if (ok && ev->kind == RECORD_AUDIT_CLIENT)
		ok = audit_event_add_client(m, ev);
	else if (ok)
		ok = audit_event_add_refusal(m, policy, ev);
	if (!ok) {
		log_error("%s event not rendered",
		    audit_event_kind_name(ev->kind));
		cJSON_Delete(m);
		return NULL;
	}
	return m;
}

/* ev repeats the session's last rejection record: same reason, same code. */
static bool
audit_event_repeats(const struct audit_event_session *as,
    const struct record_audit_event *ev)
{
	return as->run_open && ev->kind == RECORD_AUDIT_REJECTION &&
	    ev->code == as->run_code &&
	    (ev->flags & AUDIT_HAS_TOOL) == (as->run_flags & AUDIT_HAS_TOOL) &&
	    ((ev->flags & AUDIT_HAS_TOOL) == 0 ||
	    ev->tool_index == as->run_tool) &&
	    ev->method.len == strlen(as->run_method) &&
	    (ev->method.len == 0 ||
	    memcmp(ev->method.ptr, as->run_method, ev->method.len) == 0) &&
	    ev->reason.len == strlen(as->run_reason) &&
	    (ev->reason.len == 0 ||
	    memcmp(ev->reason.ptr, as->run_reason, ev->reason.len) == 0);
}

static void
audit_event_fold(struct audit_event_session *as,
    const struct record_audit_event *ev)
{
	as->run_folded++;
	as->run_frame = ev->frame_no;
	as->run_flags = (as->run_flags & AUDIT_HAS_TOOL) |
	    (ev->flags & AUDIT_HAS_SHA256);
	memcpy(as->run_sha256, ev->sha256, sizeof(as->run_sha256));
}

/* ev was written: later rejections like it are folded into its run. */
static void
audit_event_open_run(struct audit_event_session *as,
    const struct record_audit_event *ev)
{
	as->run_open = ev->reason.len < sizeof(as->run_reason) &&
	    ev->method.len < sizeof(as->run_method);
	if (!as->run_open)
		return;
	/* an absent text is a NULL pointer of length 0: memcpy may not see it */
	if (ev->reason.len > 0)
		memcpy(as->run_reason, ev->reason.ptr, ev->reason.len);
	as->run_reason[ev->reason.len] = '\0';
	if (ev->method.len > 0)
		memcpy(as->run_method, ev->method.ptr, ev->method.len);
	as->run_method[ev->method.len] = '\0';
	as->run_code = ev->code;
	as->run_flags = ev->flags & AUDIT_HAS_TOOL;
	as->run_tool = ev->tool_index;
	as->run_folded = 0;
}

/* Appends one record and charges a note's bytes to the session. */
static bool
audit_event_append(struct audit_event_session *as, struct audit_log *log,
    const char *kind, const cJSON *members, const struct audit_event_plan *plan)
{
	uint64_t before = audit_log_bytes(log);

	if (!audit_log_append(log, kind, members, plan->durable))
		return false;
	if (plan->note)
		as->note_bytes += audit_log_bytes(log) - before;
	return true;
}

bool
audit_event_flush(struct audit_event_session *as, struct audit_log *log,
    const struct policy *policy)
{
	const struct audit_event_plan plan = { .kind = "rejection",
	    .note = true };
	struct record_audit_event ev;
	cJSON *m;
	bool ok;

	if (as->run_folded == 0)
		return true;
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.flags = as->run_flags;
	ev.frame_no = as->run_frame;
	ev.reason.ptr = as->run_reason;
	ev.reason.len = strlen(as->run_reason);
	ev.code = as->run_code;
	ev.method.ptr = as->run_method;
	ev.method.len = strlen(as->run_method);
	ev.tool_index = as->run_tool;
	memcpy(ev.sha256, as->run_sha256, sizeof(ev.sha256));
	/* the run's shapes differ call to call: the count stands for them */
	m = audit_event_members(policy, RECORD_ROLE_FRONTEND, &ev);
	ok = m != NULL && json_add_uint64(m, "repeated", as->run_folded) &&
	    audit_event_append(as, log, plan.kind, m, &plan);
	cJSON_Delete(m);
	if (!ok)
		log_error("%" PRIu64 " folded rejections not written",
		    as->run_folded);
	as->run_folded = 0;
	return ok;
}

enum audit_event_fate
audit_event_write(struct audit_event_session *as, struct audit_log *log,
    const struct policy *policy, enum record_role role,
    const struct record_audit_event *ev, const struct audit_event_plan *plan)
{
	cJSON *m;
	bool ok;

	if (audit_event_repeats(as, ev)) {
		audit_event_fold(as, ev);
		return AUDIT_EVENT_FOLDED;
	}
	if (plan->note && as->note_bytes >= AUDIT_EVENT_NOTES_MAX) {
		as->dropped++;
		return AUDIT_EVENT_DROPPED;
	}
	/* the run it ends is written first, so the count precedes it */
	if (ev->kind == RECORD_AUDIT_REJECTION)
		(void)audit_event_flush(as, log, policy);
	if ((m = audit_event_members(policy, role, ev)) == NULL)
		return AUDIT_EVENT_FAILED;
	ok = (plan->journal == NULL ||
	    cJSON_AddStringToObject(m, "journal", plan->journal) != NULL) &&
	    (plan->approver_key == NULL || cJSON_AddNumberToObject(m,
	    plan->approver_key, plan->approver_uid) != NULL) &&
	    audit_event_append(as, log, plan->kind, m, plan);
	cJSON_Delete(m);
	if (!ok)
		return AUDIT_EVENT_FAILED;
	if (ev->kind == RECORD_AUDIT_REJECTION)
		audit_event_open_run(as, ev);
	return AUDIT_EVENT_WRITTEN;
}

bool
audit_event_notes_spent(const struct audit_event_session *as)
{
	return as->note_bytes >= AUDIT_EVENT_NOTES_MAX;
}
