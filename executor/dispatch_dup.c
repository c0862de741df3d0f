/*
 * Duplicates (docs/design.md section 9): the broker answers a mutating
 * call's intent DUPLICATE when an identical call is in flight or ended
 * within limits.dedupe_ms; such a call never acts.  It waits for the
 * first call's result, or takes the kept one, and is answered with a copy
 * marked RESULT_DUPLICATE and duplicate_of.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "common/log.h"
#include "executor/dispatch_int.h"

/* The copy of first's encoded result, as w's. */
static void
dispatch_dup_answer(struct dispatch_call *w, const struct buf *first,
    uint64_t first_id)
{
	const struct record_limits *limits = &w->d->ctx->limits;
	struct record_result r;

	if (record_result_decode(buf_ptr(first), buf_len(first), limits, &r) !=
	    RECORD_OK) {
		log_error("call %llu: the result it repeats does not decode",
		    (unsigned long long)w->call_id);
		dispatch_answer(w, RECORD_OUTCOME_FAILED, 0, "a duplicate of a "
		    "call whose result is lost; nothing was sent for it");
		return;
	}
	r.call_id = w->call_id;
	r.flags |= RESULT_DUPLICATE;
	r.duplicate_of = first_id;
	buf_free(&w->result);
	buf_init_writer(&w->result, RECORD_MAX_BYTES);
	if (record_result_encode(&r, limits, &w->result) != RECORD_OK) {
		record_result_free(&r);
		dispatch_answer(w, RECORD_OUTCOME_FAILED, 0, "a duplicate whose "
		    "answer could not be copied; nothing was sent for it");
		return;
	}
	record_result_free(&r);
	dispatch_send_result(w);
}

static struct dispatch_call *
dispatch_dup_waiter(struct dispatch *d, uint64_t first_id)
{
	struct dispatch_call *c;

	for (c = d->calls; c != NULL; c = c->next)
		if (c->state == CALL_WAITING_FIRST && c->dup_of == first_id)
			return c;
	return NULL;
}

void
dispatch_dup_keep(struct dispatch_call *c)
{
	struct dispatch *d = c->d;
	struct dispatch_kept *k;
	struct dispatch_call *w;

	if (!c->tool->mutating || c->dup_of != 0)
		return;
	k = &d->kept[d->kept_next];
	d->kept_next = (d->kept_next + 1) % DISPATCH_KEPT_MAX;
	buf_free(&k->result);
	k->call_id = c->call_id;
	k->result = c->result;		/* moved: c is freed next */
	memset(&c->result, 0, sizeof(c->result));
	while ((w = dispatch_dup_waiter(d, c->call_id)) != NULL)
		dispatch_dup_answer(w, &k->result, c->call_id);
}

static const struct dispatch_kept *
dispatch_dup_kept(const struct dispatch *d, uint64_t first_id)
{
	size_t i;

	for (i = 0; i < DISPATCH_KEPT_MAX; i++)
		if (d->kept[i].call_id == first_id)
			return &d->kept[i];
	return NULL;
}

static struct dispatch_call *
dispatch_dup_first(struct dispatch *d, uint64_t first_id)
{
	struct dispatch_call *c;

	for (c = d->calls; c != NULL; c = c->next)
		if (c->call_id == first_id && c->dup_of == 0)
			return c;
	return NULL;
}

void
dispatch_dup_wait(struct dispatch_call *c, uint64_t first_id)
{
	/* The first may wait for its own record up to its budget again. */
	struct timeval tv = { (2u * c->budget_ms + 1000u) / 1000,
	    ((2u * c->budget_ms + 1000u) % 1000) * 1000 };
	const struct dispatch_kept *k;

	c->dup_of = first_id;
	if (dispatch_dup_first(c->d, first_id) != NULL) {
		c->state = CALL_WAITING_FIRST;
		if (evtimer_add(c->ack_timer, &tv) == -1)
			log_warn("call %llu: waits for call %llu without a "
			    "timer", (unsigned long long)c->call_id,
			    (unsigned long long)first_id);
		return;
	}
	if ((k = dispatch_dup_kept(c->d, first_id)) != NULL) {
		dispatch_dup_answer(c, &k->result, first_id);
		return;
	}
	dispatch_answer(c, RECORD_OUTCOME_FAILED, 0, "a duplicate of a call "
	    "whose result is no longer held; nothing was sent for it");
}

void
dispatch_dup_free(struct dispatch *d)
{
	size_t i;

	for (i = 0; i < DISPATCH_KEPT_MAX; i++)
		buf_free(&d->kept[i].result);
}
