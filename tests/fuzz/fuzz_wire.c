/*
 * libFuzzer target for the wire layer: the input is a byte stream fed to
 * the frame reader in pieces; each frame goes through strict JSON and
 * JSON-RPC classification, as in the frontend.  Besides memory errors it
 * checks the layers' promises and aborts when one is broken:
 * - frames are numbered 1, 2, 3... and offsets only grow;
 * - an accepted frame fits the limit, holds no '\n' or NUL, is valid UTF-8;
 * - what strict JSON accepts, cJSON prints as text strict JSON accepts
 *   again (so nothing lenient slipped through);
 * - an id renders as JSON text that parses back as the same kind of value.
 * The first input byte picks the feed size and the frame limit, so the
 * same stream is tried split in many ways.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/utf8.h"

#define FUZZ_DEPTH 16

static void
fuzz_check_reparse(const cJSON *root)
{
	struct json_error err;
	struct json_doc again;
	char *text;

	text = cJSON_PrintUnformatted(root);
	if (text == NULL)
		return;		/* allocation failure */
	if (!json_parse_frame((const uint8_t *)text, strlen(text),
	    JSON_DEPTH_LIMIT, &again, &err))
		abort();
	json_doc_free(&again);
	cJSON_free(text);
}

static void
fuzz_check_id(const struct jsonrpc_id *id)
{
	struct json_error err;
	struct json_doc doc;
	char *text;

	text = jsonrpc_id_render(id);
	if (text == NULL)
		return;
	if (!json_parse_frame((const uint8_t *)text, strlen(text), 1, &doc,
	    &err))
		abort();
	if ((id->kind == JSONRPC_ID_NULL && !cJSON_IsNull(doc.root)) ||
	    ((id->kind == JSONRPC_ID_INTEGER ||
	    id->kind == JSONRPC_ID_NUMBER_TEXT) && !cJSON_IsNumber(doc.root)) ||
	    (id->kind == JSONRPC_ID_STRING && !cJSON_IsString(doc.root)))
		abort();
	json_doc_free(&doc);
	cJSON_free(text);
}

/* The id kept for a refused JSON value renders as a JSON id again. */
static void
fuzz_check_refused_id(const struct json_error *err)
{
	struct jsonrpc_id id;

	if (!err->valid_json) {
		if (err->id_raw[0] != '\0')
			abort();
		return;
	}
	if (!jsonrpc_id_from_raw(err->id_raw, &id))
		return;
	fuzz_check_id(&id);
	jsonrpc_id_free(&id);
}

static void
fuzz_check_frame(const struct frame *f, size_t limit)
{
	struct jsonrpc_message msg;
	struct json_error err;
	struct json_doc doc;

	if (f->len > limit || memchr(f->bytes, '\n', f->len) != NULL ||
	    memchr(f->bytes, '\0', f->len) != NULL ||
	    utf8_validate(f->bytes, f->len, NULL) != UTF8_OK)
		abort();
	if (!json_parse_frame(f->bytes, f->len, FUZZ_DEPTH, &doc, &err)) {
		fuzz_check_refused_id(&err);
		return;
	}
	fuzz_check_reparse(doc.root);
	jsonrpc_classify(&doc, &msg);
	if (msg.kind == JSONRPC_INVALID && msg.error_code !=
	    JSONRPC_INVALID_REQUEST && msg.error_code != JSONRPC_INTERNAL_ERROR)
		abort();
	fuzz_check_id(&msg.id);
	jsonrpc_message_free(&msg);
	json_doc_free(&doc);
}

static void
fuzz_check_event(const struct frame *f, uint64_t *expect_number,
    uint64_t *last_offset, size_t limit)
{
	if (f->number != *expect_number || f->offset < *last_offset ||
	    f->error_offset < f->offset)
		abort();
	(*expect_number)++;
	*last_offset = f->offset;
	if (f->status == FRAME_OK)
		fuzz_check_frame(f, limit);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_reader r;
	struct frame f;
	uint64_t number = 1, last_offset = 0;
	size_t chunk, limit, pos = 0, piece;

	if (size < 1)
		return 0;
	chunk = (size_t)(data[0] & 0x0f) + 1;
	limit = (data[0] & 0x10) ? 16 : 4096;
	data++;
	size--;
	if (!frame_reader_init(&r, limit))
		return 0;
	while (pos < size) {
		piece = size - pos < chunk ? size - pos : chunk;
		frame_reader_feed(&r, data + pos, piece);
		pos += piece;
		while (frame_reader_next(&r, &f))
			fuzz_check_event(&f, &number, &last_offset, limit);
	}
	if (frame_reader_finish(&r, &f))
		fuzz_check_event(&f, &number, &last_offset, limit);
	frame_reader_free(&r);
	return 0;
}
