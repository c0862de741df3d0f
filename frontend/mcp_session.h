/*
 * The MCP session of the frontend (docs/design.md section 5), with no I/O: the
 * frontend's event loop hands it each frame, each result record and the
 * loss of the executor, and writes out what it appends to a struct
 * mcp_output, in order.  Every decision about the protocol is made here.
 *
 * Pipeline per frame: strict JSON (common/json.h) -> JSON-RPC shape
 * (common/jsonrpc.h) -> lifecycle state and method -> tool name ->
 * authorization (policy/authz.h) -> argument validation (policy/args.h)
 * -> limits; only then is an action record appended.
 *
 * Decisions:
 * - Versions: the client's protocolVersion when it is 2025-11-25 or
 *   2025-06-18, else 2025-11-25.  Capabilities {"tools":{"listChanged":
 *   false}}.  ping is allowed at any time; other requests before
 *   initialize, and a second initialize, get -32600 and the session goes
 *   on.  tools/list and tools/call are served once initialize was
 *   answered (notifications/initialized is accepted, not waited for).
 * - Unknown methods: -32601.  Notifications never get an answer; unknown
 *   ones are ignored.  Responses from the client are ignored, except the
 *   answers to the one request Sallyport sends, elicitation/create for a
 *   confirm tool's call (frontend/mcp_confirm.c).
 * - A frame that is not one strict JSON value (-32700) or not a JSON-RPC
 *   message (-32600, the id echoed when readable) is malformed: one error
 *   line and a rejection audit event with the SHA-256 of the frame (never
 *   its bytes).  With on_invalid "close" the session then closes, exit
 *   status 65, and ignores every later frame; with "reject" it goes on
 *   and keeps nothing from that frame.
 * - A request whose id is already in flight: -32600.  A cancelled call
 *   frees its id at once (the client may reuse it).
 * - tools/call: params not an object, no string "name", or a name the
 *   policy does not declare: -32602 whose message lists the profile's
 *   tools.  A declared tool whose scope the profile lacks: a result with
 *   outcome "denied" naming the scope.  Arguments refused: outcome
 *   "invalid" with the shaped report.  Each of these
 *   is a tool result (isError) so the model can read it, plus a
 *   rejection audit event; none sends a record.
 * - Every tools/call counts against calls_per_session, refused or not
 *   (a refusal costs an audit event as a call costs an intent).  Past the
 *   budget a call is answered "denied" unread, and the MCP_OVER_BUDGET_MAX
 *   th such call closes the session (MCP_EXIT_BUDGET).  Their rejection
 *   events are all sent; the broker folds identical ones.
 * - When the client stops reading (mcp_session_client_lost()), calls in
 *   flight are cancelled, nothing more starts, and the session closes
 *   with MCP_EXIT_CLIENT_GONE.
 * - A tools/call that comes while max_inflight calls run is kept (one
 *   frame, copied) and handled when a result frees a slot; until then no
 *   frame is read.  Frames before it are handled at once even with the
 *   table full, so a cancel or a ping is never stuck behind running
 *   calls.  If input ends or the executor is lost first, it is
 *   answered "failed" and never sent.
 * - notifications/cancelled naming a call in flight appends a cancel
 *   record; no response is ever sent for that call; when its result
 *   arrives, a cancellation audit event says whether it had started.
 * - When the executor is lost, every call in flight is answered with
 *   outcome "unknown" (and cancelled ones audited as possibly started);
 *   the session closes with exit status 70.
 * - A closed session still renders results and the executor's loss, so
 *   a loop that drains calls in flight before exiting may do so.
 * - Lines never reach RESULT_LINE_MAX (10 MiB, the SDK's limit): target
 *   fields are cut at SANITIZE_MAX_CHARS_CAP characters and records at
 *   RECORD_PAYLOAD_CAP bytes, so the largest result is about 1 MiB; a
 *   line over the limit would be an internal error, never sent cut.
 * - Eras (docs/design.md section 5): the first request decides.
 *   initialize: legacy, as above.  server/discover, or any request whose
 *   params._meta holds "io.modelcontextprotocol/protocolVersion": modern
 *   (2026-07-28).  A modern session answers server/discover, tools/list
 *   (with ttlMs, cacheScope) and tools/call, each result with
 *   "resultType": "complete"; every request must carry the version and
 *   "io.modelcontextprotocol/clientCapabilities" in _meta (-32602 when
 *   missing, -32022 naming the versions server/discover offers when the
 *   version is another); initialize, ping and logging/setLevel are -32601 there.  A
 *   legacy session answers server/discover -32601.
 * - Confirmation (frontend/mcp_confirm.c): a legacy session asks through
 *   elicitation/create; a modern one answers input_required with the
 *   challenge as requestState and relays the retry's answer, and answers
 *   -32021 to a request that declares no form elicitation, before any
 *   record is sent.
 * - Session in use: the first frame that is not a server/discover or
 *   ping request appends an "opened" audit event, before anything else
 *   it causes; the broker writes session-start then.  A process that
 *   saw only probes (the v2 SDK's disposable sibling) leaves no session.
 * - Progress: a tools/call whose _meta.progressToken is a string or an
 *   integer gets notifications/progress from mcp_session_progress()
 *   while it runs; none after its response or its cancellation.
 * - Everything is single-threaded: one session, one caller.
 *
 * Ownership: mcp_session_new() copies what it keeps of its config except
 * the policy and profile, which are borrowed and must outlive the session;
 * mcp_session_free() releases it.  struct mcp_output is caller-allocated;
 * its items are heap buffers released by mcp_output_clear().
 */
