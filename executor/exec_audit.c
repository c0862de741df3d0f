/*
 * The executor's audit events, sent to the broker on the control
 * channel (docs/design.md section 6):
 *
 *   INTENT     before acting: call id, tool index, and one shape per
 *              param, each the compact JSON of policy/audit_args.h's
 *              rendering ("\"string(36)\"", "42", "\"…1234\""), so the
 *              broker can parse it back and never sees a raw value the
 *              param did not allow.  The call then waits for the
 *              broker's AUDIT_ACK (dispatch.c).
 *   EXECUTION  once the result is known: outcome, HTTP or exit status,
 *              duration.  For a mutating tool the result is held until
 *              the broker acks this record as synced; a read-only
 *              tool's result is sent just before it (dispatch.c).
 *
 * Both carry the same shapes, rendered once per call and kept with it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/audit_args.h"
#include "common/log.h"
#include "executor/dispatch_int.h"

/* One rendered shape per param; NULL on failure (logged). */
static struct record_text *
exec_audit_shapes(const struct dispatch_call *c)
{
	const struct policy_tool *tool = c->tool;
	struct record_text *shapes;
	size_t i;

	if ((shapes = calloc(tool->param_count + 1, sizeof(*shapes))) == NULL)
		goto fail;
	for (i = 0; i < tool->param_count && i < c->arg_count; i++)
		if (!audit_text_take(&shapes[i], audit_arg_render(
		    &tool->params[i], &c->args[i]))) {
			audit_texts_free(shapes, i);
			goto fail;
		}
	return shapes;
fail:
	log_error("call %llu: cannot render arguments",
	    (unsigned long long)c->call_id);
	return NULL;
}

static bool
exec_audit_send(const struct dispatch_call *c,
    const struct record_audit_event *ev)
{
	return channel_send(c->d->ctx->chan, RECORD_ROLE_BROKER,
	    RECORD_AUDIT_EVENT, ev);
}

/* The shapes of c's arguments, rendered on first use and kept in c. */
static bool
exec_audit_shapes_of(struct dispatch_call *c)
{
	if (c->shapes != NULL)
		return true;
	c->shape_count = c->tool->param_count < c->arg_count ?
	    c->tool->param_count : c->arg_count;
	return (c->shapes = exec_audit_shapes(c)) != NULL;
}

void
exec_audit_forget(struct dispatch_call *c)
{
	audit_texts_free(c->shapes, c->shape_count);
	c->shapes = NULL;
	c->shape_count = 0;
}

/*
 * The intent also carries each value's digest: the broker decides limits
 * and duplicates on them (state/limits.h) without seeing a value.  So
 * does the "asked" confirmation of a tool with a journal, which the
 * broker's journal answers before a human is asked (docs/design.md
 * section 9).
 */
bool
exec_audit_with_values(struct dispatch_call *c, struct record_audit_event *ev)
{
	bool ok;
	size_t i;

	if (!exec_audit_shapes_of(c))
		return false;
	ev->call_id = c->call_id;
	ev->tool_index = c->tool_index;
	ev->shape_count = c->shape_count;
	ev->shapes = c->shapes;
	if (c->shape_count > 0 && (ev->digests = calloc(c->shape_count,
	    sizeof(*ev->digests))) == NULL)
		return false;
	ev->digest_count = c->shape_count;
	for (i = 0; i < c->shape_count; i++)
		value_digest(&c->args[i], ev->digests[i]);
	ok = exec_audit_send(c, ev);
	free(ev->digests);
	ev->digests = NULL;
	ev->digest_count = 0;
	return ok;
}

bool
exec_audit_intent(struct dispatch_call *c)
{
	struct record_audit_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	return exec_audit_with_values(c, &ev);
}

bool
exec_audit_execution(struct dispatch_call *c, enum record_outcome outcome,
    int32_t status, uint64_t duration_us)
{
	struct record_audit_event ev;
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.call_id = c->call_id;
	ev.tool_index = c->tool_index;
	ev.outcome = outcome;
	ev.status = status;
	ev.duration_us = duration_us;
	/* The execution record stands alone: it repeats the shapes. */
	ok = exec_audit_shapes_of(c);
	ev.shape_count = c->shape_count;
	ev.shapes = c->shapes;
	ok = ok && exec_audit_send(c, &ev);
	if (!ok)
		log_error("call %llu not audited",
		    (unsigned long long)c->call_id);
	return ok;
}
