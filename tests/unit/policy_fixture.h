/*
 * A small policy built by hand for the policy unit tests, so they do not
 * depend on the loader.  fixture_policy() returns a process-wide tree
 * (each Criterion test runs in its own process); nothing is freed.
 *
 * Tools, by index:
 *   0 get_item     http GET /items/{id}       scope read   id: integer >= 1
 *   1 create_item  http POST /items?...       scope write  mutating, confirm
 *        name   string 1..80, required
 *        qty    integer 1..100, required
 *        price  decimal scale 2, 0.00..1000.00, optional
 *        color  string enum red/green/"blue sky", optional
 *        code   string pattern [A-Z]{2}[0-9]+, optional
 *        urgent boolean, optional
 *   2 run_echo     ssh argv printf '%s\n' {a} x{b}y  scope ops
 *        a string 0..4096, b string 0..4096 optional
 * Profiles: reader [read], writer [read, write], nobody [], ops [ops].
 */
#ifndef SP_TESTS_POLICY_FIXTURE_H
#define SP_TESTS_POLICY_FIXTURE_H

#include <stdbool.h>

#include "common/value.h"
#include "policy/policy.h"

enum { FIXTURE_GET_ITEM, FIXTURE_CREATE_ITEM, FIXTURE_RUN_ECHO };
enum { FIXTURE_READER, FIXTURE_WRITER, FIXTURE_NOBODY, FIXTURE_OPS };

struct policy *fixture_policy(void);

/* The tool at index i of fixture_policy(); owned by the fixture. */
const struct policy_tool *fixture_tool(int i);

/* Frees v's content, then makes it a copy of the string s (v owns the copy,
 * freed by value_free); false when out of memory. */
bool fixture_set_string(struct value *v, const char *s);

#endif
