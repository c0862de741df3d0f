#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/log.h"

bool
frame_reader_init(struct frame_reader *r, size_t max_frame_bytes)
{
	memset(r, 0, sizeof(*r));
	if (max_frame_bytes == 0) {
		log_error("max_frame_bytes must be positive");
		return false;
	}
	r->buf = malloc(max_frame_bytes);
	if (r->buf == NULL) {
		log_error("cannot allocate %zu bytes", max_frame_bytes);
		return false;
	}
	r->max_frame_bytes = max_frame_bytes;
	return true;
}

void
frame_reader_free(struct frame_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

void
frame_reader_feed(struct frame_reader *r, const void *data, size_t len)
{
	r->in = data;
	r->in_len = len;
}

static void
frame_reader_consume(struct frame_reader *r, size_t n)
{
	r->in += n;
	r->in_len -= n;
	r->stream_pos += n;
}

/* Fills the parts of *out common to every event of the current line. */
static void
frame_event(struct frame_reader *r, struct frame *out,
    enum frame_status status, uint64_t error_offset)
{
	memset(out, 0, sizeof(*out));
	r->frames++;
	out->status = status;
	out->number = r->frames;
	out->offset = r->line_start;
	out->error_offset = error_offset;
	out->reason = frame_status_string(status);
}

/* Refuses the current line and drops whatever is left of it. */
static void
frame_refuse(struct frame_reader *r, struct frame *out,
    enum frame_status status, size_t at)
{
	frame_event(r, out, status, r->stream_pos + at);
	frame_reader_consume(r, at + 1);
	r->len = 0;
	r->discarding = true;
}

/* The current line ended at a '\n' just consumed: a frame or a refusal. */
static void
frame_complete(struct frame_reader *r, struct frame *out)
{
	enum utf8_error error;
	size_t bad = 0;

	error = utf8_validate(r->buf, r->len, &bad);
	if (error != UTF8_OK) {
		frame_event(r, out, FRAME_BAD_UTF8, r->line_start + bad);
		out->utf8 = error;
		out->reason = utf8_error_string(error);
	} else {
		frame_event(r, out, FRAME_OK, r->line_start + r->len);
		out->bytes = r->buf;
		out->len = r->len;
	}
	r->len = 0;
	r->line_start = r->stream_pos;
}

/* Skips the rest of a refused line; true once its '\n' was consumed. */
static bool
frame_skip_refused(struct frame_reader *r)
{
	const uint8_t *nl = memchr(r->in, '\n', r->in_len);

	if (nl == NULL) {
		frame_reader_consume(r, r->in_len);
		return false;
	}
	frame_reader_consume(r, (size_t)(nl - r->in) + 1);
	r->discarding = false;
	r->line_start = r->stream_pos;
	return true;
}

bool
frame_reader_next(struct frame_reader *r, struct frame *out)
{
	const uint8_t *nl, *nul;
	size_t take, room, scan;

	while (r->in_len > 0) {
		if (r->discarding) {
			frame_skip_refused(r);
			continue;
		}
		nl = memchr(r->in, '\n', r->in_len);
		take = nl != NULL ? (size_t)(nl - r->in) : r->in_len;
		room = r->max_frame_bytes - r->len;
		scan = take < room ? take : room;
		nul = memchr(r->in, '\0', scan);
		if (nul != NULL) {
			frame_refuse(r, out, FRAME_NUL, (size_t)(nul - r->in));
			return true;
		}
		if (take > room) {
			frame_refuse(r, out, FRAME_TOO_LONG, room);
			return true;
		}
		memcpy(r->buf + r->len, r->in, take);
		r->len += take;
		frame_reader_consume(r, take);
		if (nl != NULL) {
			frame_reader_consume(r, 1);
			frame_complete(r, out);
			return true;
		}
	}
	return false;
}

bool
frame_reader_finish(struct frame_reader *r, struct frame *out)
{
	bool unfinished = !r->discarding && r->len > 0;

	if (unfinished)
		frame_event(r, out, FRAME_TRUNCATED, r->stream_pos);
	r->len = 0;
	r->discarding = false;
	r->line_start = r->stream_pos;
	return unfinished;
}

const char *
frame_status_string(enum frame_status status)
{
	switch (status) {
	case FRAME_OK:
		return "frame complete";
	case FRAME_TOO_LONG:
		return "frame longer than the limit";
	case FRAME_NUL:
		return "NUL byte in frame";
	case FRAME_BAD_UTF8:
		return "invalid UTF-8 in frame";
	case FRAME_TRUNCATED:
		return "end of input inside a frame";
	}
	return "unknown frame status";
}
