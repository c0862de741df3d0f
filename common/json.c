#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/json_tree.h"
#include "common/log.h"
#include "common/utf8.h"

/*
 * Scanner state over one NUL-terminated copy of the frame.  The copy is
 * ours, so the number check may end a token with a NUL for a moment.
 */
struct json_scanner {
	uint8_t *s;
	size_t len;
	size_t pos;
	unsigned depth;
	unsigned max_depth;
	const char *reason;
	size_t err_pos;
	/*
	 * The first refusal of text that is still RFC 8259 JSON (\u0000, a
	 * lone surrogate escape): scanning goes on, so the frame can be known
	 * to be one JSON value and its id read, but it fails at the end.
	 */
	const char *refusal;
	size_t refusal_pos;
	unsigned refusals;
	char id_raw[JSON_ID_RAW_MAX + 1];	/* "" unless read cleanly */
	const struct json_scan_observer *obs;	/* NULL: none */
	size_t key_offset;	/* of the member whose value comes next */
	struct json_doc *doc;
};

static bool json_scan_value(struct json_scanner *sc);

static bool
json_fail(struct json_scanner *sc, const char *reason, size_t at)
{
	sc->reason = reason;
	sc->err_pos = at;
	return false;
}

/* Notes a refusal of valid JSON and lets the scan go on. */
static bool
json_refuse(struct json_scanner *sc, const char *reason, size_t at)
{
	if (sc->refusals++ == 0) {
		sc->refusal = reason;
		sc->refusal_pos = at;
	}
	return true;
}

static bool
json_is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* Only the four RFC 8259 whitespace bytes; cJSON takes any byte <= 0x20. */
static void
json_skip_ws(struct json_scanner *sc)
{
	while (sc->pos < sc->len) {
		uint8_t c = sc->s[sc->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		sc->pos++;
	}
}

static bool
json_scan_literal(struct json_scanner *sc, const char *word)
{
	size_t n = strlen(word);

	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0)
		return json_fail(sc, "invalid literal", sc->pos);
	sc->pos += n;
	return true;
}

static void
json_skip_digits(struct json_scanner *sc)
{
	while (sc->pos < sc->len && json_is_digit(sc->s[sc->pos]))
		sc->pos++;
}

/* True if the next byte is a digit; the NUL terminator stops at len. */
static bool
json_at_digit(const struct json_scanner *sc)
{
	return sc->pos < sc->len && json_is_digit(sc->s[sc->pos]);
}

/*
 * Overflow to infinity is refused: cJSON would keep inf and print null.
 * strtod must see this token alone: after "0" it would go on to read
 * "0x1p9999" as hex, so the byte after the token is NUL for the call.
 */
static bool
json_check_magnitude(struct json_scanner *sc, size_t start)
{
	uint8_t saved = sc->s[sc->pos];
	char *end = NULL;
	double d;

	sc->s[sc->pos] = '\0';
	d = strtod((const char *)sc->s + start, &end);
	sc->s[sc->pos] = saved;
	if (end != (char *)sc->s + sc->pos)
		return json_fail(sc, "number not read whole", start);
	if (isinf(d))
		return json_fail(sc, "number out of range", start);
	return true;
}

