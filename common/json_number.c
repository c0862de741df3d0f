/*
 * Exact integers as raw number text (common/json_number.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "common/json_number.h"

#define JSON_NUMBER_TEXT_MAX 24	/* "-" and 20 digits and the NUL */

cJSON *
json_number_int64(int64_t n)
{
	char text[JSON_NUMBER_TEXT_MAX];

	(void)snprintf(text, sizeof(text), "%" PRId64, n);
	return cJSON_CreateRaw(text);
}

bool
json_add_int64(cJSON *obj, const char *key, int64_t n)
{
	char text[JSON_NUMBER_TEXT_MAX];

	(void)snprintf(text, sizeof(text), "%" PRId64, n);
	return cJSON_AddRawToObject(obj, key, text) != NULL;
}

bool
json_add_uint64(cJSON *obj, const char *key, uint64_t n)
{
	char text[JSON_NUMBER_TEXT_MAX];

	(void)snprintf(text, sizeof(text), "%" PRIu64, n);
	return cJSON_AddRawToObject(obj, key, text) != NULL;
}
