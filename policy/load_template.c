/*
 * Template strings: literal text with "{param}" placeholders.  A literal
 * brace is written twice ("{{", "}}"); any other brace is an error.  Each
 * placeholder must name a param of its tool, and marks it used.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/load_template.h"

static bool
template_push(struct load_ctx *ctx, struct policy_template *t, bool is_param,
    const char *lit, size_t len, size_t param)
{
	struct policy_template_part *grown, *part;

	grown = reallocarray(t->parts, t->part_count + 1, sizeof(*grown));
	if (grown == NULL) {
		ctx_out_of_memory(ctx);
		return false;
	}
	t->parts = grown;
	part = &t->parts[t->part_count];
	memset(part, 0, sizeof(*part));
	part->is_param = is_param;
	part->param_index = param;
	if (!is_param) {
		if ((part->literal = malloc(len + 1)) == NULL) {
			ctx_out_of_memory(ctx);
			return false;
		}
		memcpy(part->literal, lit, len);
		part->literal[len] = '\0';
		part->literal_len = len;
	}
	t->part_count++;
	return true;
}

static bool
template_flush(struct load_ctx *ctx, struct policy_template *t, char *lit,
    size_t *len)
{
	bool ok = true;

	if (*len > 0)
		ok = template_push(ctx, t, false, lit, *len, 0);
	*len = 0;
	return ok;
}

static void
template_placeholder(struct load_ctx *ctx, const cJSON *node,
    struct template_use *use, const char *name, size_t len,
    struct policy_template *out)
{
	const struct policy_tool *tool = use->tool;
	char q[LOAD_QUOTE_SIZE], nm[POLICY_NAME_MAX + 2];
	size_t i;

	if (len == 0 || len > POLICY_NAME_MAX) {
		ctx_error(ctx, node, "a placeholder needs a param name between "
		    "'{' and '}' (write '{{' for a literal brace)");
		return;
	}
	memcpy(nm, name, len);
	nm[len] = '\0';
	for (i = 0; i < tool->param_count; i++)
		if (tool->params[i].name && strcmp(tool->params[i].name, nm) == 0)
			break;
	ctx_quote(nm, q, sizeof(q));
	if (i == tool->param_count) {
		ctx_error(ctx, node, "placeholder {%.*s} names no param of this "
		    "tool", (int)(strlen(q) - 2), q + 1);
		return;
	}
	use->used[i] = true;
	template_push(ctx, out, true, NULL, 0, i);
}

/*
 * An absent optional value can drop a whole query pair, header or body
 * member, but has no meaning inside a path, a command or a longer string.
 */
static void
template_check_optional(struct load_ctx *ctx, const cJSON *node,
    const struct template_use *use, const struct policy_template *t)
{
	const struct policy_param *p;
	char q[LOAD_QUOTE_SIZE];
	size_t i;

	for (i = 0; i < t->part_count; i++) {
		if (!t->parts[i].is_param)
			continue;
		p = &use->tool->params[t->parts[i].param_index];
		if (p->required || use->optional_anywhere ||
		    (use->optional_ok && t->part_count == 1))
			continue;
		ctx_quote(p->name, q, sizeof(q));
		ctx_error(ctx, node, "optional param %s can only be a whole "
		    "query value, header value or body string", q);
	}
}

bool
load_template(struct load_ctx *ctx, const cJSON *node,
    struct template_use *use, struct policy_template *out)
{
	const char *s = node->valuestring, *end;
	size_t n = strlen(s), len = 0, before = ctx->diags->errors;
	char *lit;

	memset(out, 0, sizeof(*out));
	if ((lit = malloc(n + 1)) == NULL) {
		ctx_out_of_memory(ctx);
		return false;
	}
	while (*s != '\0') {
		if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
			lit[len++] = *s;
			s += 2;
		} else if (*s == '}') {
			ctx_error(ctx, node, "a lone '}' (write '}}' for a literal "
			    "brace)");
			break;
		} else if (*s == '{') {
			if ((end = strchr(s, '}')) == NULL) {
				ctx_error(ctx, node, "unclosed '{' (write '{{' for a "
				    "literal brace)");
				break;
			}
			template_flush(ctx, out, lit, &len);
			template_placeholder(ctx, node, use, s + 1,
			    (size_t)(end - s - 1), out);
			s = end + 1;
		} else
			lit[len++] = *s++;
	}
	template_flush(ctx, out, lit, &len);
	free(lit);
	template_check_optional(ctx, node, use, out);
	return ctx->diags->errors == before;
}

bool
template_is_one_placeholder(const struct policy_template *t)
{
	return t->part_count == 1 && t->parts[0].is_param;
}

bool
template_has_placeholder(const struct policy_template *t)
{
	size_t i;

	for (i = 0; i < t->part_count; i++)
		if (t->parts[i].is_param)
			return true;
	return false;
}

void
template_free(struct policy_template *t)
{
	size_t i;

	for (i = 0; i < t->part_count; i++)
		free(t->parts[i].literal);
	free(t->parts);
	memset(t, 0, sizeof(*t));
}