static bool
json_scan_number(struct json_scanner *sc)
{
	size_t start = sc->pos;

	if (sc->s[sc->pos] == '-')
		sc->pos++;
	if (!json_at_digit(sc))
		return json_fail(sc, "number without integer digits", start);
	if (sc->s[sc->pos] == '0') {
		sc->pos++;
		if (json_at_digit(sc))
			return json_fail(sc, "number with a leading zero", start);
	} else
		json_skip_digits(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == '.') {
		sc->pos++;
		if (!json_at_digit(sc))
			return json_fail(sc, "number with an empty fraction", start);
		json_skip_digits(sc);
	}
	if (sc->pos < sc->len && (sc->s[sc->pos] == 'e' || sc->s[sc->pos] == 'E')) {
		sc->pos++;
		if (sc->pos < sc->len && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-'))
			sc->pos++;
		if (!json_at_digit(sc))
			return json_fail(sc, "number with an empty exponent", start);
		json_skip_digits(sc);
	}
	return json_check_magnitude(sc, start);
}

/* \uXXXX at sc->pos (pointing at the 'u'), pairing surrogates. */
static bool
json_scan_unicode_escape(struct json_scanner *sc)
{
	size_t at = sc->pos - 1;
	uint32_t cp, low;

	if (!hex_decode_uint(sc->s + sc->pos + 1, 4, &cp))
		return json_fail(sc, "invalid \\u escape", at);
	sc->pos += 5;
	if (cp == 0)
		return json_refuse(sc, "\\u0000 in string", at);
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return json_refuse(sc, "lone low surrogate escape", at);
	if (cp < 0xd800 || cp > 0xdbff)
		return true;
	if (sc->s[sc->pos] != '\\' || sc->s[sc->pos + 1] != 'u' ||
	    !hex_decode_uint(sc->s + sc->pos + 2, 4, &low) ||
	    low < 0xdc00 || low > 0xdfff)
		return json_refuse(sc, "lone high surrogate escape", at);
	sc->pos += 6;
	return true;
}

/* An escape at sc->pos (pointing after the backslash). */
static bool
json_scan_escape(struct json_scanner *sc)
{
	if (sc->pos >= sc->len)
		return json_fail(sc, "unterminated string", sc->pos);
	switch (sc->s[sc->pos]) {
	case '"': case '\\': case '/': case 'b':
	case 'f': case 'n': case 'r': case 't':
		sc->pos++;
		return true;
	case 'u':
		return json_scan_unicode_escape(sc);
	default:
		return json_fail(sc, "invalid escape in string", sc->pos - 1);
	}
}

/* A string at sc->pos (pointing at the opening quote). */
static bool
json_scan_string(struct json_scanner *sc)
{
	size_t start = sc->pos;
	uint8_t c;

	sc->pos++;
	while (sc->pos < sc->len) {
		c = sc->s[sc->pos];
		if (c == '"') {
			sc->pos++;
			return true;
		}
		if (c < 0x20)
			return json_fail(sc, "raw control character in string",
			    sc->pos);
		sc->pos++;
		if (c == '\\' && !json_scan_escape(sc))
			return false;
	}
	return json_fail(sc, "unterminated string", start);
}

/* Opening bracket at sc->pos; counts depth before going further. */
static bool
json_enter(struct json_scanner *sc)
{
	if (sc->depth >= sc->max_depth)
		return json_fail(sc, "nesting too deep", sc->pos);
	sc->depth++;
	sc->pos++;
	json_skip_ws(sc);
	return true;
}

/* After a member or element: true and *more if a comma follows. */
static bool
json_scan_separator(struct json_scanner *sc, uint8_t close, bool *more)
{
	json_skip_ws(sc);
	if (sc->pos >= sc->len)
		return json_fail(sc, "unexpected end of input", sc->pos);
	if (sc->s[sc->pos] == ',') {
		sc->pos++;
		*more = true;
		return true;
	}
	if (sc->s[sc->pos] != close)
		return json_fail(sc, "expected ',' or closing bracket", sc->pos);
	sc->pos++;
	sc->depth--;
	*more = false;
	return true;
}

static bool
json_scan_array(struct json_scanner *sc)
{
	bool more = true;

	if (!json_enter(sc))
		return false;
	if (sc->pos < sc->len && sc->s[sc->pos] == ']') {
		sc->pos++;
		sc->depth--;
		return true;
	}
	while (more) {
		if (!json_scan_value(sc) ||
		    !json_scan_separator(sc, ']', &more))
			return false;
	}
	return true;
}

/* Decodes the raw string body s[0..len) and compares it with ASCII want. */
static bool
json_key_equals(const uint8_t *s, size_t len, const char *want)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	size_t i = 0, w = 0;
	uint32_t cp;

	while (i < len) {
		if (s[i] != '\\')
			cp = s[i++];
		else if (s[i + 1] == 'u') {
			if (!hex_decode_uint(s + i + 2, 4, &cp))
				return false;
			i += 6;
		} else {
			cp = (uint8_t)to[strchr(from, s[i + 1]) - from];
			i += 2;
		}
		if (want[w] == '\0' || cp != (uint8_t)want[w])
			return false;
		w++;
	}
	return want[w] == '\0';
}

