/*
 * What the seccomp table tests share.  Each table is loaded for real in
 * Criterion's per-test worker.  After the filter no cr_assert can run (the
 * worker reports with sendmsg, which the frontend and broker tables do not
 * give it), so a test ends with _exit(status) or dies, and states what it
 * expects: KILLED (.signal = SIGSYS) for a forbidden call, WORKS
 * (.exit_code = ALLOWED_OK) for a path that must keep working.  A
 * forbidden call that returns (the filter missing, or too wide) exits 0,
 * which fails both kinds of test.
 */
#ifndef SP_TESTS_SANDBOX_TEST_H
#define SP_TESTS_SANDBOX_TEST_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sandbox.h"

#define LOAD_FAILED 3		/* the filter could not be loaded */
#define ALLOWED_OK 42		/* the allowed path worked under the filter */
#define ALLOWED_BROKEN 4	/* the allowed path ran, with a wrong result */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/*
 * ASan's runtime makes syscalls of its own (at exit, on reports) that no
 * production table lists, and a skip from inside a test would contradict
 * its .signal expectation; so in a sanitizer build the table tests are
 * disabled (reported as SKIP) and run in the normal build only.
 */
#ifdef UNDER_ASAN
#define KILLED .disabled = true
#define WORKS .disabled = true
#else
#define KILLED .signal = SIGSYS
#define WORKS .exit_code = ALLOWED_OK
#endif

static inline void
confine_or_exit(enum record_role role, const pid_t *children, size_t n)
{
	if (!sandbox_load_filter(role, children, n))
		_exit(LOAD_FAILED);
}

/*
 * After a stop and continue (job control, a debugger attaching), the
 * kernel resumes an interrupted poll, nanosleep or timed futex wait
 * through restart_syscall: a table without it kills a process for being
 * stopped.  Called with no interrupted call pending, it fails with EINTR.
 */
static inline bool
restart_syscall_returns(void)
{
	errno = 0;
	return syscall(SYS_restart_syscall) == -1 && errno == EINTR;
}

static inline void
try_execve(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };

	execve("/bin/true", argv, envp);
	_exit(0);
}

#endif
