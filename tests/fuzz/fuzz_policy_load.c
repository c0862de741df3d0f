/*
 * libFuzzer target: policy_load() on arbitrary bytes.  Whatever the input,
 * it must not crash or leak, must return a policy exactly when it reported
 * no error, and every diagnostic must be one line.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_diags diags = { 0 };
	struct policy *policy;
	size_t i;

	policy = policy_load("fuzz.json", (const char *)data, size, &diags);
	if ((policy != NULL) != (diags.errors == 0))
		abort();
	for (i = 0; i < diags.count; i++)
		if (strchr(diags.items[i].text, '\n') != NULL)
			abort();
	policy_free(policy);
	policy_diags_free(&diags);
	return 0;
}
