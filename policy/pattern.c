/*
 * Param patterns on PCRE2 (see pattern.h).  glibc's regcomp expands
 * nested counted repetition at compile time and has no limit: one policy
 * line took gigabytes and crashed the loader (issue 14), so the engine
 * here is one with limits on both compile and match.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/log.h"
#include "policy/pattern.h"

/*
 * ANCHORED and ENDANCHORED make the match a whole-value match with
 * backtracking into alternatives, which wrapping the source in "^(...)$"
 * would not guarantee against a ")" in it.  DOLLAR_ENDONLY: '$' never
 * matches before a final newline.  ALT_BSUX: \u and \x as in ECMA-262.
 */
#define PATTERN_OPTIONS (PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | \
	PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_NEVER_BACKSLASH_C | \
	PCRE2_NEVER_UCP)

struct policy_pattern {
	size_t compile_budget;		/* bytes compilation may still allocate */
	pcre2_code *code;
	pcre2_match_context *mctx;
};

/* Escapes both dialects read alike; see pattern_check_escape. */
#define PATTERN_CLASS_ESCAPES "dDwWsStnrf"
#define PATTERN_SYNTAX_CHARS "^$\\.*+?()[]{}|/"

static bool
pattern_hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr("0123456789abcdefABCDEF", s[i]) == NULL)
			return false;
	return true;
}

/* Length of "{...}" at s made of chars from set, or 0. */
static size_t
pattern_braced(const char *s, const char *set)
{
	size_t n = 1;

	if (s[0] != '{')
		return 0;
	while (s[n] != '\0' && s[n] != '}' && strchr(set, s[n]) != NULL)
		n++;
	return s[n] == '}' && n > 1 ? n + 1 : 0;
}

/*
 * s points after a backslash.  Returns the length of the escape's body,
 * or 0 when it is outside the common dialect (backreferences \1 \k \g,
 * octal, \A \z \Z \G \Q \E \K \R \X \h \v \N \c and the like).
 */
