/*
 * Typed records between Sallyport's processes: one record is one
 * SOCK_SEQPACKET datagram.  One encoder and one strict decoder per type.
 *
 * Layout (all numbers big-endian, see common/buf.h):
 *
 *   header    u16 version (RECORD_VERSION)   u16 type (enum record_type)
 *   string    u32 length, then that many bytes
 *   text      a string with no NUL byte
 *   token     a text of 1..RECORD_TOKEN_MAX bytes from a fixed alphabet
 *             (reasons: [a-z0-9-]; signal names: [A-Z0-9])
 *
 *   HELLO        u8 role, 32 bytes catalog fingerprint (the sender's
 *                protocol version is the header's: a peer of another
 *                version is refused on its first record, and record_peek()
 *                says which version it spoke)
 *   ACTION       u64 call id, u32 tool index, 32 bytes catalog fingerprint,
 *                u16 argument count, then per argument u8 kind (enum
 *                value_kind) and its payload: ABSENT nothing; STRING a text;
 *                INTEGER and DECIMAL u64 (two's complement); BOOLEAN u8 0|1
 *   CANCEL       u64 call id
 *   RESULT       u64 call id, u8 outcome, u8 kind, u32 flags, u64 first
 *                call id only when RESULT_DUPLICATE,
 *                u64 duration µs, text message, then by kind:
 *                NONE  nothing
 *                HTTP  u16 status, u32 Retry-After s, text content type,
 *                      text Location, string body, u64 body total,
 *                      u64 connect µs, u64 first byte µs
 *                SSH   u8 end, u32 exit status, signal (u32 0 or a token),
 *                      string stdout, u64 stdout total,
 *                      string stderr, u64 stderr total
 *   AUDIT_EVENT  u8 kind, u8 flags, u64 frame number, reason (u32 0 or a
 *                token), u32 code (two's complement), method (u32 0 or a
 *                token of [A-Za-z0-9/_-]), 32 bytes sha256 only
 *                when AUDIT_HAS_SHA256, u64 call id, u32 tool index,
 *                u8 outcome (0 or enum record_outcome), u32 status (two's
 *                complement), u64 duration µs, u16 shape count, texts,
 *                u16 digest count (0, or for an INTENT or a
 *                CONFIRMATION the shape count),
 *                32 bytes each: SHA-256 of each canonical value
 *                (common/value.h, value_digest())
 *   AUDIT_ACK    u64 call id, u8 status, u64 first call id (DUPLICATE
 *                only, else 0), text message (DENIED and REPLAY: for the
 *                client, never empty; WRITTEN: the idempotency key, 64
 *                hex digits, or empty; else empty)
 *   CONFIRM_CHALLENGE  u64 call id, then the challenge: 16 bytes nonce,
 *                u64 expiry (ms, the executor's clock), 32
 *                bytes HMAC-SHA-256
 *   CONFIRM_ANSWER     u64 call id, u8 verdict (enum record_confirm_verdict),
 *                the challenge as above, u8 retyped (0|1), then when 1 the
 *                text the human typed (only with an accept)
 *   OPERATOR_ASK       u64 call id, u32 tool index, the challenge as above,
 *                text the confirmation message (the values as the
 *                executor renders them, for sp approve --list)
 *   OPERATOR_ANSWER    u32 the approver's uid (SO_PEERCRED), then a
 *                CONFIRM_ANSWER's fields (verdict accept or decline only)
 *
 * A record holds nothing else: the decoders refuse a record that is
 * shorter or longer than its fields, of another version or type, with an
 * enum, kind, flag or boolean out of range, a count or length above its
 * limit, a NUL in a text, or fields that contradict each other.  Encoders
 * apply the same rules, so whatever an encoder produced decodes.
 *
 * Type numbers are never reused; a request and its answer are adjacent.
 */
#ifndef SP_COMMON_RECORD_H
#define SP_COMMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/record_error.h"
#include "common/value.h"

#define RECORD_VERSION 1
#define RECORD_HEADER_LEN 4

/*
 * Absolute caps, whatever the limits passed in say.  A whole record fits
 * in Linux's default unix socket send buffer (net.core.wmem_default,
 * 212992 bytes), so one record is always one datagram.
 */
