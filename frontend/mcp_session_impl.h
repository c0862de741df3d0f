/*
 * Internals shared by mcp_session.c (frames, lifecycle, output) and
 * mcp_call.c (tools/call, results, cancellation).  Not for other modules.
 */
#ifndef SP_FRONTEND_MCP_SESSION_IMPL_H
#define SP_FRONTEND_MCP_SESSION_IMPL_H

#include <cjson/cJSON.h>

#include "common/jsonrpc.h"
#include "frontend/mcp_session.h"
#include "frontend/result_render.h"

enum mcp_state {
	MCP_STATE_NEW,		/* before initialize */
	MCP_STATE_OPEN,		/* initialize answered */
	MCP_STATE_CLOSED,	/* nothing more is processed */
};

/*
 * Which revision the session speaks, fixed by its first request
 * (docs/design.md section 5): initialize makes it legacy (2025-11-25,
 * 2025-06-18); server/discover, or a request whose _meta names a
 * protocol version, makes it modern (2026-07-28, stateless).
 */
enum mcp_era {
	MCP_ERA_UNKNOWN,
	MCP_ERA_LEGACY,
	MCP_ERA_MODERN,
};

/*
 * Where a confirm tool's call is between its action and its result
 * (frontend/mcp_confirm.c).  WAITING -> CHALLENGED, then at once ASKED
 * (legacy era, the client asks its human), ANSWERED (the client cannot
 * ask, or the 2026-07-28 retry brought the answer) or RELAYED; ASKED ->
 * ANSWERED on the human's answer, or back to CHALLENGED when the
 * question is withdrawn.  ANSWERED and RELAYED are final.
 */
enum mcp_confirm_phase {
	MCP_CONFIRM_NONE,	/* not a confirm tool's call */
	MCP_CONFIRM_WAITING,	/* for the executor's challenge */
	MCP_CONFIRM_CHALLENGED,	/* the challenge is held, no question out */
	MCP_CONFIRM_ASKED,	/* an elicitation/create is out to the client */
	MCP_CONFIRM_ANSWERED,	/* the answer record went to the executor */
	MCP_CONFIRM_RELAYED,	/* 2026-07-28: asked in an input_required
				 * result, answered RELAYED; this call's own
				 * result is dropped */
};

/*
 * A confirm tool's call between its action and its result
 * (frontend/mcp_confirm.c); all zero for other calls.  can_ask and
 * has_state are facts about the client's request, not phases.
 */
struct mcp_confirm_wait {
	char *message;		/* what the human is shown; owned */
	enum mcp_confirm_phase phase;
	bool can_ask;		/* the client declared form elicitation */
	struct record_confirm_challenge challenge;	/* from CHALLENGED */
	/* 2026-07-28 retry: requestState and inputResponses as sent */
	bool has_state;
	struct record_confirm_challenge state;	/* zero when unreadable */
	enum record_confirm_verdict state_verdict;
	char *state_retyped;	/* owned; NULL: none */
};

/* One slot per possible call in flight (max_inflight of them). */
struct mcp_call {
	bool used;
	bool cancelled;		/* no response will ever be sent */
	struct jsonrpc_id id;	/* owned */
	uint64_t call_id;
	uint32_t tool_index;
	/* _meta.progressToken as sent (kind NULL: none, no progress); owned */
	struct jsonrpc_id progress_token;
	uint64_t progress;	/* the last progress value sent */
	struct mcp_confirm_wait confirm;
};

struct mcp_session {
	const struct policy *policy;
	const struct policy_profile *profile;
	char *catalog_json;		/* owned, NUL-terminated */
	char *catalog_modern;		/* the same with the 2026-07-28
					 * members; owned */
	char *server_version;		/* owned */
	char *issuer;			/* owned */
	uint8_t fingerprint[HASH_SHA256_LEN];
	struct record_limits limits;
	struct result_render_ctx render;
	enum mcp_state state;
	enum mcp_era era;
	bool opened;		/* the broker was told the session is in use */
	bool elicitation;	/* the client declared form elicitation */
	int exit_status;
	struct mcp_call *calls;		/* policy->limits.max_inflight slots */
	size_t call_slots;
	size_t inflight;
	/*
	 * Every tools/call handled, sent or refused, counted against
	 * calls_per_session: a refused call costs the session as much as
	 * an audit record, so it spends the budget too.
	 */
	size_t calls_seen;
	uint64_t next_call_id;
	/*
	 * A tools/call read while max_inflight calls ran: kept (owned copy)
	 * until a slot frees, and no frame is read meanwhile.  Reading stops
	 * at this call, not at the full table, so a cancel or a ping sent
	 * while the table is full is still seen.
	 */
	uint8_t *deferred;
	size_t deferred_len;
	uint64_t deferred_no;
};

/*
 * The frame being handled, for audit events: what is known of it so far
 * (all borrowed; NULL until known), so a rejection names what it can.
 */
struct mcp_frame {
	const uint8_t *bytes;
	size_t len;
	uint64_t number;
	const char *method;		/* the request's method */
	const struct policy_tool *tool;	/* the catalog's tool it named */
	uint32_t tool_index;
	const cJSON *arguments;		/* tools/call's arguments */
};