/*
 * Keeps the raw text of the top-level "id" value (value at start..pos):
 * a number's for jsonrpc, and a string's or number's for the error that
 * answers a refused frame, unless the value itself held a refusal.
 */
static void
json_note_id(struct json_scanner *sc, size_t start, bool clean)
{
	struct json_doc *doc = sc->doc;
	size_t n = sc->pos - start;

	if (clean && n <= JSON_ID_RAW_MAX && (sc->s[start] == '"' ||
	    sc->s[start] == '-' || json_is_digit(sc->s[start]))) {
		memcpy(sc->id_raw, sc->s + start, n);
		sc->id_raw[n] = '\0';
	}

	if (sc->s[start] != '-' && !json_is_digit(sc->s[start])) {
		doc->id_token = JSON_ID_OTHER;
		return;
	}
	doc->id_token = JSON_ID_NUMBER;
	doc->id_text_len = n;
	if (n <= JSON_ID_TEXT_MAX) {
		memcpy(doc->id_text, sc->s + start, n);
		doc->id_text[n] = '\0';
	}
}

static bool
json_scan_member(struct json_scanner *sc)
{
	size_t key_start = sc->pos, value_start;
	unsigned refusals;
	bool is_id;

	if (sc->pos >= sc->len || sc->s[sc->pos] != '"')
		return json_fail(sc, "expected a string key", sc->pos);
	if (!json_scan_string(sc))
		return false;
	is_id = sc->depth == 1 && json_key_equals(sc->s + key_start + 1,
	    sc->pos - key_start - 2, "id");
	json_skip_ws(sc);
	if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
		return json_fail(sc, "expected ':' after key", sc->pos);
	sc->pos++;
	json_skip_ws(sc);
	value_start = sc->pos;
	refusals = sc->refusals;
	sc->key_offset = key_start;
	if (!json_scan_value(sc))
		return false;
	if (is_id)
		json_note_id(sc, value_start, refusals == sc->refusals);
	return true;
}

static bool
json_scan_object(struct json_scanner *sc)
{
	bool more = true;

	if (!json_enter(sc))
		return false;
	if (sc->pos < sc->len && sc->s[sc->pos] == '}') {
		sc->pos++;
		sc->depth--;
		return true;
	}
	while (more) {
		json_skip_ws(sc);
		if (!json_scan_member(sc) ||
		    !json_scan_separator(sc, '}', &more))
			return false;
	}
	return true;
}

/* Tells the observer where a value (and its member name) begins. */
static bool
json_observe(struct json_scanner *sc)
{
	size_t key = sc->key_offset;
	const char *why;

	sc->key_offset = SIZE_MAX;
	if (sc->obs == NULL)
		return true;
	why = sc->obs->value(sc->obs->arg, sc->depth, sc->pos, key);
	return why == NULL || json_fail(sc, why, sc->pos);
}

static bool
json_scan_value(struct json_scanner *sc)
{
	json_skip_ws(sc);
	if (sc->pos >= sc->len)
		return json_fail(sc, "unexpected end of input", sc->pos);
	if (!json_observe(sc))
		return false;
	switch (sc->s[sc->pos]) {
	case '{':
		return json_scan_object(sc);
	case '[':
		return json_scan_array(sc);
	case '"':
		return json_scan_string(sc);
	case 't':
		return json_scan_literal(sc, "true");
	case 'f':
		return json_scan_literal(sc, "false");
	case 'n':
		return json_scan_literal(sc, "null");
	default:
		if (sc->s[sc->pos] == '-' || json_is_digit(sc->s[sc->pos]))
			return json_scan_number(sc);
		return json_fail(sc, "unexpected character", sc->pos);
	}
}

/* Refusals that hold for the frame as a whole, before any grammar. */
static bool
json_scan_bytes(struct json_scanner *sc)
{
	const uint8_t *nul = memchr(sc->s, '\0', sc->len);
	enum utf8_error error;
	size_t bad = 0;

	if (nul != NULL)
		return json_fail(sc, "NUL byte", (size_t)(nul - sc->s));
	if (sc->len >= 3 && memcmp(sc->s, "\xef\xbb\xbf", 3) == 0)
		return json_fail(sc, "byte order mark", 0);
	error = utf8_validate(sc->s, sc->len, &bad);
	if (error != UTF8_OK)
		return json_fail(sc, utf8_error_string(error), bad);
	return true;
}

