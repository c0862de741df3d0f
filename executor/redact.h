/*
 * Withholding credentials from results: a target that reflects the
 * request (a debug endpoint echoing headers, an error page dumping the
 * request, a proxy's 400 page) would otherwise hand the executor's
 * secret to the client in a body, a header or SSH output.  The
 * credentials are the executor's alone (docs/design.md section 1), and
 * the client must never see one.
 *
 * What is searched is the text the client will see: every text a result
 * carries is first folded (common/text_fold.h, the frontend sanitizer's
 * own folding: full-width letters, invisible characters, role tags), and
 * the folded text is what the result carries, so the frontend's second
 * pass changes nothing in it.
 *
 * In the folded text a needle is found raw, percent-encoded once or
 * twice (%XX / %25XX in either case, '+' for a space), JSON-escaped (\"
 * \\ \/ \b \f \n \r \t and \uXXXX, surrogate pairs included) or as HTML
 * entities (&#DDD; &#xHH; and the named ones of ASCII), each form on its
 * own; letters in any case (ASCII, Latin-1, Greek, Cyrillic: those whose
 * cases have as many bytes); with up to REDACT_GAP_MAX bytes of
 * whitespace between any two of its bytes.  Each secret stands for its
 * variants, computed once at load (redact_set_add): itself, its hex, its
 * base64 and base64url at each of the three alignments a longer encoded
 * text may give it, and base64 of its base64.
 *
 * A match answers no guess: the caller withholds every text of the result
 * (redact_withhold), not the matching bytes, so a search holding ten
 * guesses comes back the same whichever one is the secret.
 *
 * A text that was cut (more followed that the caller does not have) is
 * searched whole, and shown only up to reach bytes before its end: an
 * occurrence that began in what is shown ends within what was searched.
 * The caller reads reach bytes past its own cut for that.  How much is
 * held back depends on the length of the text, never on its content.
 */
#ifndef SP_EXECUTOR_REDACT_H
#define SP_EXECUTOR_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/secret.h"

#define REDACT_MARKER		"[credential withheld]"
/* Whitespace bytes skipped between two bytes of a needle: a line break
 * and an indentation, or a space as an entity ("&#0000032;"). */
#define REDACT_GAP_MAX		20
/* Most folded bytes one needle byte takes: an entity ("&#0000065;")
 * and a gap before the next. */
#define REDACT_EXPANSION	(10 + REDACT_GAP_MAX)
/* Longest secret searched for; the HTTP engine sends no longer one. */
#define REDACT_NEEDLE_MAX	16384
/*
 * Results of one session that may withhold a credential before the
 * executor takes no more calls: a target reflecting the credential once is
 * an accident, three times a session probing for it.
 */
#define REDACT_SESSION_MAX	3
/* Needles one secret adds with its variants. */
#define REDACT_VARIANTS		9

/* Bytes in the set's pool, lowercase, no whitespace; len > 0. */
struct redact_needle {
	const uint8_t *ptr;
	size_t len;
};

/*
 * The needles of one executor, built at load (before confinement) and
 * owned by the set: the pool is secret memory.  reach is
 * REDACT_EXPANSION times the longest needle, 0 when none.
 */
struct redact_set {
	struct redact_needle *needles;
	size_t count, max;
	struct secret pool;
	size_t pool_used;
	size_t reach;
	bool first[256];	/* bytes a match may start with */
	size_t first_at[257];	/* needles beginning with byte b: the
				 * indexes first_at[b] .. first_at[b + 1] */
};

/* Pool bytes a secret of len bytes takes (redact_set_init's pool). */
size_t redact_pool_size(size_t len, bool variants);

/* An empty set for secrets needles and pool bytes; false when memory
 * runs out (logged). */
bool redact_set_init(struct redact_set *set, size_t needles, size_t pool);

/*
 * Adds s[0..len) (len <= REDACT_NEEDLE_MAX), and with variants its
 * encodings above; false when the set has no room left.
 */
bool redact_set_add(struct redact_set *set, const uint8_t *s, size_t len,
    bool variants);

/* Zeroes and frees the pool; an empty set is allowed. */
void redact_set_free(struct redact_set *set);

/* Heap memory the caller frees with free(data); NUL after len bytes. */
struct redacted {
	uint8_t *data;		/* the folded text shown */
	size_t len;		/* <= out_max */
	size_t folded_len;	/* of the whole folded text */
	bool withheld;		/* the folded text holds a credential */
};

/*
 * Folds in[0..len) and searches it; out->data is the folded text up to
 * out_max bytes, or to reach before its end when !complete, never inside
 * a character.  false (out zeroed) only when memory runs out.
 */
bool redact_text(const struct redact_set *set, const uint8_t *in,
    size_t len, bool complete, size_t out_max, struct redacted *out);

/* Replaces r's text by REDACT_MARKER (withheld stays as it was); false
 * when memory runs out. */
bool redact_withhold(struct redacted *r);

#endif
