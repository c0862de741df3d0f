/*
 * The loaded policy: typed structs built from the policy JSON (docs/design.md
 * section 4, sp-policy.5).  A struct policy is immutable after
 * policy_load() returns it; every process that holds one owns its own copy
 * (the broker hands the same bytes to each child, and each loads them).
 *
 * Ownership: policy_load() allocates the whole tree; policy_free() releases
 * it.  Every pointer inside is owned by the tree; indexes (target_index,
 * credential_index, param_index) refer to arrays of the same tree.
 */
#ifndef SP_POLICY_POLICY_H
#define SP_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/http_method.h"

#define POLICY_NAME_MAX 64		/* ^[a-z][a-z0-9_]{0,63}$ */
#define POLICY_DESCRIPTION_MAX 460	/* characters (code points) */
#define POLICY_TITLE_MAX 60		/* characters (code points) */
#define POLICY_STRING_DEFAULT_MAX 1024	/* maxLength when none is given */
#define POLICY_CONNINFO_MAX 1024	/* "state": {"postgres": ...} bytes */

enum policy_on_invalid { POLICY_ON_INVALID_CLOSE, POLICY_ON_INVALID_REJECT };
enum policy_sandbox { POLICY_SANDBOX_REQUIRED, POLICY_SANDBOX_BEST_EFFORT };

/*
 * audit.journal (docs/design.md section 6): which records also go off the
 * host, to journald (or syslog(3) in a build without libsystemd).
 */
enum policy_audit_journal {
	POLICY_JOURNAL_ANCHORS,		/* true, the default: session-start, session-end */
	POLICY_JOURNAL_OFF,		/* false */
	POLICY_JOURNAL_ALL,		/* "all": every record */
};

struct policy_limits {
	size_t max_frame_bytes;		/* default 1048576 */
	size_t max_inflight;		/* default 16 */
	size_t calls_per_session;	/* default 200 */
	size_t result_max_chars;	/* default 16000 */
	uint32_t call_timeout_ms;	/* default 30000 */
	uint32_t dedupe_ms;		/* default 10000; 0: in flight only */
};

/*
 * A tool's own limits (docs/sp-policy.5, "limits" of a tool); 0 is
 * "none".  The broker keeps the counts (state/limits.h).
 */
struct policy_tool_limits {
	uint32_t min_interval_ms;	/* between two calls of the same values */
	uint32_t per_day;		/* calls per uid (or profile) per UTC day */
	uint32_t *max_distinct;		/* per param, NULL when none: values per
					 * session; owned, param_count entries */
	bool any;			/* one of them is set */
};

struct policy_pattern;		/* policy/pattern.h */

enum param_type {
	PARAM_STRING,
	PARAM_INTEGER,
	PARAM_BOOLEAN,
	PARAM_DECIMAL,
};

/* How an argument appears in the audit log. */
enum param_audit { PARAM_AUDIT_SHAPE, PARAM_AUDIT_VALUE, PARAM_AUDIT_MASK4 };

struct policy_param {
	char *name;
	char *description;		/* may be NULL */
	enum param_type type;
	enum param_audit audit;
	bool required;			/* default true */

	/* PARAM_STRING: lengths in characters (code points), like JSON Schema. */
	size_t min_length;
	size_t max_length;		/* always set; default POLICY_STRING_DEFAULT_MAX */
	char *pattern;			/* source text, or NULL */
	struct policy_pattern *pattern_re;	/* owned; set when pattern is */
	char **enum_values;		/* NULL or enum_count strings */
	size_t enum_count;

	/* PARAM_INTEGER, and PARAM_DECIMAL in minor units. */
	bool has_minimum, has_maximum;
	int64_t minimum, maximum;

	/* PARAM_DECIMAL: digits after the point, 0..18. */
	unsigned scale;

	/*
	 * A value of this param may start an ssh.argv element with '-'
	 * (read as an option) even where no "--" element precedes it.
	 */
	bool allow_leading_dash;
};

/*
 * A template string ("/items/{id}") split into literal runs and
 * placeholders.  A placeholder names a param by index into its tool's params.
 */
struct policy_template_part {
	bool is_param;
	char *literal;			/* when !is_param */
	size_t literal_len;
	size_t param_index;		/* when is_param */
};

struct policy_template {
	struct policy_template_part *parts;
	size_t part_count;
};

struct policy_name_template {
	char *name;			/* query key or header name (literal) */
	struct policy_template value;
};

enum policy_body_kind {
	BODY_NULL, BODY_BOOL, BODY_NUMBER, BODY_STRING, BODY_ARRAY, BODY_OBJECT,
};

/*
 * An HTTP body template: a JSON tree whose strings may hold placeholders.
 * A string that is exactly one placeholder takes the param's JSON type.
 */
struct policy_body {
	enum policy_body_kind kind;
	bool boolean;
	char *number_text;		/* BODY_NUMBER: the literal as written */
	struct policy_template string;	/* BODY_STRING */
	char *key;			/* member name when inside an object */
	struct policy_body *children;	/* BODY_ARRAY / BODY_OBJECT */
	size_t child_count;
};

struct policy_http_action {
	enum http_method method;
	struct policy_template path;
	struct policy_name_template *query;
	size_t query_count;
	struct policy_name_template *headers;
	size_t header_count;
	struct policy_body *body;	/* NULL when there is none */
};

struct policy_ssh_action {
	struct policy_template *argv;
	size_t argc;
};

enum policy_tool_kind { TOOL_HTTP, TOOL_SSH };

#define POLICY_CONFIRM_TIMEOUT_DEFAULT 120	/* seconds */
#define POLICY_CONFIRM_TIMEOUT_MAX 600
#define POLICY_CONFIRM_NO_RETYPE SIZE_MAX

