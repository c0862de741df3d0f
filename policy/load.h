/*
 * Loading and validating a policy (docs/design.md section 4, sp-policy.5).
 *
 * policy_load() checks every rule and reports every problem it finds, each
 * as one line "NAME:LINE:COL: message" (LINE and COL 1-based, COL counted
 * in code points) locating the offending member name or value.  Values
 * quoted into a message are escaped and cut, so a line never holds a
 * control character.
 */
#ifndef SP_POLICY_LOAD_H
#define SP_POLICY_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

#define POLICY_TEXT_MAX (4u * 1024 * 1024)	/* bytes of policy text */

enum policy_diag_severity { POLICY_DIAG_ERROR, POLICY_DIAG_WARNING };

struct policy_diag {
	enum policy_diag_severity severity;
	unsigned line, col;
	char *text;		/* "NAME:LINE:COL: message", one line, owned */
};

/*
 * A growing list of diagnostics.  The caller zero-initialises it, passes
 * it to the functions below (which append) and frees it with
 * policy_diags_free().
 */
struct policy_diags {
	struct policy_diag *items;
	size_t count;
	size_t cap;
	size_t errors;		/* items of severity POLICY_DIAG_ERROR */
};

/*
 * Parses and validates len bytes of policy text.  display_name names the
 * text in diagnostics (a path, usually).  Returns a policy owned by the
 * caller (policy_free()) when no error was found, NULL otherwise; either
 * way every problem is appended to diags.  Files are not touched, and a
 * "catalog_sha256" pin is only parsed: see policy_check_catalog_pin().
 */
struct policy *policy_load(const char *display_name, const char *bytes,
    size_t len, struct policy_diags *diags);

/*
 * Stats each file holding a secret (policy->secret_files): missing or not
 * a regular file is an error; not owned by the running user or accessible
 * by group/other is a warning, an error under "strict_credentials".
 * Returns false when it appended an error.
 */
bool policy_check_credential_files(const struct policy *policy,
    const char *display_name, struct policy_diags *diags);

/*
 * Compares the policy's "catalog_sha256" pin, if any, with its catalog
 * fingerprint (policy/catalog.h); a mismatch is an error at the pin.
 * Kept out of policy_load() so that sp catalog can still show a changed
 * catalog and its new fingerprint.  Returns false when it appended one.
 */
bool policy_check_catalog_pin(const struct policy *policy,
    const char *display_name, struct policy_diags *diags);

/*
 * state_dir, when the policy names one, is a directory the running user
 * may create files in (what sp mcp will do there); an error otherwise.
 * Returns false when it appended one.
 */
bool policy_check_state_dir(const struct policy *policy,
    const char *display_name, struct policy_diags *diags);

/* Releases everything the tree owns, then the policy.  NULL is allowed. */
void policy_free(struct policy *policy);

void policy_diags_free(struct policy_diags *diags);

/* Orders items[from..] by line, then column. */
void policy_diags_sort(struct policy_diags *diags, size_t from);

/*
 * Appends "NAME:LINE:COL: message" (message sanitized to one line).
 * Returns false only when memory ran out (the diagnostic is then lost,
 * but diags->errors still counts an error).
 */
bool policy_diags_add(struct policy_diags *diags,
    enum policy_diag_severity severity, const char *display_name,
    unsigned line, unsigned col, const char *message);

#endif
