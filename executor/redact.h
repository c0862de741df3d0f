/*
 * Withholding credentials from results: a target that reflects the
 * request (a debug endpoint echoing headers, an error page dumping the
 * request, a proxy's 400 page) would otherwise hand the executor's
 * secret to the client in a body, a header or SSH output.  Every text a
 * result carries passes redact_bytes() before the result record is
 * built: the credentials are the executor's alone (docs/design.md
 * section 1), and the client must never see one.
 *
 * A needle is found raw, percent-encoded (%XX in either case, '+' for a
 * space) or JSON-escaped (\" \\ \/ \b \f \n \r \t and \uXXXX, surrogate
 * pairs included), each form on its own; the caller adds a needle per
 * form it sends that these do not cover (base64 for basic).  Where
 * occurrences overlap, the whole run becomes one REDACT_MARKER.
 *
 * A text that was cut (more followed that the caller does not have)
 * cannot be searched past its end: an occurrence that began before the
 * cut and ran on would leave a prefix of the secret.  So the caller keeps
 * REDACT_EXPANSION times the longest needle beyond its own cut, passes
 * complete = false, and redact_bytes() stops before any byte that could
 * begin such an occurrence.
 */
#ifndef SP_EXECUTOR_REDACT_H
#define SP_EXECUTOR_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REDACT_MARKER		"[credential withheld]"
/* Most input bytes one needle byte takes: \u00XX. */
#define REDACT_EXPANSION	6
/* Longest needle searched for; the HTTP engine sends no longer secret. */
#define REDACT_NEEDLE_MAX	16384

/* Borrowed bytes, normally in common/secret.h memory; len > 0. */
struct redact_needle {
	const uint8_t *ptr;
	size_t len;
};

/*
 * The needles of one executor, owned by whoever built it (the credential
 * store); reach is REDACT_EXPANSION times the longest, 0 when none.
 */
struct redact_set {
	struct redact_needle *needles;
	size_t count;
	size_t reach;
};

/* Heap memory the caller frees with free(data); NUL after len bytes. */
struct redacted {
	uint8_t *data;
	size_t len;		/* <= out_max */
	size_t in_used;		/* input bytes that data stands for */
	bool withheld;		/* at least one occurrence replaced */
};

/*
 * Copies in[0..len) into out, each run of occurrences replaced, until
 * out_max output bytes or the end of what may be shown (complete false:
 * see above).  The caller's "total" for the field becomes
 * total - in_used + out->len, so a cut still reads as one.  false (out
 * zeroed) only when memory runs out.
 */
bool redact_bytes(const struct redact_set *set, const uint8_t *in,
    size_t len, bool complete, size_t out_max, struct redacted *out);

#endif
