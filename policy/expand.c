#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "policy/constraint.h"
#include "policy/expand.h"

bool
expand_value_text(const struct policy_param *p, const struct value *v,
    struct policy_buf *out)
{
	char num[32];

	switch (v->kind) {
	case VALUE_STRING:
		/* A NUL would end the string early wherever it goes next. */
		if (v->u.str.ptr == NULL ||
		    memchr(v->u.str.ptr, '\0', v->u.str.len) != NULL)
			return false;
		return policy_buf_append(out, v->u.str.ptr, v->u.str.len);
	case VALUE_INTEGER:
		return policy_buf_printf(out, "%" PRId64, v->u.integer);
	case VALUE_BOOLEAN:
		return policy_buf_append_str(out, v->u.boolean ? "true" : "false");
	case VALUE_DECIMAL:
		constraint_format_decimal(v->u.decimal_minor, p->scale, num,
		    sizeof(num));
		return policy_buf_append_str(out, num);
	case VALUE_ABSENT:
		return true;
	}
	return false;
}

static bool
expand_is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

bool
expand_percent_encode(const char *bytes, size_t len, struct policy_buf *out)
{
	const unsigned char *u = (const unsigned char *)bytes;
	size_t i;

	for (i = 0; i < len; i++) {
		if (expand_is_unreserved(u[i]))
			policy_buf_append_byte(out, (char)u[i]);
		else
			policy_buf_printf(out, "%%%02X", u[i]);
	}
	return !out->failed;
}

/*
 * fish reads \' and \\ as escapes even inside '...', so both are written
 * outside the quotes, where sh and fish alike read \' and \\ literally.
 */
bool
expand_shell_quote(const char *bytes, size_t len, struct policy_buf *out)
{
	size_t i;

	if (memchr(bytes, '\0', len) != NULL)
		return false;
	policy_buf_append_byte(out, '\'');
	for (i = 0; i < len; i++) {
		if (bytes[i] == '\'')
			policy_buf_append_str(out, "'\\''");
		else if (bytes[i] == '\\')
			policy_buf_append_str(out, "'\\\\'");
		else
			policy_buf_append_byte(out, bytes[i]);
	}
	policy_buf_append_byte(out, '\'');
	return !out->failed;
}

/* The param index when t is exactly one placeholder, else -1. */
static long
expand_single_param(const struct policy_template *t)
{
	if (t->part_count == 1 && t->parts[0].is_param)
		return (long)t->parts[0].param_index;
	return -1;
}

static bool
expand_has_absent(const struct policy_template *t, const struct value *values)
{
	size_t i;

	for (i = 0; i < t->part_count; i++)
		if (t->parts[i].is_param &&
		    values[t->parts[i].param_index].kind == VALUE_ABSENT)
			return true;
	return false;
}

/*
 * Literals and values' text as they are; the caller encodes or checks the
 * result for its place.  Fails when a value cannot be rendered (a NUL) or
 * the buffer is full.
 */
static bool
expand_template(const struct policy_tool *tool, const struct policy_template *t,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size)
{
	const struct policy_template_part *part;
	size_t i;

	for (i = 0; i < t->part_count; i++) {
		part = &t->parts[i];
		if (!part->is_param) {
			policy_buf_append(out, part->literal, part->literal_len);
			continue;
		}
		if (!expand_value_text(&tool->params[part->param_index],
		    &values[part->param_index], out) && !out->failed) {
			snprintf(why, why_size, "%s: %s cannot be expanded here",
			    tool->name, tool->params[part->param_index].name);
			return false;
		}
	}
	if (out->failed)
		snprintf(why, why_size, "%s: expansion is too long", tool->name);
	return !out->failed;
}

/* Expands t into a fresh buffer (caller frees) with values as they are. */
static bool
expand_template_raw(const struct policy_tool *tool,
    const struct policy_template *t, const struct value *values,
    struct policy_buf *text, size_t max, char *why, size_t why_size)
{
	policy_buf_init(text, max);
	if (expand_template(tool, t, values, text, why, why_size) &&
	    policy_buf_append(text, "", 0))
		return true;
	policy_buf_free(text);
	return false;
}