#ifndef SP_FRONTEND_MCP_SESSION_H
#define SP_FRONTEND_MCP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/frame.h"
#include "common/record.h"
#include "policy/policy.h"

#define MCP_VERSION_LATEST "2025-11-25"
#define MCP_VERSION_PREVIOUS "2025-06-18"
/* The stateless revision, spoken beside the two above (section 5). */
#define MCP_VERSION_MODERN "2026-07-28"
/*
 * A call carrying _meta.progressToken gets notifications/progress at
 * least this often while it runs, so a client's 60 s request timeout
 * (both official SDKs) does not cut a call the policy lets run longer.
 */
#define MCP_PROGRESS_INTERVAL_MS 15000
#define MCP_EXIT_CLEAN 0
#define MCP_EXIT_MALFORMED 65
#define MCP_EXIT_INTERNAL 70
#define MCP_EXIT_CLIENT_GONE 74	/* fd 1 broke: nobody reads the results */
#define MCP_EXIT_BUDGET 75	/* calls went on long after the budget */
/* tools/call refusals after calls_per_session is spent before closing. */
#define MCP_OVER_BUDGET_MAX 32
/* Stop reading frames while this many bytes wait to reach the client. */
#define MCP_OUTPUT_QUEUE_BOUND (16u * 1024 * 1024)

enum mcp_item_kind {
	MCP_ITEM_LINE,		/* one protocol line for fd 1, no '\n' */
	MCP_ITEM_EXECUTOR,	/* one encoded action or cancel record */
	MCP_ITEM_AUDIT,		/* one encoded audit event for the broker */
};

struct mcp_item {
	enum mcp_item_kind kind;
	uint8_t *data;		/* owned by the output */
	size_t len;
};

/* Zero-initialise; items are appended in the order they must be sent. */
struct mcp_output {
	struct mcp_item *items;
	size_t count;
	size_t cap;
};

/* Frees every item and the array, and zeroes *out. */
void mcp_output_clear(struct mcp_output *out);

struct mcp_session_config {
	const struct policy *policy;		/* borrowed */
	const struct policy_profile *profile;	/* borrowed; NULL: no tools */
	const char *catalog_json;		/* policy_catalog_render(); copied */
	size_t catalog_len;
	const char *server_version;		/* serverInfo.version; copied */
};

struct mcp_session;

/* NULL on allocation failure (logged). */
struct mcp_session *mcp_session_new(const struct mcp_session_config *cfg);

void mcp_session_free(struct mcp_session *s);

/*
 * One complete frame (bytes borrowed for the call).  Returns false only
 * on an internal error (memory); the loop then ends with status 70.
 */
bool mcp_session_handle_frame(struct mcp_session *s, const uint8_t *bytes,
    size_t len, uint64_t frame_no, struct mcp_output *out);

/* A frame the frame reader refused (too long, NUL, UTF-8, truncated). */
bool mcp_session_handle_bad_frame(struct mcp_session *s,
    const struct frame *f, struct mcp_output *out);

/* The executor's answer to an action; r stays the caller's. */
bool mcp_session_handle_result(struct mcp_session *s,
    const struct record_result *r, struct mcp_output *out);

/*
 * The executor's challenge for a confirm tool's call: the client is
 * asked through elicitation/create, or, when it declared no form
 * elicitation, the executor is told so at once (and denies the call).
 */
bool mcp_session_handle_challenge(struct mcp_session *s,
    const struct record_confirm_challenge_msg *m, struct mcp_output *out);

/*
 * One notifications/progress for each call in flight that carried a
 * progress token and is not cancelled, each with a progress value above
 * the last one it was sent.  The loop calls it every
 * MCP_PROGRESS_INTERVAL_MS; with no such call it appends nothing.
 */
bool mcp_session_progress(struct mcp_session *s, struct mcp_output *out);

/* The executor is gone: every call in flight becomes "unknown". */
bool mcp_session_executor_lost(struct mcp_session *s,
    struct mcp_output *out);

/*
 * No frame will be handled any more (end of input, termination, an
 * internal error): a tools/call still waiting for a slot is answered
 * "failed" and dropped, never sent, so the calls left to drain are only
 * those already running; a call waiting for the client's answer to its
 * confirmation question is withdrawn (no answer can come) and answered
 * "denied" as the executor ends it.
 */
bool mcp_session_end_input(struct mcp_session *s, struct mcp_output *out);

/*
 * The client stopped reading (fd 1 broke): nobody can receive a result,
 * so nothing more is read or started.  Every call in flight is cancelled
 * (its result, when it comes, is audited as a cancellation saying
 * whether it had started; the executor's own execution record says
 * "unknown" for one that had), a waiting call is dropped as
 * mcp_session_end_input() drops it, and the session closes with
 * MCP_EXIT_CLIENT_GONE unless it had already closed for another reason.
 */
bool mcp_session_client_lost(struct mcp_session *s, struct mcp_output *out);

bool mcp_session_should_close(const struct mcp_session *s);

/* MCP_EXIT_CLEAN, _MALFORMED, _INTERNAL, _CLIENT_GONE or _BUDGET. */
int mcp_session_exit_status(const struct mcp_session *s);

/* Calls sent to the executor and not yet answered (cancelled included). */
size_t mcp_session_inflight(const struct mcp_session *s);

/*
 * Whether the loop may read another frame: not when closed, not while a
 * tools/call waits for a free slot, not with more than
 * MCP_OUTPUT_QUEUE_BOUND bytes still queued for the client.
 */
bool mcp_session_may_read(const struct mcp_session *s, size_t queued_bytes);

/* Limits for decoding this session's result records. */
const struct record_limits *mcp_session_record_limits(
    const struct mcp_session *s);

#endif
