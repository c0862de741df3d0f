/*
 * A session driven with no processes: a policy loaded from JSON text (so
 * the loader's rules hold), a struct mcp_session, and helpers to feed
 * frames and look at what the session appended.  Each Criterion test runs
 * in its own process; a harness is freed with harness_end().
 *
 * Tools, by index (profile "default" has scope read only):
 *   0 get_item     http, scope read,  id: integer >= 1
 *   1 create_item  http, scope write, name: string <= 80, qty: 1..100
 *   2 echo_text    ssh,  scope read,  text: string <= 200
 */
#ifndef SP_TESTS_SESSION_FIXTURE_H
#define SP_TESTS_SESSION_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/record.h"
#include "frontend/mcp_session.h"
#include "policy/policy.h"

enum { TOOL_GET_ITEM, TOOL_CREATE_ITEM, TOOL_ECHO_TEXT };

struct harness_limits {
	const char *on_invalid;		/* "close" or "reject" */
	int max_inflight;
	int calls_per_session;
	int result_max_chars;
};

struct harness {
	struct policy *policy;
	struct mcp_session *s;
	struct mcp_output out;
};

/* Defaults: close, 4 in flight, 200 calls, 16000 characters. */
void harness_start(struct harness *h, const struct harness_limits *limits);

/* A session on another policy text, with its profile "default". */
void harness_start_policy(struct harness *h, const char *policy_text);
void harness_end(struct harness *h);

/* The session's policy text with these limits (heap, caller frees). */
char *harness_policy_text(const struct harness_limits *limits);

/* Feeds one frame (strlen bytes unless len given); asserts no internal error. */
void harness_feed(struct harness *h, const char *frame);
void harness_feed_len(struct harness *h, const char *frame, size_t len);

/* initialize + notifications/initialized, then forgets the output. */
void harness_open(struct harness *h);

/* Forgets the output collected so far. */
void harness_clear(struct harness *h);

size_t harness_count(const struct harness *h, enum mcp_item_kind kind);

/* The n-th item of kind (0-based), or NULL. */
const struct mcp_item *harness_item(const struct harness *h,
    enum mcp_item_kind kind, size_t n);

/* The n-th protocol line as a C string (with its '\n'); asserts it exists. */
const char *harness_line(const struct harness *h, size_t n);

/* Decodes the n-th executor item as an action; asserts it is one. */
void harness_action(const struct harness *h, size_t n, struct record_action *a);

/* Decodes the n-th audit item; asserts it is one. */
void harness_audit(const struct harness *h, size_t n,
    struct record_audit_event *ev);

/* A tools/call frame for tool with arguments (JSON text), id as JSON text. */
char *harness_call_frame(const char *id, const char *tool, const char *args);

#endif
