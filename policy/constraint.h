/*
 * The one constraint checker on typed values (common/value.h), used by the
 * frontend after it turned JSON into values and by the executor on the
 * values of each action record: string length in code points, whole-value
 * pattern match (policy/pattern.h, bounded), enum membership, integer and
 * decimal ranges.  The param's pattern_re comes from pattern_compile().
 */
#ifndef SP_POLICY_CONSTRAINT_H
#define SP_POLICY_CONSTRAINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/value.h"
#include "policy/policy.h"

/* Reasons are short sentences without the param name ("must be ..."). */
#define CONSTRAINT_REASON_MAX 128

/*
 * Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF)
 * with no NUL byte.  Stores the number of code points in *count.
 */
bool constraint_utf8_count(const char *s, size_t len, size_t *count);

/*
 * Checks v against p.  VALUE_ABSENT passes only when p is optional; any
 * other kind must match p's type.  On failure writes a reason into
 * why[why_size] (truncated) and returns false.
 */
bool constraint_check(const struct policy_param *p, const struct value *v,
    char *why, size_t why_size);

/*
 * The executor's re-validation: n must equal tool->param_count and each
 * value must pass constraint_check.  The reason names the param.
 */
bool policy_values_check(const struct policy_tool *tool,
    const struct value *values, size_t n, char *reason, size_t reason_size);

/*
 * Writes minor units as a decimal string with scale fraction digits
 * ("-12.50"); out needs at least 24 bytes.  Used for messages, bodies and
 * the catalog.
 */
void constraint_format_decimal(int64_t minor, unsigned scale, char *out,
    size_t out_size);

#endif
