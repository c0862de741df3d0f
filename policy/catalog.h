/*
 * The catalog: the MCP tools/list result a profile sees, and the catalog
 * fingerprint a policy may pin with "catalog_sha256".
 *
 * Each visible tool (its scope granted by the profile, policy/authz.h) is
 * rendered with name, description, inputSchema (type object, properties,
 * required, additionalProperties false), annotations and outputSchema, in
 * policy order.  Param schemas: string -> minLength, maxLength, pattern as
 * "^(P)$" (the checker matches the whole value), enum; integer ->
 * minimum, maximum; boolean; decimal -> a string with a pattern of digits
 * and at most `scale` decimals, its range in the description.
 *
 * outputSchema, which the frontend's successful results must satisfy in
 * structuredContent (nothing in it is additionalProperties: false):
 *   { "issuer":  string, "sallyport/<server name>"           required
 *     "outcome": "ok" | "failed" | "unknown" | "denied" | "invalid"  required
 *     "message": string                                      optional
 *     "http":    { "status": integer, "content_type": string,
 *                  "body": any, "truncated": boolean }       HTTP tools only
 *     "ssh":     { "exit_status": integer, "stdout": string,
 *                  "stderr": string, "truncated": boolean }  SSH tools only }
 *
 * The fingerprint is SHA-256 over a canonical form ("sallyport-catalog-2")
 * of everything that decides what a call does, where it goes and who may
 * make it, whatever profile looks at it:
 *   - every tool, in policy order (the array order is the catalog index):
 *     name, description, scope, mutating/confirm/idempotent/destructive,
 *     timeout_ms, kind, the action templates, and params sorted by name
 *     with their constraints;
 *   - each tool's target: name, type, timeout_ms; its credential's name,
 *     type and header_name (never the file paths: moving a secret file is
 *     not a change of behaviour); HTTP: base_url and its scheme, host,
 *     port and base path, ca_file, follow_redirects, allow_private,
 *     allow_loopback, allow_link_local, allow_metadata; SSH: user, host,
 *     port, known_hosts path, host_key_sha256;
 *   - every profile, sorted by name: its scopes and its match uids and
 *     gids, each sorted.  A granted scope or a matched id decides which
 *     tools an assistant sees, so it is part of what is pinned.
 * JSON objects (params, query, headers, body members, profiles) and sets
 * (scopes, ids) are sorted, so key order in the file never counts.  One
 * pin covers the whole policy, whichever profile a session gets.
 */
#ifndef SP_POLICY_CATALOG_H
#define SP_POLICY_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "policy/policy.h"

/*
 * The tools/list result {"tools":[...]} as compact JSON for profile (NULL:
 * no profile matched, no tools).  Returns a heap string (caller frees)
 * and its length in bytes, or NULL on allocation failure.
 */
char *policy_catalog_render(const struct policy *policy,
    const struct policy_profile *profile, size_t *len);

/* SHA-256 of the canonical catalog; false on allocation failure. */
bool policy_catalog_fingerprint(const struct policy *policy,
    uint8_t out[HASH_SHA256_LEN]);

/*
 * True when the policy has no "catalog_sha256" or it matches.  Otherwise
 * writes a one-line reason naming both hashes into why and returns false
 * (the caller refuses to start).
 */
bool policy_catalog_verify_pin(const struct policy *policy, char *why,
    size_t why_size);

#endif
