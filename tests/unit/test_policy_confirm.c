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

Test(load_confirm, via_operator_is_refused_as_not_built)
{
	expect_only(CONFIRM("{\"via\": \"operator\"}"), "\"operator\"",
	    "tools[0].confirm.via: \"operator\" (an approval by another "
	    "person through sp approve) is not built in this version; use "
	    "\"client\"");
	expect_only(CONFIRM("{\"via\": \"phone\"}"), "\"phone\"",
	    "tools[0].confirm.via: must be \"client\"");
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
	    "retype, via, timeout_s");
}
