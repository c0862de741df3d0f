/*
 * Memory for credentials in the executor: kept out of core dumps, locked
 * out of swap where the limit allows, and zeroed before it is released.
 */
#ifndef SP_COMMON_SECRET_H
#define SP_COMMON_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A region of at least len bytes, zero-filled, on pages of its own.
 * Owned by the caller, released only with secret_free().
 */
struct secret {
	unsigned char *ptr;
	size_t len;		/* as asked */
	size_t map_len;		/* whole pages actually mapped */
	bool locked;		/* mlock succeeded (RLIMIT_MEMLOCK allows) */
};

/*
 * Maps the region and marks it MADV_DONTDUMP; a failed mlock is not an
 * error (it is reported in s->locked).  false with errno set, and s left
 * empty, when len is 0 or the region cannot be mapped or marked.
 */
bool secret_alloc(struct secret *s, size_t len);

/* Zeroes and unmaps the region; s is left empty.  An empty s is allowed. */
void secret_free(struct secret *s);

#endif
