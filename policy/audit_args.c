#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit_args.h"
#include "common/log.h"
#include "policy/constraint.h"

#define MASK_PREFIX "\xe2\x80\xa6"	/* U+2026 HORIZONTAL ELLIPSIS */
#define MASK_KEEP 4			/* characters kept */
#define NUMBER_TEXT_MAX 48		/* "-" + 19 digits + "." + 18 digits */

static const char *const audit_shape_names[] = {
	[PARAM_STRING] = "string",
	[PARAM_INTEGER] = "integer",
	[PARAM_BOOLEAN] = "boolean",
	[PARAM_DECIMAL] = "decimal",
};

static bool
audit_is_continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

static size_t
audit_count_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (!audit_is_continuation((unsigned char)s[i]))
			n++;
	return n;
}

static bool
audit_kind_matches(enum param_type type, enum value_kind kind)
{
	switch (type) {
	case PARAM_STRING:
		return kind == VALUE_STRING;
	case PARAM_INTEGER:
		return kind == VALUE_INTEGER;
	case PARAM_BOOLEAN:
		return kind == VALUE_BOOLEAN;
	case PARAM_DECIMAL:
		return kind == VALUE_DECIMAL;
	}
	return false;
}

static void
audit_number_text(const struct policy_param *param, const struct value *value,
    char *out, size_t size)
{
	if (value->kind == VALUE_INTEGER)
		snprintf(out, size, "%" PRId64, value->u.integer);
	else
		constraint_format_decimal(value->u.decimal_minor, param->scale,
		    out, size);
}

static cJSON *
audit_render_shape(const struct policy_param *param, const struct value *value)
{
	char buf[40];

	if (value->kind != VALUE_STRING)
		return cJSON_CreateString(audit_shape_names[param->type]);
	snprintf(buf, sizeof(buf), "string(%zu)",
	    audit_count_chars(value->u.str.ptr, value->u.str.len));
	return cJSON_CreateString(buf);
}

static cJSON *
audit_render_value(const struct policy_param *param, const struct value *value)
{
	char text[NUMBER_TEXT_MAX];

	switch (value->kind) {
	case VALUE_STRING:
		return cJSON_CreateString(value->u.str.ptr);
	case VALUE_BOOLEAN:
		return cJSON_CreateBool(value->u.boolean);
	case VALUE_INTEGER:
	case VALUE_DECIMAL:
		/* Raw text: a double would round integers beyond 2^53. */
		audit_number_text(param, value, text, sizeof(text));
		return cJSON_CreateRaw(text);
	case VALUE_ABSENT:
		break;
	}
	return NULL;
}

static cJSON *
audit_mask_text(const char *s, size_t len)
{
	char buf[sizeof(MASK_PREFIX) + MASK_KEEP * 4];
	size_t start = len, kept = 0;

	while (start > 0 && kept < MASK_KEEP) {
		start--;
		if (!audit_is_continuation((unsigned char)s[start]))
			kept++;
	}
	if (audit_count_chars(s, len) <= MASK_KEEP)
		start = len;
	if (len - start > MASK_KEEP * 4)
		return NULL;	/* not UTF-8; values are validated before */
	memcpy(buf, MASK_PREFIX, sizeof(MASK_PREFIX) - 1);
	memcpy(buf + sizeof(MASK_PREFIX) - 1, s + start, len - start);
	buf[sizeof(MASK_PREFIX) - 1 + len - start] = '\0';
	return cJSON_CreateString(buf);
}

static cJSON *
audit_render_mask4(const struct policy_param *param, const struct value *value)
{
	char text[NUMBER_TEXT_MAX];

	switch (value->kind) {
	case VALUE_STRING:
		return audit_mask_text(value->u.str.ptr, value->u.str.len);
	case VALUE_INTEGER:
	case VALUE_DECIMAL:
		audit_number_text(param, value, text, sizeof(text));
		return audit_mask_text(text, strlen(text));
	case VALUE_BOOLEAN:
		return audit_render_shape(param, value);
	case VALUE_ABSENT:
		break;
	}
	return NULL;
}

cJSON *
audit_arg_render(const struct policy_param *param, const struct value *value)
{
	if (value->kind == VALUE_ABSENT)
		return cJSON_CreateString("absent");
	if (!audit_kind_matches(param->type, value->kind)) {
		log_error("param '%s': value of another type", param->name);
		return NULL;
	}
	switch (param->audit) {
	case PARAM_AUDIT_SHAPE:
		return audit_render_shape(param, value);
	case PARAM_AUDIT_VALUE:
		return audit_render_value(param, value);
	case PARAM_AUDIT_MASK4:
		return audit_render_mask4(param, value);
	}
	return NULL;
}

cJSON *
audit_json_shape(const cJSON *v)
{
	char buf[40];

	if (v == NULL)
		return cJSON_CreateString("absent");
	if (cJSON_IsString(v) && v->valuestring != NULL) {
		snprintf(buf, sizeof(buf), "string(%zu)", audit_count_chars(
		    v->valuestring, strlen(v->valuestring)));
		return cJSON_CreateString(buf);
	}
	if (cJSON_IsNumber(v))
		/* json_parse_frame keeps the token: judge it, not the double */
		return cJSON_CreateString(v->valuestring != NULL &&
		    strpbrk(v->valuestring, ".eE") == NULL ? "integer" : "number");
	if (cJSON_IsBool(v))
		return cJSON_CreateString("boolean");
	if (cJSON_IsObject(v))
		return cJSON_CreateString("object");
	if (cJSON_IsArray(v))
		return cJSON_CreateString("array");
	return cJSON_CreateString("null");
}

cJSON *
audit_args_render(const struct policy_param *params, const struct value *values,
    size_t n)
{
	cJSON *obj, *item;
	size_t i;

	if ((obj = cJSON_CreateObject()) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if ((item = audit_arg_render(&params[i], &values[i])) == NULL) {
			cJSON_Delete(obj);
			return NULL;
		}
		cJSON_AddItemToObject(obj, params[i].name, item);
	}
	return obj;
}

bool
audit_text_take(struct record_text *t, cJSON *rendering)
{
	t->ptr = rendering != NULL ? cJSON_PrintUnformatted(rendering) : NULL;
	cJSON_Delete(rendering);
	t->len = t->ptr != NULL ? strlen(t->ptr) : 0;
	return t->ptr != NULL;
}

void
audit_texts_free(struct record_text *t, size_t n)
{
	size_t i;

	for (i = 0; t != NULL && i < n; i++)
		cJSON_free(t[i].ptr);
	free(t);
}
