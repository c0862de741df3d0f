#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "policy/authz.h"
#include "tests/unit/policy_fixture.h"

static const struct policy_profile *
profile(int i)
{
	return &fixture_policy()->profiles[i];
}

Test(authz, a_granted_scope_authorizes)
{
	const char *missing = "untouched";

	cr_assert(policy_authorize(profile(FIXTURE_READER), fixture_tool(FIXTURE_GET_ITEM),
	    &missing));
	cr_assert_str_eq(missing, "untouched");
	cr_assert(policy_authorize(profile(FIXTURE_WRITER),
	    fixture_tool(FIXTURE_CREATE_ITEM), NULL));
	cr_assert(policy_authorize(profile(FIXTURE_OPS), fixture_tool(FIXTURE_RUN_ECHO),
	    NULL));
}

Test(authz, the_answer_names_the_missing_scope)
{
	const char *missing = NULL;

	cr_assert_not(policy_authorize(profile(FIXTURE_READER),
	    fixture_tool(FIXTURE_CREATE_ITEM), &missing));
	cr_assert_str_eq(missing, "write");
	cr_assert_not(policy_authorize(profile(FIXTURE_WRITER),
	    fixture_tool(FIXTURE_RUN_ECHO), &missing));
	cr_assert_str_eq(missing, "ops");
	cr_assert_not(policy_authorize(profile(FIXTURE_OPS),
	    fixture_tool(FIXTURE_GET_ITEM), NULL));
}

Test(authz, empty_scopes_grant_nothing)
{
	const char *missing = NULL;
	size_t i;

	for (i = 0; i < fixture_policy()->tool_count; i++) {
		cr_assert_not(policy_authorize(profile(FIXTURE_NOBODY), fixture_tool(i),
		    &missing));
		cr_assert_str_eq(missing, fixture_tool(i)->scope);
	}
}

/* No prefix, case or wildcard games. */
Test(authz, scopes_match_exactly)
{
	char *near[] = { "rea", "read ", "READ", "*", "read*", "" };
	struct policy_profile p = { .name = "near", .scopes = near,
	    .scope_count = sizeof(near) / sizeof(near[0]) };

	cr_assert_not(policy_authorize(&p, fixture_tool(FIXTURE_GET_ITEM), NULL));
}

Test(authz, lookups_by_name)
{
	size_t idx = 99;

	cr_assert_eq(policy_profile_by_name(fixture_policy(), "ops"),
	    profile(FIXTURE_OPS));
	cr_assert_null(policy_profile_by_name(fixture_policy(), "Ops"));
	cr_assert_eq(policy_tool_by_name(fixture_policy(), "run_echo", &idx),
	    fixture_tool(FIXTURE_RUN_ECHO));
	cr_assert_eq(idx, FIXTURE_RUN_ECHO);
	cr_assert_null(policy_tool_by_name(fixture_policy(), "run_echo ", &idx));
}

/* A session that matched no profile has NULL: every tool is refused. */
Test(authz, no_profile_authorizes_nothing)
{
	const char *missing;
	size_t i;

	for (i = 0; i < fixture_policy()->tool_count; i++) {
		missing = NULL;
		cr_assert_not(policy_authorize(NULL, fixture_tool(i), &missing));
		cr_assert_str_eq(missing, fixture_tool(i)->scope);
		cr_assert_not(policy_authorize(NULL, fixture_tool(i), NULL));
	}
}
