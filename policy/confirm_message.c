/*
 * The question before a confirm tool runs (policy/confirm_message.h).
 */
#include "config.h"

#include "policy/confirm_message.h"

static bool
confirm_message_value(struct policy_buf *b, const struct policy_param *p,
    const struct value *v, confirm_value_fn show, void *arg)
{
	return v->kind == VALUE_ABSENT || show(b, p, v, arg);
}

/* No template: the tool's title (or name), then each value by name. */
static bool
confirm_message_default(struct policy_buf *b, const struct policy_tool *tool,
    const struct value *values, size_t n, confirm_value_fn show, void *arg)
{
	const char *sep = ": ";
	size_t i;

	if (!policy_buf_printf(b, "Allow %s", tool->title != NULL ?
	    tool->title : tool->name))
		return false;
	for (i = 0; i < tool->param_count && i < n; i++) {
		if (values[i].kind == VALUE_ABSENT)
			continue;
		if (!policy_buf_printf(b, "%s%s = ", sep, tool->params[i].name) ||
		    !show(b, &tool->params[i], &values[i], arg))
			return false;
		sep = ", ";
	}
	return policy_buf_append_str(b, "?");
}

static bool
confirm_message_template(struct policy_buf *b, const struct policy_tool *tool,
    const struct value *values, size_t n, confirm_value_fn show, void *arg)
{
	const struct policy_template *t = &tool->confirm_spec.message;
	size_t i, k;

	for (i = 0; i < t->part_count; i++) {
		k = t->parts[i].param_index;
		if (t->parts[i].is_param ? k >= n ||
		    !confirm_message_value(b, &tool->params[k], &values[k], show,
		    arg) : !policy_buf_append(b, t->parts[i].literal,
		    t->parts[i].literal_len))
			return false;
	}
	return true;
}

bool
confirm_message_build(struct policy_buf *b, const struct policy_tool *tool,
    const struct value *values, size_t n, confirm_value_fn show, void *arg)
{
	if (tool->confirm_spec.has_message)
		return confirm_message_template(b, tool, values, n, show, arg);
	return confirm_message_default(b, tool, values, n, show, arg);
}
