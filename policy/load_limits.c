/*
 * A tool's "limits" (docs/sp-policy.5; docs/design.md section 9):
 * min_interval_ms, per_day and max_distinct, which the broker keeps
 * (state/limits.h), and "idempotency", the journal of a mutating tool
 * (state/journal.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/load_ctx.h"

#define LOAD_LIMIT_INTERVAL_MAX	86400000	/* a day, in ms */
#define LOAD_LIMIT_COUNT_MAX	1000000
#define LOAD_IDEM_WINDOW_MAX	31536000	/* a year, in s */

/* One present integer member into *out; false when absent or bad. */
static bool
limit_number(struct load_ctx *ctx, const cJSON *obj, const char *key,
    int64_t max, uint32_t *out)
{
	int64_t v = 0;

	if (cJSON_GetObjectItemCaseSensitive(obj, key) == NULL ||
	    !ctx_integer(ctx, obj, key, 1, max, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

static size_t
limit_param_index(const struct policy_tool *tool, const char *name)
{
	size_t i;

	for (i = 0; i < tool->param_count; i++)
		if (strcmp(tool->params[i].name, name) == 0)
			return i;
	return tool->param_count;
}

static void
limit_max_distinct(struct load_ctx *ctx, const cJSON *l,
    struct policy_tool *tool)
{
	const cJSON *m = ctx_member(ctx, l, "max_distinct", false), *e;
	char q[LOAD_QUOTE_SIZE];
	int64_t v;
	size_t i;

	if (m == NULL || !ctx_require_object(ctx, m))
		return;
	if (m->child == NULL) {
		ctx_error_key(ctx, m, "\"max_distinct\" names no param");
		return;
	}
	tool->limits.max_distinct = calloc(tool->param_count + 1,
	    sizeof(*tool->limits.max_distinct));
	if (tool->limits.max_distinct == NULL) {
		ctx_out_of_memory(ctx);
		return;
	}
	cJSON_ArrayForEach(e, m) {
		if ((i = limit_param_index(tool, e->string)) ==
		    tool->param_count) {
			ctx_quote(e->string, q, sizeof(q));
			ctx_error_key(ctx, e, "%s is not a param "
			    "of this tool", q);
			continue;
		}
		if (ctx_integer_value(ctx, e, 1, LOAD_LIMIT_COUNT_MAX, &v)) {
			tool->limits.max_distinct[i] = (uint32_t)v;
			tool->limits.any = true;
		}
	}
}

void
load_tool_limits(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "min_interval_ms", "per_day",
	    "max_distinct", NULL };
	const cJSON *l = ctx_member(ctx, obj, "limits", false);

	if (l == NULL || !ctx_require_object(ctx, l))
		return;
	ctx_known_keys(ctx, l, keys);
	if (limit_number(ctx, l, "min_interval_ms", LOAD_LIMIT_INTERVAL_MAX,
	    &tool->limits.min_interval_ms))
		tool->limits.any = true;
	if (limit_number(ctx, l, "per_day", LOAD_LIMIT_COUNT_MAX,
	    &tool->limits.per_day))
		tool->limits.any = true;
	limit_max_distinct(ctx, l, tool);
}

/* The header may be none the request already sets. */
static bool
idem_header_clashes(struct load_ctx *ctx, const cJSON *node,
    const struct policy_tool *tool, const char *name)
{
	size_t i;

	for (i = 0; i < tool->http.header_count; i++)
		if (strcasecmp(tool->http.headers[i].name, name) == 0) {
			ctx_error(ctx, node, "the tool sets this header already");
			return true;
		}
	return false;
}

void
load_tool_idempotency(struct load_ctx *ctx, const cJSON *obj,
    struct policy_tool *tool)
{
	static const char *const keys[] = { "window_s", "header", NULL };
	const cJSON *m = ctx_member(ctx, obj, "idempotency", false), *h;
	int64_t v = 0;

	if (m == NULL || !ctx_require_object(ctx, m))
		return;
	ctx_known_keys(ctx, m, keys);
	if (!tool->mutating) {
		ctx_error_key(ctx, m, "\"idempotency\" applies only to a "
		    "mutating tool");
		return;
	}
	if (cJSON_GetObjectItemCaseSensitive(m, "window_s") == NULL)
		ctx_error(ctx, m, "missing \"window_s\"");
	else if (ctx_integer(ctx, m, "window_s", 1, LOAD_IDEM_WINDOW_MAX, &v))
		tool->idem_window_s = (uint32_t)v;
	if ((h = ctx_member(ctx, m, "header", false)) == NULL ||
	    !ctx_string(ctx, m, "header", false, &tool->idem_header))
		return;
	if (tool->kind != TOOL_HTTP)
		ctx_error(ctx, h, "only an http tool sends a header");
	else if (!load_header_name_ok(tool->idem_header))
		ctx_error(ctx, h, "must be a header name the policy may set");
	else if (!idem_header_clashes(ctx, h, tool, tool->idem_header))
		return;
	free(tool->idem_header);
	tool->idem_header = NULL;
}