bool
expand_segment_is_dots(const char *seg, size_t len)
{
	size_t dots = 0, i = 0;

	while (i < len) {
		if (seg[i] == '.')
			i++;
		else if (len - i >= 3 && strncasecmp(seg + i, "%2e", 3) == 0)
			i += 3;
		else
			return false;
		dots++;
	}
	return dots == 1 || dots == 2;
}

/* The path segment being written: where it starts, whether a value is in it. */
struct expand_segment {
	size_t start;
	bool has_value;
};

/* A value may not empty a segment; no segment may be "." or "..", encoded or not. */
static bool
expand_segment_close(const struct policy_tool *tool,
    const struct policy_buf *out, const struct expand_segment *seg,
    char *why, size_t why_size)
{
	size_t len = out->len - seg->start;
	const char *s = len > 0 ? out->data + seg->start : "";

	if (len == 0 && seg->has_value) {
		snprintf(why, why_size, "%s: a value would leave a path "
		    "segment empty", tool->name);
		return false;
	}
	if (expand_segment_is_dots(s, len)) {
		snprintf(why, why_size, "%s: the path would hold a dot segment",
		    tool->name);
		return false;
	}
	return true;
}

static bool
expand_path_literal(const struct policy_tool *tool,
    const struct policy_template_part *part, struct policy_buf *out,
    struct expand_segment *seg, char *why, size_t why_size)
{
	size_t i;

	for (i = 0; i < part->literal_len; i++) {
		if (part->literal[i] == '/') {
			if (!expand_segment_close(tool, out, seg, why,
			    why_size))
				return false;
			policy_buf_append_byte(out, '/');
			seg->start = out->len;
			seg->has_value = false;
		} else
			policy_buf_append_byte(out, part->literal[i]);
	}
	return true;
}

static bool
expand_path_value(const struct policy_tool *tool,
    const struct policy_template_part *part, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	const struct policy_param *p = &tool->params[part->param_index];
	const struct value *v = &values[part->param_index];
	struct policy_buf text;
	bool ok;

	if (v->kind == VALUE_ABSENT) {
		snprintf(why, why_size, "%s: %s is needed in the path",
		    tool->name, p->name);
		return false;
	}
	policy_buf_init(&text, out->max);
	ok = expand_value_text(p, v, &text) &&
	    expand_percent_encode(text.data ? text.data : "", text.len, out);
	policy_buf_free(&text);
	if (!ok)
		snprintf(why, why_size, "%s: %s cannot be expanded here",
		    tool->name, p->name);
	return ok;
}

bool
expand_http_path(const struct policy_tool *tool, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	struct expand_segment seg = { out->len, false };
	const struct policy_template_part *part;
	size_t i;

	for (i = 0; i < tool->http.path.part_count; i++) {
		part = &tool->http.path.parts[i];
		if (!part->is_param) {
			if (!expand_path_literal(tool, part, out, &seg, why,
			    why_size))
				return false;
			continue;
		}
		if (!expand_path_value(tool, part, values, out, why, why_size))
			return false;
		seg.has_value = true;
	}
	if (out->failed) {
		snprintf(why, why_size, "%s: path is too long", tool->name);
		return false;
	}
	return expand_segment_close(tool, out, &seg, why, why_size);
}

static bool
expand_query_pair(const struct policy_tool *tool,
    const struct policy_name_template *q, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	struct policy_buf text;
	bool ok;

	if (!expand_template_raw(tool, &q->value, values, &text, out->max, why,
	    why_size))
		return false;
	if (out->len > 0)
		policy_buf_append_byte(out, '&');
	expand_percent_encode(q->name, strlen(q->name), out);
	policy_buf_append_byte(out, '=');
	ok = expand_percent_encode(text.data, text.len, out);
	policy_buf_free(&text);
	if (!ok)
		snprintf(why, why_size, "%s: query is too long", tool->name);
	return ok;
}

bool
expand_http_query(const struct policy_tool *tool, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	const struct policy_name_template *q;
	size_t i;

	for (i = 0; i < tool->http.query_count; i++) {
		q = &tool->http.query[i];
		if (expand_has_absent(&q->value, values))
			continue;
		if (!expand_query_pair(tool, q, values, out, why, why_size))
			return false;
	}
	return true;
}

static bool
expand_header_text_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

