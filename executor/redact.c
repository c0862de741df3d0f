/*
 * Withholding credentials from results (executor/redact.h).
 *
 * Each form is matched on its own, decoding one unit of input at a time
 * and comparing its bytes with the needle's: mixing forms in one match
 * would need backtracking (a literal '%' or an escape?), and a reflecting
 * target applies one encoding to a whole value.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/log.h"
#include "common/utf8.h"
#include "executor/redact.h"

enum redact_form { FORM_RAW, FORM_PERCENT, FORM_JSON, FORM_COUNT };

enum redact_match { MATCH_NONE, MATCH_FULL, MATCH_PARTIAL };

/* One unit of input: the bytes it stands for. */
struct redact_unit {
	uint8_t b[UTF8_SEQUENCE_MAX];
	size_t n;		/* bytes it stands for */
	size_t used;		/* input bytes it takes */
	bool plus;		/* a '+', which a query may mean as ' ' */
};

static void
redact_literal(const uint8_t *p, struct redact_unit *u)
{
	u->b[0] = p[0];
	u->n = 1;
	u->used = 1;
}

/*
 * "%XX"; false when the input ends inside one and more may follow.  A
 * '%' without two hex digits is itself.
 */
static bool
redact_unit_percent(const uint8_t *p, size_t avail, bool complete,
    struct redact_unit *u)
{
	uint32_t v;

	redact_literal(p, u);
	u->plus = p[0] == '+';
	if (p[0] != '%')
		return true;
	if (avail < 3)
		return complete;
	if (hex_decode_uint(p + 1, 2, &v)) {
		u->b[0] = (uint8_t)v;
		u->used = 3;
	}
	return true;
}

/* "\uXXXX", or a surrogate pair of two; the caller saw "\u". */
static bool
redact_unit_u(const uint8_t *p, size_t avail, bool complete,
    struct redact_unit *u)
{
	uint32_t hi, lo;

	if (avail < 6)
		return complete;
	if (!hex_decode_uint(p + 2, 4, &hi) || (hi >= 0xdc00 && hi <= 0xdfff))
		return true;
	if (hi < 0xd800 || hi > 0xdbff) {
		u->n = utf8_encode(hi, u->b);
		u->used = 6;
		return true;
	}
	if (avail < 12)
		return complete;
	if (p[6] != '\\' || p[7] != 'u' || !hex_decode_uint(p + 8, 4, &lo) ||
	    lo < 0xdc00 || lo > 0xdfff)
		return true;
	u->n = utf8_encode(0x10000 + ((hi - 0xd800) << 10 | (lo - 0xdc00)),
	    u->b);
	u->used = 12;
	return true;
}

/* A JSON string escape; a '\' that starts none is itself. */
static bool
redact_unit_json(const uint8_t *p, size_t avail, bool complete,
    struct redact_unit *u)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at;

	redact_literal(p, u);
	if (p[0] != '\\')
		return true;
	if (avail < 2)
		return complete;
	if (p[1] == 'u')
		return redact_unit_u(p, avail, complete, u);
	if (p[1] != '\0' && (at = strchr(from, p[1])) != NULL) {
		u->b[0] = (uint8_t)to[at - from];
		u->used = 2;
	}
	return true;
}

static bool
redact_unit(enum redact_form f, const uint8_t *p, size_t avail,
    bool complete, struct redact_unit *u)
{
	memset(u, 0, sizeof(*u));
	if (f == FORM_PERCENT)
		return redact_unit_percent(p, avail, complete, u);
	if (f == FORM_JSON)
		return redact_unit_json(p, avail, complete, u);
	redact_literal(p, u);
	return true;
}

static bool
redact_unit_matches(const struct redact_unit *u, const uint8_t *want,
    size_t left)
{
	if (u->n > left)
		return false;
	if (u->plus && want[0] == ' ')
		return true;
	return memcmp(u->b, want, u->n) == 0;
}

/*
 * Whether in[0..len) begins with the needle in form f; *used is its
 * length in the input.  PARTIAL: the input ends while it still matches
 * and more may follow.
 */
static enum redact_match
redact_match_form(const uint8_t *in, size_t len, bool complete,
    enum redact_form f, const struct redact_needle *nd, size_t *used)
{
	struct redact_unit u;
	size_t p = 0, q = 0;

	while (q < nd->len) {
		if (p >= len)
			return complete ? MATCH_NONE : MATCH_PARTIAL;
		if (!redact_unit(f, in + p, len - p, complete, &u))
			return MATCH_PARTIAL;
		if (!redact_unit_matches(&u, nd->ptr + q, nd->len - q))
			return MATCH_NONE;
		p += u.used;
		q += u.n;
	}
	*used = p;
	return MATCH_FULL;
}

/* The longest occurrence at in[0], 0 for none; *partial as above. */
static size_t
redact_longest(const struct redact_set *set, const uint8_t *in, size_t len,
    bool complete, bool *partial)
{
	size_t best = 0, used, k;
	int f;

	for (k = 0; k < set->count; k++)
		for (f = 0; f < FORM_COUNT; f++)
			switch (redact_match_form(in, len, complete, f,
			    &set->needles[k], &used)) {
			case MATCH_FULL:
				if (used > best)
					best = used;
				break;
			case MATCH_PARTIAL:
				*partial = true;
				break;
			case MATCH_NONE:
				break;
			}
	return best;
}

/*
 * The end of the run of occurrences that begins at i and ends at end at
 * least: an occurrence starting inside it extends it.  *stop when one may
 * run past what the caller has.
 */
static size_t
redact_run(const struct redact_set *set, const uint8_t *in, size_t len,
    size_t i, size_t end, bool complete, bool *stop)
{
	size_t j, m;

	for (j = i + 1; j < end; j++) {
		m = redact_longest(set, in + j, len - j, complete, stop);
		if (j + m > end)
			end = j + m;
		if (*stop)
			break;
	}
	return end;
}

static void
redact_put(struct redacted *out, size_t out_max, const void *p, size_t n)
{
	if (n > out_max - out->len)
		n = out_max - out->len;
	if (n > 0)
		memcpy(out->data + out->len, p, n);
	out->len += n;
}

static void
redact_scan(const struct redact_set *set, const uint8_t *in, size_t len,
    bool complete, size_t out_max, struct redacted *out)
{
	size_t i = 0, m;
	bool stop = false;

	while (i < len && out->len < out_max && !stop) {
		m = redact_longest(set, in + i, len - i, complete, &stop);
		if (m == 0) {
			if (!stop)
				out->data[out->len++] = in[i++];
			continue;
		}
		i = redact_run(set, in, len, i, i + m, complete, &stop);
		redact_put(out, out_max, REDACT_MARKER, strlen(REDACT_MARKER));
		out->withheld = true;
	}
	out->in_used = i;
}

bool
redact_bytes(const struct redact_set *set, const uint8_t *in, size_t len,
    bool complete, size_t out_max, struct redacted *out)
{
	memset(out, 0, sizeof(*out));
	if ((out->data = malloc(out_max + 1)) == NULL) {
		log_error("out of memory withholding a credential from a result");
		return false;
	}
	if (set == NULL || set->count == 0) {
		redact_put(out, out_max, in, len);
		out->in_used = out->len;
	} else
		redact_scan(set, in, len, complete, out_max, out);
	out->data[out->len] = '\0';
	return true;
}
