#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/json_number.h"
#include "common/log.h"
#include "policy/authz.h"
#include "policy/catalog.h"
#include "policy/constraint.h"

static const char catalog_result_props[] =
	"\"issuer\":{\"type\":\"string\"},"
	"\"outcome\":{\"type\":\"string\",\"enum\":[\"ok\",\"failed\","
	"\"unknown\",\"denied\",\"invalid\"]},"
	"\"message\":{\"type\":\"string\"}";
static const char catalog_http_props[] =
	"\"http\":{\"type\":\"object\",\"properties\":{"
	"\"status\":{\"type\":\"integer\"},\"content_type\":{\"type\":\"string\"},"
	"\"body\":{},\"truncated\":{\"type\":\"boolean\"}}}";
static const char catalog_ssh_props[] =
	"\"ssh\":{\"type\":\"object\",\"properties\":{"
	"\"exit_status\":{\"type\":\"integer\"},\"stdout\":{\"type\":\"string\"},"
	"\"stderr\":{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"}}}";

static cJSON *
catalog_output_schema(const struct policy_tool *tool)
{
	char *text = NULL;
	cJSON *schema;

	if (asprintf(&text, "{\"type\":\"object\",\"properties\":{%s,%s},"
	    "\"required\":[\"issuer\",\"outcome\"]}", catalog_result_props,
	    tool->kind == TOOL_HTTP ? catalog_http_props :
	    catalog_ssh_props) < 0)
		return NULL;
	schema = cJSON_Parse(text);
	free(text);
	return schema;
}

static bool
catalog_string_schema(const struct policy_param *p, cJSON *s)
{
	char *anchored = NULL;
	bool ok = true;
	cJSON *e;

	if (p->min_length > 0)
		ok = json_add_uint64(s, "minLength", p->min_length);
	ok = ok && json_add_uint64(s, "maxLength", p->max_length);
	if (ok && p->pattern != NULL) {
		ok = asprintf(&anchored, "^(%s)$", p->pattern) >= 0 &&
		    cJSON_AddStringToObject(s, "pattern", anchored) != NULL;
		free(anchored);
	}
	if (ok && p->enum_count > 0) {
		e = cJSON_CreateStringArray((const char *const *)p->enum_values,
		    (int)p->enum_count);
		ok = e != NULL && cJSON_AddItemToObject(s, "enum", e);
	}
	return ok;
}

/* A decimal travels as a string; its range can only be said in words. */
static bool
catalog_decimal_schema(const struct policy_param *p, cJSON *s)
{
	char pattern[64], lo[32], hi[32], *desc = NULL;
	bool ok;

	const char *sign = p->has_minimum && p->minimum >= 0 ? "" : "-?";

	if (p->scale > 0)
		snprintf(pattern, sizeof(pattern), "^%s[0-9]+(\\.[0-9]{1,%u})?$",
		    sign, p->scale);
	else
		snprintf(pattern, sizeof(pattern), "^%s[0-9]+$", sign);
	constraint_format_decimal(p->minimum, p->scale, lo, sizeof(lo));
	constraint_format_decimal(p->maximum, p->scale, hi, sizeof(hi));
	if (asprintf(&desc, "%s%sDecimal string with at most %u decimals%s%s%s%s.",
	    p->description ? p->description : "", p->description ? " " : "",
	    p->scale, p->has_minimum ? ", at least " : "",
	    p->has_minimum ? lo : "", p->has_maximum ? ", at most " : "",
	    p->has_maximum ? hi : "") < 0)
		return false;
	ok = cJSON_AddStringToObject(s, "description", desc) != NULL &&
	    cJSON_AddStringToObject(s, "pattern", pattern) != NULL;
	free(desc);
	return ok;
}

