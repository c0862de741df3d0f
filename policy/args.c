#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "policy/args.h"
#include "policy/buf.h"
#include "policy/constraint.h"
#include "policy/expand.h"

#define ARGS_PATH_SHOWN_MAX 40		/* characters of a member name shown */
/* Header (tool names are short) plus shown lines plus "and N more". */
#define ARGS_ERROR_TEXT_MAX 4096
#define ARGS_INTEGER_MAX INT64_C(9007199254740991)	/* 2^53-1 */

/* Cuts s in place to at most max code points, marking the cut with "...". */
static void
args_truncate_chars(char *s, size_t max)
{
	size_t i, chars = 0, cut = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (chars == max - 3)
			cut = i;
		if (++chars > max) {
			memcpy(s + cut, "...", 4);
			return;
		}
	}
}

/*
 * A member name from the client is untrusted: only printable ASCII is
 * shown, the rest becomes '?', and long names are cut.
 */
static char *
args_display_path(const char *name)
{
	char *s;
	size_t i, n = strlen(name);

	if (n > ARGS_PATH_SHOWN_MAX * 4)
		n = ARGS_PATH_SHOWN_MAX * 4;
	if ((s = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		s[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
	s[n] = '\0';
	args_truncate_chars(s, ARGS_PATH_SHOWN_MAX);
	return s;
}

static bool
args_error_seen(const struct args_error_report *err, const char *path)
{
	size_t i;

	for (i = 0; i < err->count; i++)
		if (strcmp(err->errors[i].path, path) == 0)
			return true;
	return false;
}

static bool
args_error_grow(struct args_error_report *err)
{
	struct args_error *p;
	size_t cap;

	if (err->count < err->cap)
		return true;
	cap = err->cap == 0 ? 8 : err->cap * 2;
	p = reallocarray(err->errors, cap, sizeof(*p));
	if (p == NULL)
		return false;
	err->errors = p;
	err->cap = cap;
	return true;
}

/* Records reason at path unless that path already has one. */
static void
args_error_add(struct args_error_report *err, const char *name,
    const char *reason)
{
	struct args_error *e;
	char *path, *message;

	if ((path = args_display_path(name)) == NULL)
		goto oom;
	if (args_error_seen(err, path)) {
		free(path);
		return;
	}
	if (asprintf(&message, "%s: %s", path, reason) < 0) {
		free(path);
		goto oom;
	}
	args_truncate_chars(message, ARGS_ERROR_LINE_MAX);
	if (!args_error_grow(err)) {
		free(path);
		free(message);
		goto oom;
	}
	e = &err->errors[err->count++];
	e->path = path;
	e->message = message;
	return;
oom:
	log_error("out of memory");
}

void
args_error_report_free(struct args_error_report *err)
{
	size_t i;

	for (i = 0; i < err->count; i++) {
		free(err->errors[i].path);
		free(err->errors[i].message);
	}
	free(err->errors);
	memset(err, 0, sizeof(*err));
}

char *
args_error_report_text(const struct args_error_report *err,
    const char *tool_name)
{
	struct policy_buf b;
	size_t i, shown;

	shown = err->count < ARGS_ERROR_PATHS_SHOWN ? err->count :
	    ARGS_ERROR_PATHS_SHOWN;
	policy_buf_init(&b, ARGS_ERROR_TEXT_MAX);
	policy_buf_append_str(&b, "Invalid arguments for ");
	policy_buf_append_str(&b, tool_name);
	policy_buf_append_str(&b, "; nothing was run.");
	for (i = 0; i < shown; i++) {
		policy_buf_append_byte(&b, '\n');
		policy_buf_append_str(&b, err->errors[i].message);
	}
	if (err->count > shown)
		policy_buf_printf(&b, "\nand %zu more", err->count - shown);
	return policy_buf_steal(&b, NULL);
}

static const char *
args_json_type_name(const cJSON *item)
{
	if (cJSON_IsObject(item))
		return "an object";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	return "an invalid value";
}

static void
args_wrong_type(const cJSON *item, const char *want, char *why, size_t size)
{
	if (cJSON_IsArray(item))
		snprintf(why, size, "must be %s, not an array of %d items",
		    want, cJSON_GetArraySize(item));
	else
		snprintf(why, size, "must be %s, not %s", want,
		    args_json_type_name(item));
}

/* Digits, then at most scale fraction digits; no sign but '-'. */
static bool
args_parse_decimal(const char *s, unsigned scale, int64_t *out)
{
	bool neg = *s == '-';
	unsigned frac = 0;
	bool point = false, digit = false;
	int64_t mag = 0, d;

	for (s += neg; *s != '\0'; s++) {
		if (*s == '.' && !point && digit) {
			point = true;
			continue;
		}
		if (*s < '0' || *s > '9' || (point && ++frac > scale))
			return false;
		d = *s - '0';
		if (mag > (INT64_MAX - d) / 10)
			return false;
		mag = mag * 10 + d;
		digit = true;
	}
	if (!digit || (point && frac == 0))
		return false;
	for (; frac < scale; frac++) {
		if (mag > INT64_MAX / 10)
			return false;
		mag *= 10;
	}
	*out = neg ? -mag : mag;
	return true;
}

/*
 * Reads an integer from its raw JSON token, never from cJSON's double:
 * "-?digits" with at most an all-zero fraction ("7", "-7", "7.00"), no
 * exponent, magnitude at most 2^53-1.  So 2^53+1 is not read as 2^53 and
 * 0.99999999999999999 not as 1.
 */
static bool
args_integer_from_token(const char *tok, int64_t *out)
{
	bool neg = *tok == '-';
	int64_t mag = 0;
	const char *p;

	p = tok + neg;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		mag = mag * 10 + (*p - '0');
		if (mag > ARGS_INTEGER_MAX)
			return false;
	}
	if (*p == '.')
		for (p++; *p == '0'; p++)
			continue;
	if (*p != '\0')
		return false;
	*out = neg ? -mag : mag;
	return true;
}

static bool
args_integer_from_json(const cJSON *item, struct value *v, char *why,
    size_t size)
{
	int64_t n;

	if (!cJSON_IsNumber(item)) {
		args_wrong_type(item, "an integer", why, size);
		return false;
	}
	/* No token: the tree did not come from json_parse_frame. */
	if (item->valuestring == NULL ||
	    !args_integer_from_token(item->valuestring, &n)) {
		snprintf(why, size, "must be a whole number between "
		    "-(2^53-1) and 2^53-1, written without an exponent");
		return false;
	}
	v->kind = VALUE_INTEGER;
	v->u.integer = n;
	return true;
}

static bool
args_decimal_from_json(const struct policy_param *p, const cJSON *item,
    struct value *v, char *why, size_t size)
{
	int64_t minor;

	if (!cJSON_IsString(item)) {
		snprintf(why, size, "must be a string of digits with at most "
		    "%u decimals like \"12.50\", not %s", p->scale,
		    args_json_type_name(item));
		return false;
	}
	if (!args_parse_decimal(item->valuestring, p->scale, &minor)) {
		snprintf(why, size, "must be digits with at most %u decimals "
		    "like \"12.50\" (no exponent)", p->scale);
		return false;
	}
	v->kind = VALUE_DECIMAL;
	v->u.decimal_minor = minor;
	return true;
}

static bool
args_value_from_json(const struct policy_param *p, const cJSON *item,
    struct value *v, char *why, size_t size)
{
	switch (p->type) {
	case PARAM_STRING:
		if (!cJSON_IsString(item)) {
			args_wrong_type(item, "a string", why, size);
			return false;
		}
		if (!value_set_string(v, item->valuestring,
		    strlen(item->valuestring))) {
			snprintf(why, size, "could not be stored");
			return false;
		}
		return true;
	case PARAM_INTEGER:
		return args_integer_from_json(item, v, why, size);
	case PARAM_BOOLEAN:
		if (!cJSON_IsBool(item)) {
			args_wrong_type(item, "true or false", why, size);
			return false;
		}
		v->kind = VALUE_BOOLEAN;
		v->u.boolean = cJSON_IsTrue(item);
		return true;
	case PARAM_DECIMAL:
		return args_decimal_from_json(p, item, v, why, size);
	}
	return false;
}

bool
policy_arg_from_text(const struct policy_param *p, const char *text,
    struct value *v)
{
	int64_t n;

	memset(v, 0, sizeof(*v));
	switch (p->type) {
	case PARAM_STRING:
		return value_set_string(v, text, strlen(text));
	case PARAM_INTEGER:
		if (!args_integer_from_token(text, &n))
			return false;
		v->kind = VALUE_INTEGER;
		v->u.integer = n;
		return true;
	case PARAM_BOOLEAN:
		if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
			return false;
		v->kind = VALUE_BOOLEAN;
		v->u.boolean = text[0] == 't';
		return true;
	case PARAM_DECIMAL:
		if (!args_parse_decimal(text, p->scale, &n))
			return false;
		v->kind = VALUE_DECIMAL;
		v->u.decimal_minor = n;
		return true;
	}
	return false;
}

/*
 * Parses a string holding an object, once, with the frame's strict parser
 * and depth bound, so a wrapped object is judged exactly like a direct one
 * (BOM, controls, number grammar, duplicate keys, trailing bytes).  Returns
 * a tree the caller frees, or NULL with a reason.
 */
static cJSON *
args_parse_string(const char *text, char *why, size_t size)
{
	struct json_doc doc;
	struct json_error jerr;
	cJSON *obj;

	if (!json_parse_frame((const uint8_t *)text, strlen(text),
	    JSON_DEPTH_DEFAULT, &doc, &jerr)) {
		snprintf(why, size, "must be an object; the string given is "
		    "not strict JSON (%s at byte %zu)",
		    jerr.reason, jerr.offset);
		return NULL;
	}
	obj = doc.root;
	doc.root = NULL;
	if (!cJSON_IsObject(obj)) {
		snprintf(why, size, "must be an object; a string was given "
		    "that holds %s", args_json_type_name(obj));
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

static const struct policy_param *
args_param_by_name(const struct policy_tool *tool, const char *name,
    size_t *index)
{
	size_t i;

	for (i = 0; i < tool->param_count; i++) {
		if (strcmp(tool->params[i].name, name) == 0) {
			*index = i;
			return &tool->params[i];
		}
	}
	return NULL;
}

static void
args_unknown_reason(const struct policy_tool *tool, char *why, size_t size)
{
	size_t i, used;

	if (tool->param_count == 0) {
		snprintf(why, size, "unknown property; this tool takes none");
		return;
	}
	used = (size_t)snprintf(why, size, "unknown property; known:");
	for (i = 0; i < tool->param_count && used < size; i++)
		used += (size_t)snprintf(why + used, size - used, "%s %s",
		    i == 0 ? "" : ",", tool->params[i].name);
}

static void
args_check_member(const struct policy_tool *tool, const cJSON *item,
    struct value *values, bool *seen, struct args_error_report *err)
{
	char why[CONSTRAINT_REASON_MAX];
	const struct policy_param *p;
	size_t i;

	if ((p = args_param_by_name(tool, item->string, &i)) == NULL) {
		args_unknown_reason(tool, why, sizeof(why));
		args_error_add(err, item->string, why);
		return;
	}
	if (seen[i]) {
		args_error_add(err, item->string, "is given more than once");
		return;
	}
	seen[i] = true;
	if (!args_value_from_json(p, item, &values[i], why, sizeof(why)) ||
	    !constraint_check(p, &values[i], why, sizeof(why)))
		args_error_add(err, item->string, why);
}

static void
args_check_object(const struct policy_tool *tool, const cJSON *obj,
    struct value *values, bool *seen, struct args_error_report *err)
{
	char why[CONSTRAINT_REASON_MAX];
	const cJSON *item;
	size_t i;
	int n;

	n = cJSON_GetArraySize(obj);
	if (n > ARGS_MEMBERS_MAX) {
		snprintf(why, sizeof(why), "has %d properties; this tool "
		    "takes at most %zu", n, tool->param_count);
		args_error_add(err, "arguments", why);
		return;
	}
	cJSON_ArrayForEach(item, obj)
		args_check_member(tool, item, values, seen, err);
	for (i = 0; i < tool->param_count; i++)
		if (!seen[i] && tool->params[i].required)
			args_error_add(err, tool->params[i].name,
			    "is required");
	/* Values that are each valid may still begin an option together. */
	if (err->count == 0 && tool->kind == TOOL_SSH &&
	    !expand_ssh_dash_check(tool, values, &i))
		args_error_add(err, tool->params[i].name,
		    EXPAND_LEADING_DASH_REASON);
}

/* The object to check, or NULL with an entry in err. *owned: parsed here. */
static const cJSON *
args_resolve_object(const cJSON *arguments, cJSON **owned,
    struct args_error_report *err)
{
	char why[CONSTRAINT_REASON_MAX];

	*owned = NULL;
	if (cJSON_IsObject(arguments))
		return arguments;
	if (cJSON_IsString(arguments)) {
		*owned = args_parse_string(arguments->valuestring, why,
		    sizeof(why));
		if (*owned == NULL)
			args_error_add(err, "arguments", why);
		return *owned;
	}
	snprintf(why, sizeof(why), "must be an object, not %s",
	    args_json_type_name(arguments));
	if (cJSON_IsArray(arguments))
		snprintf(why, sizeof(why), "must be an object, not an array "
		    "of %d items", cJSON_GetArraySize(arguments));
	args_error_add(err, "arguments", why);
	return NULL;
}

bool
policy_args_validate(const struct policy_tool *tool, const cJSON *arguments,
    struct value **out, struct args_error_report *err)
{
	static const cJSON empty = { .type = cJSON_Object };
	struct value *values;
	const cJSON *obj;
	cJSON *owned;
	bool *seen;
	size_t n = tool->param_count ? tool->param_count : 1;

	*out = NULL;
	if ((obj = args_resolve_object(arguments ? arguments : &empty, &owned,
	    err)) == NULL)
		return false;
	values = calloc(n, sizeof(*values));
	seen = calloc(n, sizeof(*seen));
	if (values == NULL || seen == NULL) {
		log_error("out of memory");
		args_error_add(err, "arguments", "could not be stored");
	} else
		args_check_object(tool, obj, values, seen, err);
	free(seen);
	cJSON_Delete(owned);
	if (err->count > 0 || values == NULL) {
		value_array_free(values, tool->param_count);
		return false;
	}
	*out = values;
	return true;
}
