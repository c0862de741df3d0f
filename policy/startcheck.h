/*
 * The start-up checks of docs/design.md section 4: everything about the
 * files a policy names and the catalog pin that sp mcp verifies before it
 * starts a session, run the same way by sp check, so a policy that passes
 * sp check starts.  The executor opens and checks each file it reads with
 * the same functions, on the descriptor it reads from.
 */
#ifndef SP_POLICY_STARTCHECK_H
#define SP_POLICY_STARTCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "policy/load.h"
#include "policy/policy.h"

/* Far above any key, token or CA bundle in use; bounds what one file costs. */
#define POLICY_FILE_MAX (4u * 1024 * 1024)
/* An audit HMAC key: at least HMAC-SHA256's output length (RFC 2104 2). */
#define POLICY_AUDIT_KEY_MIN 32
#define POLICY_AUDIT_KEY_MAX 1024
#define POLICY_WHY_MAX 256
/*
 * Shortest secret an HTTP credential may send (a token, a header value, a
 * basic credential's password): results are searched for it in any case,
 * in its encodings and split by whitespace (executor/redact.h), and one
 * found withholds a whole result, so a shorter one would withhold
 * ordinary text, and would be guessed in few tries besides.
 */
#define POLICY_SECRET_MIN 8

/*
 * Opens path read-only as a file of kind (not POLICY_FILE_AUDIT_LOG) and
 * checks what the descriptor holds: a regular file, not of procfs or
 * sysfs, of at most POLICY_FILE_MAX bytes; for a secret or audit key also not a symbolic
 * link, owned by the running user or root, and not open to group or
 * others when strict (*loose set otherwise).  Returns the descriptor
 * (O_NONBLOCK, so a FIFO cannot hang a start) and its size, or -1 with
 * why filled ("is a symbolic link", ...; the path is not in it).
 */
int policy_file_open(const char *path, enum policy_file_kind kind,
    bool strict, size_t *size, bool *loose, char *why, size_t why_size);

/*
 * The content rules for a file of kind once read: known_hosts lines
 * libssh2 and OpenSSH both read, a CA bundle holding a PEM certificate,
 * an audit key of POLICY_AUDIT_KEY_MIN..POLICY_AUDIT_KEY_MAX bytes.
 * false with why filled.
 */
bool policy_file_content_ok(enum policy_file_kind kind, const char *bytes,
    size_t len, char *why, size_t why_size);

/*
 * Whether a credential's secret (its len bytes as the executor read them)
 * is at least POLICY_SECRET_MIN bytes: the token, the header value, the
 * password after a basic credential's first ':'.  false with why filled,
 * which never quotes the secret.
 */
bool policy_credential_length_ok(const struct policy_credential *c,
    const unsigned char *bytes, size_t len, char *why, size_t why_size);

/*
 * Every check above on every file policy names, each HTTP credential's
 * file large enough to hold POLICY_SECRET_MIN bytes (its bytes are never
 * read here: the executor judges them), audit.path's directory
 * writable, and the catalog pin; once every file opens, what an ssh
 * target's files say together: a known_hosts entry for its host and
 * port, a passphrase_file for an encrypted private key, a public_key that
 * is the private key's half (policy/ssh_private_key.h reads only the
 * private key's clear part; a PEM key's half cannot be compared: a
 * warning).  Each problem appended to diags at the
 * place the policy names it.  sentence (NULL: not wanted) gets the first
 * error as a sentence for a client: no path, no file content.  Returns
 * false when it appended an error.
 */
bool policy_check_start(const struct policy *policy,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size);

/*
 * The approval sockets' directory, state_dir/approvals, must be the
 * broker's own (docs/design.md section 8.3): why st, that directory, is
 * not (not a directory, another uid's, writable by group or others), or
 * why st, the state_dir, lets another user replace it (writable by
 * others without the sticky bit); NULL when it is fine.  The broker's
 * check at start (broker/approvals.c) and sp check's.
 */
const char *policy_approvals_dir_why(const struct stat *st);
const char *policy_state_dir_shared_why(const struct stat *st);

/*
 * Warnings sp check adds (never an error): a scope some tool needs that
 * no profile grants, and a profile that grants no tool.
 */
void policy_check_grants(const struct policy *policy,
    const char *display_name, struct policy_diags *diags);

#endif