#define RECORD_MAX_BYTES 196608
#define RECORD_ARGS_CAP 256		/* values in an action, shapes in an event */
#define RECORD_ARG_BYTES_CAP 65536	/* one string argument */
#define RECORD_PAYLOAD_CAP 65536	/* body, stdout, stderr: each */
#define RECORD_TEXT_CAP 4096		/* message, content type, Location, shape */
#define RECORD_TOKEN_MAX 64		/* reason, signal name */

enum record_type {
	RECORD_HELLO = 1,		/* both ways, first on every channel */
	RECORD_ACTION = 2,		/* frontend -> executor */
	RECORD_RESULT = 3,		/* executor -> frontend, answers ACTION */
	RECORD_CANCEL = 4,		/* frontend -> executor */
	RECORD_AUDIT_EVENT = 5,		/* child -> broker */
	RECORD_AUDIT_ACK = 6,		/* broker -> child, answers an INTENT,
					 * or a mutating tool's EXECUTION
					 * (audit/audit_event.h) */
	RECORD_CONFIRM_CHALLENGE = 7,	/* executor -> frontend, answers an
					 * ACTION of a tool with confirm */
	RECORD_CONFIRM_ANSWER = 8,	/* frontend -> executor: the human's
					 * answer and the challenge it is for */
	RECORD_OPERATOR_ASK = 9,	/* executor -> broker: a call of a
					 * tool with confirm.via operator
					 * waits for sp approve */
	RECORD_OPERATOR_ANSWER = 10,	/* broker -> executor: an approver's
					 * answer, its uid read by the broker */
};
#define RECORD_TYPE_LAST RECORD_OPERATOR_ANSWER

/*
 * Per-channel maxima, from the policy; each is clamped to its cap above.
 * A caller derives them from its policy: max_args from the largest
 * param_count in the catalog, max_arg_bytes as 4 x the largest string
 * maxLength (UTF-8), max_payload_bytes as 4 x limits.result_max_chars.
 */
struct record_limits {
	size_t max_args;
	size_t max_arg_bytes;
	size_t max_payload_bytes;
	size_t max_text_bytes;
};

/*
 * The one spelling of a process's role: on the wire (a hello), in the
 * sandbox's filter tables, in the broker's children and in every line
 * and audit record that names one (record_role_name()).
 */
enum record_role {
	RECORD_ROLE_BROKER = 1,
	RECORD_ROLE_FRONTEND = 2,
	RECORD_ROLE_EXECUTOR = 3,
};

enum record_outcome {
	RECORD_OUTCOME_NONE = 0,	/* audit events that have no outcome */
	RECORD_OUTCOME_OK = 1,
	RECORD_OUTCOME_FAILED = 2,	/* known not applied */
	RECORD_OUTCOME_UNKNOWN = 3,	/* may have been applied */
	RECORD_OUTCOME_DENIED = 4,
	RECORD_OUTCOME_INVALID = 5,
};

enum record_result_kind {
	RECORD_RESULT_NONE = 0,
	RECORD_RESULT_HTTP = 1,
	RECORD_RESULT_SSH = 2,
};

/* Result flags; any other bit is refused. */
#define RESULT_REQUEST_SENT	0x01u	/* bytes reached the target */
#define RESULT_STARTED		0x02u	/* the action began (before cancel) */
#define RESULT_HAS_RETRY_AFTER	0x04u	/* http.retry_after_s is meaningful */
#define RESULT_WITHHELD		0x08u	/* a credential the target reflected was
					 * replaced by a marker (any kind) */
#define RESULT_DUPLICATE	0x10u	/* the answer of call duplicate_of,
					 * not an action of its own */
#define RESULT_REPLAY		0x20u	/* the journal's recorded outcome of an
					 * identical call: nothing was sent */
#define RESULT_FLAGS_ALL	0x3fu

enum record_ssh_end {
	RECORD_SSH_END_NONE = 0,	/* no command ran to an end */
	RECORD_SSH_END_EXIT = 1,	/* exit_status set, no signal */
	RECORD_SSH_END_SIGNAL = 2,	/* signal set, exit_status 0 */
};

