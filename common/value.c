#include "config.h"

#include <stdlib.h>
#include <string.h>

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
