#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/schema_check.h"

static bool schema_check_at(const cJSON *schema, const cJSON *value,
    const char *path, char *why, size_t size);

static bool
schema_fail(char *why, size_t size, const char *path, const char *what)
{
	snprintf(why, size, "%s: %s", path, what);
	return false;
}

static bool
schema_type_ok(const char *type, const cJSON *v)
{
	if (strcmp(type, "object") == 0)
		return cJSON_IsObject(v);
	if (strcmp(type, "string") == 0)
		return cJSON_IsString(v);
	if (strcmp(type, "boolean") == 0)
		return cJSON_IsBool(v);
	if (strcmp(type, "integer") == 0)
		return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
	return false;
}

static bool
schema_enum_ok(const cJSON *e, const cJSON *v)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, e)
		if (cJSON_Compare(item, v, true))
			return true;
	return false;
}

static bool
schema_required_ok(const cJSON *req, const cJSON *v, const char *path,
    char *why, size_t size)
{
	const cJSON *name;

	cJSON_ArrayForEach(name, req)
		if (!cJSON_IsString(name) ||
		    !cJSON_HasObjectItem(v, name->valuestring))
			return schema_fail(why, size, path, "required missing");
	return true;
}

static bool
schema_properties_ok(const cJSON *props, const cJSON *v, const char *path,
    char *why, size_t size)
{
	const cJSON *p, *member;
	char sub[256];

	cJSON_ArrayForEach(p, props) {
		member = cJSON_GetObjectItemCaseSensitive(v, p->string);
		if (member == NULL)
			continue;
		snprintf(sub, sizeof(sub), "%s.%s", path, p->string);
		if (!schema_check_at(p, member, sub, why, size))
			return false;
	}
	return true;
}

static bool
schema_check_at(const cJSON *schema, const cJSON *value, const char *path,
    char *why, size_t size)
{
	const cJSON *k;

	if (!cJSON_IsObject(schema))
		return schema_fail(why, size, path, "schema is not an object");
	cJSON_ArrayForEach(k, schema) {
		if (strcmp(k->string, "type") == 0) {
			if (!cJSON_IsString(k) || !schema_type_ok(k->valuestring,
			    value))
				return schema_fail(why, size, path, "wrong type");
		} else if (strcmp(k->string, "enum") == 0) {
			if (!schema_enum_ok(k, value))
				return schema_fail(why, size, path, "not in enum");
		} else if (strcmp(k->string, "required") == 0) {
			if (cJSON_IsObject(value) &&
			    !schema_required_ok(k, value, path, why, size))
				return false;
		} else if (strcmp(k->string, "properties") == 0) {
			if (cJSON_IsObject(value) &&
			    !schema_properties_ok(k, value, path, why, size))
				return false;
		} else
			return schema_fail(why, size, path, "unknown keyword");
	}
	return true;
}

bool
schema_check(const cJSON *schema, const cJSON *value, char *why, size_t size)
{
	return schema_check_at(schema, value, "$", why, size);
}
