/*
 * Secret memory on its own pages, so MADV_DONTDUMP and mlock cover exactly
 * the secret and nothing that shares a page with it.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/secret.h"

static bool
round_to_pages(size_t len, size_t *out)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t p;

	if (page <= 0)
		return false;
	p = (size_t)page;
	if (len == 0 || len > SIZE_MAX - (p - 1))
		return false;
	*out = (len + p - 1) / p * p;
	return true;
}

bool
secret_alloc(struct secret *s, size_t len)
{
	void *p;
	size_t map_len;

	memset(s, 0, sizeof(*s));
	if (!round_to_pages(len, &map_len)) {
		errno = EINVAL;
		return false;
	}
	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (madvise(p, map_len, MADV_DONTDUMP) == -1) {
		int saved = errno;

		(void)munmap(p, map_len);
		errno = saved;
		return false;
	}
	s->ptr = p;
	s->len = len;
	s->map_len = map_len;
	s->locked = mlock(p, map_len) == 0;
	return true;
}

void
secret_free(struct secret *s)
{
	if (s->ptr == NULL)
		return;
	explicit_bzero(s->ptr, s->map_len);
	if (s->locked)
		(void)munlock(s->ptr, s->map_len);
	(void)munmap(s->ptr, s->map_len);
	memset(s, 0, sizeof(*s));
}
