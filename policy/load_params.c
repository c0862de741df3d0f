/*
 * A tool's "params": each a typed, bounded argument.  Every string has a
 * maxLength; a pattern (policy/pattern.h) must match the whole value;
 * enum values must themselves pass the param's other constraints;
 * decimals are exact (minor units), so floats are refused everywhere.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/value.h"
#include "policy/constraint.h"
#include "policy/load_ctx.h"
#include "policy/pattern.h"

#define STRING_LENGTH_MAX 65536

static const char *const type_names[] = {
	[PARAM_STRING] = "string", [PARAM_INTEGER] = "integer",
	[PARAM_BOOLEAN] = "boolean", [PARAM_DECIMAL] = "decimal",
};

static bool
param_type(struct load_ctx *ctx, const cJSON *obj, enum param_type *out)
{
	const cJSON *t = ctx_member(ctx, obj, "type", true);
	size_t i;

	if (t == NULL)
		return false;
	for (i = 0; i < 4; i++)
		if (cJSON_IsString(t) && strcmp(t->valuestring, type_names[i]) == 0) {
			*out = (enum param_type)i;
			return true;
		}
	ctx_error(ctx, t, "must be \"string\", \"integer\", \"boolean\" or "
	    "\"decimal\"");
	return false;
}

/* Keys allowed for the type; others are unknown or of another type. */
static void
param_keys(struct load_ctx *ctx, const cJSON *obj, const enum param_type *type)
{
	/* one NULL at least ends each row, for ctx_near_scan() */
	static const char *const by_type[][6] = {
		[PARAM_STRING] = { "minLength", "maxLength", "pattern", "enum",
		    "allow_leading_dash" },
		[PARAM_INTEGER] = { "minimum", "maximum", "allow_leading_dash" },
		[PARAM_BOOLEAN] = { NULL },
		[PARAM_DECIMAL] = { "scale", "minimum", "maximum",
		    "allow_leading_dash" },
	};
	static const char *const common[] = { "type", "description",
	    "required", "audit", NULL };
	const cJSON *m;
	const char *const *k;
	char q[LOAD_QUOTE_SIZE], hint[64];
	struct ctx_near near;
	size_t t;
	bool known;

	cJSON_ArrayForEach(m, obj) {
		for (known = false, k = common; *k != NULL && !known; k++)
			known = strcmp(*k, m->string) == 0;
		for (t = 0; t < 4 && !known; t++)
			for (k = by_type[t]; k < by_type[t] + 5 && *k != NULL; k++)
				if (strcmp(*k, m->string) == 0 &&
				    (type == NULL || *type == t)) {
					known = true;
					break;
				}
		if (known)
			continue;
		memset(&near, 0, sizeof(near));
		ctx_near_scan(&near, m->string, common);
		if (type != NULL)
			ctx_near_scan(&near, m->string, by_type[*type]);
		ctx_near_hint(&near, hint, sizeof(hint));
		ctx_quote(m->string, q, sizeof(q));
		if (type != NULL)
			ctx_error_key(ctx, m, "unknown key %s for a %s param%s",
			    q, type_names[*type], hint);
		else
			ctx_error_key(ctx, m, "unknown key %s%s", q, hint);
	}
}

static void
param_audit(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	const cJSON *a = ctx_member(ctx, obj, "audit", false);

	if (a == NULL)
		return;
	if (cJSON_IsString(a) && strcmp(a->valuestring, "shape") == 0)
		p->audit = PARAM_AUDIT_SHAPE;
	else if (cJSON_IsString(a) && strcmp(a->valuestring, "value") == 0)
		p->audit = PARAM_AUDIT_VALUE;
	else if (cJSON_IsString(a) && strcmp(a->valuestring, "mask4") == 0)
		p->audit = PARAM_AUDIT_MASK4;
	else
		ctx_error(ctx, a, "must be \"shape\", \"value\" or \"mask4\"");
}

