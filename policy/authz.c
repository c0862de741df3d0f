#include "config.h"

#include <string.h>

#include "policy/authz.h"

bool
policy_authorize(const struct policy_profile *profile,
    const struct policy_tool *tool, const char **missing_scope)
{
	size_t i;

	/* No profile (no match, no tools): every caller gets a plain no. */
	for (i = 0; profile != NULL && i < profile->scope_count; i++)
		if (strcmp(profile->scopes[i], tool->scope) == 0)
			return true;
	if (missing_scope != NULL)
		*missing_scope = tool->scope;
	return false;
}

const struct policy_profile *
policy_profile_by_name(const struct policy *policy, const char *name)
{
	size_t i;

	for (i = 0; i < policy->profile_count; i++)
		if (strcmp(policy->profiles[i].name, name) == 0)
			return &policy->profiles[i];
	return NULL;
}

const struct policy_tool *
policy_tool_by_name(const struct policy *policy, const char *name,
    size_t *index)
{
	size_t i;

	for (i = 0; i < policy->tool_count; i++) {
		if (strcmp(policy->tools[i].name, name) == 0) {
			if (index != NULL)
				*index = i;
			return &policy->tools[i];
		}
	}
	return NULL;
}
