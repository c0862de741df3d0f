/*
 * Helpers of the policy_load() tests (see policy_load_expect.h).
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/policy_load_expect.h"

void
text_position_of(const char *text, const char *needle, unsigned *line,
    unsigned *col)
{
	const char *at = strstr(text, needle), *p;

	cr_assert_not_null(at, "needle %s not in the text", needle);
	cr_assert_null(strstr(at + 1, needle), "needle %s not unique", needle);
	*line = 1;
	*col = 1;
	for (p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)*p & 0xc0) != 0x80)
			(*col)++;
	}
}

char *
diags_joined(const struct policy_diags *d)
{
	size_t i, n = 1;
	char *s;

	for (i = 0; i < d->count; i++)
		n += strlen(d->items[i].text) + 1;
	s = calloc(1, n);
	for (i = 0; i < d->count; i++) {
		strcat(s, d->items[i].text);
		strcat(s, "\n");
	}
	return s;
}

static bool
has_line(const struct policy_diags *d, const char *want)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		if (strcmp(d->items[i].text, want) == 0)
			return true;
	return false;
}

void
expect_among(const char *text, const char *needle, const char *message)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	unsigned line, col;
	char want[1024], *all = diags_joined(&d);

	text_position_of(text, needle, &line, &col);
	snprintf(want, sizeof(want), "t.json:%u:%u: %s", line, col, message);
	cr_assert_null(p, "policy accepted; want %s", want);
	cr_assert(has_line(&d, want), "want: %s\ngot:\n%s", want, all);
	free(all);
	policy_diags_free(&d);
}

void
expect_only(const char *text, const char *needle, const char *message)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);
	char *all = diags_joined(&d);

	cr_assert_null(p);
	cr_assert_eq(d.count, 1, "want one diagnostic, got:\n%s", all);
	free(all);
	policy_free(p);
	policy_diags_free(&d);
	expect_among(text, needle, message);
}

/* The policy and its diagnostics; no error may be among them. */
static struct policy *
load_without_errors(const char *text, char **all)
{
	struct policy_diags d = { 0 };
	struct policy *p = policy_load("t.json", text, strlen(text), &d);

	*all = diags_joined(&d);
	cr_assert_not_null(p, "refused:\n%s", *all);
	cr_assert_eq(d.errors, 0);
	policy_diags_free(&d);
	return p;
}

struct policy *
load_ok(const char *text)
{
	char *all;
	struct policy *p = load_without_errors(text, &all);

	cr_assert_str_eq(all, "", "diagnostics:\n%s", all);
	free(all);
	return p;
}

char *
load_warnings(const char *text)
{
	char *all;

	policy_free(load_without_errors(text, &all));
	return all;
}
