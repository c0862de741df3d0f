/*
 * The executor's audit events and the wait for the broker's ack
 * (broker/audit_client.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "broker/audit_args.h"
#include "broker/audit_client.h"
#include "broker/child_role.h"
#include "common/log.h"

/* An ack is 13 bytes; anything longer is not one. */
#define AUDIT_CLIENT_ACK_BUF 64

/*
 * One param's rendering as its compact JSON (broker/audit_event.h); one
 * longer than max, a long "value" string, falls back to its shape.
 */
static bool
audit_client_shape(const struct policy_param *param, const struct value *v,
    size_t max, struct record_text *out)
{
	struct policy_param as_shape = *param;
	cJSON *r;
	char *text;

	if ((r = audit_arg_render(param, v)) == NULL)
		return false;
	text = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	if (text != NULL && strlen(text) > max) {
		cJSON_free(text);
		as_shape.audit = PARAM_AUDIT_SHAPE;
		if ((r = audit_arg_render(&as_shape, v)) == NULL)
			return false;
		text = cJSON_PrintUnformatted(r);
		cJSON_Delete(r);
	}
	if (text == NULL) {
		log_error("out of memory");
		return false;
	}
	out->ptr = text;
	out->len = strlen(text);
	return true;
}

static void
audit_client_free_shapes(struct record_text *shapes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_free(shapes[i].ptr);
	free(shapes);
}

/* Shapes of a's values, one per param; the event owns them after. */
static bool
audit_client_shapes(const struct record_limits *limits,
    const struct policy_tool *tool, const struct record_action *a,
    struct record_audit_event *ev)
{
	size_t i, max = limits->max_text_bytes;

	if (a->arg_count != tool->param_count) {
		log_error("%zu values for %zu params",
		    a->arg_count, tool->param_count);
		return false;
	}
	if (max > RECORD_TEXT_CAP)
		max = RECORD_TEXT_CAP;
	if (tool->param_count == 0)
		return true;
	if ((ev->shapes = calloc(tool->param_count, sizeof(*ev->shapes))) ==
	    NULL)
		return false;
	for (i = 0; i < tool->param_count; i++)
		if (!audit_client_shape(&tool->params[i], &a->args[i], max,
		    &ev->shapes[i])) {
			audit_client_free_shapes(ev->shapes, tool->param_count);
			ev->shapes = NULL;
			return false;
		}
	ev->shape_count = tool->param_count;
	return true;
}

static uint64_t
audit_client_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Waits for the ack of call_id; an ack of another call (one given up on
 * after a timeout) is skipped.  true when it says WRITTEN.
 */
static bool
audit_client_wait_ack(int fd, uint64_t call_id)
{
	uint64_t deadline = audit_client_now_ms() + AUDIT_CLIENT_ACK_MS, now;
	uint8_t buf[AUDIT_CLIENT_ACK_BUF];
	struct record_audit_ack ack;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int r;

	while ((now = audit_client_now_ms()) < deadline) {
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_error("the broker is gone");
			return false;
		}
		if ((size_t)n > sizeof(buf) || record_audit_ack_decode(buf,
		    (size_t)n, &ack) != RECORD_OK) {
			log_error("not an ack");
			return false;
		}
		if (ack.call_id == call_id)
			return ack.status == RECORD_AUDIT_WRITTEN;
	}
	log_error("no ack for call %" PRIu64 " in %d ms",
	    call_id, AUDIT_CLIENT_ACK_MS);
	return false;
}

static bool
audit_client_send(int fd, const struct record_limits *limits,
    const struct record_audit_event *ev)
{
	struct buf out;
	bool ok;

	buf_init_writer(&out, RECORD_MAX_BYTES);
	ok = record_audit_event_encode(ev, limits, &out) == RECORD_OK &&
	    child_send_record(fd, &out);
	buf_free(&out);
	return ok;
}

bool
audit_client_intent(int fd, const struct record_limits *limits,
    const struct policy_tool *tool, const struct record_action *a)
{
	struct record_audit_event ev;
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	ev.call_id = a->call_id;
	ev.tool_index = a->tool_index;
	if (!audit_client_shapes(limits, tool, a, &ev))
		return false;
	ok = audit_client_send(fd, limits, &ev) &&
	    audit_client_wait_ack(fd, a->call_id);
	audit_client_free_shapes(ev.shapes, ev.shape_count);
	return ok;
}

static int32_t
audit_client_status(const struct record_result *r)
{
	if (r->kind == RECORD_RESULT_HTTP)
		return r->http.status;
	if (r->kind == RECORD_RESULT_SSH)
		return r->ssh.exit_status;
	return 0;
}

bool
audit_client_execution(int fd, const struct record_limits *limits,
    const struct policy_tool *tool, const struct record_action *a,
    const struct record_result *r)
{
	struct record_audit_event ev;
	bool ok;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.flags = (r->flags & RESULT_STARTED) ? AUDIT_STARTED : 0;
	ev.call_id = a->call_id;
	ev.tool_index = a->tool_index;
	ev.outcome = r->outcome;
	ev.status = audit_client_status(r);
	ev.duration_us = r->duration_us;
	ok = audit_client_shapes(limits, tool, a, &ev) &&
	    audit_client_send(fd, limits, &ev) &&
	    (!tool->mutating || audit_client_wait_ack(fd, a->call_id));
	audit_client_free_shapes(ev.shapes, ev.shape_count);
	return ok;
}
