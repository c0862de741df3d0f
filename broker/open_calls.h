/*
 * The calls a session's executor has announced and not yet reported on
 * (docs/design.md section 6): an intent was written, no execution was.
 * The broker sees both go by as audit events; when the executor dies
 * with calls open, it writes an execution record with outcome "unknown"
 * for each, the outcome the client was told (section 1, invariant 6), so
 * no intent in the log is left without its end.
 *
 * An honest executor holds at most limits.max_inflight calls, and
 * reports each before it takes the next; the set is that big and no
 * bigger: an intent that would not fit (or repeats an open call id) is
 * refused, so the executor does not act on it.
 */
#ifndef SP_BROKER_OPEN_CALLS_H
#define SP_BROKER_OPEN_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct open_call {
	uint64_t call_id;
	uint32_t tool_index;
	uint64_t since_ms;	/* when its intent was written, monotonic */
};

struct open_calls {
	struct open_call *calls;	/* owned, cap slots */
	size_t cap;
	size_t n;
};

/* cap is limits.max_inflight.  false when out of memory. */
bool open_calls_init(struct open_calls *oc, size_t cap);

/* true when an intent for call_id may be written: room, and not open. */
bool open_calls_may_open(const struct open_calls *oc, uint64_t call_id);

/* Records an intent that open_calls_may_open() allowed and was written. */
void open_calls_open(struct open_calls *oc, uint64_t call_id,
    uint32_t tool_index, uint64_t now_ms);

/* The execution of call_id arrived; a call id not open is ignored. */
void open_calls_close(struct open_calls *oc, uint64_t call_id);

void open_calls_free(struct open_calls *oc);

#endif