bool
expand_http_header(const struct policy_tool *tool, size_t index,
    const struct value *values, struct policy_buf *out, bool *omitted,
    char *why, size_t why_size)
{
	const struct policy_name_template *h = &tool->http.headers[index];
	size_t start = out->len;

	*omitted = expand_has_absent(&h->value, values);
	if (*omitted)
		return true;
	if (!expand_template(tool, &h->value, values, out, why,
	    why_size))
		return false;
	if (!expand_header_text_ok(out->data + start, out->len - start)) {
		snprintf(why, why_size, "%s: header %s would hold a control "
		    "character", tool->name, h->name);
		return false;
	}
	return true;
}

bool
expand_is_end_of_options(const struct policy_template *t)
{
	return t->part_count == 1 && !t->parts[0].is_param &&
	    t->parts[0].literal_len == 2 && memcmp(t->parts[0].literal, "--",
	    2) == 0;
}

/* The first byte of the value's text, '\0' when it has none. */
static char
expand_value_first_byte(const struct value *v)
{
	switch (v->kind) {
	case VALUE_STRING:
		return v->u.str.len > 0 && v->u.str.ptr != NULL ?
		    v->u.str.ptr[0] : '\0';
	case VALUE_INTEGER:
		return v->u.integer < 0 ? '-' : '0';
	case VALUE_DECIMAL:
		return v->u.decimal_minor < 0 ? '-' : '0';
	case VALUE_BOOLEAN:
		return v->u.boolean ? 't' : 'f';
	case VALUE_ABSENT:
		break;
	}
	return '\0';
}

/* The param whose value begins t's expansion with '-', or -1. */
static long
expand_leading_dash_param(const struct policy_template *t,
    const struct value *values)
{
	const struct policy_template_part *part;
	size_t i;
	char c;

	for (i = 0; i < t->part_count; i++) {
		part = &t->parts[i];
		if (!part->is_param) {
			if (part->literal_len > 0)
				return -1;
			continue;
		}
		if ((c = expand_value_first_byte(&values[part->param_index])) !=
		    '\0')
			return c == '-' ? (long)part->param_index : -1;
	}
	return -1;
}

bool
expand_ssh_dash_check(const struct policy_tool *tool,
    const struct value *values, size_t *param)
{
	long p;
	size_t i;

	for (i = 1; i < tool->ssh.argc; i++) {
		if (expand_is_end_of_options(&tool->ssh.argv[i]))
			return true;
		p = expand_leading_dash_param(&tool->ssh.argv[i], values);
		if (p >= 0 && !tool->params[p].allow_leading_dash) {
			*param = (size_t)p;
			return false;
		}
	}
	return true;
}

bool
expand_ssh_command(const struct policy_tool *tool, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	const struct policy_template *arg;
	struct policy_buf text;
	long single;
	size_t i, dash;
	bool ok, first = true;

	/* Again here: a compromised frontend must not get an option through. */
	if (!expand_ssh_dash_check(tool, values, &dash)) {
		snprintf(why, why_size, "%s: %s %s", tool->name,
		    tool->params[dash].name, EXPAND_LEADING_DASH_REASON);
		return false;
	}
	for (i = 0; i < tool->ssh.argc; i++) {
		arg = &tool->ssh.argv[i];
		single = expand_single_param(arg);
		if (single >= 0 && values[single].kind == VALUE_ABSENT)
			continue;
		if (!expand_template_raw(tool, arg, values, &text, out->max,
		    why, why_size))
			return false;
		if (!first)
			policy_buf_append_byte(out, ' ');
		first = false;
		ok = expand_shell_quote(text.data, text.len, out);
		policy_buf_free(&text);
		if (!ok) {
			snprintf(why, why_size, "%s: command is too long",
			    tool->name);
			return false;
		}
	}
	return true;
}

