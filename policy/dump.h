/*
 * The effective policy (sp check --dump, as sshd -T): every member with
 * the value sp acts on, defaults filled in, comments gone, in the
 * policy's own syntax, so the output loads as a policy again with the
 * same catalog fingerprint.  A timeout_ms a target or tool does not set
 * stays out (the fingerprint tells "unset" from a value): limits'
 * call_timeout_ms, always printed, is what it uses; likewise a tool's
 * limits that are "none".
 */
#ifndef SP_POLICY_DUMP_H
#define SP_POLICY_DUMP_H

#include <cjson/cJSON.h>

#include "policy/policy.h"

/* A new tree (caller cJSON_Delete()s it), or NULL when memory ran out. */
cJSON *policy_dump(const struct policy *policy);

#endif
