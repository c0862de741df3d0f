/*
 * The question before a confirm tool runs (policy/confirm_message.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/text_escape.h"
#include "common/utf8.h"
#include "policy/buf.h"
#include "policy/confirm_message.h"
#include "policy/expand.h"

/* One value's text before its cut (its expansion's bound). */
#define CONFIRM_VALUE_TEXT_BYTES (64u * 1024)
#define CONFIRM_MARKER_BYTES 64

/* The question being written: what is shown of it, and how long it is. */
struct confirm_out {
	struct policy_buf b;
	size_t shown;		/* characters written to b */
	size_t total;		/* characters of the whole, shown or not */
	bool full;		/* the whole's cut was reached */
	bool failed;
};

/* chars characters (len bytes at s): written while the whole has room,
 * counted always. */
static void
confirm_put(struct confirm_out *o, const char *s, size_t len, size_t chars)
{
	o->total += chars;
	if (o->full || o->shown + chars > CONFIRM_MESSAGE_CHARS) {
		o->full = true;
		return;
	}
	o->shown += chars;
	if (!policy_buf_append(&o->b, s, len))
		o->failed = true;
}

/*
 * s escaped, at most max characters as shown (an escape is never split);
 * returns the code points shown and stores in *used the bytes of s they
 * came from.
 */
static size_t
confirm_put_escaped(struct confirm_out *o, const char *s, size_t len,
    unsigned flags, size_t max, size_t *used)
{
	char e[TEXT_ESCAPE_MAX];
	size_t i = 0, k, elen, chars, width = 0, shown = 0;

	while (i < len) {
		k = text_escape_next((const uint8_t *)s + i, len - i, flags, e,
		    &elen, &chars);
		if (width + chars > max)
			break;
		confirm_put(o, e, elen, chars);
		width += chars;
		shown++;
		i += k;
	}
	*used = i;
	return shown;
}

/* Template or title text: the policy's, escaped all the same. */
static void
confirm_put_literal(struct confirm_out *o, const char *s, size_t len)
{
	size_t used;

	(void)confirm_put_escaped(o, s, len, 0, SIZE_MAX, &used);
}

/* "… (cut: shown 120 of 1234 chars)" after a cut value. */
static void
confirm_put_cut(struct confirm_out *o, const char *rest, size_t len,
    size_t shown)
{
	char marker[CONFIRM_MARKER_BYTES];
	size_t left;
	int w;

	if (!utf8_count_code_points((const uint8_t *)rest, len, &left))
		left = len;
	w = snprintf(marker, sizeof(marker), "\u2026 (cut: shown %zu of %zu "
	    "chars)", shown, shown + left);
	/* the ellipsis is one character of three bytes */
	if (w > 2 && (size_t)w < sizeof(marker))
		confirm_put(o, marker, (size_t)w, (size_t)w - 2);
}

/* A present value as text, escaped, cut at max characters, the cut said. */
static void
confirm_put_value(struct confirm_out *o, const struct policy_param *p,
    const struct value *v, size_t max)
{
	struct policy_buf text;
	const char *s;
	size_t used, shown;

	policy_buf_init(&text, CONFIRM_VALUE_TEXT_BYTES);
	if (!expand_value_text(p, v, &text)) {
		o->failed = true;
		policy_buf_free(&text);
		return;
	}
	s = text.data != NULL ? text.data : "";
	shown = confirm_put_escaped(o, s, text.len, TEXT_ESCAPE_BACKSLASH, max,
	    &used);
	if (used < text.len)
		confirm_put_cut(o, s + used, text.len - used, shown);
	policy_buf_free(&text);
}

static bool
confirm_present(const struct value *values, size_t n, size_t k)
{
	return k < n && values[k].kind != VALUE_ABSENT;
}

/* Each value's share of CONFIRM_MESSAGE_VALUES_CHARS. */
static size_t
confirm_value_max(const struct policy_tool *tool, const struct value *values,
    size_t n)
{
	const struct policy_template *t = &tool->confirm_spec.message;
	size_t i, count = 0, max;

	if (tool->confirm_spec.has_message) {
		for (i = 0; i < t->part_count; i++)
			if (t->parts[i].is_param &&
			    confirm_present(values, n, t->parts[i].param_index))
				count++;
	} else {
		for (i = 0; i < tool->param_count; i++)
			if (confirm_present(values, n, i))
				count++;
	}
	max = count > 0 ? CONFIRM_MESSAGE_VALUES_CHARS / count :
	    CONFIRM_MESSAGE_VALUE_CHARS;
	if (max > CONFIRM_MESSAGE_VALUE_CHARS)
		max = CONFIRM_MESSAGE_VALUE_CHARS;
	return max < CONFIRM_MESSAGE_VALUE_MIN ? CONFIRM_MESSAGE_VALUE_MIN : max;
}

/* No template: the tool's title (or name), then each value by name. */
static void
confirm_default(struct confirm_out *o, const struct policy_tool *tool,
    const struct value *values, size_t n, size_t max)
{
	const char *title = tool->title != NULL ? tool->title : tool->name;
	const char *sep = ": ";
	size_t i;

	confirm_put_literal(o, "Allow ", 6);
	confirm_put_literal(o, title, strlen(title));
	for (i = 0; i < tool->param_count; i++) {
		if (!confirm_present(values, n, i))
			continue;
		confirm_put_literal(o, sep, strlen(sep));
		confirm_put_literal(o, tool->params[i].name,
		    strlen(tool->params[i].name));
		confirm_put_literal(o, " = ", 3);
		confirm_put_value(o, &tool->params[i], &values[i], max);
		sep = ", ";
	}
	confirm_put_literal(o, "?", 1);
}

static void
confirm_template(struct confirm_out *o, const struct policy_tool *tool,
    const struct value *values, size_t n, size_t max)
{
	const struct policy_template *t = &tool->confirm_spec.message;
	size_t i, k;

	for (i = 0; i < t->part_count; i++) {
		k = t->parts[i].param_index;
		if (!t->parts[i].is_param)
			confirm_put_literal(o, t->parts[i].literal,
			    t->parts[i].literal_len);
		else if (k >= n)
			o->failed = true;
		else if (values[k].kind != VALUE_ABSENT)
			confirm_put_value(o, &tool->params[k], &values[k], max);
	}
}

char *
confirm_message_render(const struct policy_tool *tool,
    const struct value *values, size_t n, size_t *len)
{
	struct confirm_out o;
	size_t max = confirm_value_max(tool, values, n);
	char *out;

	memset(&o, 0, sizeof(o));
	policy_buf_init(&o.b, CONFIRM_MESSAGE_BYTES_MAX);
	if (tool->confirm_spec.has_message)
		confirm_template(&o, tool, values, n, max);
	else
		confirm_default(&o, tool, values, n, max);
	if (o.full && !policy_buf_printf(&o.b, "\u2026 (question cut: shown "
	    "%zu of %zu chars)", o.shown, o.total))
		o.failed = true;
	if (o.failed || (out = policy_buf_steal(&o.b, len)) == NULL) {
		policy_buf_free(&o.b);
		return NULL;
	}
	return out;
}
