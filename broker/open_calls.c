/*
 * The executor's open calls (broker/open_calls.h).  At most 256 of them
 * (limits.max_inflight): a linear scan is the whole index.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "broker/open_calls.h"

bool
open_calls_init(struct open_calls *oc, size_t cap)
{
	memset(oc, 0, sizeof(*oc));
	if (cap == 0 || (oc->calls = calloc(cap, sizeof(*oc->calls))) == NULL)
		return false;
	oc->cap = cap;
	return true;
}

static struct open_call *
open_calls_find(const struct open_calls *oc, uint64_t call_id)
{
	size_t i;

	for (i = 0; i < oc->n; i++)
		if (oc->calls[i].call_id == call_id)
			return &oc->calls[i];
	return NULL;
}

bool
open_calls_may_open(const struct open_calls *oc, uint64_t call_id)
{
	return oc->n < oc->cap && open_calls_find(oc, call_id) == NULL;
}

void
open_calls_open(struct open_calls *oc, uint64_t call_id, uint32_t tool_index,
    uint64_t now_ms)
{
	if (!open_calls_may_open(oc, call_id))
		return;
	oc->calls[oc->n].call_id = call_id;
	oc->calls[oc->n].tool_index = tool_index;
	oc->calls[oc->n].since_ms = now_ms;
	oc->n++;
}

/* Order is kept: the unknown records come out as the intents went in. */
void
open_calls_close(struct open_calls *oc, uint64_t call_id)
{
	struct open_call *c = open_calls_find(oc, call_id);
	size_t at;

	if (c == NULL)
		return;
	at = (size_t)(c - oc->calls);
	memmove(c, c + 1, (oc->n - at - 1) * sizeof(*c));
	oc->n--;
}

void
open_calls_free(struct open_calls *oc)
{
	free(oc->calls);
	memset(oc, 0, sizeof(*oc));
}
