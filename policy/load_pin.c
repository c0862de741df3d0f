/*
 * policy_check_catalog_pin(): the pin's comparison, after loading.
 */
#include "config.h"

#include <stdio.h>

#include "policy/catalog.h"
#include "policy/load.h"

bool
policy_check_catalog_pin(const struct policy *policy,
    const char *display_name, struct policy_diags *diags)
{
	char why[256];

	if (policy_catalog_verify_pin(policy, why, sizeof(why)))
		return true;
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name,
	    policy->catalog_pin_line, policy->catalog_pin_col, why);
	return false;
}