/* How a tool's confirmation is asked (policy/load_confirm.c). */
struct policy_confirm {
	bool has_message;		/* else title or name, and the values */
	struct policy_template message;	/* placeholders name params */
	size_t retype;			/* param index, or _NO_RETYPE */
	uint32_t timeout_s;		/* 1..POLICY_CONFIRM_TIMEOUT_MAX */
	/* via "operator" (section 8.3): sp approve, not the client */
	bool via_operator;
	uint32_t *approver_uids;	/* owned; any of these uids */
	size_t approver_uid_count;
	uint32_t *approver_gids;	/* owned; or a member of these */
	size_t approver_gid_count;
	bool others_only;		/* never the requester's own uid */
};

struct policy_tool {
	char *name;
	char *title;			/* may be NULL */
	char *description;
	size_t target_index;
	char *scope;
	bool mutating;
	bool confirm;			/* a human says yes first (section 8) */
	struct policy_confirm confirm_spec;	/* when confirm */
	bool idempotent;		/* annotations.idempotentHint */
	bool destructive;		/* annotations.destructiveHint */
	enum policy_tool_kind kind;
	struct policy_http_action http;
	struct policy_ssh_action ssh;
	struct policy_param *params;	/* in declaration order */
	size_t param_count;
	uint32_t timeout_ms;		/* 0: the target's or the limits' */
	struct policy_tool_limits limits;
	uint32_t idem_window_s;		/* idempotency.window_s; 0: no journal */
	char *idem_header;		/* idempotency.header, or NULL */
};

enum policy_credential_type {
	CREDENTIAL_BEARER, CREDENTIAL_BASIC, CREDENTIAL_HEADER, CREDENTIAL_SSH_KEY,
};

/* Only file paths: the secret bytes are read by the executor alone. */
struct policy_credential {
	char *name;
	enum policy_credential_type type;
	char *file;			/* bearer, basic ("user:password"), header */
	char *header_name;		/* CREDENTIAL_HEADER */
	char *private_key;		/* CREDENTIAL_SSH_KEY */
	char *public_key;		/* may be NULL */
	char *passphrase_file;		/* may be NULL */
};

enum policy_target_type { TARGET_HTTP, TARGET_SSH };

struct policy_target {
	char *name;
	enum policy_target_type type;
	bool has_credential;
	size_t credential_index;
	uint32_t timeout_ms;		/* 0: limits.call_timeout_ms */

	/* TARGET_HTTP */
	char *base_url;
	char *scheme;			/* "https", or "http" for loopback only */
	char *host;
	uint16_t port;
	char *base_path;		/* "" or "/prefix" without trailing '/' */
	char *ca_file;			/* NULL: system bundle */
	bool follow_redirects;
	bool allow_private;		/* private ranges (RFC 1918, ULA) */
	bool allow_loopback;
	bool allow_link_local;		/* not the cloud metadata addresses */
	bool allow_metadata;		/* 169.254.169.254, fd00:ec2::254 */

	/* TARGET_SSH */
	char *user;
	char *known_hosts;		/* NULL when host_key_sha256 is set */
	bool has_host_key_sha256;
	uint8_t host_key_sha256[HASH_SHA256_LEN];
};

struct policy_profile {
	char *name;
	char **scopes;
	size_t scope_count;
	uint32_t *match_uids;
	size_t match_uid_count;
	uint32_t *match_gids;
	size_t match_gid_count;
};

/* What a file the policy names holds, which says how it is checked. */
enum policy_file_kind {
	POLICY_FILE_SECRET,		/* credential or passphrase */
	POLICY_FILE_AUDIT_KEY,		/* audit HMAC key */
	POLICY_FILE_PUBLIC_KEY,		/* an ssh-key's public half */
	POLICY_FILE_CA,			/* http target's CA bundle */
	POLICY_FILE_KNOWN_HOSTS,	/* ssh target's host keys */
	POLICY_FILE_AUDIT_LOG,		/* audit.path, appended to */
};

/*
 * A file the policy names, with where it names it, so the start-up checks
 * (policy/startcheck.h) can point there.
 */
struct policy_file {
	const char *path;		/* borrowed from the policy */
	enum policy_file_kind kind;
	unsigned line, col;
};

struct policy {
	int version;			/* "sallyport": 1 */
	char *server_name;
	enum policy_on_invalid on_invalid;
	enum policy_sandbox sandbox;
	char *run_as;			/* NULL: stay (or default unprivileged user) */
	unsigned run_as_line, run_as_col;	/* where it is written */
	bool strict_credentials;
	struct policy_limits limits;
	char *audit_path;		/* NULL: nothing is audited */
	char *state_dir;		/* NULL: limits end with the session */
	unsigned state_dir_line, state_dir_col;	/* where it is written */
	/* "state": {"postgres": conninfo, "password_file": path}: limits and
	 * the journal in PostgreSQL (state/pg.h); NULL: state_dir's */
	char *state_postgres;
	char *state_password_file;	/* NULL: libpq's other means */
	unsigned state_line, state_col;	/* where "state" is written */
	char *audit_key_file;		/* NULL: no HMAC */
	enum policy_audit_journal audit_journal;
	bool has_catalog_pin;
	uint8_t catalog_pin[HASH_SHA256_LEN];
	unsigned catalog_pin_line, catalog_pin_col;	/* where it is written */

	struct policy_credential *credentials;
	size_t credential_count;
	struct policy_target *targets;
	size_t target_count;
	struct policy_tool *tools;	/* catalog index = position here */
	size_t tool_count;
	struct policy_profile *profiles;
	size_t profile_count;
	struct policy_file *files;	/* in the order the policy names them */
	size_t file_count;
};

#endif