static cJSON *
catalog_param_schema(const struct policy_param *p)
{
	static const char *const types[] = {
		[PARAM_STRING] = "string", [PARAM_INTEGER] = "integer",
		[PARAM_BOOLEAN] = "boolean", [PARAM_DECIMAL] = "string",
	};
	cJSON *s = cJSON_CreateObject();
	bool ok;

	ok = s != NULL && cJSON_AddStringToObject(s, "type", types[p->type]);
	if (ok && p->description != NULL && p->type != PARAM_DECIMAL)
		ok = cJSON_AddStringToObject(s, "description", p->description);
	if (ok && p->type == PARAM_STRING)
		ok = catalog_string_schema(p, s);
	if (ok && p->type == PARAM_INTEGER && p->has_minimum)
		ok = json_add_int64(s, "minimum", p->minimum);
	if (ok && p->type == PARAM_INTEGER && p->has_maximum)
		ok = json_add_int64(s, "maximum", p->maximum);
	if (ok && p->type == PARAM_DECIMAL)
		ok = catalog_decimal_schema(p, s);
	if (!ok) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

static cJSON *
catalog_input_schema(const struct policy_tool *tool)
{
	cJSON *s = cJSON_CreateObject(), *props, *req = NULL, *ps;
	bool ok;
	size_t i;

	ok = s != NULL && cJSON_AddStringToObject(s, "type", "object") &&
	    (props = cJSON_AddObjectToObject(s, "properties")) != NULL;
	for (i = 0; ok && i < tool->param_count; i++) {
		ps = catalog_param_schema(&tool->params[i]);
		ok = ps != NULL &&
		    cJSON_AddItemToObject(props, tool->params[i].name, ps);
		if (ok && tool->params[i].required && req == NULL)
			ok = (req = cJSON_AddArrayToObject(s, "required")) != NULL;
		if (ok && tool->params[i].required)
			ok = cJSON_AddItemToArray(req,
			    cJSON_CreateString(tool->params[i].name));
	}
	ok = ok && cJSON_AddFalseToObject(s, "additionalProperties") != NULL;
	if (!ok) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* MCP hints: destructive and idempotent mean something only when mutating. */
static cJSON *
catalog_annotations(const struct policy_tool *tool)
{
	cJSON *a = cJSON_CreateObject();

	if (a == NULL ||
	    !cJSON_AddBoolToObject(a, "readOnlyHint", !tool->mutating) ||
	    (tool->mutating &&
	    (!cJSON_AddBoolToObject(a, "destructiveHint", tool->destructive) ||
	    !cJSON_AddBoolToObject(a, "idempotentHint", tool->idempotent)))) {
		cJSON_Delete(a);
		return NULL;
	}
	return a;
}

static cJSON *
catalog_tool(const struct policy_tool *tool)
{
	cJSON *t = cJSON_CreateObject(), *part;
	cJSON *(*const build[])(const struct policy_tool *) = {
		catalog_input_schema, catalog_annotations, catalog_output_schema,
	};
	const char *const keys[] = { "inputSchema", "annotations",
	    "outputSchema" };
	bool ok;
	size_t i;

	ok = t != NULL && cJSON_AddStringToObject(t, "name", tool->name) &&
	    (tool->title == NULL ||
	    cJSON_AddStringToObject(t, "title", tool->title)) &&
	    cJSON_AddStringToObject(t, "description", tool->description);
	for (i = 0; ok && i < sizeof(keys) / sizeof(keys[0]); i++) {
		part = build[i](tool);
		ok = part != NULL && cJSON_AddItemToObject(t, keys[i], part);
	}
	if (!ok) {
		cJSON_Delete(t);
		return NULL;
	}
	return t;
}

char *
policy_catalog_render(const struct policy *policy,
    const struct policy_profile *profile, size_t *len)
{
	cJSON *root = cJSON_CreateObject(), *tools, *t;
	char *text = NULL;
	bool ok;
	size_t i;

	ok = root != NULL && (tools = cJSON_AddArrayToObject(root, "tools"));
	for (i = 0; ok && profile != NULL && i < policy->tool_count; i++) {
		if (!policy_authorize(profile, &policy->tools[i], NULL))
			continue;
		t = catalog_tool(&policy->tools[i]);
		ok = t != NULL && cJSON_AddItemToArray(tools, t);
	}
	if (ok)
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (text == NULL) {
		log_error("out of memory");
		return NULL;
	}
	if (len != NULL)
		*len = strlen(text);
	return text;
}