static void
param_pattern(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	const cJSON *m = ctx_member(ctx, obj, "pattern", false);
	char why[320];

	if (m == NULL)
		return;
	if (!cJSON_IsString(m)) {
		ctx_error(ctx, m, "must be a string");
		return;
	}
	if (!pattern_compile(m->valuestring, &p->pattern_re, why,
	    sizeof(why))) {
		ctx_error(ctx, m, "%s", why);
		return;
	}
	if ((p->pattern = ctx_strdup(ctx, m->valuestring)) == NULL) {
		pattern_free(p->pattern_re);
		p->pattern_re = NULL;
	}
}

static void
param_enum(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	const cJSON *list = ctx_member(ctx, obj, "enum", false), *e, *f;
	char q[LOAD_QUOTE_SIZE], why[CONSTRAINT_REASON_MAX];
	struct value v = { .kind = VALUE_STRING };
	size_t n = 0;

	if (list == NULL)
		return;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
		ctx_error(ctx, list, "must be a non-empty array of strings");
		return;
	}
	p->enum_values = calloc((size_t)cJSON_GetArraySize(list),
	    sizeof(*p->enum_values));
	if (p->enum_values == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, list) {
		if (!cJSON_IsString(e)) {
			ctx_error(ctx, e, "must be a string");
			continue;
		}
		ctx_quote(e->valuestring, q, sizeof(q));
		for (f = list->child; f != e; f = f->next)
			if (cJSON_IsString(f) &&
			    strcmp(f->valuestring, e->valuestring) == 0)
				break;
		v.u.str.ptr = e->valuestring;
		v.u.str.len = strlen(e->valuestring);
		if (f != e)
			ctx_error(ctx, e, "enum value %s is listed twice", q);
		else if (!constraint_check(p, &v, why, sizeof(why)))
			ctx_error(ctx, e, "enum value %s %s", q, why);
		else
			p->enum_values[n++] = ctx_strdup(ctx, e->valuestring);
	}
	p->enum_count = n;
}

static void
param_string(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	int64_t min = 0, max = POLICY_STRING_DEFAULT_MAX;
	bool min_ok, max_ok;

	min_ok = ctx_integer(ctx, obj, "minLength", 0, STRING_LENGTH_MAX, &min);
	max_ok = ctx_integer(ctx, obj, "maxLength", 1, STRING_LENGTH_MAX, &max);
	p->min_length = (size_t)min;
	p->max_length = (size_t)max;
	if (min_ok && max_ok && min > max) {
		ctx_error(ctx, ctx_member(ctx, obj, "minLength", false),
		    "minLength %lld is greater than maxLength %lld",
		    (long long)min, (long long)max);
		return;
	}
	param_pattern(ctx, obj, p);
	param_enum(ctx, obj, p);
}

/* "-12.5" at scale 2 is -1250 minor units; more fraction digits refused. */
static bool
decimal_to_minor(const char *s, unsigned scale, int64_t *out)
{
	const char *d = s + (s[0] == '-');
	size_t frac = 0;
	int64_t v = 0;
	bool point = false, any = false;

	for (; *d != '\0'; d++) {
		if (*d == '.' && !point && any) {
			point = true;
			continue;
		}
		if (*d < '0' || *d > '9' || (point && ++frac > scale) ||
		    v > (INT64_MAX - (*d - '0')) / 10)
			return false;
		v = v * 10 + (*d - '0');
		any = true;
	}
	if (!any || (point && frac == 0))
		return false;
	for (; frac < scale; frac++) {
		if (v > INT64_MAX / 10)
			return false;
		v *= 10;
	}
	*out = s[0] == '-' ? -v : v;
	return true;
}

/* A decimal bound: a string of digits or a JSON integer, never a float. */
static bool
decimal_bound(struct load_ctx *ctx, const cJSON *m, unsigned scale,
    int64_t *out)
{
	char buf[32];
	const char *t;
	size_t len;

	if (cJSON_IsString(m)) {
		if (decimal_to_minor(m->valuestring, scale, out))
			return true;
		ctx_error(ctx, m, "must be a decimal with at most %u digits after "
		    "the point", scale);
		return false;
	}
	t = cJSON_IsNumber(m) ? ctx_number_text(ctx, m, &len) : "";
	if (!cJSON_IsNumber(m) || len >= sizeof(buf) || memchr(t, '.', len) ||
	    memchr(t, 'e', len) || memchr(t, 'E', len)) {
		ctx_error(ctx, m, "must be a decimal string such as \"12.50\" "
		    "(floats are refused)");
		return false;
	}
	memcpy(buf, t, len);
	buf[len] = '\0';
	if (decimal_to_minor(buf, scale, out))
		return true;
	ctx_error(ctx, m, "is out of range");
	return false;
}

