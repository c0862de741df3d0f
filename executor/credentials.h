/*
 * The executor's credential store: every file the policy names that the
 * executor needs at run time, read once at start-up, before confinement
 * (docs/design.md invariant 5), so the confined executor opens nothing.
 *
 * Secrets (token, "user:password", header value, SSH private key,
 * passphrase) live in common/secret.h memory: out of core dumps, locked
 * where the limit allows, zeroed when freed.  They are never logged; a
 * diagnostic names the file, never its bytes.  Public material (SSH
 * public key, CA bundle, known_hosts) is plain heap memory.
 *
 * Token files (bearer, basic, header) and the passphrase file lose one
 * trailing "\n" (a file written with echo or an editor ends with one); any
 * other byte is kept, so a "\r" left before it is refused later by the
 * HTTP engine as a control character rather than silently sent.
 */
#ifndef SP_EXECUTOR_CREDENTIALS_H
#define SP_EXECUTOR_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/secret.h"
#include "executor/redact.h"
#include "policy/policy.h"

/* Per policy credential, at the same index as policy->credentials. */
struct credential_bytes {
	struct secret secret;	/* file bytes + NUL */
	size_t secret_len;	/* the bytes, without the NUL */
	char *public_key;	/* heap, NUL-terminated, or NULL */
	size_t public_key_len;
	struct secret passphrase;	/* NUL-terminated; empty when none */
	size_t passphrase_len;
	struct secret encoded;		/* basic: base64 of secret, NUL-terminated */
	size_t encoded_len;
};

/* Per policy target, at the same index as policy->targets. */
struct target_files {
	char *ca;		/* heap PEM bundle, or NULL: system default */
	size_t ca_len;
	char *known_hosts;	/* heap, or NULL */
	size_t known_hosts_len;
};

/* Owns every array and buffer inside; credential_store_free() releases. */
struct credential_store {
	struct credential_bytes *creds;
	size_t cred_count;
	struct target_files *targets;
	size_t target_count;
	struct redact_set withhold;	/* every secret and its variants */
};

/*
 * Reads every credential, CA and known_hosts file policy names.  A file
 * holding a secret must also be no symbolic link, owned by the running
 * user or root, and (under policy->strict_credentials; else a warning)
 * closed to group and others, checked on the open file.  On the
 * first file missing, unreadable, not a regular file or too large, or an
 * HTTP secret shorter than POLICY_SECRET_MIN (policy/startcheck.h), logs
 * one line naming it and returns false with the store empty (the
 * executor then exits 78: the operator's configuration is at fault).
 */
bool credential_store_load(struct credential_store *store,
    const struct policy *policy);

/* Zeroes and frees every secret; an empty store is allowed. */
void credential_store_free(struct credential_store *store);

#endif
