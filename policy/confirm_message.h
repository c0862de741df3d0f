/*
 * The question a human is asked before a confirm tool runs
 * (docs/design.md section 8): the tool's confirm.message template with
 * each {param} filled, or, without one, "Allow TITLE: a = 1, b = x?"
 * (the title, else the name; absent values left out).  One structure for
 * both askers: the frontend asks the client's human and renders each
 * value sanitized on one line; the executor asks an operator through
 * sp approve and renders each value cut.  Only the value differs.
 */
#ifndef SP_POLICY_CONFIRM_MESSAGE_H
#define SP_POLICY_CONFIRM_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/value.h"
#include "policy/buf.h"
#include "policy/policy.h"

/* Appends one value of param p to b, as the asker shows it; an absent
 * value is never passed.  false on failure. */
typedef bool (*confirm_value_fn)(struct policy_buf *b,
    const struct policy_param *p, const struct value *v, void *arg);

/*
 * Appends tool's question to b, value i of the n in values belonging to
 * tool->params[i]; each present value goes through show (with arg).
 * false when b or show failed, or the template names a param past n.
 */
bool confirm_message_build(struct policy_buf *b,
    const struct policy_tool *tool, const struct value *values, size_t n,
    confirm_value_fn show, void *arg);

#endif
