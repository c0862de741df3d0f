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
 * The fingerprint is SHA-256 over a canonical form of every tool the
 * policy declares, whatever profile looks at it: names, descriptions,
 * params (sorted by name, so the key order of "params" does not count)
 * with their constraints, scopes, mutating/confirm/idempotent/destructive
 * flags, the target's identity (name, type, base URL or user@host:port)
 * and the action templates.  The order of "tools" (an array) counts: it
 * is the catalog index.  Profiles are not in it: one pin covers the whole
 * policy, whichever profile a session gets.
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
