/*
 * Issue 14 finding 4: param patterns on a bounded engine
 * (policy/pattern.h): the common PCRE2/ECMA-262 dialect, whole-value
 * matches, limits on compile and match, and the loader's messages.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/pattern.h"
#include "tests/unit/policy_load_expect.h"

static struct policy_pattern *
compiled(const char *src)
{
	struct policy_pattern *pat;
	char why[320];

	cr_assert(pattern_compile(src, &pat, why, sizeof(why)), "%s: %s", src,
	    why);
	cr_assert_not_null(pat);
	return pat;
}

static void
refused(const char *src, const char *want)
{
	struct policy_pattern *pat = (struct policy_pattern *)1;
	char why[320];

	cr_assert_not(pattern_compile(src, &pat, why, sizeof(why)),
	    "%s compiled", src);
	cr_assert_null(pat);
	cr_assert_not_null(strstr(why, want), "%s: no \"%s\" in: %s", src, want,
	    why);
}

static enum pattern_result
match(const char *src, const char *value)
{
	struct policy_pattern *pat = compiled(src);
	enum pattern_result r = pattern_match(pat, value, strlen(value));

	pattern_free(pat);
	return r;
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* As before: the whole value must match, as ^(pattern)$ would. */
Test(pattern, matches_the_whole_value_only)
{
	cr_assert_eq(match("[A-Z]{2}[0-9]+", "AB123"), PATTERN_MATCH);
	cr_assert_eq(match("[A-Z]{2}[0-9]+", "xAB123"), PATTERN_NO_MATCH);
	cr_assert_eq(match("[A-Z]{2}[0-9]+", "AB123;"), PATTERN_NO_MATCH);
	cr_assert_eq(match("[A-Z]{2}[0-9]+", "AB1\n"), PATTERN_NO_MATCH,
	    "$ before a final newline");
	cr_assert_eq(match("a|ab", "ab"), PATTERN_MATCH, "backtracks into "
	    "the alternative that reaches the end");
	cr_assert_eq(match("(?:a|ab)(c|bcd)", "abcd"), PATTERN_MATCH);
	cr_assert_eq(match("^a$", "a"), PATTERN_MATCH);
	cr_assert_eq(match("a*", ""), PATTERN_MATCH);
	cr_assert_eq(match(".*", "a\nb"), PATTERN_NO_MATCH, "'.' stops at LF");
	cr_assert_eq(match("[^\r\n]*", "a\rb"), PATTERN_NO_MATCH);
}

/* UTF mode: a character is a code point, as maxLength counts. */
Test(pattern, counts_code_points_not_bytes)
{
	cr_assert_eq(match(".{3}", "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80"),
	    PATTERN_MATCH);
	cr_assert_eq(match(".{3}", "abc\xc3\xa9"), PATTERN_NO_MATCH);
	cr_assert_eq(match("[\\u00e0-\\u00ff]+", "\xc3\xa9\xc3\xa0"),
	    PATTERN_MATCH);
	cr_assert_eq(match("\\p{L}+", "\xc3\xa9t\xc3\xa9"), PATTERN_MATCH);
	cr_assert_eq(match("\\w+", "\xc3\xa9"), PATTERN_NO_MATCH,
	    "\\w is ASCII, as in ECMA-262");
	cr_assert_eq(match("\\x41\\u0042\\u{43}", "ABC"), PATTERN_MATCH);
	cr_assert_eq(match("a.c", "a\xffc"), PATTERN_NO_MATCH, "not UTF-8");
}

Test(pattern, features_the_two_dialects_read_differently_are_refused)
{
	refused("(?<=a)b", "no lookbehind");
	refused("(?<!a)b", "no lookbehind");
	refused("(a)\\1", "backreferences");
	refused("(?<n>a)\\k<n>", "backreferences");
	refused("a\\g1", "this escape");
	refused("a++", "possessive");
	refused("a{2}+", "possessive");
	refused("(?>a+)b", "atomic groups");
	refused("(?i)abc", "inline options");
	refused("(?(1)a|b)", "conditionals");
	refused("(*FAIL)", "PCRE2 verb");
	refused("[[:alpha:]]+", "POSIX bracket classes");
	refused("a{,3}", "{0,n}");
	refused("a{", "\\{");
	refused("a}", "\\}");
	refused("a]", "\\]");
	refused("[]a]", "\\]");
	refused("\\Aabc\\z", "this escape");
	refused("\\Qa.b\\E", "this escape");
	refused("\\d\\h", "this escape");
	refused("a\\0", "this escape");
	refused("\\x4", "this escape");
	refused("\\-", "this escape");
}

