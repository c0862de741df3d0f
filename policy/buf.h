/*
 * A growable byte buffer with a hard maximum: what template expansion and
 * the catalog's canonical form write into.  Appends past the maximum fail
 * and leave the buffer marked as failed, so a caller may append a run of
 * pieces and check once at the end.
 *
 * Ownership: the buffer owns data (heap); policy_buf_free() releases it,
 * policy_buf_steal() hands it to the caller (NUL-terminated, len bytes).
 */
#ifndef SP_POLICY_BUF_H
#define SP_POLICY_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct policy_buf {
	char *data;		/* NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max;		/* len never exceeds this */
	bool failed;		/* an append hit max or allocation failed */
};

void policy_buf_init(struct policy_buf *b, size_t max);
void policy_buf_free(struct policy_buf *b);

/* Returns data (caller frees) and resets b; NULL when b failed. */
char *policy_buf_steal(struct policy_buf *b, size_t *len);

bool policy_buf_append(struct policy_buf *b, const void *bytes, size_t len);
bool policy_buf_append_str(struct policy_buf *b, const char *s);
bool policy_buf_append_byte(struct policy_buf *b, char c);
bool policy_buf_printf(struct policy_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