/* JSON string escaping: quote, backslash and every control character. */
static bool
expand_json_string(const char *s, size_t len, struct policy_buf *out)
{
	unsigned char c;
	size_t i;

	policy_buf_append_byte(out, '"');
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			policy_buf_append_byte(out, '\\');
			policy_buf_append_byte(out, (char)c);
		} else if (c == '\n')
			policy_buf_append_str(out, "\\n");
		else if (c == '\r')
			policy_buf_append_str(out, "\\r");
		else if (c == '\t')
			policy_buf_append_str(out, "\\t");
		else if (c < 0x20 || c == 0x7f)
			policy_buf_printf(out, "\\u%04x", c);
		else
			policy_buf_append_byte(out, (char)c);
	}
	policy_buf_append_byte(out, '"');
	return !out->failed;
}

/* A whole-string placeholder: the value in its own JSON type. */
static bool
expand_body_typed(const struct policy_param *p, const struct value *v,
    struct policy_buf *out)
{
	char num[32];

	switch (v->kind) {
	case VALUE_STRING:
		if (memchr(v->u.str.ptr, '\0', v->u.str.len) != NULL)
			return false;
		return expand_json_string(v->u.str.ptr, v->u.str.len, out);
	case VALUE_DECIMAL:
		constraint_format_decimal(v->u.decimal_minor, p->scale, num,
		    sizeof(num));
		return expand_json_string(num, strlen(num), out);
	case VALUE_INTEGER:
	case VALUE_BOOLEAN:
		return expand_value_text(p, v, out);
	case VALUE_ABSENT:
		return policy_buf_append_str(out, "null");
	}
	return false;
}

static bool
expand_body_string(const struct policy_tool *tool,
    const struct policy_template *t, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	struct policy_buf text;
	long single = expand_single_param(t);
	bool ok;

	if (single >= 0) {
		if (expand_body_typed(&tool->params[single], &values[single],
		    out))
			return true;
		snprintf(why, why_size, "%s: %s cannot be expanded in the body",
		    tool->name, tool->params[single].name);
		return false;
	}
	if (!expand_template_raw(tool, t, values, &text, out->max, why,
	    why_size))
		return false;
	ok = expand_json_string(text.data, text.len, out);
	policy_buf_free(&text);
	return ok;
}

static bool expand_body_node(const struct policy_tool *,
    const struct policy_body *, const struct value *, struct policy_buf *,
    char *, size_t);

/* An object member that is exactly one absent placeholder is left out. */
static bool
expand_body_member_absent(const struct policy_body *b,
    const struct value *values)
{
	long single;

	if (b->kind != BODY_STRING)
		return false;
	single = expand_single_param(&b->string);
	return single >= 0 && values[single].kind == VALUE_ABSENT;
}

static bool
expand_body_container(const struct policy_tool *tool,
    const struct policy_body *b, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	bool object = b->kind == BODY_OBJECT, first = true;
	const struct policy_body *c;
	size_t i;

	policy_buf_append_byte(out, object ? '{' : '[');
	for (i = 0; i < b->child_count; i++) {
		c = &b->children[i];
		if (object && expand_body_member_absent(c, values))
			continue;
		if (!first)
			policy_buf_append_byte(out, ',');
		first = false;
		if (object) {
			expand_json_string(c->key, strlen(c->key), out);
			policy_buf_append_byte(out, ':');
		}
		if (!expand_body_node(tool, c, values, out, why, why_size))
			return false;
	}
	policy_buf_append_byte(out, object ? '}' : ']');
	return true;
}

static bool
expand_body_node(const struct policy_tool *tool, const struct policy_body *b,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size)
{
	switch (b->kind) {
	case BODY_NULL:
		return policy_buf_append_str(out, "null");
	case BODY_BOOL:
		return policy_buf_append_str(out, b->boolean ? "true" : "false");
	case BODY_NUMBER:
		return policy_buf_append_str(out, b->number_text);
	case BODY_STRING:
		return expand_body_string(tool, &b->string, values, out, why,
		    why_size);
	case BODY_ARRAY:
	case BODY_OBJECT:
		return expand_body_container(tool, b, values, out, why,
		    why_size);
	}
	return false;
}

bool
expand_http_body(const struct policy_tool *tool, const struct value *values,
    struct policy_buf *out, char *why, size_t why_size)
{
	if (tool->http.body == NULL)
		return true;
	if (expand_body_node(tool, tool->http.body, values, out, why, why_size) &&
	    !out->failed)
		return true;
	if (out->failed)
		snprintf(why, why_size, "%s: body is too long", tool->name);
	return false;
}