/*
 * Encodes rec (record_encode(): type says which struct it is) and
 * appends it as one item: an audit event for the broker, any other
 * record for the executor.  false when it does not encode or on
 * allocation failure.
 */
bool mcp_output_add_record(struct mcp_output *out,
    const struct record_limits *limits, enum record_type type,
    const void *rec);

/*
 * Appends a rendered line (consumed, freed on failure); NULL, a failed
 * render, makes it return false.
 */
bool mcp_output_add_line(struct mcp_output *out, char *line);

/*
 * A tools/call response for id (consumes structured), with the modern
 * era's resultType when the session speaks it.
 */
bool mcp_session_call_response(struct mcp_session *s,
    const struct jsonrpc_id *id, cJSON *structured, struct mcp_output *out);

/* Appends an error response with the issuer. */
bool mcp_session_error(struct mcp_session *s, const struct jsonrpc_id *id,
    int code, const char *message, struct mcp_output *out);

/* Appends a rejection audit event for frame (reason: a token), naming
 * its method, tool and argument shapes when known (frontend/mcp_audit.c). */
bool mcp_session_audit_rejection(struct mcp_session *s,
    const struct mcp_frame *frame, const char *reason, int code,
    struct mcp_output *out);

/* Appends the client audit event for initialize's params. */
bool mcp_session_audit_client(struct mcp_session *s, const cJSON *params,
    struct mcp_output *out);

/* The call in flight (not cancelled) with this id, or NULL. */
struct mcp_call *mcp_session_call_by_id(struct mcp_session *s,
    const struct jsonrpc_id *id);

bool mcp_call_tools_call(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_message *msg, struct mcp_output *out);

bool mcp_call_cancelled(struct mcp_session *s, const cJSON *params,
    struct mcp_output *out);

/*
 * The modern era (frontend/mcp_modern.c).  mcp_modern_era_of() says
 * whether a first request makes the session modern; mcp_modern_request()
 * handles every request of a modern session.
 */
bool mcp_modern_era_of(const struct jsonrpc_message *msg);
bool mcp_modern_request(struct mcp_session *s, const struct mcp_frame *frame,
    const struct jsonrpc_message *msg, struct mcp_output *out);
/* catalog_modern from catalog_json; NULL on allocation failure. */
char *mcp_modern_catalog(const char *catalog_json);

/*
 * Confirmation through the client (frontend/mcp_confirm.c, docs/design.md
 * section 8.2).  mcp_confirm_capability() reads initialize's params;
 * mcp_confirm_prepare() builds the message when a confirm tool's action
 * is sent (values as validated); mcp_confirm_response() takes the
 * client's answer to an elicitation/create; mcp_confirm_withdraw() tells
 * the client a question it was asked is moot, when the call is cancelled
 * or its result came.
 */
void mcp_confirm_capability(struct mcp_session *s, const cJSON *params);
bool mcp_confirm_prepare(struct mcp_session *s, struct mcp_call *call,
    const struct policy_tool *tool, const struct value *values,
    const cJSON *params);
/*
 * A 2026-07-28 call of a tool the client confirms, from a client whose
 * request declared no form elicitation: the revision answers -32021
 * (MissingRequiredClientCapability), before anything is sent.
 */
#define MCP_MISSING_CAPABILITY -32021
bool mcp_confirm_capability_missing(const struct mcp_session *s,
    const struct policy_tool *tool, const cJSON *params);
/* Frees what the wait owns and zeroes it. */
void mcp_confirm_free(struct mcp_confirm_wait *w);
bool mcp_confirm_response(struct mcp_session *s,
    const struct jsonrpc_message *msg, struct mcp_output *out);
bool mcp_confirm_withdraw(struct mcp_call *call, struct mcp_output *out);
/* A confirm tool's call whose answer has not gone to the executor. */
bool mcp_confirm_unanswered(const struct mcp_call *call);
/*
 * Some call in flight waits for an answer that only the client can bring,
 * on stdin: while one does, reading must never stop (so a tools/call that
 * finds every slot taken is refused, not kept back).
 */
bool mcp_confirm_awaits_client(const struct mcp_session *s);
/*
 * The client's input ended: no answer can come, so each such call is
 * cancelled at the executor (which ends it "withdrawn") and its question
 * withdrawn; unlike a client's cancel, its result still goes out.
 */
bool mcp_call_withdraw_questions(struct mcp_session *s,
    struct mcp_output *out);

/* What initialize and server/discover say about external_data. */
extern const char mcp_instructions[];

/* The handlers both eras share (frontend/mcp_session.c). */
bool mcp_session_tools_list(struct mcp_session *s,
    const struct mcp_frame *frame, const struct jsonrpc_message *msg,
    struct mcp_output *out);
/* Keeps a tools/call that found every slot taken; see deferred above. */
bool mcp_session_defer(struct mcp_session *s, const struct mcp_frame *frame);

/* Handles the deferred tools/call, if any, now that a slot is free. */
bool mcp_session_run_deferred(struct mcp_session *s, struct mcp_output *out);

#endif
