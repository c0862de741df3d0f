/*
 * Internal to the loader (load*.c): the state of one policy_load() call and
 * the helpers that read typed members and report problems at their place.
 * Every reader reports its own problem and returns false; callers go on, so
 * all problems are found in one pass.
 */
#ifndef SP_POLICY_LOAD_CTX_H
#define SP_POLICY_LOAD_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "policy/load.h"
#include "policy/locate.h"
#include "policy/policy.h"

#define LOAD_QUOTE_MAX 48	/* code points of a value quoted in a message */
#define LOAD_QUOTE_SIZE (LOAD_QUOTE_MAX * 6 + 8)

#define LOAD_LOWER "abcdefghijklmnopqrstuvwxyz"
#define LOAD_DIGIT "0123456789"
/* Names of credentials, targets and profiles. */
#define LOAD_ENTRY_FIRST LOAD_LOWER LOAD_DIGIT
#define LOAD_ENTRY_REST LOAD_LOWER LOAD_DIGIT "_-."
#define LOAD_SCOPE_REST LOAD_LOWER LOAD_DIGIT "_-.:"
/*
 * The type of an entry whose "type" was refused: outside the enum, so the
 * checks that depend on it skip it.  Never seen outside the loader, which
 * returns no policy once an error was reported.
 */
#define LOAD_CREDENTIAL_UNTYPED ((enum policy_credential_type)-1)
#define LOAD_TARGET_UNTYPED ((enum policy_target_type)-1)

#define LOAD_TIMEOUT_MIN 100
#define LOAD_TIMEOUT_MAX 600000

struct load_ctx {
	const char *name;		/* display name, borrowed */
	const char *text;		/* the policy text, borrowed */
	size_t len;
	struct json_locations locs;	/* owned */
	struct policy_diags *diags;	/* borrowed */
	struct policy *policy;		/* being built, owned until returned */
	size_t file_cap;
};

/* Reports at node's value, prefixed with node's path. */
void ctx_error(struct load_ctx *ctx, const cJSON *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As ctx_error, as a warning: the policy still loads. */
void ctx_warn(struct load_ctx *ctx, const cJSON *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reports at node's member name, prefixed with its object's path. */
void ctx_error_key(struct load_ctx *ctx, const cJSON *node,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The known key an unknown one is a near miss of (docs/design.md
 * section 4's "did you mean"): scanned over one or more key tables, the
 * one key within two edits (a transposition is one), when no other is as
 * close.  Zero-initialise, scan each table, then ctx_near_hint().
 */
struct ctx_near {
	const char *best;
	unsigned dist;
	bool tie;
};
void ctx_near_scan(struct ctx_near *n, const char *key,
    const char *const *known);
/* "; did you mean \"KEY\"?" for the one near miss, else "". */
void ctx_near_hint(const struct ctx_near *n, char *buf, size_t size);

/* Writes s as a JSON-like quoted string, escaped and cut, into buf. */
void ctx_quote(const char *s, char *buf, size_t size);

/* Code points in a valid UTF-8 string. */
size_t ctx_utf8_count(const char *s);

/* Reports each member of obj whose name is not in allowed (NULL-ended). */
bool ctx_known_keys(struct load_ctx *ctx, const cJSON *obj,
    const char *const *allowed);

/* false (and reported) unless node is an object; "what" names it. */
bool ctx_require_object(struct load_ctx *ctx, const cJSON *node);

/* The member, or NULL; reports a missing one when required. */
const cJSON *ctx_member(struct load_ctx *ctx, const cJSON *obj,
    const char *key, bool required);

/*
 * Typed member readers: absent optional members leave *out untouched and
 * return true.  Strings are copied (caller frees; NULL on failure).
 */
bool ctx_string(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required, char **out);
bool ctx_bool(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool *out);
bool ctx_integer_value(struct load_ctx *ctx, const cJSON *node, int64_t min,
    int64_t max, int64_t *out);
bool ctx_integer(struct load_ctx *ctx, const cJSON *obj, const char *key,
    int64_t min, int64_t max, int64_t *out);

/*
 * obj's optional member key, an array of uids or gids (each within uid_t,
 * without (uid_t)-1), into *out (allocated, caller frees) and *count.
 * admit, when not NULL, may refuse an id (it says why at e); arg is its.
 */
typedef bool (*ctx_id_admit)(struct load_ctx *ctx, const cJSON *e,
    uint32_t id, void *arg);
void ctx_id_list(struct load_ctx *ctx, const cJSON *obj, const char *key,
    uint32_t **out, size_t *count, ctx_id_admit admit, void *arg);

/* The raw text of a number token (not NUL-terminated) and its length. */
const char *ctx_number_text(struct load_ctx *ctx, const cJSON *node,
    size_t *len);

/* An absolute path without NUL; reported otherwise. */
bool ctx_path(struct load_ctx *ctx, const cJSON *obj, const char *key,
    bool required, char **out);

/* Records path (owned by the policy) as a file of kind named at node. */
bool ctx_add_file(struct load_ctx *ctx, const char *path, const cJSON *node,
    enum policy_file_kind kind);

/* s matches [first][rest]{0,max-1}, where each set is a list of chars. */
bool ctx_name_matches(const char *s, const char *first, const char *rest,
    size_t max);

/* An HTTP header name a policy may set (a token, not a reserved one). */
bool load_header_name_ok(const char *name);

/*
 * Splits an http target's base_url into scheme, host, port and base path,
 * reporting at node what is wrong with it.
 */
bool load_base_url(struct load_ctx *ctx, const cJSON *node,
    struct policy_target *t);

/* A "." or ".." segment in a URL path, also written as %2e. */
bool load_path_has_dot_segment(const char *path);

/* true for localhost, 127.0.0.0/8 and ::1. */
bool load_host_is_loopback(const char *host);

/*
 * Allocation failed: logged, and counted as an error so that no partly
 * built policy is ever returned.
 */
void ctx_out_of_memory(struct load_ctx *ctx);

/* strdup that reports failure with ctx_out_of_memory(). */
char *ctx_strdup(struct load_ctx *ctx, const char *s);

/*
 * Moves every "comment" member of root's objects into held (a cJSON
 * array the caller deletes), reporting one that is not a string; an http
 * action's body, query and headers are left as they are (load_comment.c).
 */
void load_strip_comments(struct load_ctx *ctx, cJSON *root, cJSON *held);

/* Sections, each in its own file. */
void load_credentials(struct load_ctx *ctx, const cJSON *root);
void load_targets(struct load_ctx *ctx, const cJSON *root);
void load_tools(struct load_ctx *ctx, const cJSON *root);
bool load_params(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool);
/* "confirm", once the params are loaded (policy/load_confirm.c). */
void load_confirm(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool);

void load_free_credential(struct policy_credential *c);
void load_free_target(struct policy_target *t);
void load_free_tool(struct policy_tool *t);
/* policy/load_limits.c: a tool's "limits" (after its params) */
void load_tool_limits(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool);
/* ... and its "idempotency" (after its action) */
void load_tool_idempotency(struct load_ctx *ctx, const cJSON *tool_obj,
    struct policy_tool *tool);
void load_free_param(struct policy_param *p);

#endif
