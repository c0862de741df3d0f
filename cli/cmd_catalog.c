/*
 * sp catalog [--config FILE] [--profile NAME]: print on stdout the MCP
 * tools/list result the profile would see (one line of compact JSON), then
 * the catalog fingerprint to pin as "catalog_sha256" (over the whole
 * policy, not this profile) and the result's size in characters.  This is
 * the one sp command that writes stdout: its output is for an operator.
 * Without --profile: the profile "default", or the only profile there is.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "common/log.h"
#include "policy/authz.h"
#include "policy/catalog.h"
#include "policy/load.h"
#include "policy/source.h"

static struct policy *
catalog_load(const char *path)
{
	struct policy_diags diags = { 0 };
	struct policy *policy;
	char *bytes, why[128];
	size_t len, i;

	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "%s: cannot read the policy: %s\n", path, why);
		return NULL;
	}
	policy = policy_load(path, bytes, len, &diags);
	for (i = 0; i < diags.count; i++)
		fprintf(stderr, "%s\n", diags.items[i].text);
	if (policy == NULL)
		fprintf(stderr, "%s: not a valid policy (see sp check)\n", path);
	policy_diags_free(&diags);
	free(bytes);
	return policy;
}

static void
catalog_list_profiles(const struct policy *policy)
{
	size_t i;

	fprintf(stderr, "profiles in this policy:");
	for (i = 0; i < policy->profile_count; i++)
		fprintf(stderr, " %s", policy->profiles[i].name);
	fprintf(stderr, "%s\n", policy->profile_count ? "" : " none");
}

static const struct policy_profile *
catalog_pick_profile(const struct policy *policy, const char *name)
{
	const struct policy_profile *p;

	if (name != NULL && (p = policy_profile_by_name(policy, name)) != NULL)
		return p;
	if (name == NULL &&
	    (p = policy_profile_by_name(policy, "default")) != NULL)
		return p;
	if (name == NULL && policy->profile_count == 1)
		return &policy->profiles[0];
	if (name != NULL)
		fprintf(stderr, "sp catalog: no profile named \"%s\"; ", name);
	else
		fprintf(stderr, "sp catalog: no \"default\" profile; name one "
		    "with --profile; ");
	catalog_list_profiles(policy);
	return NULL;
}

/* Code points, as an MCP client's string length would count them. */
static size_t
catalog_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static size_t
catalog_visible(const struct policy *policy, const struct policy_profile *p)
{
	size_t i, n = 0;

	for (i = 0; i < policy->tool_count; i++)
		n += policy_authorize(p, &policy->tools[i], NULL);
	return n;
}

static int
catalog_print(const struct policy *policy, const struct policy_profile *p)
{
	uint8_t fp[HASH_SHA256_LEN];
	char hex[HASH_SHA256_HEX_LEN + 1], why[256];
	size_t len;
	char *json;

	if ((json = policy_catalog_render(policy, p, &len)) == NULL ||
	    !policy_catalog_fingerprint(policy, fp)) {
		free(json);
		return SP_EXIT_INTERNAL;
	}
	hash_hex(fp, sizeof(fp), hex);
	printf("%s\n", json);
	printf("catalog_sha256: %s\n", hex);
	printf("profile %s: %zu of %zu tools, %zu characters\n", p->name,
	    catalog_visible(policy, p), policy->tool_count,
	    catalog_chars(json, len));
	free(json);
	if (!policy_catalog_verify_pin(policy, why, sizeof(why)))
		fprintf(stderr, "sp catalog: warning: %s; sp mcp will refuse "
		    "to start\n", why);
	return fflush(stdout) == 0 ? SP_EXIT_OK : SP_EXIT_INTERNAL;
}

int
cmd_catalog(int argc, char **argv)
{
	const struct policy_profile *profile;
	struct cmd_args a;
	struct policy *policy;
	int status;

	if (!cmd_args_parse(argc, argv, CMD_ARG_PROFILE, &a)) {
		fprintf(stderr, "usage: sp catalog [--config FILE] "
		    "[--profile NAME]\n");
		return SP_EXIT_USAGE;
	}
	if ((policy = catalog_load(policy_config_path(a.config))) == NULL)
		return SP_EXIT_CONFIG;
	if ((profile = catalog_pick_profile(policy, a.profile)) == NULL)
		status = SP_EXIT_USAGE;
	else
		status = catalog_print(policy, profile);
	policy_free(policy);
	return status;
}
