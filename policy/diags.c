/*
 * The diagnostics list of policy_load() and policy_check_start().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/load.h"

/* One line: control characters (and DEL) become '?'. */
static void
diags_sanitize(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

bool
policy_diags_add(struct policy_diags *diags,
    enum policy_diag_severity severity, const char *display_name,
    unsigned line, unsigned col, const char *message)
{
	struct policy_diag *grown;
	size_t ncap;
	char *text;

	if (severity == POLICY_DIAG_ERROR)
		diags->errors++;
	if (diags->count == diags->cap) {
		ncap = diags->cap ? diags->cap * 2 : 16;
		grown = reallocarray(diags->items, ncap, sizeof(*grown));
		if (grown == NULL) {
			log_error("out of memory");
			return false;
		}
		diags->items = grown;
		diags->cap = ncap;
	}
	if (asprintf(&text, "%s:%u:%u: %s%s", display_name, line, col,
	    severity == POLICY_DIAG_WARNING ? "warning: " : "", message) < 0) {
		log_error("out of memory");
		return false;
	}
	diags_sanitize(text);
	diags->items[diags->count].severity = severity;
	diags->items[diags->count].text = text;
	diags->items[diags->count].line = line;
	diags->items[diags->count].col = col;
	diags->count++;
	return true;
}

static int
compare_position(const void *a, const void *b)
{
	const struct policy_diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return strcmp(x->text, y->text);	/* deterministic at one place */
}

void
policy_diags_sort(struct policy_diags *diags, size_t from)
{
	if (from < diags->count)
		qsort(diags->items + from, diags->count - from,
		    sizeof(*diags->items), compare_position);
}

void
policy_diags_free(struct policy_diags *diags)
{
	size_t i;

	for (i = 0; i < diags->count; i++)
		free(diags->items[i].text);
	free(diags->items);
	memset(diags, 0, sizeof(*diags));
}
