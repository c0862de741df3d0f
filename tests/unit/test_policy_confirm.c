/*
 * A tool's "confirm" (policy/load_confirm.c): both forms load into what
 * the executor and frontend act on; every refusal has its message.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdint.h>

#include "tests/unit/policy_load_expect.h"

#define ITEM "\"http\": {\"method\": \"POST\", \"path\": \"/items/{name}\", " \
	"\"query\": {\"qty\": \"{qty}\"}},\n\"params\": {\"name\": {\"type\": " \
	"\"string\"}, \"qty\": {\"type\": \"integer\"}, \"note\": {\"type\": " \
	"\"string\", \"required\": false}},\n"
#define NOTE_USED "\"http\": {\"method\": \"POST\", \"path\": " \
	"\"/items/{name}\", \"query\": {\"qty\": \"{qty}\", \"n\": \"{note}\"}},\n" \
	"\"params\": {\"name\": {\"type\": \"string\"}, \"qty\": {\"type\": " \
	"\"integer\"}, \"note\": {\"type\": \"string\", \"required\": false}},\n"
#define CONFIRM(c) TOOL(NOTE_USED "\"mutating\": true, \"confirm\": " c)

Test(load_confirm, true_asks_with_the_defaults)
{
	struct policy *p = load_ok(CONFIRM("true"));

	cr_assert(p->tools[0].confirm);
	cr_assert_not(p->tools[0].confirm_spec.has_message);
	cr_assert_eq(p->tools[0].confirm_spec.retype, POLICY_CONFIRM_NO_RETYPE);
	cr_assert_eq(p->tools[0].confirm_spec.timeout_s, 120);
	policy_free(p);
	p = load_ok(CONFIRM("false"));
	cr_assert_not(p->tools[0].confirm);
	policy_free(p);
}

Test(load_confirm, object_form_loads_message_retype_timeout)
{
	struct policy *p = load_ok(CONFIRM("{\"message\": \"Create {qty} x "
	    "{name} {{now}}\", \"retype\": \"qty\", \"via\": \"client\", "
	    "\"timeout_s\": 7}"));
	const struct policy_confirm *c = &p->tools[0].confirm_spec;

	cr_assert(p->tools[0].confirm);
	cr_assert(c->has_message);
	cr_assert_eq(c->message.part_count, 5);
	cr_assert(c->message.parts[1].is_param);
	cr_assert_eq(c->message.parts[1].param_index, 1);
	cr_assert_str_eq(c->message.parts[4].literal, " {now}");
	cr_assert_eq(c->retype, 1);
	cr_assert_eq(c->timeout_s, 7);
	policy_free(p);
}

Test(load_confirm, message_placeholders_must_name_params)
{
	expect_only(CONFIRM("{\"message\": \"Create {qtty}\"}"),
	    "\"Create {qtty}\"", "tools[0].confirm.message: placeholder "
	    "{qtty} names no param of this tool");
	expect_only(CONFIRM("{\"message\": \"Create {qty\"}"),
	    "\"Create {qty\"", "tools[0].confirm.message: unclosed '{' "
	    "(write '{{' for a literal brace)");
	expect_only(CONFIRM("{\"message\": \"\"}"), "\"\"}",
	    "tools[0].confirm.message: must be a non-empty string");
}

/* A param named only in the message is still unused by the action. */
Test(load_confirm, message_does_not_count_as_a_use)
{
	expect_among(TOOL(ITEM "\"confirm\": {\"message\": \"{note}\"}"),
	    "\"note\": {", "tools[0].params: param \"note\" is used by no "
	    "placeholder");
}

/* An optional value left out shows as nothing in the question. */
Test(load_confirm, message_may_name_an_optional_param)
{
	struct policy *p = load_ok(CONFIRM("{\"message\": \"Create {qty}, "
	    "note: {note}\"}"));

	cr_assert(p->tools[0].confirm_spec.has_message);
	policy_free(p);
}

Test(load_confirm, retype_names_a_required_param)
{
	expect_only(CONFIRM("{\"retype\": \"qtty\"}"), "\"qtty\"",
	    "tools[0].confirm.retype: \"qtty\" names no param of this tool");
	expect_only(CONFIRM("{\"retype\": \"note\"}"), "\"note\"}",
	    "tools[0].confirm.retype: param \"note\" is optional; a human can "
	    "only retype a value the call always has");
	expect_only(CONFIRM("{\"retype\": 1}"), "1}",
	    "tools[0].confirm.retype: must be the name of a param");
}

