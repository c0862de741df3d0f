#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/value.h"

void
value_free(struct value *v)
{
	if (v == NULL)
		return;
	if (v->kind == VALUE_STRING && v->u.str.ptr != NULL) {
		/* Argument strings may be sensitive (a masked param): zero them. */
		explicit_bzero(v->u.str.ptr, v->u.str.len);
		free(v->u.str.ptr);
	}
	memset(v, 0, sizeof(*v));
}

void
value_array_free(struct value *values, size_t n)
{
	size_t i;

	if (values == NULL)
		return;
	for (i = 0; i < n; i++)
		value_free(&values[i]);
	free(values);
}

bool
value_set_string(struct value *v, const char *bytes, size_t len)
{
	char *p;

	if (len == SIZE_MAX)
		return false;
	p = malloc(len + 1);
	if (p == NULL)
		return false;
	memcpy(p, bytes, len);
	p[len] = '\0';
	v->kind = VALUE_STRING;
	v->u.str.ptr = p;
	v->u.str.len = len;
	return true;
}

void
value_digest(const struct value *v, uint8_t out[HASH_SHA256_LEN])
{
	struct hash_sha256_ctx h;
	uint8_t kind = (uint8_t)v->kind, n[8];
	uint64_t u = 0;
	size_t i;

	hash_sha256_init(&h);
	hash_sha256_update(&h, &kind, 1);
	switch (v->kind) {
	case VALUE_STRING:
		hash_sha256_update(&h, v->u.str.ptr, v->u.str.len);
		hash_sha256_final(&h, out);
		return;
	case VALUE_INTEGER: u = (uint64_t)v->u.integer; break;
	case VALUE_DECIMAL: u = (uint64_t)v->u.decimal_minor; break;
	case VALUE_BOOLEAN: u = v->u.boolean ? 1 : 0; break;
	case VALUE_ABSENT: break;
	}
	for (i = 0; i < sizeof(n); i++)
		n[i] = (uint8_t)(u >> (56 - 8 * i));
	hash_sha256_update(&h, n, sizeof(n));
	hash_sha256_final(&h, out);
}