enum record_audit_kind {
	/* frame refused: frame_no, reason, code, sha256, method; with
	 * AUDIT_HAS_TOOL the tool_index the frame named; shapes: one per
	 * param of that tool, then one per argument the tool does not
	 * declare (or all of them when no tool is named) */
	RECORD_AUDIT_REJECTION = 1,
	RECORD_AUDIT_INTENT = 2,	/* before acting: call_id, tool_index, shapes */
	RECORD_AUDIT_EXECUTION = 3,	/* + outcome (required), status, duration_us */
	RECORD_AUDIT_VIOLATION = 4,	/* record refused: reason, sha256 */
	RECORD_AUDIT_CANCELLATION = 5,	/* call_id, tool_index, AUDIT_STARTED */
	RECORD_AUDIT_OPENED = 6,	/* frontend: the session is in use, no
					 * fields (docs/design.md section 6) */
	/* initialize read: method, and exactly RECORD_AUDIT_CLIENT_TEXTS
	 * shapes, clientInfo's name and version and the protocolVersion
	 * asked, each a text the broker sanitizes (may be empty) */
	RECORD_AUDIT_CLIENT = 7,
	/* executor: call_id, tool_index, reason the decision (asked,
	 * accepted, declined, cancelled, wrong-value, expired, unsupported,
	 * forged, replayed, withdrawn); shapes: none, or one, the retyped
	 * value's shape; or, for "asked" of a tool with idempotency, one per
	 * param with their digests, as an intent's (the journal answers
	 * first: docs/design.md section 9) */
	RECORD_AUDIT_CONFIRMATION = 8,
	/* a limit refused an intent: never on the wire, the broker writes
	 * it itself (state/limits.h) */
	RECORD_AUDIT_LIMIT = 9,
};

#define RECORD_AUDIT_CLIENT_TEXTS 3

/* Audit event flags; any other bit is refused. */
#define AUDIT_HAS_SHA256	0x01u
#define AUDIT_STARTED		0x02u
#define AUDIT_HAS_TOOL		0x04u	/* a rejection's tool_index is set */
#define AUDIT_FLAGS_ALL		0x07u

enum record_audit_ack_status {
	RECORD_AUDIT_WRITTEN = 1,	/* durable as the policy requires */
	RECORD_AUDIT_FAILED = 2,	/* not written: the action must not run */
	RECORD_AUDIT_DENIED = 3,	/* a limit refused it: the message says
					 * which, the count and when it resets */
	RECORD_AUDIT_DUPLICATE = 4,	/* written as a duplicate of first_call:
					 * answer with that call's result */
	RECORD_AUDIT_REPLAY = 5,	/* the journal holds an identical call
					 * done: the message is its outcome */
};

/*
 * Strings in decoded records are heap copies with a NUL appended (not
 * counted in len), so a text can be used as a C string.  When encoding,
 * ptr may be NULL when len is 0.
 */
struct record_text {
	char *ptr;
	size_t len;
};

struct record_bytes {
	uint8_t *ptr;
	size_t len;
};

/* Hello and cancel own nothing and have no free function. */
struct record_hello {
	enum record_role role;
	uint8_t fingerprint[HASH_SHA256_LEN];
};

/* Owns args (arg_count values); free with record_action_free(). */
struct record_action {
	uint64_t call_id;
	uint32_t tool_index;
	uint8_t fingerprint[HASH_SHA256_LEN];
	struct value *args;
	size_t arg_count;
};

struct record_cancel {
	uint64_t call_id;
};

struct record_http_result {
	uint16_t status;		/* 0: no response; else 100..599 */
	uint32_t retry_after_s;		/* 0 unless RESULT_HAS_RETRY_AFTER */
	struct record_text content_type;
	struct record_text location;
	struct record_bytes body;	/* already cut to the limit */
	uint64_t body_total;		/* bytes seen, >= body.len */
	uint64_t connect_us;
	uint64_t first_byte_us;
};

struct record_ssh_result {
	enum record_ssh_end end;
	int32_t exit_status;
	struct record_text signal;	/* "TERM", "KILL": a token, or empty */
	struct record_bytes out;
	uint64_t out_total;		/* >= out.len */
	struct record_bytes err;
	uint64_t err_total;		/* >= err.len */
};

/* Owns every text and bytes inside; free with record_result_free(). */
struct record_result {
	uint64_t call_id;
	enum record_outcome outcome;	/* never NONE */
	enum record_result_kind kind;
	uint32_t flags;			/* RESULT_* */
	uint64_t duplicate_of;		/* with RESULT_DUPLICATE, else 0 */
	uint64_t duration_us;
	struct record_text message;
	struct record_http_result http;	/* zero unless kind is HTTP */
	struct record_ssh_result ssh;	/* zero unless kind is SSH */
};

