#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/json.h"
#include "tests/unit/wire_pipeline.h"

static char *
wire_strdup(const char *s)
{
	char *copy = strdup(s);

	cr_assert_not_null(copy);
	return copy;
}

/* A frame the reader accepted: JSON, then JSON-RPC. */
static void
wire_classify(const struct frame *f, struct wire_event *ev)
{
	struct jsonrpc_message msg;
	struct json_error err;
	struct json_doc doc;
	char *id;

	ev->json_ok = json_parse_frame(f->bytes, f->len, JSON_DEPTH_DEFAULT,
	    &doc, &err);
	if (!ev->json_ok) {
		ev->kind = JSONRPC_INVALID;
		ev->code = JSONRPC_PARSE_ERROR;
		ev->reason = err.reason;
		ev->json_offset = err.offset;
		ev->id = wire_strdup("null");
		return;
	}
	ev->kind = jsonrpc_classify(&doc, &msg);
	ev->code = msg.kind == JSONRPC_INVALID ? msg.error_code : 0;
	ev->reason = msg.reason;
	id = jsonrpc_id_render(&msg.id);
	cr_assert_not_null(id);
	ev->id = wire_strdup(id);
	cJSON_free(id);
	if (msg.method != NULL)
		ev->method = wire_strdup(msg.method);
	jsonrpc_message_free(&msg);
	json_doc_free(&doc);
}

static void
wire_record(const struct frame *f, struct wire_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->frame = f->status;
	ev->number = f->number;
	ev->offset = f->offset;
	ev->error_offset = f->error_offset;
	ev->reason = f->reason;
	ev->kind = JSONRPC_INVALID;
	if (f->status == FRAME_OK)
		wire_classify(f, ev);
}

size_t
wire_run(const void *bytes, size_t len, size_t chunk,
    size_t max_frame_bytes, struct wire_event *events, size_t max_events)
{
	const uint8_t *p = bytes;
	struct frame_reader r;
	struct frame f;
	size_t n = 0, pos = 0, piece;

	cr_assert(frame_reader_init(&r, max_frame_bytes));
	if (chunk == 0)
		chunk = len > 0 ? len : 1;
	while (pos < len) {
		piece = len - pos < chunk ? len - pos : chunk;
		frame_reader_feed(&r, p + pos, piece);
		pos += piece;
		while (frame_reader_next(&r, &f)) {
			cr_assert_lt(n, max_events, "more events than expected");
			wire_record(&f, &events[n++]);
		}
	}
	if (frame_reader_finish(&r, &f)) {
		cr_assert_lt(n, max_events, "more events than expected");
		wire_record(&f, &events[n++]);
	}
	frame_reader_free(&r);
	return n;
}

size_t
wire_run_str(const char *text, size_t chunk, size_t max_frame_bytes,
    struct wire_event *events, size_t max_events)
{
	return wire_run(text, strlen(text), chunk, max_frame_bytes, events,
	    max_events);
}

void
wire_events_free(struct wire_event *events, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(events[i].id);
		free(events[i].method);
		events[i].id = events[i].method = NULL;
	}
}

const char *
wire_show(struct wire_shown *shown, const void *bytes, size_t len)
{
	const uint8_t *p = bytes;
	size_t i, used = 0, room = sizeof(shown->text) - 4;	/* "..." */

	for (i = 0; i < len; i++) {
		if (used + 4 >= room)
			break;
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			shown->text[used++] = (char)p[i];
		else
			used += (size_t)snprintf(shown->text + used, 5,
			    "\\x%02x", p[i]);
	}
	shown->text[used] = '\0';
	if (i < len)
		memcpy(shown->text + used, "...", 4);
	return shown->text;
}

const char *
wire_show_str(struct wire_shown *shown, const char *text)
{
	return wire_show(shown, text, strlen(text));
}
