#include "config.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_event.h"
#include "audit/audit_log.h"
#include "common/record.h"
#include "policy/policy.h"
#include "tests/unit/audit_fixture.h"

/*
 * A catalog of two tools on two targets: tool 0 "get_item" (read-only,
 * http, params id and card), tool 1 "run_job" (mutating, ssh, no param).
 */
struct fixture {
	struct policy policy;
	struct policy_target targets[2];
	struct policy_tool tools[2];
	struct policy_param params[2];
};

static void
fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->targets[0].name = (char *)"api";
	f->targets[1].name = (char *)"build-host";
	f->params[0].name = (char *)"id";
	f->params[1].name = (char *)"card \"no\"";
	f->tools[0].name = (char *)"get_item";
	f->tools[0].target_index = 0;
	f->tools[0].params = f->params;
	f->tools[0].param_count = 2;
	f->tools[1].name = (char *)"run_job";
	f->tools[1].target_index = 1;
	f->tools[1].mutating = true;
	f->tools[1].kind = TOOL_SSH;
	f->policy.targets = f->targets;
	f->policy.target_count = 2;
	f->policy.tools = f->tools;
	f->policy.tool_count = 2;
}

static struct record_text
text(const char *s)
{
	struct record_text t = { (char *)s, strlen(s) };

	return t;
}

/* The members as compact JSON, for exact comparison. */
static char *
members_json(const struct policy *p, enum record_role role,
    const struct record_audit_event *ev)
{
	cJSON *m = audit_event_members(p, role, ev);
	char *s;

	cr_assert_not_null(m);
	s = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	return s;
}

Test(audit_event, intent_names_tool_and_target_from_the_catalog)
{
	struct fixture f;
	struct record_text shapes[2] = { text("\"string(36)\""),
	    text("\"\xe2\x80\xa6" "1234\"") };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .call_id = UINT64_C(9007199254740993), .tool_index = 0,
	    .shapes = shapes, .shape_count = 2 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_str_eq(plan.kind, "intent");
	cr_assert(plan.acked);
	cr_assert_not(plan.durable, "a read-only tool's intent is group-synced");
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	/* 2^53 + 1 stays exact: a double would print ...992. */
	cr_assert_str_eq(s, "{\"from\":\"executor\",\"call\":9007199254740993,"
	    "\"tool\":\"get_item\",\"target\":\"api\",\"mutating\":false,"
	    "\"args\":{\"id\":\"string(36)\",\"card \\\"no\\\"\":"
	    "\"\xe2\x80\xa6" "1234\"}}");
	free(s);
}

Test(audit_event, mutating_intent_and_execution_are_durable_and_acked)
{
	struct fixture f;
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .call_id = 7, .tool_index = 1 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert(plan.acked && plan.durable);
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.outcome = RECORD_OUTCOME_UNKNOWN;
	ev.status = -1;
	ev.duration_us = 1234567;
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_str_eq(plan.kind, "execution");
	cr_assert(plan.acked && plan.durable);
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert_str_eq(s, "{\"from\":\"executor\",\"call\":7,"
	    "\"tool\":\"run_job\",\"target\":\"build-host\","
	    "\"outcome\":\"unknown\",\"exit_status\":-1,"
	    "\"duration_us\":1234567,\"args\":{}}");
	free(s);
}

Test(audit_event, read_only_execution_is_neither_acked_nor_synced)
{
	struct fixture f;
	struct record_audit_event ev = { .kind = RECORD_AUDIT_EXECUTION,
	    .call_id = 3, .tool_index = 0, .outcome = RECORD_OUTCOME_OK,
	    .status = 404 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_not(plan.acked);
	cr_assert_not(plan.durable);
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert(strstr(s, "\"http_status\":404") != NULL, "%s", s);
	cr_assert(strstr(s, "\"outcome\":\"ok\"") != NULL, "%s", s);
	cr_assert(strstr(s, "\"args\"") == NULL, "no shapes were sent: %s", s);
	free(s);
}

Test(audit_event, roles_speak_only_for_what_they_see)
{
	struct fixture f;
	struct record_audit_event ev = { .kind = RECORD_AUDIT_EXECUTION,
	    .tool_index = 1, .outcome = RECORD_OUTCOME_OK };
	struct audit_event_plan plan;

	fixture_init(&f);
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	ev.kind = RECORD_AUDIT_INTENT;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	cr_assert(plan.acked, "a refused intent is still answered (FAILED)");
	ev.kind = RECORD_AUDIT_REJECTION;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	ev.kind = RECORD_AUDIT_VIOLATION;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	ev.kind = RECORD_AUDIT_CANCELLATION;
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
}

Test(audit_event, a_tool_outside_the_catalog_or_a_shape_count_off_is_refused)
{
	struct fixture f;
	struct record_text shapes[1] = { text("\"string(1)\"") };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .tool_index = 2 };
	struct audit_event_plan plan;

	fixture_init(&f);
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	ev.tool_index = UINT32_MAX;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	ev.tool_index = 0;	/* two params, one shape */
	ev.shapes = shapes;
	ev.shape_count = 1;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	ev.shape_count = 0;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
}

