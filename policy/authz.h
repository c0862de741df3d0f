/*
 * Authorization: a profile may call a tool when the tool's scope is one of
 * the profile's scopes.  Exact string match; "scopes": [] grants nothing;
 * there is no wildcard.  The frontend asks before building a record, the
 * executor asks again for each record, and the catalog shows a profile
 * only the tools it may call.
 */
#ifndef SP_POLICY_AUTHZ_H
#define SP_POLICY_AUTHZ_H

#include <stdbool.h>

#include "policy/policy.h"

/*
 * True when profile grants tool's scope.  Otherwise false, and when
 * missing_scope is not NULL it points at the scope the profile lacks
 * (borrowed from the policy tree).  A NULL profile (the session matched
 * none) grants nothing: false, and missing_scope is the tool's scope.
 */
bool policy_authorize(const struct policy_profile *profile,
    const struct policy_tool *tool, const char **missing_scope);

/* The profile named name, or NULL (no default is guessed). */
const struct policy_profile *policy_profile_by_name(const struct policy *policy,
    const char *name);

/* The tool named name and its catalog index, or NULL. */
const struct policy_tool *policy_tool_by_name(const struct policy *policy,
    const char *name, size_t *index);

#endif
