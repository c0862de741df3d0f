#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/redact.h"

/* redact_bytes(): the forms found, runs, cuts and the bytes kept. */

#define M REDACT_MARKER

struct set_of {
	struct redact_needle n[4];
	struct redact_set set;
};

static struct set_of
needles(const char *a, const char *b, const char *c)
{
	struct set_of s;
	const char *all[3] = { a, b, c };
	size_t i;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < 3 && all[i] != NULL; i++) {
		s.n[i].ptr = (const uint8_t *)all[i];
		s.n[i].len = strlen(all[i]);
		if (s.n[i].len * REDACT_EXPANSION > s.set.reach)
			s.set.reach = s.n[i].len * REDACT_EXPANSION;
	}
	s.set.count = i;
	return s;
}

/* The set must be re-pointed after the struct was copied. */
static const struct redact_set *
set_ptr(struct set_of *s)
{
	s->set.needles = s->n;
	return &s->set;
}

static struct redacted
run(struct set_of *s, const char *in, bool complete, size_t out_max)
{
	struct redacted r;

	cr_assert(redact_bytes(set_ptr(s), (const uint8_t *)in, strlen(in),
	    complete, out_max, &r));
	cr_assert_eq(r.data[r.len], '\0');
	return r;
}

static void
expect(struct set_of *s, const char *in, const char *want, bool withheld)
{
	struct redacted r = run(s, in, true, 4096);

	cr_assert_str_eq((char *)r.data, want, "in %s", in);
	cr_assert_eq(r.withheld, withheld, "in %s", in);
	cr_assert_eq(r.in_used, strlen(in), "in %s", in);
	free(r.data);
}

Test(redact, raw_at_start_middle_end_and_whole)
{
	struct set_of s = needles("tok-3f\"9$(id)", NULL, NULL);

	expect(&s, "tok-3f\"9$(id)", M, true);
	expect(&s, "tok-3f\"9$(id) after", M " after", true);
	expect(&s, "before tok-3f\"9$(id)", "before " M, true);
	expect(&s, "Authorization: Bearer tok-3f\"9$(id)\r\nX: y",
	    "Authorization: Bearer " M "\r\nX: y", true);
	expect(&s, "a tok-3f\"9$(id)tok-3f\"9$(id) b", "a " M M " b", true);
}

Test(redact, near_misses_are_kept)
{
	struct set_of s = needles("token123", NULL, NULL);

	expect(&s, "token12 token1234x tOKEN123 token 123",
	    "token12 " M "4x tOKEN123 token 123", true);
	expect(&s, "nothing here", "nothing here", false);
	expect(&s, "", "", false);
	expect(&s, "%zz \\q \\u12 %", "%zz \\q \\u12 %", false);
}

Test(redact, multibyte_text_around_and_inside)
{
	struct set_of s = needles("p\xc3\xa4ssw\xc3\xb6rd\xf0\x9f\x98\x80",
	    NULL, NULL);

	expect(&s, "\xe6\x97\xa5\xe6\x9c\xac p\xc3\xa4ssw\xc3\xb6rd"
	    "\xf0\x9f\x98\x80\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac " M
	    "\xc3\xa9", true);
	/* JSON with ensure_ascii, a surrogate pair for the emoji. */
	expect(&s, "{\"v\":\"p\\u00e4ssw\\u00F6rd\\ud83d\\ude00\"}",
	    "{\"v\":\"" M "\"}", true);
	/* Percent-encoded, hex in either case. */
	expect(&s, "?v=p%C3%A4ssw%c3%b6rd%F0%9F%98%80&", "?v=" M "&", true);
	/* A lone high surrogate is no character: kept as it is. */
	expect(&s, "p\\u00e4ssw\\u00f6rd\\ud83d\\u0041",
	    "p\\u00e4ssw\\u00f6rd\\ud83d\\u0041", false);
}

Test(redact, percent_and_json_forms)
{
	struct set_of s = needles("a b/c+d\"e\\f\n", NULL, NULL);

	expect(&s, "x=a%20b%2Fc%2Bd%22e%5Cf%0A;", "x=" M ";", true);
	expect(&s, "x=a+b%2fc%2bd%22e%5cf%0a;", "x=" M ";", true);
	expect(&s, "\"a b\\/c+d\\\"e\\\\f\\n\"", "\"" M "\"", true);
	expect(&s, "\"\\u0061\\u0020b/c+d\\u0022e\\u005cf\\u000a\"",
	    "\"" M "\"", true);
	/* A '+' is a space only in a query, never a '+' the other way. */
	expect(&s, "a b/c d\"e\\f\n", "a b/c d\"e\\f\n", false);
}

Test(redact, overlapping_occurrences_are_one_run)
{
	struct set_of s = needles("abab", NULL, NULL);
	struct set_of t = needles("aaa", NULL, NULL);

	expect(&s, "xabababy", "x" M "y", true);
	expect(&s, "xababababab", "x" M, true);
	expect(&t, "aaaaa.aa", M ".aa", true);
}

Test(redact, several_secrets_and_the_longest_wins)
{
	struct set_of s = needles("pass", "user:pass", "dXNlcjpwYXNz");

	expect(&s, "Basic dXNlcjpwYXNz; user:pass; pass=pass; user:",
	    "Basic " M "; " M "; " M "=" M "; user:", true);
	/* No trailing "user:" left from the longer one. */
	expect(&s, "user:passuser", M "user", true);
}

