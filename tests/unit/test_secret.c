/*
 * Secret memory: its own pages, out of core dumps, locked when allowed,
 * and released empty.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <seccomp.h>
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

Test(secret, pages_are_zeroed_and_undumpable)
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
	secret_free(&s);
	cr_assert_null(s.ptr);
	cr_assert_eq(s.map_len, 0);
	secret_free(&s);
}

/* Its own test, so a run that cannot see the lock counts a skip. */
static void
skip_unless_lock_is_seen(void)
{
#ifdef UNDER_ASAN
	/* ASan's mlock interceptor does nothing and says it worked. */
	cr_skip_test("ASan's mlock does nothing: the lock is tested without it");
#endif
	if (geteuid() != 0)
		cr_skip_test("needs root: mlock may be refused by RLIMIT_MEMLOCK");
}

Test(secret, pages_are_locked_as_root, .init = skip_unless_lock_is_seen)
{
	struct secret s;
	char flags[512];

	cr_assert(secret_alloc(&s, 3 * (size_t)sysconf(_SC_PAGESIZE) - 1));
	cr_assert(s.locked);
	cr_assert(vm_flags_of(s.ptr, flags, sizeof(flags)));
	cr_assert_not_null(strstr(flags, " lo"), "flags:%s", flags);
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

/*
 * The bytes are zeroed before the pages go back.  To look at them after
 * secret_free(), a filter of the test's own turns munmap into a no-op
 * that reports success, so the pages stay readable.
 */
Test(secret, free_zeroes_before_unmapping)
{
	static const char token[] = "Bearer q\"$(id)\"\n\xc3\xa9";
	scmp_filter_ctx ctx;
	struct secret s;
	unsigned char *kept;
	size_t i, len;

	cr_assert(secret_alloc(&s, 3 * sizeof(token)));
	for (i = 0; i < 3; i++)
		memcpy(s.ptr + i * sizeof(token), token, sizeof(token));
	kept = s.ptr;
	len = s.map_len;
	cr_assert_not_null(ctx = seccomp_init(SCMP_ACT_ALLOW));
	cr_assert_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(munmap),
	    0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	secret_free(&s);
	for (i = 0; i < len; i++)
		cr_assert_eq(kept[i], 0, "byte %zu survived", i);
}
