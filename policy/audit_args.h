/*
 * How a tool's arguments appear in an execution record (docs/design.md
 * section 6): by default only their shape, unless the param's audit mode
 * says "value" or "mask4".
 *
 *   shape: "string(N)" (N in characters, i.e. code points), "integer",
 *          "boolean", "decimal"; an optional param not supplied: "absent"
 *   value: the value itself (a JSON string, an exact integer, true/false,
 *          a decimal as a JSON number with the param's scale)
 *   mask4: "…" followed by the last four characters of the value's text
 *          (a string, or an integer's or decimal's digits); a text of four
 *          characters or fewer is shown as "…" alone, since its last four
 *          would be all of it.  A boolean is shown by shape.
 */
#ifndef SP_POLICY_AUDIT_ARGS_H
#define SP_POLICY_AUDIT_ARGS_H

#include <cjson/cJSON.h>

#include "common/record.h"
#include "common/value.h"
#include "policy/policy.h"

/* One argument's rendering; the caller owns the result (NULL when out of
 * memory or the value does not match the param's type). */
cJSON *audit_arg_render(const struct policy_param *param,
    const struct value *value);

/* An object {param name: rendering} for n params and their n values, in
 * declaration order; the caller owns it.  NULL on failure. */
cJSON *audit_args_render(const struct policy_param *params,
    const struct value *values, size_t n);

/*
 * The shape of a JSON value a client sent, for a refused call whose
 * arguments were never accepted (so never a value, whatever the param's
 * audit mode): "string(N)" (N characters), "integer" (a number token
 * without fraction or exponent), "number", "boolean", "null", "object",
 * "array"; NULL (absent) gives "absent".  The caller owns the result
 * (NULL when out of memory).
 */
cJSON *audit_json_shape(const cJSON *v);

/* Sets *t to the compact JSON text of rendering, which it consumes; false
 * when rendering is NULL (its allocation failed) or out of memory.
 * t->ptr is the caller's, freed by audit_texts_free. */
bool audit_text_take(struct record_text *t, cJSON *rendering);

/* Frees the first n texts of t that audit_text_take set, then t itself
 * (calloc'd by the caller); NULL is nothing. */
void audit_texts_free(struct record_text *t, size_t n);

#endif
