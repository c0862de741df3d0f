/*
 * The part of JSON Schema that Sallyport's outputSchema uses (type object,
 * string, integer, boolean; properties; required; enum; {} for anything),
 * checked the way a client SDK's validator would.  Anything else in a
 * schema fails the check, so a schema growing new keywords is noticed.
 */
#ifndef SP_TESTS_SCHEMA_CHECK_H
#define SP_TESTS_SCHEMA_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* True when value satisfies schema; otherwise why (size bytes) says where. */
bool schema_check(const cJSON *schema, const cJSON *value, char *why,
    size_t size);

#endif
