/*
 * The question a human is asked before a confirm tool runs
 * (docs/design.md section 8): the tool's confirm.message template with
 * each {param} filled, or, without one, "Allow TITLE: a = 1, b = x?"
 * (the title, else the name; absent values left out).  Both askers show
 * this one rendering: the frontend to the client's human, the executor
 * to an operator through sp approve, so what either reads is the same.
 *
 * What a human reads is what is sent: every character that does not
 * show what it is -- controls (a value's line breaks too, so a value
 * cannot write lines that read as the template's), format, bidi and tag
 * characters, look-alikes of ASCII -- is shown escaped as \u{XXXX}, and
 * a value's backslash as \\ (common/text_escape.h); nothing is folded or
 * dropped.  Whatever is cut is said, with its length:
 * - each value at most CONFIRM_MESSAGE_VALUE_CHARS characters as shown,
 *   fewer when many values share CONFIRM_MESSAGE_VALUES_CHARS (never
 *   below CONFIRM_MESSAGE_VALUE_MIN), so every param still appears; an
 *   escape is never split; a cut value is followed by
 *   "… (cut: shown 120 of 1234 chars)", counted in the value's code
 *   points;
 * - the whole at most CONFIRM_MESSAGE_CHARS characters, then
 *   "… (question cut: shown 1000 of 4321 chars)".
 */
#ifndef SP_POLICY_CONFIRM_MESSAGE_H
#define SP_POLICY_CONFIRM_MESSAGE_H

#include <stddef.h>

#include "common/value.h"
#include "policy/policy.h"

#define CONFIRM_MESSAGE_VALUE_CHARS 120
#define CONFIRM_MESSAGE_VALUES_CHARS 600
#define CONFIRM_MESSAGE_VALUE_MIN 16
#define CONFIRM_MESSAGE_CHARS 1000
/* The most bytes a question takes: each character shown at most 4
 * bytes, and the whole's cut marker. */
#define CONFIRM_MESSAGE_BYTES_MAX (4 * CONFIRM_MESSAGE_CHARS + 64)

/*
 * tool's question, value i of the n in values belonging to
 * tool->params[i]: heap memory the caller frees, NUL-terminated, its
 * length in *len.  NULL when out of memory or the template names a
 * param past n.
 */
char *confirm_message_render(const struct policy_tool *tool,
    const struct value *values, size_t n, size_t *len);

#endif