static bool
json_scan(struct json_scanner *sc)
{
	if (!json_scan_bytes(sc))
		return false;
	json_skip_ws(sc);
	if (sc->pos == sc->len)
		return json_fail(sc, "no JSON value", sc->pos);
	if (!json_scan_value(sc))
		return false;
	json_skip_ws(sc);
	if (sc->pos != sc->len)
		return json_fail(sc, "trailing characters after the value",
		    sc->pos);
	if (sc->refusal != NULL)
		return json_fail(sc, sc->refusal, sc->refusal_pos);
	return true;
}

/* A frame refused although it is one JSON value: its id can be echoed. */
static void
json_error_keep_id(const struct json_scanner *sc, struct json_error *err)
{
	err->valid_json = true;
	memcpy(err->id_raw, sc->id_raw, sizeof(err->id_raw));
}

/*
 * The NUL-terminated copy every scan works on (the number check ends a
 * token with a NUL for a moment); NULL after filling err.
 */
static char *
json_scan_copy(const uint8_t *bytes, size_t len, unsigned max_depth,
    struct json_error *err)
{
	char *copy;

	memset(err, 0, sizeof(*err));
	if (max_depth == 0 || max_depth > JSON_DEPTH_LIMIT || len == SIZE_MAX) {
		log_error("bad arguments (max_depth %u)", max_depth);
		err->reason = "bad arguments";
		return NULL;
	}
	if ((copy = malloc(len + 1)) == NULL) {
		log_error("cannot allocate %zu bytes", len + 1);
		err->reason = "out of memory";
		return NULL;
	}
	memcpy(copy, bytes, len);
	copy[len] = '\0';
	return copy;
}

/* Scans copy; on failure fills err. */
static bool
json_scan_run(struct json_scanner *sc, char *copy, size_t len,
    unsigned max_depth, struct json_error *err)
{
	sc->s = (uint8_t *)copy;
	sc->len = len;
	sc->max_depth = max_depth;
	sc->key_offset = SIZE_MAX;
	if (json_scan(sc))
		return true;
	err->reason = sc->reason;
	err->offset = sc->err_pos;
	if (sc->refusal != NULL && sc->reason == sc->refusal)
		json_error_keep_id(sc, err);
	return false;
}

bool
json_parse_frame(const uint8_t *bytes, size_t len, unsigned max_depth,
    struct json_doc *doc, struct json_error *err)
{
	struct json_scanner sc;
	char *copy;
	bool ok;

	memset(doc, 0, sizeof(*doc));
	if ((copy = json_scan_copy(bytes, len, max_depth, err)) == NULL)
		return false;
	memset(&sc, 0, sizeof(sc));
	sc.doc = doc;
	ok = json_scan_run(&sc, copy, len, max_depth, err);
	if (ok && !(ok = json_build_tree(copy, len, doc, err)) &&
	    err->valid_json)
		json_error_keep_id(&sc, err);
	free(copy);
	if (!ok)
		json_doc_free(doc);
	return ok;
}

bool
json_scan_text(const uint8_t *bytes, size_t len, unsigned max_depth,
    const struct json_scan_observer *obs, struct json_error *err)
{
	struct json_scanner sc;
	struct json_doc doc;
	char *copy;
	bool ok;

	if ((copy = json_scan_copy(bytes, len, max_depth, err)) == NULL)
		return false;
	memset(&sc, 0, sizeof(sc));
	memset(&doc, 0, sizeof(doc));
	sc.doc = &doc;		/* the id notes land here, unused */
	sc.obs = obs;
	ok = json_scan_run(&sc, copy, len, max_depth, err);
	free(copy);
	return ok;
}

void
json_doc_free(struct json_doc *doc)
{
	if (doc == NULL)
		return;
	cJSON_Delete(doc->root);
	memset(doc, 0, sizeof(*doc));
}

bool
json_exact_uint(const cJSON *v, uint64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= 0 && d < 9007199254740992.0) || d != floor(d))
		return false;
	*out = (uint64_t)d;
	return true;
}