static size_t
pattern_escape_len(const char *s, bool in_class)
{
	size_t n;

	if (s[0] == '\0')
		return 0;
	if (strchr(PATTERN_CLASS_ESCAPES, s[0]) != NULL ||
	    strchr(PATTERN_SYNTAX_CHARS, s[0]) != NULL)
		return 1;
	if (s[0] == 'b' || s[0] == 'B')
		return in_class && s[0] == 'B' ? 0 : 1;
	if (s[0] == '-')
		return in_class ? 1 : 0;
	if (s[0] == 'x')
		return pattern_hex_run(s + 1, 2) ? 3 : 0;
	if (s[0] == 'u') {
		if (pattern_hex_run(s + 1, 4))
			return 5;
		n = pattern_braced(s + 1, "0123456789abcdefABCDEF");
		return n > 0 ? n + 1 : 0;
	}
	if (s[0] == 'p' || s[0] == 'P') {
		n = pattern_braced(s + 1, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_=");
		return n > 0 ? n + 1 : 0;
	}
	return 0;
}

/* Length of a counted quantifier "{n}", "{n,}", "{n,m}" at s, or 0. */
static size_t
pattern_bound_len(const char *s)
{
	size_t n = 1, digits = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++, digits++;
	if (digits == 0)
		return 0;
	if (s[n] == ',')
		for (n++; s[n] >= '0' && s[n] <= '9'; n++)
			;
	return s[n] == '}' ? n + 1 : 0;
}

/* After "(?": only (?: (?= (?! and a named group (?<name>. */
static bool
pattern_group_ok(const char *s)
{
	if (s[0] == ':' || s[0] == '=' || s[0] == '!')
		return true;
	return s[0] == '<' && ((s[1] >= 'a' && s[1] <= 'z') ||
	    (s[1] >= 'A' && s[1] <= 'Z') || s[1] == '_');
}

struct pattern_scan {
	const char *s;
	size_t i;
	bool in_class, class_first, after_quantifier;
};

static const char *
pattern_scan_class(struct pattern_scan *sc)
{
	char c = sc->s[sc->i];
	bool first = sc->class_first;

	sc->class_first = false;
	if (c == '[' && strchr(":.=", sc->s[sc->i + 1]) != NULL)
		return "POSIX bracket classes such as [:alpha:] are not "
		    "ECMA-262; write the characters, e.g. [a-zA-Z]";
	if (c == ']') {
		if (first)
			return "a ']' first in a class is read differently by "
			    "ECMA-262; write \\]";
		sc->in_class = false;
	}
	sc->i++;
	return NULL;
}

static const char *
pattern_scan_quantifier(struct pattern_scan *sc, size_t len)
{
	if (sc->after_quantifier && sc->s[sc->i] == '+')
		return "possessive quantifiers are not ECMA-262";
	/* A '?' after a quantifier makes it lazy, in both dialects. */
	sc->after_quantifier = !(sc->after_quantifier && sc->s[sc->i] == '?');
	sc->i += len;
	return NULL;
}

static const char *
pattern_scan_one(struct pattern_scan *sc)
{
	const char *s = sc->s + sc->i;
	size_t n;

	if (s[0] == '\\') {
		if ((n = pattern_escape_len(s + 1, sc->in_class)) == 0)
			return "this escape is not read alike by PCRE2 and "
			    "ECMA-262 (backreferences, octal and letters outside "
			    "\\d \\D \\w \\W \\s \\S \\b \\B \\t \\n \\r \\f \\x \\u "
			    "\\p \\P are refused)";
		sc->i += n + 1;
		sc->after_quantifier = sc->class_first = false;
		return NULL;
	}
	if (sc->in_class)
		return pattern_scan_class(sc);
	if (s[0] == '*' || s[0] == '+' || s[0] == '?')
		return pattern_scan_quantifier(sc, 1);
	if (s[0] == '{') {
		if (s[1] == ',')
			return "\"{,n}\" is not read alike by PCRE2 and ECMA-262; "
			    "write {0,n}";
		if ((n = pattern_bound_len(s)) == 0)
			return "a literal '{' must be written \\{";
		return pattern_scan_quantifier(sc, n);
	}
	sc->after_quantifier = false;
	if (s[0] == '}' || s[0] == ']')
		return s[0] == '}' ? "a literal '}' must be written \\}" :
		    "a literal ']' must be written \\]";
	if (s[0] == '(' && s[1] == '*')
		return "\"(*\" starts a PCRE2 verb, not ECMA-262";
	if (s[0] == '(' && s[1] == '?' && !pattern_group_ok(s + 2))
		return "only (?: (?= (?! and (?<name> groups are read alike by "
		    "PCRE2 and ECMA-262 (no lookbehind, atomic groups, inline "
		    "options or conditionals)";
	if (s[0] == '[') {
		sc->in_class = sc->class_first = true;
		if (s[1] == '^')
			sc->i++;
	}
	sc->i++;
	return NULL;
}

/* The first construct outside the common dialect, or NULL. */
static const char *
pattern_dialect_problem(const char *src, size_t *at)
{
	struct pattern_scan sc = { .s = src };
	const char *why;

	while (src[sc.i] != '\0') {
		*at = sc.i;
		if ((why = pattern_scan_one(&sc)) != NULL)
			return why;
	}
	return NULL;
}

/*
 * Compilation's allocator: refuses past the budget.  Frees are not
 * credited back (their size is unknown), which only makes it stricter.
 */
static void *
pattern_budget_malloc(PCRE2_SIZE size, void *data)
{
	struct policy_pattern *pat = data;

	if (size > pat->compile_budget)
		return NULL;
	pat->compile_budget -= size;
	return malloc(size);
}

static void
pattern_budget_free(void *block, void *data)
{
	(void)data;
	free(block);
}

static void
pattern_error_text(int code, char *buf, size_t size)
{
	if (pcre2_get_error_message(code, (PCRE2_UCHAR *)buf, size) < 0)
		snprintf(buf, size, "error %d", code);
}

static bool
pattern_build(struct policy_pattern *pat, const char *src, char *why,
    size_t why_size)
{
	pcre2_general_context *gctx;
	pcre2_compile_context *cctx;
	PCRE2_SIZE off = 0;
	char msg[120];
	int err = 0;

	gctx = pcre2_general_context_create(pattern_budget_malloc,
	    pattern_budget_free, pat);
	cctx = gctx ? pcre2_compile_context_create(gctx) : NULL;
	if (cctx != NULL) {
		pcre2_set_max_pattern_length(cctx, PATTERN_LENGTH_MAX);
		pcre2_set_parens_nest_limit(cctx, PATTERN_NEST_MAX);
		pcre2_set_compile_extra_options(cctx, PCRE2_EXTRA_ALT_BSUX);
		pat->code = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED,
		    PATTERN_OPTIONS, &err, &off, cctx);
	}
	pcre2_compile_context_free(cctx);
	pcre2_general_context_free(gctx);
	if (pat->code != NULL)
		return true;
	if (cctx == NULL || err == PCRE2_ERROR_HEAP_FAILED)
		snprintf(why, why_size, "pattern needs more than %u bytes to "
		    "compile", PATTERN_COMPILE_MEMORY_MAX);
	else {
		pattern_error_text(err, msg, sizeof(msg));
		snprintf(why, why_size, "pattern does not compile at offset "
		    "%zu: %s", (size_t)off, msg);
	}
	return false;
}

