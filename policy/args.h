/*
 * Argument validation for the frontend: a tools/call "arguments" value
 * (cJSON) into typed values for one tool, or an error report shaped for
 * the model (docs/design.md section 5).
 *
 * Arguments must be an object; a JSON string holding an object is parsed
 * once, by the frame's strict parser (json_parse_frame, JSON_DEPTH_DEFAULT),
 * so it is judged exactly like a direct object; a missing arguments member
 * (NULL) counts as {}.  Unknown members are refused (additionalProperties
 * false), required params must be there, types are exact (below), then
 * constraint_check() runs on each value.
 *
 * Types: integer is a JSON number judged by its raw token (which
 * json_parse_frame keeps in valuestring), never by cJSON's double: written
 * as "-?[0-9]+" with at most an all-zero fraction, no exponent, magnitude
 * at most 2^53-1; a number without a kept token (a tree not built by
 * json_parse_frame) is refused.  boolean is true or false; decimal is a
 * JSON string "-?[0-9]+(.[0-9]{1,scale})?" read exactly into minor units
 * (a JSON number is refused: it would have been rounded on the way);
 * string is a JSON string of valid UTF-8.
 *
 * Params are scalars, so every path is a top-level member name; there are
 * no array indices to fold.  A value that is itself an array of many bad
 * items is one problem at one path.
 */
#ifndef SP_POLICY_ARGS_H
#define SP_POLICY_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/value.h"
#include "policy/policy.h"

#define ARGS_ERROR_PATHS_SHOWN 10	/* then "and N more" */
#define ARGS_ERROR_LINE_MAX 120		/* characters per "path: message" */
#define ARGS_MEMBERS_MAX 256		/* more members: one message, no detail */

struct args_error {
	char *path;			/* heap, display form of the member name */
	char *message;			/* heap, "path: reason", <= LINE_MAX chars */
};

/*
 * One entry per distinct path, in the order found.  Zero-initialize;
 * args_error_report_free() releases the entries.
 */
struct args_error_report {
	struct args_error *errors;
	size_t count;
	size_t cap;
};

/*
 * On success returns true and sets *out to a heap array of
 * tool->param_count values (caller frees with value_array_free); absent
 * optional params are VALUE_ABSENT.  On failure returns false, *out is
 * NULL and err holds at least one entry.
 */
bool policy_args_validate(const struct policy_tool *tool,
    const cJSON *arguments, struct value **out, struct args_error_report *err);

/*
 * The text for the model: a first line naming the tool, one line per path
 * (at most ARGS_ERROR_PATHS_SHOWN), then "and N more" when there are more.
 * Returns a heap string (caller frees), NULL on allocation failure.
 */
char *args_error_report_text(const struct args_error_report *err,
    const char *tool_name);

void args_error_report_free(struct args_error_report *err);

/*
 * Text a human typed, read as p's canonical value (the same grammar as
 * an argument: an integer token, a decimal with at most p's scale,
 * true/false, a string as it is), so "7" and "7.0" are the same integer
 * and "12.5" the same decimal as "12.50".  Constraints are not checked:
 * the caller compares with a value that passed them.  false: no value.
 */
bool policy_arg_from_text(const struct policy_param *p, const char *text,
    struct value *v);

#endif
