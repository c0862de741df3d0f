/*
 * Where the policy comes from (docs/design.md section 3) and reading it whole.
 */
#ifndef SP_POLICY_SOURCE_H
#define SP_POLICY_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#define POLICY_SYSTEM_PATH "/etc/sallyport/policy.json"

/*
 * The policy path: option (from --config) if not NULL, else $SP_CONFIG if
 * set and not empty, else POLICY_SYSTEM_PATH.  The result is borrowed from
 * option, the environment or a literal.
 */
const char *policy_config_path(const char *option);

/*
 * Reads the file at path whole into *bytes (malloc'd, NUL-terminated for
 * convenience, caller frees; *len excludes the NUL).  Refuses anything
 * larger than POLICY_TEXT_MAX.  On failure writes a one-line reason into
 * why and returns false.
 */
bool policy_read_file(const char *path, char **bytes, size_t *len,
    char *why, size_t why_size);

#endif
