/*
 * Exact integers in the JSON sp writes: put in as raw number text,
 * because cJSON holds numbers as doubles and would print integers of
 * 2^53 and more (an id, a policy bound, a byte count) rounded.
 *
 * Ownership: a created item is the caller's (cJSON_Delete); an added one
 * belongs to obj.
 */
#ifndef SP_COMMON_JSON_NUMBER_H
#define SP_COMMON_JSON_NUMBER_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

/* A new number item that prints as n exactly; NULL when memory runs out. */
cJSON *json_number_int64(int64_t n);

/* Adds key: n to obj; false when memory runs out. */
bool json_add_int64(cJSON *obj, const char *key, int64_t n);
bool json_add_uint64(cJSON *obj, const char *key, uint64_t n);

#endif