static bool
param_bound(struct load_ctx *ctx, const cJSON *obj, const char *key,
    struct policy_param *p, int64_t *out)
{
	const cJSON *m = ctx_member(ctx, obj, key, false);

	if (m == NULL)
		return false;
	if (p->type == PARAM_INTEGER)
		return ctx_integer_value(ctx, m, INT64_MIN, INT64_MAX, out);
	return decimal_bound(ctx, m, p->scale, out);
}

static void
param_number(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	int64_t scale = 0;
	const cJSON *s;

	if (p->type == PARAM_DECIMAL) {
		s = ctx_member(ctx, obj, "scale", true);
		if (s == NULL || !ctx_integer_value(ctx, s, 0, 18, &scale))
			return;
		p->scale = (unsigned)scale;
	}
	p->has_minimum = param_bound(ctx, obj, "minimum", p, &p->minimum);
	p->has_maximum = param_bound(ctx, obj, "maximum", p, &p->maximum);
	if (p->has_minimum && p->has_maximum && p->minimum > p->maximum)
		ctx_error(ctx, ctx_member(ctx, obj, "minimum", false),
		    "minimum is greater than maximum");
}

static void
load_param(struct load_ctx *ctx, const cJSON *obj, struct policy_param *p)
{
	const cJSON *d;

	if (!ctx_require_object(ctx, obj))
		return;
	if (!param_type(ctx, obj, &p->type)) {
		param_keys(ctx, obj, NULL);
		return;
	}
	param_keys(ctx, obj, &p->type);
	if (ctx_string(ctx, obj, "description", false, &p->description) &&
	    p->description != NULL && ctx_utf8_count(p->description) >
	    POLICY_DESCRIPTION_MAX) {
		d = ctx_member(ctx, obj, "description", false);
		ctx_error(ctx, d, "description is %zu characters; at most %d",
		    ctx_utf8_count(p->description), POLICY_DESCRIPTION_MAX);
	}
	ctx_bool(ctx, obj, "required", &p->required);
	ctx_bool(ctx, obj, "allow_leading_dash", &p->allow_leading_dash);
	param_audit(ctx, obj, p);
	if (p->type == PARAM_STRING)
		param_string(ctx, obj, p);
	else if (p->type == PARAM_INTEGER || p->type == PARAM_DECIMAL)
		param_number(ctx, obj, p);
}

bool
load_params(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool)
{
	const cJSON *all = ctx_member(ctx, tool_obj, "params", false), *e;
	struct policy_param *p;
	char q[LOAD_QUOTE_SIZE];

	if (all == NULL)
		return true;
	if (!ctx_require_object(ctx, all))
		return false;
	tool->params = calloc((size_t)cJSON_GetArraySize(all) + 1,
	    sizeof(*tool->params));
	if (tool->params == NULL) {
		ctx_out_of_memory(ctx);
		return false;
	}
	cJSON_ArrayForEach(e, all) {
		if (!ctx_name_matches(e->string, LOAD_LOWER, LOAD_LOWER LOAD_DIGIT
		    "_", POLICY_NAME_MAX)) {
			ctx_quote(e->string, q, sizeof(q));
			ctx_error_key(ctx, e, "bad param name %s (want "
			    "^[a-z][a-z0-9_]{0,63}$)", q);
		}
		p = &tool->params[tool->param_count++];
		p->name = ctx_strdup(ctx, e->string);
		p->required = true;
		p->max_length = POLICY_STRING_DEFAULT_MAX;
		load_param(ctx, e, p);
	}
	return true;
}

void
load_free_param(struct policy_param *p)
{
	size_t i;

	free(p->name);
	free(p->description);
	pattern_free(p->pattern_re);
	free(p->pattern);
	for (i = 0; i < p->enum_count; i++)
		free(p->enum_values[i]);
	free(p->enum_values);
}
