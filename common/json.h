/*
 * Strict JSON for one frame: exactly one RFC 8259 value, checked by our own
 * scanner before cJSON sees it and checked again after, because cJSON is
 * lenient (see the engineering notes).
 *
 * Decisions (refused, each with its own reason and byte offset):
 * - NUL anywhere; a UTF-8 byte order mark; invalid UTF-8 (utf8.h rules);
 * - whitespace other than space, tab, CR, LF; anything after the value;
 *   an empty frame;
 * - numbers outside the RFC grammar (012, 1., -.5, +1, .5, 1e, Infinity,
 *   NaN, hex) and numbers whose magnitude overflows a double (1e400, which
 *   cJSON would turn into infinity and print as null).  Underflow (1e-400)
 *   and integers too large to be exact are valid JSON and accepted here;
 *   jsonrpc decides what may serve as an id;
 * - raw control characters (below 0x20) in strings; unknown escapes;
 *   \u0000 (cJSON truncates there); lone or inverted surrogate escapes;
 * - nesting deeper than max_depth (arrays and objects both count);
 * - duplicate object keys anywhere, compared after decoding escapes and
 *   case-sensitively ("a" and "\u0061" are duplicates, "id" and "Id" not).
 * For the JSONTestSuite i_ files this means: huge exponents refused, huge
 * integers and underflow accepted, every surrogate / invalid UTF-8 /
 * UTF-16 / BOM case refused, 500 nested arrays refused.
 *
 * The raw text of the top-level object's "id" member is kept when it is a
 * number, so jsonrpc can tell 1 from 1.0 or 1e0 (cJSON cannot).
 *
 * \u0000, lone surrogate escapes and duplicate keys are valid RFC 8259
 * text refused by the rules above: the scan goes on to the end, the frame
 * still fails, and json_error says it was one JSON value and keeps its
 * id's raw text, so the error answering it can carry the id (JSON-RPC's
 * null id is for ids that cannot be known).
 *
 * Every number item of the tree also carries its raw token text in
 * valuestring (owned by the tree, freed by cJSON_Delete), so a consumer
 * can judge the number as written instead of cJSON's rounded double
 * (policy/args.c: 2^53+1 and 0.99999999999999999 are not integers 2^53
 * and 1).  cJSON_IsNumber stays true; cJSON never reads valuestring of a
 * number.  Trees built by plain cJSON_Parse have NULL there.
 *
 * Ownership: json_parse_frame borrows the input; on success doc->root is a
 * cJSON tree owned by doc and released by json_doc_free.  Look members up
 * only with the cJSON ...CaseSensitive functions.
 */
#ifndef SP_COMMON_JSON_H
#define SP_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#define JSON_DEPTH_DEFAULT 64
#define JSON_DEPTH_LIMIT 512	/* largest max_depth accepted (cJSON: 1000) */
#define JSON_ID_TEXT_MAX 32	/* longer number ids are never valid ones */
#define JSON_ID_RAW_MAX 256	/* an id's raw text kept for a refusal */

enum json_id_token {
	JSON_ID_ABSENT = 0,	/* no top-level object, or no "id" member */
	JSON_ID_NUMBER,		/* raw text in id_text if not too long */
	JSON_ID_OTHER,		/* string, null, true, false, object, array */
};

struct json_doc {
	cJSON *root;				/* owned */
	enum json_id_token id_token;
	char id_text[JSON_ID_TEXT_MAX + 1];	/* NUL-terminated */
	size_t id_text_len;	/* raw length; > JSON_ID_TEXT_MAX: not copied */
};

struct json_error {
	const char *reason;	/* static phrase */
	size_t offset;		/* byte offset in the frame */
	/*
	 * The frame is one RFC 8259 value refused by a stricter rule above
	 * (\u0000, a lone surrogate escape, a duplicate key): no parse error,
	 * and id_raw holds the top-level "id" value's raw text (a string or
	 * a number) when it was read cleanly, else "".
	 */
	bool valid_json;
	char id_raw[JSON_ID_RAW_MAX + 1];
};

/*
 * Parses exactly one JSON value from len bytes.  On success fills *doc and
 * returns true; otherwise returns false, fills *err and leaves doc->root
 * NULL.  max_depth must be between 1 and JSON_DEPTH_LIMIT.
 */
bool json_parse_frame(const uint8_t *bytes, size_t len, unsigned max_depth,
    struct json_doc *doc, struct json_error *err);

/*
 * For a caller that needs positions (the policy loader's diagnostics):
 * value() is called for every value in document (pre-)order with its
 * depth (0 for the top value), the byte offset of its first byte, and the
 * byte offset of its member name (SIZE_MAX outside an object).  A reason
 * returned (a static phrase) stops the scan there; NULL goes on.
 */
struct json_scan_observer {
	const char *(*value)(void *arg, unsigned depth, size_t offset,
	    size_t key_offset);
	void *arg;
};

/*
 * The same strict scan as json_parse_frame, telling obs of each value and
 * building no tree: true if the text is one value the rules above accept,
 * else false with err filled.
 */
bool json_scan_text(const uint8_t *bytes, size_t len, unsigned max_depth,
    const struct json_scan_observer *obs, struct json_error *err);

/* Frees the tree; NULL and an empty doc are allowed. */
void json_doc_free(struct json_doc *doc);

/*
 * A number read back from our own files (state_dir lines, audit records)
 * as a count or a time: *out when v (may be NULL) is a number, whole,
 * 0 <= v < 2^53 (a double's exact integers); false for anything else, so
 * no out-of-range double is ever converted (undefined in C).
 */
bool json_exact_uint(const cJSON *v, uint64_t *out);

#endif