/*
 * Owns reason and shapes; free with record_audit_event_free().  Which
 * fields a kind uses is listed at enum record_audit_kind; senders leave
 * the others zero and the broker renders only those (the decoder checks
 * ranges and the outcome rule, not that unused fields are zero).  Texts
 * are bounded and NUL-free but not known to be UTF-8: the broker escapes
 * them when it renders a JSON line.
 */
struct record_audit_event {
	enum record_audit_kind kind;
	uint32_t flags;			/* AUDIT_* */
	uint64_t frame_no;
	struct record_text reason;	/* a token [a-z0-9-], or empty */
	int32_t code;			/* JSON-RPC error code */
	struct record_text method;	/* a token, or empty */
	uint8_t sha256[HASH_SHA256_LEN];/* zero unless AUDIT_HAS_SHA256 */
	uint64_t call_id;
	uint32_t tool_index;
	enum record_outcome outcome;	/* set for EXECUTION only */
	int32_t status;			/* HTTP status or exit status */
	uint64_t duration_us;
	struct record_text *shapes;	/* one per param, "string(36)", "***1234" */
	size_t shape_count;
	uint8_t (*digests)[HASH_SHA256_LEN];	/* INTENT, a journaled
						 * CONFIRMATION asked: one
						 * per param */
	size_t digest_count;
};

/* Owns message; free with record_audit_ack_free(). */
struct record_audit_ack {
	uint64_t call_id;
	enum record_audit_ack_status status;
	uint64_t first_call_id;		/* DUPLICATE: the call it repeats */
	struct record_text message;	/* DENIED, REPLAY: for the client;
					 * WRITTEN: idempotency key or empty */
};

#define RECORD_CONFIRM_NONCE_LEN 16

/* What the executor issued for one call: the MAC binds the rest. */
struct record_confirm_challenge {
	uint8_t nonce[RECORD_CONFIRM_NONCE_LEN];
	uint64_t expiry_ms;		/* the executor's clock (confirm.h), ms */
	uint8_t mac[HASH_SHA256_LEN];
};

enum record_confirm_verdict {
	RECORD_CONFIRM_ACCEPT = 1,
	RECORD_CONFIRM_DECLINE = 2,
	RECORD_CONFIRM_CANCEL = 3,	/* the human dismissed the question */
	RECORD_CONFIRM_UNSUPPORTED = 4,	/* the client cannot ask a human */
	RECORD_CONFIRM_RELAYED = 5,	/* the question went to the client in
					 * a result (2026-07-28): this call ends,
					 * the challenge comes back with the
					 * next one */
};

/* Owns nothing; no free function. */
struct record_confirm_challenge_msg {
	uint64_t call_id;
	struct record_confirm_challenge challenge;
};

/* Owns retyped; free with record_confirm_answer_free(). */
struct record_confirm_answer {
	uint64_t call_id;
	enum record_confirm_verdict verdict;
	struct record_confirm_challenge challenge;
	bool has_retyped;		/* only with RECORD_CONFIRM_ACCEPT */
	struct record_text retyped;	/* at most record_confirm_retyped_max() */
};

/* Owns message; free with record_operator_ask_free(). */
struct record_operator_ask {
	uint64_t call_id;
	uint32_t tool_index;
	struct record_confirm_challenge challenge;
	struct record_text message;	/* at most RECORD_TEXT_CAP bytes */
};

/* Owns answer.retyped; free with record_operator_answer_free(). */
struct record_operator_answer {
	uint32_t approver_uid;
	struct record_confirm_answer answer;	/* ACCEPT or DECLINE */
};

/* Every limit at its cap. */
void record_limits_default(struct record_limits *limits);

/*
 * "broker", "frontend", "executor": in diagnostics and in the audit
 * log's "from"; "unknown" for any other value.  A string literal, never
 * NULL (log_init() may keep it).
 */
const char *record_role_name(enum record_role role);

/*
 * The file name of the program that plays role: "sp", "sp-frontend",
 * "sp-executor" (docs/design.md section 1; the children's are what the
 * broker opens, broker/children.h); NULL for any other value.
 */
const char *record_role_program(enum record_role role);

