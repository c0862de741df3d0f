/*
 * The one regular expression engine of the policy: a param's "pattern"
 * compiled by the loader and matched by the frontend and the executor
 * against untrusted values (docs/design.md section 4).
 *
 * PCRE2 without JIT (the sandbox forbids executable memory), in UTF mode,
 * anchored at both ends: a value passes only when the whole of it
 * matches.  Both phases are bounded, so no policy and no value can take
 * unbounded time or memory: the pattern's length, its parenthesis
 * nesting and the memory its compilation allocates are capped, and each
 * match has a match (step) limit, a depth limit and a heap limit.
 *
 * Only the dialect PCRE2 and ECMA-262 (the "u" flag, as JSON Schema
 * clients apply "pattern" from inputSchema) read alike is accepted:
 * lookbehind, backreferences, possessive quantifiers, atomic groups,
 * inline options, verbs, POSIX bracket classes, "{,n}", unescaped literal
 * braces and brackets, and escapes outside a short list are refused.
 */
#ifndef SP_POLICY_PATTERN_H
#define SP_POLICY_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

#define PATTERN_LENGTH_MAX 1024		/* bytes of pattern source */
#define PATTERN_NEST_MAX 32		/* nested parentheses */
#define PATTERN_COMPILE_MEMORY_MAX (1024u * 1024)	/* bytes, all allocations */
#define PATTERN_MATCH_LIMIT 1000000u	/* backtracking steps per match */
#define PATTERN_DEPTH_LIMIT 100000u	/* nested backtracking points */
#define PATTERN_HEAP_LIMIT_KIB 16384u	/* heap for backtracking frames */

enum pattern_result { PATTERN_MATCH, PATTERN_NO_MATCH, PATTERN_TOO_COSTLY };

/*
 * Compiles src (NUL-terminated UTF-8).  On success *out is owned by the
 * caller (pattern_free).  On failure returns false with a reason in
 * why[why_size] and *out NULL.
 */
bool pattern_compile(const char *src, struct policy_pattern **out, char *why,
    size_t why_size);

/*
 * Whether s[0..len) matches as a whole.  PATTERN_TOO_COSTLY when a limit
 * was reached (or memory ran out) first: the value is then refused too.
 */
enum pattern_result pattern_match(const struct policy_pattern *pat,
    const char *s, size_t len);

/* NULL is allowed. */
void pattern_free(struct policy_pattern *pat);

#endif