/*
 * Only "asked" for a tool with confirm and a journal carries the call's
 * values, all of them, and waits for the journal's answer (acked, not
 * synced); the record written names no value of them.
 */
Test(audit_event, only_a_journaled_asked_confirmation_carries_values)
{
	struct fixture f;
	struct record_text shapes[2] = { text("\"string(3)\""),
	    text("\"string(9)\"") };
	uint8_t digests[2][HASH_SHA256_LEN] = { { 1 }, { 2 } };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_CONFIRMATION,
	    .call_id = 4, .tool_index = 0, .reason = text("asked"),
	    .shapes = shapes, .shape_count = 2, .digests = digests,
	    .digest_count = 2 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	f.tools[0].confirm = true;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan),
	    "values for a tool that keeps no journal");
	f.tools[0].idem_window_s = 60;
	f.tools[0].mutating = true;
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert(plan.journal_first && plan.acked);
	cr_assert_not(plan.durable, "it gates no action");
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert_str_eq(s, "{\"from\":\"executor\",\"call\":4,"
	    "\"tool\":\"get_item\",\"target\":\"api\","
	    "\"decision\":\"asked\"}");
	free(s);
	ev.digest_count = ev.shape_count = 1;	/* not every value */
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert(plan.acked, "answered FAILED, so the executor asks nobody");
	ev.digest_count = ev.shape_count = 0;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	ev.digest_count = ev.shape_count = 2;
	ev.reason = text("accepted");
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_not(plan.acked);
	ev.digest_count = 0;	/* a decision without values: as ever */
	ev.shape_count = 1;
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_not(plan.journal_first || plan.acked);
	f.tools[0].confirm = false;
	ev.reason = text("asked");
	ev.digest_count = ev.shape_count = 2;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan),
	    "values for a tool that asks nobody");
}

/* A shape is one JSON scalar: an object, two values or bare text would
 * let a child write what it likes into the record. */
Test(audit_event, a_shape_that_is_not_one_json_scalar_is_not_written)
{
	static const char *bad[] = {
		"{\"outcome\":\"ok\"}", "[1]", "\"a\" \"b\"", "$(id)",
		"\"unterminated", "", "null",
	};
	struct fixture f;
	struct record_text shapes[2];
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .tool_index = 0, .shapes = shapes, .shape_count = 2 };
	struct audit_event_plan plan;
	size_t i;
	cJSON *m;

	fixture_init(&f);
	shapes[0] = text("42");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		shapes[1] = text(bad[i]);
		cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
		m = audit_event_members(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
		cr_assert_null(m, "shape %s was accepted", bad[i]);
	}
	shapes[1] = text("true");
	m = audit_event_members(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert_not_null(m);
	cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(m, "args"), "id")));
	cJSON_Delete(m);
}

/* Only the hash of refused bytes, never a text the client chose. */
Test(audit_event, rejection_keeps_frame_code_reason_and_hash_only)
{
	struct fixture f;
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION,
	    .flags = AUDIT_HAS_SHA256, .frame_no = 12, .code = -32700,
	    .reason = { (char *)"parse-error", 11 } };
	char *s;

	fixture_init(&f);
	memset(ev.sha256, 0xab, sizeof(ev.sha256));
	s = members_json(&f.policy, RECORD_ROLE_FRONTEND, &ev);
	cr_assert_str_eq(s, "{\"from\":\"frontend\",\"frame\":12,"
	    "\"code\":-32700,\"reason\":\"parse-error\",\"sha256\":\""
	    "abababababababababababababababababababababababababababababababab"
	    "\"}");
	free(s);
}