Test(redact, short_secrets_are_still_withheld)
{
	struct set_of one = needles("Q", NULL, NULL);
	struct set_of three = needles("x9!", NULL, NULL);

	expect(&one, "aQbQ", "a" M "b" M, true);
	expect(&three, "-x9!-x9%21-", "-" M "-" M "-", true);
}

/*
 * A cut text: bytes that may begin an occurrence running past the end
 * are not shown, whatever their form; a complete text keeps them.
 */
Test(redact, a_cut_text_shows_no_prefix_of_a_secret)
{
	struct set_of s = needles("token123", NULL, NULL);
	struct redacted r;

	r = run(&s, "data tok", false, 4096);
	cr_assert_str_eq((char *)r.data, "data ");
	cr_assert_eq(r.in_used, 5);
	cr_assert_not(r.withheld);
	free(r.data);
	r = run(&s, "data tok", true, 4096);
	cr_assert_str_eq((char *)r.data, "data tok");
	free(r.data);
	r = run(&s, "data to%6", false, 4096);
	cr_assert_str_eq((char *)r.data, "data ");
	free(r.data);
	r = run(&s, "data \\u0074o", false, 4096);
	cr_assert_str_eq((char *)r.data, "data ");
	free(r.data);
	/* An occurrence, then a run that may go on past the end. */
	r = run(&s, "x token123token1", false, 4096);
	cr_assert_str_eq((char *)r.data, "x " M);
	cr_assert(r.withheld);
	cr_assert_eq(r.in_used, strlen("x token123"));
	free(r.data);
	/* Something that cannot begin the secret is shown to the end. */
	r = run(&s, "data xyz", false, 4096);
	cr_assert_str_eq((char *)r.data, "data xyz");
	free(r.data);
}

/* out_max cuts the output, inside a marker too, never inside a secret. */
Test(redact, the_output_limit_cuts_after_withholding)
{
	struct set_of s = needles("s3cr3t-v4lue", NULL, NULL);
	struct redacted r;

	r = run(&s, "0123456789s3cr3t-v4lue tail", true, 14);
	cr_assert_eq(r.len, 14);
	cr_assert_eq(memcmp(r.data, "0123456789[cre", 14), 0);
	cr_assert_eq(r.in_used, strlen("0123456789s3cr3t-v4lue"));
	free(r.data);
	r = run(&s, "0123456789s3cr3t-v4lue tail", true, 5);
	cr_assert_str_eq((char *)r.data, "01234");
	cr_assert_eq(r.in_used, 5);
	cr_assert_not(r.withheld);
	free(r.data);
}

/*
 * A body the engine kept out_max + reach bytes of, with the secret (in
 * each form) straddling out_max at every offset: never a prefix of it in
 * what is shown.
 */
Test(redact, a_secret_straddling_the_cut_never_leaks_a_prefix)
{
	static const char *const forms[] = { "Zq7-wX9+", "Zq7-wX9%2B",
	    "\\u005aq7-wX9+" };
	struct set_of s = needles("Zq7-wX9+", NULL, NULL);
	size_t out_max = 64, f, at, kept;
	char in[256];
	struct redacted r;

	for (f = 0; f < 3; f++)
		for (at = out_max - strlen(forms[f]); at <= out_max; at++) {
			memset(in, '.', sizeof(in));
			memcpy(in + at, forms[f], strlen(forms[f]));
			kept = out_max + s.set.reach;
			in[kept] = '\0';
			r = run(&s, in, false, out_max);
			cr_assert_leq(r.len, out_max);
			cr_assert_null(memmem(r.data, r.len, "Zq", 2),
			    "form %zu at %zu: %s", f, at, r.data);
			cr_assert_null(memmem(r.data, r.len, "\\u005a", 6));
			cr_assert_eq(r.withheld, at < out_max, "at %zu", at);
			free(r.data);
		}
}

Test(redact, many_occurrences_in_a_large_body)
{
	struct set_of s = needles("K", "key-\xe2\x82\xac", NULL);
	size_t n = 1000, i, markers = 0;
	char *in = malloc(n * 16 + 1), *p;
	struct redacted r;

	cr_assert_not_null(in);
	in[0] = '\0';
	for (i = 0; i < n; i++)
		strcat(in, i % 2 ? "..key-%E2%82%AC," : "..K,...........");
	r = run(&s, in, true, 65536);
	for (p = (char *)r.data; (p = strstr(p, M)) != NULL; p += strlen(M))
		markers++;
	cr_assert_eq(markers, n);
	cr_assert_null(strchr((char *)r.data, 'K'));
	cr_assert_null(strstr((char *)r.data, "key-"));
	free(r.data);
	free(in);
}

Test(redact, no_needles_copies_up_to_the_limit)
{
	struct redact_set none = { NULL, 0, 0 };
	struct redacted r;

	cr_assert(redact_bytes(&none, (const uint8_t *)"abc\0def", 7, false, 5,
	    &r));
	cr_assert_eq(r.len, 5);
	cr_assert_eq(memcmp(r.data, "abc\0d", 5), 0);
	cr_assert_eq(r.in_used, 5);
	free(r.data);
}
