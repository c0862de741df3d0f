/*
 * When the writer syncs.  This binary defines fdatasync() itself, so the
 * writer compiled into it calls this counting version (which still syncs
 * through the raw syscall unless told to fail).
 */
#include "config.h"

#include <sys/syscall.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "audit/audit_log.h"
#include "common/clock.h"
#include "tests/unit/audit_fixture.h"

static int sync_calls;
static bool sync_fails;
static char dir[64], path[128];

int
fdatasync(int fd)
{
	sync_calls++;
	if (sync_fails) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fdatasync, fd);
}

static void
setup(void)
{
	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
}

static void
teardown(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(audit_sync, .init = setup, .fini = teardown);

Test(audit_sync, durable_append_is_synced_before_it_returns)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "s1");

	cr_assert(audit_log_append(log, "intent", NULL, true));
	cr_assert_eq(sync_calls, 1);
	cr_assert(audit_log_append(log, "execution", NULL, true));
	cr_assert_eq(sync_calls, 2);
	cr_assert(audit_log_close(log));
	cr_assert_eq(sync_calls, 2, "close synced with nothing pending");
}

Test(audit_sync, grouped_appends_sync_once_the_interval_has_passed)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "s1");
	uint64_t t0 = clock_monotonic_ms();
	int i;

	for (i = 0; i < 3; i++)
		cr_assert(audit_log_append(log, "execution", NULL, false));
	cr_assert_eq(sync_calls, 0);
	cr_assert(audit_log_tick(log, t0 + AUDIT_LOG_SYNC_MS / 2));
	cr_assert_eq(sync_calls, 0);
	cr_assert(audit_log_tick(log, t0 + AUDIT_LOG_SYNC_MS + 1));
	cr_assert_eq(sync_calls, 1);
	cr_assert(audit_log_tick(log, t0 + 5 * AUDIT_LOG_SYNC_MS));
	cr_assert_eq(sync_calls, 1, "synced with nothing pending");
	cr_assert(audit_log_append(log, "execution", NULL, false));
	cr_assert(audit_log_close(log));
	cr_assert_eq(sync_calls, 2, "close left a record unsynced");
}

Test(audit_sync, a_late_grouped_append_syncs_itself)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "s1");

	usleep((AUDIT_LOG_SYNC_MS + 20) * 1000);
	cr_assert(audit_log_append(log, "execution", NULL, false));
	cr_assert_eq(sync_calls, 1);
	cr_assert(audit_log_close(log));
	cr_assert_eq(sync_calls, 1);
}

/* An intent that cannot be made durable must be reported as not written,
 * so the caller does not run the action. */
Test(audit_sync, failed_sync_of_a_durable_record_is_a_failed_append)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "s1");

	sync_fails = true;
	cr_assert_not(audit_log_append(log, "intent", NULL, true));
	cr_assert_not(audit_log_close(log));
}
