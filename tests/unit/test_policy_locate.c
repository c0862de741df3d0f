/*
 * json_locations_scan(): the wire layer's strict scan (common/json.h)
 * reporting positions; each value's parent, member index, line and
 * code-point column, and its member name's.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "policy/locate.h"

static const struct json_location *
at(const struct json_locations *l, size_t i)
{
	cr_assert_lt(i, l->count);
	return &l->items[i];
}

static void
expect(const struct json_location *l, size_t parent, size_t index,
    unsigned line, unsigned col, unsigned key_line, unsigned key_col)
{
	cr_assert_eq(l->parent, parent);
	cr_assert_eq(l->index, index);
	cr_assert_eq(l->line, line, "line %u, want %u", l->line, line);
	cr_assert_eq(l->col, col, "col %u, want %u", l->col, col);
	cr_assert_eq(l->key_line, key_line);
	cr_assert_eq(l->key_col, key_col, "key col %u, want %u", l->key_col,
	    key_col);
}

Test(locate, parents_indexes_lines_and_code_point_columns)
{
	/* "é" and "€" are two and three bytes and one column each */
	static const char text[] = "{\"\xc3\xa9\": [1, {\"k\": \"$(id)\"}],\n"
	    "  \"\xe2\x82\xac\": -0.5e3, \"q\\\"\": [true, null]}";
	struct json_locations l;
	struct json_syntax_error err;

	cr_assert(json_locations_scan(text, strlen(text), &l, &err), "%s",
	    err.message);
	cr_assert_eq(l.count, 9);
	expect(at(&l, 0), SIZE_MAX, 0, 1, 1, 0, 0);	/* the object */
	expect(at(&l, 1), 0, 0, 1, 7, 1, 2);		/* [1, {...}] */
	expect(at(&l, 2), 1, 0, 1, 8, 0, 0);		/* 1 */
	expect(at(&l, 3), 1, 1, 1, 11, 0, 0);		/* {"k": ...} */
	expect(at(&l, 4), 3, 0, 1, 17, 1, 12);		/* "$(id)" */
	expect(at(&l, 5), 0, 1, 2, 8, 2, 3);		/* -0.5e3 */
	expect(at(&l, 6), 0, 2, 2, 23, 2, 16);		/* [true, null] */
	expect(at(&l, 7), 6, 0, 2, 24, 0, 0);		/* true */
	expect(at(&l, 8), 6, 1, 2, 30, 0, 0);		/* null */
	json_locations_free(&l);
}

Test(locate, errors_have_a_line_and_column_and_leave_nothing)
{
	static const char text[] = "{\"a\": [1,\n   2,,]}";
	struct json_locations l;
	struct json_syntax_error err;

	cr_assert_not(json_locations_scan(text, strlen(text), &l, &err));
	cr_assert_eq(err.line, 2);
	cr_assert_eq(err.col, 6);
	cr_assert_str_eq(err.message, "unexpected character");
	cr_assert_eq(l.count, 0);
	cr_assert_null(l.items);
}

Test(locate, the_wire_rules_hold_for_a_policy_too)
{
	static const char *const refused[] = {
		"{\"a\": 1, \"a\": 2}",		/* left to the loader's check */
		"\xef\xbb\xbf{}", "{\"a\": 1e400}", "{\"a\": \"\\ud800\"}",
		"{\"a\": \"x\\u0000\"}", "[\x0b]",
	};
	struct json_locations l;
	struct json_syntax_error err;
	char deep[200];
	size_t i;

	/* duplicate keys are the loader's (a located message): scanned fine */
	cr_assert(json_locations_scan(refused[0], strlen(refused[0]), &l, &err));
	json_locations_free(&l);
	for (i = 1; i < sizeof(refused) / sizeof(refused[0]); i++)
		cr_assert_not(json_locations_scan(refused[i], strlen(refused[i]),
		    &l, &err), "accepted %s", refused[i]);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	cr_assert_not(json_locations_scan(deep, 130, &l, &err));
	cr_assert(json_locations_scan(deep + 1, 128, &l, &err), "%s",
	    err.message);
	cr_assert_eq(l.count, 64);
	json_locations_free(&l);
}
