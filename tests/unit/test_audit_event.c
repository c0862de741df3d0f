#include "config.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/audit_event.h"
#include "common/record.h"
#include "policy/policy.h"

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
members_json(const struct policy *p, const char *role,
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
	cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
	cr_assert_str_eq(plan.kind, "intent");
	cr_assert(plan.acked);
	cr_assert_not(plan.durable, "a read-only tool's intent is group-synced");
	s = members_json(&f.policy, "executor", &ev);
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
	cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
	cr_assert(plan.acked && plan.durable);
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.outcome = RECORD_OUTCOME_UNKNOWN;
	ev.status = -1;
	ev.duration_us = 1234567;
	cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
	cr_assert_str_eq(plan.kind, "execution");
	cr_assert(plan.acked && plan.durable);
	s = members_json(&f.policy, "executor", &ev);
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
	cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
	cr_assert_not(plan.acked);
	cr_assert_not(plan.durable);
	s = members_json(&f.policy, "executor", &ev);
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
	cr_assert_not(audit_event_plan(&f.policy, "frontend", &ev, &plan));
	ev.kind = RECORD_AUDIT_INTENT;
	cr_assert_not(audit_event_plan(&f.policy, "frontend", &ev, &plan));
	cr_assert(plan.acked, "a refused intent is still answered (FAILED)");
	ev.kind = RECORD_AUDIT_REJECTION;
	cr_assert_not(audit_event_plan(&f.policy, "executor", &ev, &plan));
	cr_assert(audit_event_plan(&f.policy, "frontend", &ev, &plan));
	ev.kind = RECORD_AUDIT_VIOLATION;
	cr_assert_not(audit_event_plan(&f.policy, "frontend", &ev, &plan));
	ev.kind = RECORD_AUDIT_CANCELLATION;
	cr_assert(audit_event_plan(&f.policy, "frontend", &ev, &plan));
	cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
}

Test(audit_event, a_tool_outside_the_catalog_or_a_shape_count_off_is_refused)
{
	struct fixture f;
	struct record_text shapes[1] = { text("\"string(1)\"") };
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .tool_index = 2 };
	struct audit_event_plan plan;

	fixture_init(&f);
	cr_assert_not(audit_event_plan(&f.policy, "executor", &ev, &plan));
	ev.tool_index = UINT32_MAX;
	cr_assert_not(audit_event_plan(&f.policy, "executor", &ev, &plan));
	ev.tool_index = 0;	/* two params, one shape */
	ev.shapes = shapes;
	ev.shape_count = 1;
	cr_assert_not(audit_event_plan(&f.policy, "executor", &ev, &plan));
	ev.shape_count = 0;
	cr_assert_not(audit_event_plan(&f.policy, "executor", &ev, &plan));
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
		cr_assert(audit_event_plan(&f.policy, "executor", &ev, &plan));
		m = audit_event_members(&f.policy, "executor", &ev);
		cr_assert_null(m, "shape %s was accepted", bad[i]);
	}
	shapes[1] = text("true");
	m = audit_event_members(&f.policy, "executor", &ev);
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
	s = members_json(&f.policy, "frontend", &ev);
	cr_assert_str_eq(s, "{\"from\":\"frontend\",\"frame\":12,"
	    "\"code\":-32700,\"reason\":\"parse-error\",\"sha256\":\""
	    "abababababababababababababababababababababababababababababababab"
	    "\"}");
	free(s);
}
