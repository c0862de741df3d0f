#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "common/json_number.h"

static void
expect_printed(cJSON *item, const char *want)
{
	char *text;

	cr_assert_not_null(item);
	text = cJSON_PrintUnformatted(item);
	cr_assert_str_eq(text, want);
	free(text);
	cJSON_Delete(item);
}

/* A double holds 2^53 + 1 as 2^53; raw text holds every 64-bit integer. */
Test(json_number, integers_beyond_a_double_print_exactly)
{
	cJSON *o = cJSON_CreateObject();

	expect_printed(json_number_int64(INT64_MIN), "-9223372036854775808");
	expect_printed(json_number_int64(-7), "-7");
	cr_assert(json_add_int64(o, "max", INT64_MAX));
	cr_assert(json_add_int64(o, "odd", (INT64_C(1) << 53) + 1));
	cr_assert(json_add_uint64(o, "all", UINT64_MAX));
	cr_assert(json_add_uint64(o, "zero", 0));
	expect_printed(o, "{\"max\":9223372036854775807,"
	    "\"odd\":9007199254740993,\"all\":18446744073709551615,"
	    "\"zero\":0}");
}
