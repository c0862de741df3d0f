/*
 * Internal to the loader: parsing "{param}" templates (see
 * load_template.c for the syntax).
 */
#ifndef SP_POLICY_LOAD_TEMPLATE_H
#define SP_POLICY_LOAD_TEMPLATE_H

#include <stdbool.h>

#include "policy/load_ctx.h"

/* What a template may refer to, and which params it used. */
struct template_use {
	const struct policy_tool *tool;	/* params already loaded */
	bool *used;			/* tool->param_count flags, set here */
	bool optional_ok;		/* a whole-value place (query, header, body) */
	bool optional_anywhere;		/* text for a human (confirm.message):
					 * an absent value shows as nothing */
};

/*
 * Parses node's string into out (caller frees with template_free(), also
 * on failure).  Reports each problem at node; false if there was one.
 */
bool load_template(struct load_ctx *ctx, const cJSON *node,
    struct template_use *use, struct policy_template *out);

bool template_is_one_placeholder(const struct policy_template *t);
bool template_has_placeholder(const struct policy_template *t);
void template_free(struct policy_template *t);

#endif
