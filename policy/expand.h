/*
 * Template expansion: pure functions from (tool template, typed values) to
 * the bytes the executor sends.  Values must have passed
 * policy_values_check() first; expansion still refuses what would break
 * its place (a NUL anywhere, a control character in a header).
 *
 * Each function appends to a caller-owned struct policy_buf (policy/buf.h)
 * initialized with a maximum, and on failure returns false with a reason
 * in why[why_size].  The buffer's content is then undefined.
 *
 * Absent optional values (VALUE_ABSENT): a query pair or header with an
 * absent placeholder is left out; a body member that is exactly one absent
 * placeholder is left out (an array element becomes null); an ssh argv
 * element that is exactly one absent placeholder is left out; elsewhere
 * an absent value expands to nothing.  A path placeholder must be present.
 */
#ifndef SP_POLICY_EXPAND_H
#define SP_POLICY_EXPAND_H

#include <stdbool.h>
#include <stddef.h>

#include "common/value.h"
#include "policy/buf.h"
#include "policy/policy.h"

/*
 * The value as text: strings as they are, integers in decimal, booleans
 * "true"/"false", decimals with exactly the param's scale ("12.50").
 */
bool expand_value_text(const struct policy_param *p, const struct value *v,
    struct policy_buf *out);

/*
 * RFC 3986 percent-encoding: unreserved characters (ALPHA DIGIT - . _ ~)
 * kept, every other byte %XX.  So '/', '?', '#', '%' and '&' in a value
 * are data: "%2e%2e" becomes "%252e%252e".
 */
bool expand_percent_encode(const char *bytes, size_t len,
    struct policy_buf *out);

/*
 * True if seg[0..len) is "." or "..", with "%2e"/"%2E" read as '.':
 * servers decode a segment before resolving it, so "%2e%2e" is "..".
 * Shared by the loader (literal paths) and expand_http_path (results).
 */
bool expand_segment_is_dots(const char *seg, size_t len);

/*
 * One shell word: '...' with each ' written as '\'' and each \ as '\\'
 * (the quote closed, an escaped character, the quote reopened).  Read the
 * same, as exactly that word, by the POSIX sh family (sh, dash, bash, ksh,
 * zsh) and by fish, which treats \' and \\ inside '...' as escapes.  The
 * csh family (csh, tcsh) is not supported: a newline inside quotes is an
 * error there, and '!' is history expansion.  The target account's login
 * shell runs the command (sshd), so it must be one of the supported ones.
 */
bool expand_shell_quote(const char *bytes, size_t len, struct policy_buf *out);

/*
 * http.path (relative to the target's base path): literals as written,
 * each value percent-encoded as (part of) one segment.  A value may not be
 * empty, and no segment of the result may be "." or ".." even when
 * percent-encoded (expand_segment_is_dots): the loader already refuses
 * templates that could form "%2e", this is defence in depth.
 */
bool expand_http_path(const struct policy_tool *tool,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size);

/*
 * http.query as "key=value&key=value", keys and values percent-encoded as
 * above (RFC 3986, so a space is %20 and '+' is %2B: unambiguous for every
 * server).  Appends nothing when no pair is left.
 */
bool expand_http_query(const struct policy_tool *tool,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size);

/*
 * The value of http.headers[index].  Refuses any control character (CR,
 * LF, NUL, TAB, DEL, ...).  *omitted is set when an absent value leaves the
 * header out (nothing appended).
 */
bool expand_http_header(const struct policy_tool *tool, size_t index,
    const struct value *values, struct policy_buf *out, bool *omitted,
    char *why, size_t why_size);

/*
 * http.body as compact JSON.  A string that is exactly one placeholder
 * takes the param's JSON type: string, integer (a number), boolean, and
 * decimal as a JSON string with the fixed scale ("12.50") so no float
 * ever rounds it.  Placeholders inside longer strings are JSON-escaped.
 */
bool expand_http_body(const struct policy_tool *tool,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size);

/*
 * Quoting makes a value one word, but the remote program still reads a
 * word that starts with '-' as an option ("-la", "-f/etc/shadow"): a
 * value may begin an argv element with '-' only after a literal "--"
 * element or when its param sets allow_leading_dash (docs/design.md
 * section 4, sp-policy.5).  A negative integer or decimal counts too.
 * Checked by the frontend's argument validation and again by
 * expand_ssh_command in the executor.
 */
#define EXPAND_LEADING_DASH_REASON "must not start with '-' here: the " \
	"command would read it as an option"

/* True if t is the literal element "--" (the end of options). */
bool expand_is_end_of_options(const struct policy_template *t);

/*
 * False, with the offending param's index in *param, when a value would
 * begin an ssh.argv element with '-' against the rule above.
 */
bool expand_ssh_dash_check(const struct policy_tool *tool,
    const struct value *values, size_t *param);

/*
 * ssh.argv as one command line: each element expanded, then quoted as one
 * shell word, joined with single spaces.  Even literal elements are quoted.
 * Refuses values that break the leading '-' rule above.
 */
bool expand_ssh_command(const struct policy_tool *tool,
    const struct value *values, struct policy_buf *out, char *why,
    size_t why_size);

#endif
