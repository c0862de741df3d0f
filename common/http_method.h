/*
 * An HTTP tool's method (sp-policy(5) http.method), one spelling each:
 * the policy loads it with http_method_parse(), and the policy dump, the
 * catalog fingerprint and the executor's request print it with
 * http_method_name().
 */
#ifndef SP_COMMON_HTTP_METHOD_H
#define SP_COMMON_HTTP_METHOD_H

#include <stdbool.h>

enum http_method {
	HTTP_METHOD_GET,
	HTTP_METHOD_HEAD,
	HTTP_METHOD_POST,
	HTTP_METHOD_PUT,
	HTTP_METHOD_PATCH,
	HTTP_METHOD_DELETE,
};

/* Sets *m to the method spelt exactly name (upper case); false if none. */
bool http_method_parse(const char *name, enum http_method *m);

/* The method's name (static storage), or NULL for a value out of range. */
const char *http_method_name(enum http_method m);

#endif
