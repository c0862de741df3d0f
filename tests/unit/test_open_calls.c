/*
 * broker/open_calls.h: the executor's calls with an intent and no
 * execution yet, bounded by limits.max_inflight.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdint.h>

#include "broker/open_calls.h"

Test(open_calls, full_at_cap_and_room_again_once_one_ends)
{
	struct open_calls oc;

	cr_assert(open_calls_init(&oc, 3));
	open_calls_open(&oc, 1, 0, 10);
	open_calls_open(&oc, 2, 1, 11);
	open_calls_open(&oc, UINT64_MAX, 0, 12);
	cr_assert_eq(oc.n, 3);
	cr_assert_not(open_calls_may_open(&oc, 4));
	open_calls_open(&oc, 4, 0, 13);		/* refused: not added */
	cr_assert_eq(oc.n, 3);
	open_calls_close(&oc, 2);
	cr_assert(open_calls_may_open(&oc, 4));
	open_calls_free(&oc);
}

Test(open_calls, an_open_call_id_cannot_open_twice)
{
	struct open_calls oc;

	cr_assert(open_calls_init(&oc, 4));
	open_calls_open(&oc, 7, 0, 1);
	cr_assert_not(open_calls_may_open(&oc, 7));
	open_calls_open(&oc, 7, 1, 2);
	cr_assert_eq(oc.n, 1);
	cr_assert_eq(oc.calls[0].tool_index, 0);
	open_calls_free(&oc);
}

Test(open_calls, closing_keeps_the_order_and_ignores_unknown_ids)
{
	struct open_calls oc;
	uint64_t id;

	cr_assert(open_calls_init(&oc, 8));
	for (id = 1; id <= 5; id++)
		open_calls_open(&oc, id, (uint32_t)id, 100 + id);
	open_calls_close(&oc, 99);
	open_calls_close(&oc, 0);
	cr_assert_eq(oc.n, 5);
	open_calls_close(&oc, 3);
	open_calls_close(&oc, 5);
	open_calls_close(&oc, 3);		/* a second execution: ignored */
	cr_assert_eq(oc.n, 3);
	cr_assert_eq(oc.calls[0].call_id, 1);
	cr_assert_eq(oc.calls[1].call_id, 2);
	cr_assert_eq(oc.calls[2].call_id, 4);
	cr_assert_eq(oc.calls[2].since_ms, 104);
	cr_assert_eq(oc.calls[2].tool_index, 4);
	open_calls_free(&oc);
}

Test(open_calls, a_cap_of_zero_is_refused)
{
	struct open_calls oc;

	cr_assert_not(open_calls_init(&oc, 0));
	open_calls_free(&oc);
}