/* A fresh log in a private directory; *path is kept for reading back. */
static struct audit_log *
open_log(char *path, size_t size)
{
	char dir[128];
	struct audit_log *log;

	fixture_tmpdir(dir, sizeof(dir));
	(void)snprintf(path, size, "%s/audit.jsonl", dir);
	log = audit_log_open(path, NULL, 0, "fold-test");
	cr_assert_not_null(log);
	return log;
}

/* The records of the file, parsed, and the file and its directory
 * removed; the caller deletes the array. */
static cJSON *
read_records(const char *path)
{
	cJSON *all = cJSON_CreateArray(), *rec;
	size_t len;
	char *data = fixture_read_file(path, &len), *line, *save = NULL;
	char dir[192];

	(void)snprintf(dir, sizeof(dir), "%s", path);

	for (line = strtok_r(data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		cr_assert_not_null(rec = cJSON_Parse(line));
		cJSON_AddItemToArray(all, rec);
	}
	free(data);
	cr_assert_eq(unlink(path), 0);
	*strrchr(dir, '/') = '\0';
	cr_assert_eq(rmdir(dir), 0);
	return all;
}

static double
number(const cJSON *rec, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *
string(const cJSON *rec, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* A rejection of frame n: reason, code and a hash that differs by frame. */
static enum audit_event_fate
reject(struct audit_event_session *as, struct audit_log *log,
    const struct policy *p, uint64_t n, const char *reason, int32_t code)
{
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION,
	    .flags = AUDIT_HAS_SHA256, .frame_no = n, .code = code,
	    .reason = { (char *)reason, strlen(reason) } };
	struct audit_event_plan plan;

	memset(ev.sha256, (int)(n & 0xff), sizeof(ev.sha256));
	cr_assert(audit_event_plan(p, RECORD_ROLE_FRONTEND, &ev, &plan));
	return audit_event_write(as, log, p, RECORD_ROLE_FRONTEND, &ev, &plan);
}

Test(audit_event, identical_rejections_fold_into_one_count)
{
	struct audit_event_session as;
	struct audit_log *log;
	struct fixture f;
	char path[192];
	cJSON *recs, *r;
	uint64_t i;

	fixture_init(&f);
	memset(&as, 0, sizeof(as));
	log = open_log(path, sizeof(path));
	cr_assert_eq(reject(&as, log, &f.policy, 1, "invalid-arguments", 0),
	    AUDIT_EVENT_WRITTEN);
	for (i = 2; i <= 1000; i++)
		cr_assert_eq(reject(&as, log, &f.policy, i,
		    "invalid-arguments", 0), AUDIT_EVENT_FOLDED);
	/* same reason, another code: not the same rejection */
	cr_assert_eq(reject(&as, log, &f.policy, 1001, "invalid-arguments",
	    -32602), AUDIT_EVENT_WRITTEN);
	cr_assert_eq(reject(&as, log, &f.policy, 1002, "invalid-arguments",
	    -32602), AUDIT_EVENT_FOLDED);
	cr_assert(audit_event_flush(&as, log, &f.policy));
	cr_assert(audit_event_flush(&as, log, &f.policy), "twice: nothing more");
	cr_assert(audit_log_close(log));
	recs = read_records(path);
	cr_assert_eq(cJSON_GetArraySize(recs), 4);
	r = cJSON_GetArrayItem(recs, 0);
	cr_assert_eq(number(r, "frame"), 1);
	cr_assert_eq(number(r, "repeated"), -1, "the first is as it was");
	r = cJSON_GetArrayItem(recs, 1);
	cr_assert_str_eq(string(r, "reason"), "invalid-arguments");
	cr_assert_eq(number(r, "repeated"), 999);
	cr_assert_eq(number(r, "frame"), 1000, "the last of the run");
	cr_assert_str_eq(string(r, "sha256"), "e8e8e8e8e8e8e8e8e8e8e8e8e8e8e8"
	    "e8e8e8e8e8e8e8e8e8e8e8e8e8e8e8e8e8");
	cr_assert_eq(number(r, "code"), 0);
	r = cJSON_GetArrayItem(recs, 3);
	cr_assert_eq(number(r, "repeated"), 1);
	cr_assert_eq(number(r, "code"), -32602);
	cr_assert_eq(as.dropped, 0);
	cJSON_Delete(recs);
}

Test(audit_event, notes_past_the_budget_are_dropped_and_calls_still_written)
{
	struct record_text shapes[2] = { { (char *)"\"string(3)\"", 11 },
	    { (char *)"\"\\u2026\"", 8 } };
	struct record_audit_event intent = { .kind = RECORD_AUDIT_INTENT,
	    .call_id = 7, .tool_index = 0, .shapes = shapes,
	    .shape_count = 2 };
	struct audit_event_session as;
	struct audit_event_plan plan;
	struct audit_log *log;
	struct fixture f;
	char path[192];
	uint64_t n = 0;
	cJSON *recs, *last;

	fixture_init(&f);
	memset(&as, 0, sizeof(as));
	log = open_log(path, sizeof(path));
	/* two reasons in turn: nothing folds; some 300 bytes a record */
	while (!audit_event_notes_spent(&as)) {
		cr_assert_lt(n, AUDIT_EVENT_NOTES_MAX / 64, "never spent");
		cr_assert_eq(reject(&as, log, &f.policy, n, n % 2 ?
		    "scope-denied" : "parse-error", n % 2 ? 0 : -32700),
		    AUDIT_EVENT_WRITTEN);
		n++;
	}
	cr_assert_geq(audit_log_bytes(log), AUDIT_EVENT_NOTES_MAX);
	cr_assert_lt(audit_log_bytes(log), AUDIT_EVENT_NOTES_MAX + 1024);
	cr_assert_eq(reject(&as, log, &f.policy, n, n % 2 ? "scope-denied" :
	    "parse-error", n % 2 ? 0 : -32700), AUDIT_EVENT_DROPPED);
	cr_assert_eq(as.dropped, 1);
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &intent, &plan));
	cr_assert_not(plan.note);
	cr_assert_eq(audit_event_write(&as, log, &f.policy, RECORD_ROLE_EXECUTOR,
	    &intent, &plan), AUDIT_EVENT_WRITTEN, "an intent is never dropped");
	cr_assert(audit_log_close(log));
	recs = read_records(path);
	cr_assert_eq(cJSON_GetArraySize(recs), (int)n + 1);
	last = cJSON_GetArrayItem(recs, (int)n);
	cr_assert_str_eq(string(last, "kind"), "intent");
	cr_assert_eq(number(last, "call"), 7);
	cJSON_Delete(recs);
}