static bool
pattern_limits(struct policy_pattern *pat)
{
	if ((pat->mctx = pcre2_match_context_create(NULL)) == NULL)
		return false;
	pcre2_set_match_limit(pat->mctx, PATTERN_MATCH_LIMIT);
	pcre2_set_depth_limit(pat->mctx, PATTERN_DEPTH_LIMIT);
	pcre2_set_heap_limit(pat->mctx, PATTERN_HEAP_LIMIT_KIB);
	return true;
}

bool
pattern_compile(const char *src, struct policy_pattern **out, char *why,
    size_t why_size)
{
	struct policy_pattern *pat;
	const char *problem;
	size_t len = strlen(src), at = 0;

	*out = NULL;
	/* Before the scan too, so no work is spent on an oversized source. */
	if (len > PATTERN_LENGTH_MAX) {
		snprintf(why, why_size, "pattern is %zu bytes; at most %d", len,
		    PATTERN_LENGTH_MAX);
		return false;
	}
	if ((problem = pattern_dialect_problem(src, &at)) != NULL) {
		snprintf(why, why_size, "pattern at offset %zu: %s", at, problem);
		return false;
	}
	if ((pat = calloc(1, sizeof(*pat))) == NULL) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	pat->compile_budget = PATTERN_COMPILE_MEMORY_MAX;
	if (!pattern_build(pat, src, why, why_size)) {
		pattern_free(pat);
		return false;
	}
	if (!pattern_limits(pat)) {
		snprintf(why, why_size, "out of memory");
		pattern_free(pat);
		return false;
	}
	*out = pat;
	return true;
}

enum pattern_result
pattern_match(const struct policy_pattern *pat, const char *s, size_t len)
{
	pcre2_match_data *md;
	int rc;

	if ((md = pcre2_match_data_create(1, NULL)) == NULL) {
		log_error("pattern: out of memory");
		return PATTERN_TOO_COSTLY;
	}
	rc = pcre2_match(pat->code, (PCRE2_SPTR)s, len, 0, 0, md, pat->mctx);
	pcre2_match_data_free(md);
	/* 0: matched, but the one-pair vector is too small for the groups. */
	if (rc >= 0)
		return PATTERN_MATCH;
	if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL)
		return PATTERN_NO_MATCH;
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21)
		return PATTERN_NO_MATCH;
	return PATTERN_TOO_COSTLY;
}

void
pattern_free(struct policy_pattern *pat)
{
	if (pat == NULL)
		return;
	/* The code's free function ignores its data: pat may go first. */
	pcre2_code_free(pat->code);
	pcre2_match_context_free(pat->mctx);
	free(pat);
}
