/*
 * Frame reader: splits a byte stream into frames at '\n' (one MCP message
 * per line) without ever holding more than max_frame_bytes of a line.
 *
 * Decisions:
 * - A frame is the bytes before '\n', without it.  A '\r' before the '\n'
 *   stays in the frame; JSON treats it as whitespace.  An empty line is an
 *   (empty) frame; the JSON layer refuses it.
 * - A line longer than max_frame_bytes is refused as soon as its first
 *   excess byte arrives; the rest of that line is read and dropped, so a
 *   caller that continues resumes at the next line.  An embedded NUL is
 *   likewise refused as soon as it is seen.  UTF-8 is checked when the
 *   line is complete.  The first problem found wins; a line yields exactly
 *   one event.
 * - Input that ends inside a line (no final '\n') is refused as truncated,
 *   unless that line was already refused.
 * - Frames are numbered from 1, rejected ones included; offsets count bytes
 *   from the start of the stream.
 *
 * Ownership: frame_reader_init allocates the bounded buffer, frame_reader_free
 * releases it.  Input passed to frame_reader_feed is borrowed (not copied as
 * a whole) and must stay valid until frame_reader_next returns false.
 * struct frame.bytes points into the reader's buffer and is valid only until
 * the next call on the reader.  Nothing is allocated per frame.
 */
#ifndef SP_COMMON_FRAME_H
#define SP_COMMON_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/utf8.h"

enum frame_status {
	FRAME_OK = 0,
	FRAME_TOO_LONG,		/* line longer than max_frame_bytes */
	FRAME_NUL,		/* embedded NUL byte */
	FRAME_BAD_UTF8,		/* see frame.utf8 for the precise reason */
	FRAME_TRUNCATED,	/* end of input inside a line */
};

struct frame {
	enum frame_status status;
	const uint8_t *bytes;	/* FRAME_OK only; borrowed, see above */
	size_t len;		/* FRAME_OK only */
	uint64_t number;	/* 1-based */
	uint64_t offset;	/* stream offset of the frame's first byte */
	uint64_t error_offset;	/* stream offset of the offending byte */
	enum utf8_error utf8;	/* FRAME_BAD_UTF8 only */
	const char *reason;	/* static phrase, also for FRAME_OK */
};

struct frame_reader {
	uint8_t *buf;		/* max_frame_bytes, owned */
	size_t max_frame_bytes;
	size_t len;		/* bytes of the current line held in buf */
	const uint8_t *in;	/* borrowed input window */
	size_t in_len;
	uint64_t stream_pos;	/* stream offset of *in */
	uint64_t line_start;	/* stream offset of the current line */
	uint64_t frames;	/* frames completed so far */
	bool discarding;	/* current line already refused */
};

/* false on allocation failure or a zero limit (logged). */
bool frame_reader_init(struct frame_reader *r, size_t max_frame_bytes);

void frame_reader_free(struct frame_reader *r);

/* Hands the reader the next input chunk; the previous one must be used up. */
void frame_reader_feed(struct frame_reader *r, const void *data, size_t len);

/*
 * Consumes input until one frame or refusal is complete and stores it in
 * *out; false when the input window is used up without completing one.
 */
bool frame_reader_next(struct frame_reader *r, struct frame *out);

/*
 * At end of input: true and a FRAME_TRUNCATED event if a line was left
 * unfinished (and not already refused); false if the stream ended cleanly.
 */
bool frame_reader_finish(struct frame_reader *r, struct frame *out);

/* A short fixed phrase for a status (static storage). */
const char *frame_status_string(enum frame_status status);

#endif