Test(pattern, the_common_dialect_compiles)
{
	static const char *const ok[] = { "[a-z0-9][a-z0-9-]*",
	    "[A-Za-z0-9_./-]+", "(?:ab|cd)+?", "(?=a)a", "(?!b)a",
	    "(?<year>[0-9]{4})-[0-9]{2}", "a{2}", "a{2,}", "a{2,5}?",
	    "[\\]\\[\\-]", "\\.\\*\\+\\?\\(\\)\\{\\}\\|\\/\\^\\$\\\\",
	    "\\bword\\B", "[\\b]", "\\t\\n\\r\\f", "\\P{L}", "[^\\s\\S]" };
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		pattern_free(compiled(ok[i]));
}

/*
 * Issue 14 finding 4: regcomp expanded these to gigabytes.  Here a
 * compile is refused or done in bounded time and memory.
 */
Test(pattern, nested_counted_repetition_is_bounded)
{
	struct timespec t0;
	struct policy_pattern *pat;
	char *big, why[320];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	refused("(((a{0,255}){0,255}){0,255})", "regular expression is too "
	    "large");
	refused("((a{1,1000}){1,1000}){1,1000}", "regular expression is too "
	    "large");
	pat = compiled("(a{1,1000}){1,1000}");
	pattern_free(pat);
	cr_assert_lt(seconds_since(&t0), 5.0);
	big = malloc(PATTERN_LENGTH_MAX + 2);
	memset(big, 'a', PATTERN_LENGTH_MAX + 1);
	big[PATTERN_LENGTH_MAX + 1] = '\0';
	cr_assert_not(pattern_compile(big, &pat, why, sizeof(why)));
	cr_assert_str_eq(why, "pattern is 1025 bytes; at most 1024");
	big[PATTERN_LENGTH_MAX] = '\0';
	pattern_free(compiled(big));
	free(big);
	refused("((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))"
	    "))))))", "parentheses are too deeply nested");
}

/* Catastrophic backtracking against a long untrusted value: bounded. */
Test(pattern, catastrophic_backtracking_stops_at_the_match_limit)
{
	struct policy_pattern *pat = compiled("(a+)+");
	struct timespec t0;
	char value[1025];

	memset(value, 'a', sizeof(value) - 2);
	value[sizeof(value) - 2] = '!';
	value[sizeof(value) - 1] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(pattern_match(pat, value, strlen(value)),
	    PATTERN_TOO_COSTLY);
	cr_assert_lt(seconds_since(&t0), 5.0);
	value[sizeof(value) - 2] = 'a';
	cr_assert_eq(pattern_match(pat, value, strlen(value)), PATTERN_MATCH);
	pattern_free(pat);
}

/* The limits do not refuse an honest long value. */
Test(pattern, a_long_value_within_limits_matches)
{
	struct policy_pattern *pat = compiled("(?:ab|cd)*");
	size_t i, n = 65536;
	char *value = malloc(n + 1);

	for (i = 0; i < n; i += 2)
		memcpy(value + i, i % 4 ? "cd" : "ab", 2);
	value[n] = '\0';
	cr_assert_eq(pattern_match(pat, value, n), PATTERN_MATCH);
	value[n - 1] = 'x';
	cr_assert_eq(pattern_match(pat, value, n), PATTERN_NO_MATCH);
	free(value);
	pattern_free(pat);
}

/* In a policy: the loader's message at the pattern. */
Test(pattern_load, a_bad_pattern_is_an_error_at_its_place)
{
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"pattern\": "
	    "\"(((a{0,255}){0,255}){0,255})\"}}"), "\"(((",
	    "tools[0].params.s.pattern: pattern does not compile at offset 28: "
	    "regular expression is too large");
	expect_only(TOOL("\"http\": {\"method\": \"GET\", \"path\": \"/{s}\"}, "
	    "\"params\": {\"s\": {\"type\": \"string\", \"pattern\": "
	    "\"x(?<=a)\"}}"), "\"x(?",
	    "tools[0].params.s.pattern: pattern at offset 1: only (?: (?= (?! "
	    "and (?<name> groups are read alike by PCRE2 and ECMA-262 (no "
	    "lookbehind, atomic groups, inline options or conditionals)");
}
