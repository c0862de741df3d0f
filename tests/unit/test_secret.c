/*
 * Secret memory: its own pages, out of core dumps, locked when allowed,
 * and released empty.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/secret.h"
#include "tests/unit/sandbox_test.h"

/* The VmFlags of the mapping that starts at p, from /proc/self/smaps. */
static bool
vm_flags_of(const void *p, char *out, size_t outsize)
{
	unsigned long lo, hi;
	char line[512];
	bool in = false, found = false;
	FILE *f;

	cr_assert_not_null(f = fopen("/proc/self/smaps", "r"));
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo == (unsigned long)p;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(out, outsize, "%s", line + 8);
			found = true;
		}
	}
	fclose(f);
	return found;
}

Test(secret, pages_are_zeroed_undumpable_and_locked_when_root)
{
	long page = sysconf(_SC_PAGESIZE);
	struct secret s;
	char flags[512];
	size_t i;

	cr_assert(secret_alloc(&s, (size_t)page + 3));
	cr_assert_eq(s.len, (size_t)page + 3);
	cr_assert_eq(s.map_len, 2 * (size_t)page);
	cr_assert_eq((unsigned long)s.ptr % (unsigned long)page, 0);
	for (i = 0; i < s.map_len; i++)
		cr_assert_eq(s.ptr[i], 0);
	memcpy(s.ptr, "tok\"en$(id)\n", 12);
	cr_assert(vm_flags_of(s.ptr, flags, sizeof(flags)));
	cr_assert_not_null(strstr(flags, " dd"), "flags:%s", flags);
	/* ASan's mlock interceptor does nothing and says it worked. */
#ifndef UNDER_ASAN
	if (geteuid() == 0) {
		cr_assert(s.locked);
		cr_assert_not_null(strstr(flags, " lo"), "flags:%s", flags);
	}
#endif
	secret_free(&s);
	cr_assert_null(s.ptr);
	cr_assert_eq(s.map_len, 0);
	secret_free(&s);
}

Test(secret, empty_and_huge_are_refused)
{
	struct secret s;

	cr_assert_not(secret_alloc(&s, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(s.ptr);
	cr_assert_not(secret_alloc(&s, SIZE_MAX - 10));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(s.ptr);
}