Test(audit_event, rejection_names_method_tool_and_shapes_never_more)
{
	struct fixture f;
	struct record_text shapes[4] = { text("\"string(36)\""),
	    text("\"absent\""), text("\"integer\""), text("\"object\"") };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION,
	    .flags = AUDIT_HAS_TOOL, .frame_no = 4, .code = 0,
	    .reason = text("scope-denied"), .method = text("tools/call"),
	    .tool_index = 0, .shapes = shapes, .shape_count = 4 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	s = members_json(&f.policy, RECORD_ROLE_FRONTEND, &ev);
	cr_assert_str_eq(s, "{\"from\":\"frontend\",\"frame\":4,\"code\":0,"
	    "\"method\":\"tools/call\",\"tool\":\"get_item\",\"target\":\"api\","
	    "\"args\":{\"id\":\"string(36)\",\"card \\\"no\\\"\":\"absent\"},"
	    "\"extra_args\":[\"integer\",\"object\"],"
	    "\"reason\":\"scope-denied\"}");
	cJSON_free(s);

	/* an unknown tool: no tool, every shape unnamed */
	ev.flags = 0;
	ev.shape_count = 1;
	ev.reason = text("unknown-tool");
	s = members_json(&f.policy, RECORD_ROLE_FRONTEND, &ev);
	cr_assert_str_eq(s, "{\"from\":\"frontend\",\"frame\":4,\"code\":0,"
	    "\"method\":\"tools/call\",\"extra_args\":[\"string(36)\"],"
	    "\"reason\":\"unknown-tool\"}");
	cJSON_free(s);

	/* a tool index past the catalog is refused, not rendered */
	ev.flags = AUDIT_HAS_TOOL;
	ev.tool_index = 2;
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	/* a shape that is not a scalar is refused: it could pose as more */
	ev.tool_index = 1;
	shapes[0] = text("{\"card\":\"4111111111111111\"}");
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	cr_assert_null(audit_event_members(&f.policy, RECORD_ROLE_FRONTEND, &ev));
}

