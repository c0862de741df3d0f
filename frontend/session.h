/*
 * The MCP session, as far as it goes yet (issue 5 grows it): each frame
 * is parsed strictly (common/json.h) and classified (common/jsonrpc.h);
 * initialize, ping, tools/list and tools/call are answered; anything
 * malformed gets one error ("id": null when the id is unknown), an audit
 * rejection, and under on_invalid "close" ends the session with 65.
 */
#ifndef SP_FRONTEND_SESSION_H
#define SP_FRONTEND_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/child_role.h"
#include "common/frame.h"
#include "frontend/writer.h"

struct session;

/*
 * ctx and out are borrowed and must outlive the session; action_fd and
 * control_fd are the channels to the executor and the broker (borrowed).
 * The caller frees the result with session_free().  NULL after logging.
 */
struct session *session_new(const struct child_context *ctx,
    struct writer *out, int action_fd, int control_fd);

/* One event of the frame reader.  false: read nothing more. */
bool session_frame(struct session *s, const struct frame *f);

/* One record from the executor.  false: the channel is broken. */
bool session_executor_record(struct session *s, const uint8_t *rec,
    size_t len);

/*
 * The executor is gone: every call in flight may or may not have been
 * applied, so each is answered with outcome "unknown", never "failed".
 */
void session_executor_lost(struct session *s);

/* Calls sent to the executor and not answered yet. */
size_t session_inflight(const struct session *s);

/* The exit status the session has earned: 0, or 65 after malformed input. */
int session_exit_status(const struct session *s);

void session_free(struct session *s);

#endif
