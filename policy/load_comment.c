/*
 * "comment" members (sp-policy.5, COMMENTS): JSON has no comments, so a
 * policy annotates any object of the loader's with a "comment" string.
 * They are taken out of the tree before the sections are read, so no
 * table of keys names them and nothing derived from the policy (the
 * catalog fingerprint, sp check --dump) holds them.
 */
#include "config.h"

#include <string.h>

#include "policy/load_ctx.h"

/*
 * Objects whose members are names the policy chooses: a non-string
 * "comment" there is an entry named "comment" and is left to its section.
 */
static bool
names_entries(const cJSON *obj)
{
	static const char *const maps[] = { "credentials", "targets",
	    "profiles", "params", "max_distinct", NULL };
	const char *const *m;

	if (obj->string == NULL)
		return false;
	for (m = maps; *m != NULL; m++)
		if (strcmp(*m, obj->string) == 0)
			return true;
	return false;
}

/* What an http action sends: a member there is a query parameter, a
 * header or a body member, never a comment. */
static bool
is_sent_data(const cJSON *obj, const cJSON *member)
{
	return obj->string != NULL && strcmp(obj->string, "http") == 0 &&
	    member->string != NULL && (strcmp(member->string, "body") == 0 ||
	    strcmp(member->string, "query") == 0 ||
	    strcmp(member->string, "headers") == 0);
}

static void
strip(struct load_ctx *ctx, cJSON *node, cJSON *held)
{
	cJSON *m, *next;

	for (m = node->child; m != NULL; m = next) {
		next = m->next;
		if (cJSON_IsObject(node) && is_sent_data(node, m))
			continue;
		if (cJSON_IsObject(node) && strcmp(m->string, "comment") == 0 &&
		    (cJSON_IsString(m) || !names_entries(node))) {
			if (!cJSON_IsString(m))
				ctx_error(ctx, m, "a comment must be a string");
			cJSON_AddItemToArray(held,
			    cJSON_DetachItemViaPointer(node, m));
			continue;
		}
		strip(ctx, m, held);
	}
}

void
load_strip_comments(struct load_ctx *ctx, cJSON *root, cJSON *held)
{
	strip(ctx, root, held);
}
