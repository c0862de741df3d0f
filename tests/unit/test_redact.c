#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "executor/redact.h"

/*
 * redact_text(): the text is folded as the client will see it, each
 * secret is found in its forms and variants, and how much of a cut text
 * is shown depends on its length alone.
 */

static struct redact_set
set_of(const char *a, const char *b, bool variants)
{
	const char *all[2] = { a, b };
	struct redact_set set;
	size_t pool = 0, i;

	for (i = 0; i < 2 && all[i] != NULL; i++)
		pool += redact_pool_size(strlen(all[i]), variants);
	cr_assert(redact_set_init(&set, 2 * REDACT_VARIANTS, pool));
	for (i = 0; i < 2 && all[i] != NULL; i++)
		cr_assert(redact_set_add(&set, (const uint8_t *)all[i],
		    strlen(all[i]), variants));
	return set;
}

static struct redacted
run(const struct redact_set *set, const char *in, size_t len, bool complete,
    size_t out_max)
{
	struct redacted r;

	cr_assert(redact_text(set, (const uint8_t *)in, len, complete, out_max,
	    &r));
	cr_assert_eq(r.data[r.len], '\0');
	return r;
}

static void
expect(const struct redact_set *set, const char *in, bool withheld)
{
	struct redacted r = run(set, in, strlen(in), true, 65536);

	cr_assert_eq(r.withheld, withheld, "in %s", in);
	free(r.data);
}

static const char tok[] = "Zq7-x/9+w~Tk3$(id)\"q";

Test(redact, raw_anywhere_in_any_case_and_split)
{
	struct redact_set s = set_of(tok, NULL, false);

	expect(&s, tok, true);
	expect(&s, "Authorization: Bearer Zq7-x/9+w~Tk3$(id)\"q\r\nX: y", true);
	expect(&s, "ZQ7-X/9+W~TK3$(ID)\"Q", true);
	expect(&s, "zq7-x/9+w~tk3$(id)\"q", true);
	expect(&s, "Zq7-x/9+w~\nTk3$(id)\"q", true);
	expect(&s, "Zq7-x /9+ w~T\r\nk3$( id)\"q", true);
	expect(&s, "Z q 7 - x / 9 + w ~ T k 3 $ ( i d ) \" q", true);
	/* more whitespace than a split: another text */
	expect(&s, "Zq7-x/9+w~                     Tk3$(id)\"q", false);
	expect(&s, "Zq7-x/9+w~Tk3$(id)", false);
	expect(&s, "nothing here", false);
	expect(&s, "", false);
	redact_set_free(&s);
	s = set_of("p\xc3\xa4ssw\xc3\xb6rd-\xd0\xb6-\xe6\xbc\xa2", NULL, false);
	expect(&s, "P\xc3\x84SSW\xc3\x96RD-\xd0\x96-\xe6\xbc\xa2", true);
	expect(&s, "p\xc3\xa4ssw\xc3\xb6rd-\xd0\xb7-\xe6\xbc\xa2", false);
	redact_set_free(&s);
}

/* What the frontend's folding makes of a text is what is searched. */
Test(redact, the_folded_text_is_searched_and_shown)
{
	struct redact_set s = set_of(tok, NULL, false);
	/* full-width letters, a zero-width space, a role tag inside */
	const char *fw = "\xef\xbc\xba\xef\xbd\x91" "7-x/9+w~Tk3$(id)\"q";
	const char *zw = "Zq7-x/9+w\xe2\x80\x8b~Tk3$(id)\"q";
	const char *tag = "Zq7-x/9+<system>w~Tk3$(id)\"q";
	struct redacted r;

	expect(&s, fw, true);
	expect(&s, zw, true);
	expect(&s, tag, true);
	r = run(&s, "\xef\xbc\xa1\xef\xbc\xa2 <user>x", 14, true, 4096);
	cr_assert_str_eq((char *)r.data, "AB x");
	cr_assert_not(r.withheld);
	free(r.data);
	redact_set_free(&s);
}