Test(audit_event, client_texts_are_cut_and_made_printable)
{
	struct fixture f;
	char name[200];
	struct record_text texts[3] = { { name, 0 }, text("1.0\x1b[31m\xc3\xa9"),
	    text("") };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_CLIENT,
	    .method = text("initialize"), .shapes = texts,
	    .shape_count = RECORD_AUDIT_CLIENT_TEXTS };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	memset(name, 'n', sizeof(name));
	texts[0].len = sizeof(name);
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan),
	    "only the frontend reads initialize");
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	cr_assert(plan.note, "a client record spends the note budget");
	s = members_json(&f.policy, RECORD_ROLE_FRONTEND, &ev);
	cr_assert_str_eq(s, "{\"from\":\"frontend\",\"client_info\":{\"name\":"
	    "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	    "...\",\"version\":\"1.0?[31m??\"},\"protocol_version\":\"\"}");
	cJSON_free(s);
}

Test(audit_event, rejections_of_another_tool_are_not_folded)
{
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION,
	    .flags = AUDIT_HAS_TOOL, .reason = text("scope-denied"),
	    .method = text("tools/call") };
	struct audit_event_session as;
	struct audit_event_plan plan;
	struct audit_log *log;
	struct fixture f;
	char path[192];
	cJSON *recs;

	fixture_init(&f);
	memset(&as, 0, sizeof(as));
	log = open_log(path, sizeof(path));
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan));
	cr_assert_eq(audit_event_write(&as, log, &f.policy, RECORD_ROLE_FRONTEND, &ev,
	    &plan), AUDIT_EVENT_WRITTEN);
	cr_assert_eq(audit_event_write(&as, log, &f.policy, RECORD_ROLE_FRONTEND, &ev,
	    &plan), AUDIT_EVENT_FOLDED);
	ev.tool_index = 1;
	cr_assert_eq(audit_event_write(&as, log, &f.policy, RECORD_ROLE_FRONTEND, &ev,
	    &plan), AUDIT_EVENT_WRITTEN);
	ev.method = text("tools/list");
	cr_assert_eq(audit_event_write(&as, log, &f.policy, RECORD_ROLE_FRONTEND, &ev,
	    &plan), AUDIT_EVENT_WRITTEN);
	cr_assert(audit_log_close(log));
	recs = read_records(path);
	/* get_item, its run of 1 (named get_item), run_job, tools/list */
	cr_assert_eq(cJSON_GetArraySize(recs), 4);
	cr_assert_str_eq(string(cJSON_GetArrayItem(recs, 1), "tool"),
	    "get_item");
	cr_assert_eq(number(cJSON_GetArrayItem(recs, 1), "repeated"), 1);
	cr_assert_str_eq(string(cJSON_GetArrayItem(recs, 2), "tool"),
	    "run_job");
	cJSON_Delete(recs);
}

/* The executor's confirmation: its decision, and the retyped value's shape. */
Test(audit_event, confirmation_names_decision_and_retyped_shape)
{
	struct fixture f;
	struct record_text shape = text("\"string(3)\"");
	struct record_audit_event ev = { .kind = RECORD_AUDIT_CONFIRMATION,
	    .call_id = 12, .tool_index = 1, .reason = text("wrong-value"),
	    .shapes = &shape, .shape_count = 1 };
	struct audit_event_plan plan;
	char *s;

	fixture_init(&f);
	cr_assert_not(audit_event_plan(&f.policy, RECORD_ROLE_FRONTEND, &ev, &plan),
	    "only the executor decides a confirmation");
	cr_assert(audit_event_plan(&f.policy, RECORD_ROLE_EXECUTOR, &ev, &plan));
	cr_assert_not(plan.acked, "nothing waits for a confirmation's ack");
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert_str_eq(s, "{\"from\":\"executor\",\"call\":12,\"tool\":"
	    "\"run_job\",\"target\":\"build-host\",\"decision\":\"wrong-value\","
	    "\"retyped\":\"string(3)\"}");
	cJSON_free(s);
	ev.shape_count = 0;
	ev.reason = text("asked");
	s = members_json(&f.policy, RECORD_ROLE_EXECUTOR, &ev);
	cr_assert_str_eq(s, "{\"from\":\"executor\",\"call\":12,\"tool\":"
	    "\"run_job\",\"target\":\"build-host\",\"decision\":\"asked\"}");
	cJSON_free(s);
	ev.reason = text("");
	cr_assert_null(audit_event_members(&f.policy, RECORD_ROLE_EXECUTOR, &ev),
	    "a confirmation always names its decision");
}
