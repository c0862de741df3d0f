/*
 * libFuzzer target: strict base64.  Whatever decodes must encode back to
 * exactly the input (one spelling per byte string), and any bytes must
 * survive encode then decode; never a read or write out of bounds.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_canonical(const char *text, size_t len)
{
	uint8_t *out = malloc(len / 4 * 3 + 1);
	char *again = malloc(len + 1);
	size_t n;

	if (out == NULL || again == NULL)
		abort();
	if (base64_decode(text, len, out, len / 4 * 3, &n)) {
		if (!base64_encode(out, n, again, len + 1) ||
		    strlen(again) != len || memcmp(again, text, len) != 0)
			abort();
	}
	free(out);
	free(again);
}

static void
check_round_trip(const uint8_t *data, size_t size)
{
	size_t cap = base64_encode_size(size), n;
	char *text = malloc(cap);
	uint8_t *back = malloc(size + 1);

	if (text == NULL || back == NULL || !base64_encode(data, size, text,
	    cap) || !base64_decode(text, cap - 1, back, size, &n) ||
	    n != size || memcmp(back, data, size) != 0)
		abort();
	free(text);
	free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_canonical((const char *)data, size);
	check_round_trip(data, size);
	return 0;
}