Test(redact, percent_json_and_html_forms)
{
	struct redact_set s = set_of("a b/c+d\"e\\f&<\xc3\xa9", NULL, false);

	expect(&s, "x=a%20b%2Fc%2Bd%22e%5Cf%26%3C%C3%A9;", true);
	expect(&s, "x=a+b%2fc%2bd%22e%5cf%26%3c%c3%a9;", true);
	expect(&s, "x=a%2520b%252Fc%252Bd%2522e%255Cf%2526%253C%25C3%25A9",
	    true);
	expect(&s, "\"a b\\/c+d\\\"e\\\\f&<\\u00e9\"", true);
	expect(&s, "&#97;&#32;&#98;&#47;&#99;&#43;&#100;&#34;&#101;&#92;"
	    "&#102;&#38;&#60;&#233;", true);
	expect(&s, "&#x61;&#X20;&#x62;&#x2F;c&#x2b;d&quot;e&bsol;f&amp;&lt;"
	    "&#xE9;", true);
	expect(&s, "a b/c+d&QUOT;e&Bsol;f&AMP;&LT;\xc3\xa9", true);
	/* a '+' is a space only in a query, never a '+' the other way */
	expect(&s, "a b/c d\"e\\f&<\xc3\xa9", false);
	redact_set_free(&s);
}

Test(redact, hex_and_base64_variants)
{
	const char *sec = "alice:Pw0d p@ss\xc3\xa9";
	struct redact_set s = set_of(sec, NULL, true);
	char b64[128], b64b[256], in[256];

	expect(&s, "616c6963653a507730642070407373c3a9", true);
	expect(&s, "616C6963653A507730642070407373C3A9", true);
	expect(&s, "616c6963 653a5077 30642070\n407373c3a9", true);
	expect(&s, "616c6963653a507730642070407373c3a8", false);
	cr_assert(base64_encode(sec, strlen(sec), b64, sizeof(b64)));
	expect(&s, b64, true);
	cr_assert(base64_encode(b64, strlen(b64), b64b, sizeof(b64b)));
	expect(&s, b64b, true);
	base64_to_url(b64, strlen(b64));
	expect(&s, b64, true);
	/* inside a longer encoded text, at each alignment */
	for (size_t k = 0; k < 3; k++) {
		snprintf(in, sizeof(in), "%.*sBasic %s", (int)k, "xy", sec);
		cr_assert(base64_encode(in, strlen(in), b64, sizeof(b64)));
		expect(&s, b64, true);
	}
	expect(&s, "YWxpY2U6UHcwZCBwQHNz", false);	/* a prefix only */
	redact_set_free(&s);
}

/*
 * A cut text shows up to reach bytes before its end whatever it holds,
 * so the cut answers no guess; an occurrence straddling out_max is found.
 */
Test(redact, a_cut_depends_on_the_length_alone)
{
	struct redact_set s = set_of("token123", NULL, false);
	char in[1024];
	size_t out_max = 64, at;
	struct redacted a, b;

	memset(in, '.', sizeof(in));
	a = run(&s, in, 300, false, out_max);
	memcpy(in + 300 - 3 - s.reach, "tok", 3);
	b = run(&s, in, 300, false, out_max);
	cr_assert_eq(a.len, b.len);
	cr_assert_eq(a.len, 300 - s.reach < out_max ? 300 - s.reach : out_max);
	free(a.data);
	free(b.data);
	for (at = out_max - 8; at <= out_max; at++) {
		memset(in, '.', sizeof(in));
		memcpy(in + at, "to%6Ben123", 10);
		a = run(&s, in, out_max + s.reach, false, out_max);
		cr_assert(a.withheld, "at %zu", at);
		cr_assert_leq(a.len, out_max);
		free(a.data);
	}
	redact_set_free(&s);
}

Test(redact, withholding_replaces_the_text)
{
	struct redact_set s = set_of("token123", NULL, false);
	struct redacted r = run(&s, "a TOKEN123 b", 12, true, 4096);

	cr_assert(r.withheld);
	cr_assert(redact_withhold(&r));
	cr_assert_str_eq((char *)r.data, REDACT_MARKER);
	cr_assert_eq(r.len, strlen(REDACT_MARKER));
	free(r.data);
	redact_set_free(&s);
}

Test(redact, no_needles_folds_up_to_the_limit)
{
	struct redacted r;

	cr_assert(redact_text(NULL, (const uint8_t *)"abc\0def", 7, true, 5,
	    &r));
	cr_assert_eq(r.len, 5);
	cr_assert_eq(memcmp(r.data, "abc d", 5), 0);
	cr_assert_not(r.withheld);
	free(r.data);
}

Test(redact, many_occurrences_in_a_large_body_are_found)
{
	struct redact_set s = set_of("key-\xe2\x82\xac-9z", NULL, true);
	size_t n = 20000, i;
	char *in = malloc(n * 16 + 64);

	cr_assert_not_null(in);
	for (i = 0; i < n; i++)
		memcpy(in + i * 16, "..kex-%E2%82%AC,", 16);
	strcpy(in + n * 16, "..key-%E2%82%AC-9Z");
	expect(&s, in, true);
	in[n * 16] = '\0';
	expect(&s, in, false);
	free(in);
	redact_set_free(&s);
}