/*
 * Reads the header only, to pick a decoder: *type is set on RECORD_OK
 * (version RECORD_VERSION, a known type, at most RECORD_MAX_BYTES);
 * *version is set whenever the header is complete, so a caller can say
 * which version a peer speaks.  Either may be NULL.
 */
enum record_error record_peek(const uint8_t *data, size_t len,
    uint16_t *version, enum record_type *type);

/*
 * Encoders append one whole record to out (a writer, see common/buf.h) or,
 * on any error, leave it unchanged; they log a line on error, because a
 * record the sender's own rules refuse is a bug in the sender.
 *
 * Decoders fill *out from exactly len bytes, or return an error and leave
 * *out zeroed with nothing allocated.  They do not log: the caller logs and
 * audits a refused record as a protocol violation.
 */
enum record_error record_hello_encode(const struct record_hello *in,
    struct buf *out);
enum record_error record_hello_decode(const uint8_t *data, size_t len,
    struct record_hello *out);

enum record_error record_action_encode(const struct record_action *in,
    const struct record_limits *limits, struct buf *out);
enum record_error record_action_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_action *out);
/* Frees what a owns and zeroes it; NULL is allowed. */
void record_action_free(struct record_action *a);

enum record_error record_cancel_encode(const struct record_cancel *in,
    struct buf *out);
enum record_error record_cancel_decode(const uint8_t *data, size_t len,
    struct record_cancel *out);

enum record_error record_result_encode(const struct record_result *in,
    const struct record_limits *limits, struct buf *out);
enum record_error record_result_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_result *out);
void record_result_free(struct record_result *r);
/* Sets r to a result of outcome that carries message alone, and nothing
 * else; message is borrowed and must outlive r's encoding. */
void record_result_message(struct record_result *r,
    enum record_outcome outcome, const char *message);

enum record_error record_audit_event_encode(
    const struct record_audit_event *in, const struct record_limits *limits,
    struct buf *out);
enum record_error record_audit_event_decode(const uint8_t *data, size_t len,
    const struct record_limits *limits, struct record_audit_event *out);
void record_audit_event_free(struct record_audit_event *e);

enum record_error record_audit_ack_encode(const struct record_audit_ack *in,
    struct buf *out);
enum record_error record_audit_ack_decode(const uint8_t *data, size_t len,
    struct record_audit_ack *out);
void record_audit_ack_free(struct record_audit_ack *a);

enum record_error record_confirm_challenge_encode(
    const struct record_confirm_challenge_msg *in, struct buf *out);
enum record_error record_confirm_challenge_decode(const uint8_t *data,
    size_t len, struct record_confirm_challenge_msg *out);

/*
 * How long a retyped text may be: a string param's bound, but never less
 * than RECORD_CONFIRM_RETYPED_MIN, so the text of any integer, decimal or
 * boolean fits whatever the policy's strings are.
 */
#define RECORD_CONFIRM_RETYPED_MIN 64
size_t record_confirm_retyped_max(const struct record_limits *limits);

enum record_error record_confirm_answer_encode(
    const struct record_confirm_answer *in,
    const struct record_limits *limits, struct buf *out);
enum record_error record_confirm_answer_decode(const uint8_t *data,
    size_t len, const struct record_limits *limits,
    struct record_confirm_answer *out);
void record_confirm_answer_free(struct record_confirm_answer *a);

enum record_error record_operator_ask_encode(
    const struct record_operator_ask *in, struct buf *out);
enum record_error record_operator_ask_decode(const uint8_t *data,
    size_t len, struct record_operator_ask *out);
void record_operator_ask_free(struct record_operator_ask *a);

enum record_error record_operator_answer_encode(
    const struct record_operator_answer *in,
    const struct record_limits *limits, struct buf *out);
enum record_error record_operator_answer_decode(const uint8_t *data,
    size_t len, const struct record_limits *limits,
    struct record_operator_answer *out);
void record_operator_answer_free(struct record_operator_answer *a);

/*
 * The one encoder by type: rec is the struct that type's encoder takes
 * (struct record_hello, _action, _cancel, _result, _audit_event,
 * _audit_ack, _confirm_challenge_msg, _confirm_answer, _operator_ask or
 * _operator_answer); limits as for that encoder.  RECORD_ERR_TYPE for a
 * type with no encoder.
 */
enum record_error record_encode(enum record_type type, const void *rec,
    const struct record_limits *limits, struct buf *out);

#endif
