/*
 * HTTP methods, by name (common/http_method.h).
 */
#include "config.h"

#include <string.h>

#include "common/http_method.h"

static const char *const http_method_names[] = {
	[HTTP_METHOD_GET] = "GET",
	[HTTP_METHOD_HEAD] = "HEAD",
	[HTTP_METHOD_POST] = "POST",
	[HTTP_METHOD_PUT] = "PUT",
	[HTTP_METHOD_PATCH] = "PATCH",
	[HTTP_METHOD_DELETE] = "DELETE",
};

#define HTTP_METHOD_COUNT \
	(sizeof(http_method_names) / sizeof(http_method_names[0]))

bool
http_method_parse(const char *name, enum http_method *m)
{
	size_t i;

	for (i = 0; i < HTTP_METHOD_COUNT; i++)
		if (strcmp(http_method_names[i], name) == 0) {
			*m = (enum http_method)i;
			return true;
		}
	return false;
}

const char *
http_method_name(enum http_method m)
{
	if ((unsigned)m >= HTTP_METHOD_COUNT)
		return NULL;
	return http_method_names[m];
}
