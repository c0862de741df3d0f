/*
 * A tool's "confirm" (docs/design.md section 8, sp-policy.5): true, or
 * { message, retype, via, timeout_s }.  The message is a template over
 * the tool's params (a placeholder there does not count as a use of its
 * param: the action must still use every param); retype names a
 * required param; via is "client" (the MCP client asks) or "operator"
 * (sp approve, section 8.3), which needs approvers and state_dir (where
 * the approval sockets live).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy/load_template.h"

/* A template within this always shows whole: the rendered question is
 * cut at CONFIRM_MESSAGE_CHARS (policy/confirm_message.h), and values
 * take at most CONFIRM_MESSAGE_VALUES_CHARS of it plus their cuts. */
#define LOAD_CONFIRM_MESSAGE_MAX 500

static void
confirm_message(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "message", false);
	struct template_use use = { .tool = tool, .optional_anywhere = true };

	if (m == NULL)
		return;
	if (!cJSON_IsString(m) || m->valuestring[0] == '\0') {
		ctx_error(ctx, m, "must be a non-empty string");
		return;
	}
	if (ctx_utf8_count(m->valuestring) > LOAD_CONFIRM_MESSAGE_MAX) {
		ctx_error(ctx, m, "at most %d characters",
		    LOAD_CONFIRM_MESSAGE_MAX);
		return;
	}
	if ((use.used = calloc(tool->param_count + 1, sizeof(bool))) == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	tool->confirm_spec.has_message = load_template(ctx, m, &use,
	    &tool->confirm_spec.message);
	free(use.used);
}

static void
confirm_retype(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "retype", false);
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	if (m == NULL)
		return;
	if (!cJSON_IsString(m)) {
		ctx_error(ctx, m, "must be the name of a param");
		return;
	}
	for (i = 0; i < tool->param_count; i++)
		if (tool->params[i].name != NULL &&
		    strcmp(tool->params[i].name, m->valuestring) == 0)
			break;
	ctx_quote(m->valuestring, q, sizeof(q));
	if (i == tool->param_count)
		ctx_error(ctx, m, "%s names no param of this tool", q);
	else if (!tool->params[i].required)
		ctx_error(ctx, m, "param %s is optional; a human can only "
		    "retype a value the call always has", q);
	else
		tool->confirm_spec.retype = i;
}

/* Who may answer for an operator-confirmed tool (sp approve). */
static void
confirm_approvers(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "uid", "gid", NULL };
	const cJSON *m = ctx_member(ctx, obj, "approvers", false);
	struct policy_confirm *c = &tool->confirm_spec;

	if (m == NULL) {
		if (c->via_operator)
			ctx_error(ctx, obj, "via \"operator\" needs approvers: "
			    "{ \"uid\": [...], \"gid\": [...] }, who may "
			    "run sp approve for this tool");
		return;
	}
	if (!ctx_require_object(ctx, m))
		return;
	ctx_known_keys(ctx, m, keys);
	ctx_id_list(ctx, m, "uid", &c->approver_uids, &c->approver_uid_count,
	    NULL, NULL);
	ctx_id_list(ctx, m, "gid", &c->approver_gids, &c->approver_gid_count,
	    NULL, NULL);
	if (!c->via_operator)
		ctx_error(ctx, m, "approvers are for via \"operator\"");
	else if (c->approver_uid_count + c->approver_gid_count == 0)
		ctx_error(ctx, m, "names nobody: at least one uid or gid");
}

static void
confirm_via(struct load_ctx *ctx, const cJSON *obj, struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, obj, "via", false);

	if (m == NULL)
		return;
	if (cJSON_IsString(m) && strcmp(m->valuestring, "client") == 0)
		return;
	if (!cJSON_IsString(m) || strcmp(m->valuestring, "operator") != 0) {
		ctx_error(ctx, m, "must be \"client\" or \"operator\"");
		return;
	}
	tool->confirm_spec.via_operator = true;
	if (ctx->policy->state_dir == NULL)
		ctx_error(ctx, m, "\"operator\" needs a state_dir: the "
		    "approval sockets are made in state_dir/approvals/");
}

static void
confirm_object(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "message", "retype", "via",
	    "approvers", "others_only", "timeout_s", NULL };
	int64_t timeout = POLICY_CONFIRM_TIMEOUT_DEFAULT;

	ctx_known_keys(ctx, obj, keys);
	confirm_message(ctx, obj, tool);
	confirm_retype(ctx, obj, tool);
	confirm_via(ctx, obj, tool);
	confirm_approvers(ctx, obj, tool);
	if (ctx_member(ctx, obj, "others_only", false) != NULL &&
	    !tool->confirm_spec.via_operator)
		ctx_error(ctx, ctx_member(ctx, obj, "others_only", false),
		    "others_only is for via \"operator\"");
	ctx_bool(ctx, obj, "others_only", &tool->confirm_spec.others_only);
	if (ctx_integer(ctx, obj, "timeout_s", 1, POLICY_CONFIRM_TIMEOUT_MAX,
	    &timeout))
		tool->confirm_spec.timeout_s = (uint32_t)timeout;
}

void
load_confirm(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, tool_obj, "confirm", false);

	tool->confirm_spec.retype = POLICY_CONFIRM_NO_RETYPE;
	tool->confirm_spec.timeout_s = POLICY_CONFIRM_TIMEOUT_DEFAULT;
	if (m == NULL)
		return;
	if (cJSON_IsBool(m)) {
		tool->confirm = cJSON_IsTrue(m);
		return;
	}
	if (!cJSON_IsObject(m)) {
		ctx_error(ctx, m, "must be true, false or an object with "
		    "message, retype, via, approvers, others_only, timeout_s");
		return;
	}
	tool->confirm = true;
	confirm_object(ctx, m, tool);
}
