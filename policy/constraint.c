#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/utf8.h"
#include "policy/constraint.h"
#include "policy/pattern.h"

/* Strict UTF-8 is common/utf8's; only the NUL refusal is the policy's. */
bool
constraint_utf8_count(const char *s, size_t len, size_t *count)
{
	if (memchr(s, '\0', len) != NULL)
		return false;
	return utf8_count_code_points((const uint8_t *)s, len, count);
}

void
constraint_format_decimal(int64_t minor, unsigned scale, char *out,
    size_t out_size)
{
	/* Work on the magnitude as unsigned so INT64_MIN has one. */
	uint64_t mag = minor < 0 ? (uint64_t)0 - (uint64_t)minor : (uint64_t)minor;
	uint64_t div = 1;
	unsigned i;

	for (i = 0; i < scale && i < 19; i++)
		div *= 10;
	if (scale == 0)
		snprintf(out, out_size, "%s%" PRIu64, minor < 0 ? "-" : "", mag);
	else
		snprintf(out, out_size, "%s%" PRIu64 ".%0*" PRIu64,
		    minor < 0 ? "-" : "", mag / div, (int)scale, mag % div);
}

static bool
constraint_string_enum(const struct policy_param *p, const struct value *v)
{
	size_t i;

	for (i = 0; i < p->enum_count; i++)
		if (strlen(p->enum_values[i]) == v->u.str.len &&
		    memcmp(p->enum_values[i], v->u.str.ptr, v->u.str.len) == 0)
			return true;
	return false;
}

/* "must be one of: a, b, c" cut to fit; the catalog lists them all. */
static void
constraint_enum_reason(const struct policy_param *p, char *why, size_t size)
{
	size_t i, used;

	used = (size_t)snprintf(why, size, "must be one of:");
	for (i = 0; i < p->enum_count && used < size; i++)
		used += (size_t)snprintf(why + used, size - used, "%s \"%s\"",
		    i == 0 ? "" : ",", p->enum_values[i]);
}

/* A match that hit a limit refuses the value as well as a mismatch. */
static bool
constraint_string_pattern(const struct policy_param *p, const struct value *v,
    char *why, size_t size)
{
	switch (pattern_match(p->pattern_re, v->u.str.ptr, v->u.str.len)) {
	case PATTERN_MATCH:
		return true;
	case PATTERN_NO_MATCH:
		snprintf(why, size, "must match the pattern %s", p->pattern);
		return false;
	case PATTERN_TOO_COSTLY:
		break;
	}
	snprintf(why, size, "could not be matched against the pattern within "
	    "its limits; send a shorter or simpler value");
	return false;
}

static bool
constraint_check_string(const struct policy_param *p, const struct value *v,
    char *why, size_t size)
{
	size_t chars;

	if (v->u.str.ptr == NULL ||
	    !constraint_utf8_count(v->u.str.ptr, v->u.str.len, &chars)) {
		snprintf(why, size, "must be UTF-8 text without NUL characters");
		return false;
	}
	if (chars < p->min_length) {
		snprintf(why, size, "must be at least %zu characters long, not %zu",
		    p->min_length, chars);
		return false;
	}
	if (chars > p->max_length) {
		snprintf(why, size, "must be at most %zu characters long, not %zu",
		    p->max_length, chars);
		return false;
	}
	if (p->enum_count > 0 && !constraint_string_enum(p, v)) {
		constraint_enum_reason(p, why, size);
		return false;
	}
	if (p->pattern != NULL)
		return constraint_string_pattern(p, v, why, size);
	return true;
}

/* Integers and decimals share the range check; decimals print scaled. */
static void
constraint_format_number(const struct policy_param *p, int64_t n, char *out,
    size_t size)
{
	if (p->type == PARAM_DECIMAL)
		constraint_format_decimal(n, p->scale, out, size);
	else
		snprintf(out, size, "%" PRId64, n);
}

static bool
constraint_check_range(const struct policy_param *p, int64_t n, char *why,
    size_t size)
{
	char bound[32];

	if (p->has_minimum && n < p->minimum) {
		constraint_format_number(p, p->minimum, bound, sizeof(bound));
		snprintf(why, size, "must be at least %s", bound);
		return false;
	}
	if (p->has_maximum && n > p->maximum) {
		constraint_format_number(p, p->maximum, bound, sizeof(bound));
		snprintf(why, size, "must be at most %s", bound);
		return false;
	}
	return true;
}

static enum value_kind
constraint_kind_of(enum param_type type)
{
	switch (type) {
	case PARAM_STRING:
		return VALUE_STRING;
	case PARAM_INTEGER:
		return VALUE_INTEGER;
	case PARAM_BOOLEAN:
		return VALUE_BOOLEAN;
	case PARAM_DECIMAL:
		return VALUE_DECIMAL;
	}
	return VALUE_ABSENT;
}

bool
constraint_check(const struct policy_param *p, const struct value *v,
    char *why, size_t why_size)
{
	if (v->kind == VALUE_ABSENT) {
		if (!p->required)
			return true;
		snprintf(why, why_size, "is required");
		return false;
	}
	if (v->kind != constraint_kind_of(p->type)) {
		snprintf(why, why_size, "has the wrong type");
		return false;
	}
	switch (p->type) {
	case PARAM_STRING:
		return constraint_check_string(p, v, why, why_size);
	case PARAM_INTEGER:
		return constraint_check_range(p, v->u.integer, why, why_size);
	case PARAM_DECIMAL:
		return constraint_check_range(p, v->u.decimal_minor, why,
		    why_size);
	case PARAM_BOOLEAN:
		return true;
	}
	return false;
}

bool
policy_values_check(const struct policy_tool *tool, const struct value *values,
    size_t n, char *reason, size_t reason_size)
{
	char why[CONSTRAINT_REASON_MAX];
	size_t i;

	if (n != tool->param_count) {
		snprintf(reason, reason_size, "%s: %zu values for %zu params",
		    tool->name, n, tool->param_count);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (!constraint_check(&tool->params[i], &values[i], why,
		    sizeof(why))) {
			snprintf(reason, reason_size, "%s: %s %s", tool->name,
			    tool->params[i].name, why);
			return false;
		}
	}
	return true;
}
