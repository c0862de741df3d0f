/*
 * Test helper: runs a byte stream through the whole wire layer (frame
 * reader, strict JSON, JSON-RPC classification) the way the frontend
 * does, and records one event per frame or refusal.
 *
 * Ownership: wire_run fills a caller-provided array; the strings in each
 * event are owned by it and released by wire_events_free.
 */
#ifndef SP_TESTS_WIRE_PIPELINE_H
#define SP_TESTS_WIRE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/frame.h"
#include "common/jsonrpc.h"

struct wire_event {
	enum frame_status frame;	/* FRAME_OK: the JSON layers ran */
	uint64_t number;
	uint64_t offset;
	uint64_t error_offset;
	bool json_ok;
	size_t json_offset;		/* offset in the frame, when refused */
	enum jsonrpc_kind kind;		/* JSONRPC_INVALID unless json_ok */
	int code;			/* invalid: -32700 or -32600 */
	char *id;			/* the id as the answer would echo it */
	char *method;			/* requests and notifications */
	const char *reason;		/* static, from whichever layer refused */
};

/*
 * Feeds len bytes in pieces of chunk bytes (0: one piece), then finishes
 * the stream.  Returns the number of events stored (at most max_events).
 */
size_t wire_run(const void *bytes, size_t len, size_t chunk,
    size_t max_frame_bytes, struct wire_event *events, size_t max_events);

/* Same as wire_run on a NUL-terminated string. */
size_t wire_run_str(const char *text, size_t chunk, size_t max_frame_bytes,
    struct wire_event *events, size_t max_events);

void wire_events_free(struct wire_event *events, size_t n);

/*
 * Test bytes made safe for a failure message: every byte outside printable
 * ASCII, and the backslash, becomes \xNN, so a message never carries raw
 * NUL or invalid UTF-8 into the test log.  Long input is cut with "...".
 * Returns shown->text, which the caller owns (usually on its stack).
 */
struct wire_shown {
	char text[256];
};

const char *wire_show(struct wire_shown *shown, const void *bytes,
    size_t len);

/* Same as wire_show on a NUL-terminated string. */
const char *wire_show_str(struct wire_shown *shown, const char *text);

#endif