/* via operator needs state_dir (the approval sockets live there). */
#define OPERATOR(c) HEAD "\"state_dir\": \"/var/lib/sallyport\",\n" T_HTTP \
	TOOL_HEAD NOTE_USED "\"mutating\": true, \"confirm\": " c "}]}"

Test(load_confirm, via_operator_loads_approvers_and_others_only)
{
	struct policy *p = load_ok(OPERATOR("{\"via\": \"operator\", "
	    "\"approvers\": {\"uid\": [1001, 0], \"gid\": [2001]}, "
	    "\"others_only\": true, \"retype\": \"qty\", \"timeout_s\": 300}"));
	const struct policy_confirm *c = &p->tools[0].confirm_spec;

	cr_assert(c->via_operator);
	cr_assert(c->others_only);
	cr_assert_eq(c->approver_uid_count, 2);
	cr_assert_eq(c->approver_uids[0], 1001);
	cr_assert_eq(c->approver_uids[1], 0);
	cr_assert_eq(c->approver_gid_count, 1);
	cr_assert_eq(c->approver_gids[0], 2001);
	cr_assert_eq(c->timeout_s, 300);
	policy_free(p);
	p = load_ok(OPERATOR("{\"via\": \"operator\", \"approvers\": "
	    "{\"gid\": [2001]}}"));
	cr_assert_not(p->tools[0].confirm_spec.others_only);
	policy_free(p);
}

Test(load_confirm, via_operator_needs_approvers_and_state_dir)
{
	expect_only(OPERATOR("{\"via\": \"operator\"}"), "{\"via\"",
	    "tools[0].confirm: via \"operator\" needs approvers: { \"uid\": "
	    "[...], \"gid\": [...] }, who may run sp approve for this tool");
	expect_only(OPERATOR("{\"via\": \"operator\", \"approvers\": {}}"),
	    "{}}", "tools[0].confirm.approvers: names nobody: at least one "
	    "uid or gid");
	expect_only(OPERATOR("{\"via\": \"operator\", \"approvers\": "
	    "{\"uid\": [], \"gid\": []}}"), "{\"uid\": []",
	    "tools[0].confirm.approvers: names nobody: at least one uid or gid");
	expect_only(CONFIRM("{\"via\": \"operator\", \"approvers\": "
	    "{\"gid\": [2001]}}"), "\"operator\"",
	    "tools[0].confirm.via: \"operator\" needs a state_dir: the "
	    "approval sockets are made in state_dir/approvals/");
	expect_among(OPERATOR("{\"via\": \"operator\", \"approvers\": "
	    "{\"uid\": [-1]}}"), "-1", "tools[0].confirm.approvers.uid[0]: "
	    "must be between 0 and 4294967294");
	expect_among(OPERATOR("{\"via\": \"operator\", \"approvers\": "
	    "{\"user\": [1]}}"), "\"user\"",
	    "tools[0].confirm.approvers: unknown key \"user\"");
}

Test(load_confirm, approvers_and_others_only_are_for_operator)
{
	expect_only(OPERATOR("{\"approvers\": {\"gid\": [2001]}}"),
	    "{\"gid\"", "tools[0].confirm.approvers: approvers are for "
	    "via \"operator\"");
	expect_only(OPERATOR("{\"others_only\": true}"), "true}",
	    "tools[0].confirm.others_only: others_only is for via "
	    "\"operator\"");
	expect_only(CONFIRM("{\"via\": \"phone\"}"), "\"phone\"",
	    "tools[0].confirm.via: must be \"client\" or \"operator\"");
}

Test(load_confirm, timeout_and_keys_and_form)
{
	expect_only(CONFIRM("{\"timeout_s\": 601}"), "601",
	    "tools[0].confirm.timeout_s: must be between 1 and 600");
	expect_only(CONFIRM("{\"timeout_s\": 0}"), "0}",
	    "tools[0].confirm.timeout_s: must be between 1 and 600");
	expect_only(CONFIRM("{\"retipe\": \"qty\"}"), "\"retipe\"",
	    "tools[0].confirm: unknown key \"retipe\"; "
	    "did you mean \"retype\"?");
	expect_only(CONFIRM("\"yes\""), "\"yes\"",
	    "tools[0].confirm: must be true, false or an object with message, "
	    "retype, via, approvers, others_only, timeout_s");
}
