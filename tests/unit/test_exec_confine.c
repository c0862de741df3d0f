/*
 * The whole start-up chain in a fresh image: spawn_child() places fds and
 * execs tests/unit/sandbox_child, which points stdout at stderr, confines
 * itself with sandbox_confine() and then behaves or misbehaves.  The test
 * looks at it from outside (/proc/PID) and reads its end with
 * spawn_describe_exit(), as the broker will.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sandbox.h"
#include "common/spawn.h"
#include "tests/unit/sandbox_test.h"

#define VIOLATION \
	"killed by SIGSYS (sandbox violation: a forbidden system call)"

/* A confined child under ASan dies in the runtime's own syscalls. */
static void
skip_under_asan(void)
{
#ifdef UNDER_ASAN
	cr_skip_test("seccomp tables are tested in the non-sanitizer build");
#endif
}

/* The helper sits beside this test binary. */
static void
helper_path(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n;

	cr_assert_gt(n = readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
	self[n] = '\0';
	snprintf(out, size, "%s/sandbox_child", dirname(self));
}

struct child {
	pid_t pid;
	int ready;	/* read end: one byte once confined */
	int hold;	/* write end: closing it lets a waiting child exit */
	int out;	/* read end of the child's fd 1 */
	int err;	/* read end of the child's fd 2 */
};

static void
start(struct child *c, const char *role, const char *action,
    const char *chroot_dir)
{
	char path[PATH_MAX + 32];
	char *argv[] = { "sandbox_child", (char *)role, (char *)action,
	    (char *)chroot_dir, NULL };
	int ready[2], hold[2], out[2], err[2];

	helper_path(path, sizeof(path));
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(hold, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(err, O_CLOEXEC), 0);
	{
		struct spawn_fd map[] = { { out[1], 1 }, { err[1], 2 },
		    { ready[1], 3 }, { hold[0], 4 } };

		cr_assert_gt(c->pid = spawn_child(path, argv, map, 4), 0);
	}
	close(ready[1]);
	close(hold[0]);
	close(out[1]);
	close(err[1]);
	c->ready = ready[0];
	c->hold = hold[1];
	c->out = out[0];
	c->err = err[0];
}

/* Waits for the child's end and says it in words. */
static void
finish(struct child *c, char *how, size_t size)
{
	int status;

	close(c->hold);
	cr_assert_eq(waitpid(c->pid, &status, 0), c->pid);
	spawn_describe_exit(status, how, size);
}

static void
read_all(int fd, char *out, size_t size)
{
	size_t used = 0;
	ssize_t n;

	while (used + 1 < size &&
	    (n = read(fd, out + used, size - 1 - used)) > 0)
		used += (size_t)n;
	out[used] = '\0';
}

static void
assert_proc(pid_t pid, const char *file, const char *key, const char *want)
{
	char path[64], line[256], got[256] = "(missing)";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	cr_assert_not_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(got, sizeof(got), "%s", line + strlen(key));
			break;
		}
	fclose(f);
	cr_assert_str_eq(got, want, "%s %s", file, key);
}

/* want: a bitmap of the fds pid must hold, and no others. */
static void
assert_fds(pid_t pid, unsigned long want)
{
	unsigned long got = 0;
	struct dirent *de;
	char path[64];
	DIR *d;
	long fd;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	cr_assert_not_null(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = strtol(de->d_name, NULL, 10);
		cr_assert(fd >= 0 && fd < 64, "unexpected fd %ld", fd);
		got |= 1UL << fd;
	}
	closedir(d);
	cr_assert_eq(got, want, "fds %#lx, want %#lx", got, want);
}

/*
 * as_root: also demand what only root can see or do: the uid the child
 * dropped to, its fds (it is not dumpable, so only root may look) and, for
 * the frontend, the chroot (only root can make the root-owned directory).
 */
static void
check_confined(const char *role, bool as_root)
{
	char parent[] = "/tmp/sp-exec-XXXXXX", dir[128], how[128], c;
	bool with_chroot = as_root && strcmp(role, "frontend") == 0;
	struct child ch;

	if (with_chroot) {
		cr_assert_not_null(mkdtemp(parent));
		cr_assert(sandbox_make_empty_dir(parent, dir, sizeof(dir)));
	}
	start(&ch, role, "wait", with_chroot ? dir : NULL);
	cr_assert_eq(read(ch.ready, &c, 1), 1, "child did not confine");
	assert_proc(ch.pid, "status", "NoNewPrivs:", "\t1");
	assert_proc(ch.pid, "status", "Seccomp:", "\t2");
	if (as_root) {
		assert_proc(ch.pid, "status", "Uid:",
		    "\t65534\t65534\t65534\t65534");
		assert_fds(ch.pid, 0x1f);	/* 0 1 2 3 4 */
	}
	finish(&ch, how, sizeof(how));
	cr_assert_str_eq(how, "exited with status 0");
	if (with_chroot) {
		rmdir(dir);
		rmdir(parent);
	}
}

/* The root-only checks are tests of their own, so a non-root run counts
 * them as skipped instead of passing without them. */
static void
skip_unless_root(void)
{
	skip_under_asan();
	if (geteuid() != 0)
		cr_skip_test("needs root: the uid drop, the fds and the chroot");
}

Test(exec_confine, frontend_image_is_confined, .init = skip_under_asan)
{
	check_confined("frontend", false);
}

Test(exec_confine, executor_image_is_confined, .init = skip_under_asan)
{
	check_confined("executor", false);
}

Test(exec_confine, broker_image_is_confined, .init = skip_under_asan)
{
	check_confined("broker", false);
}

Test(exec_confine, frontend_image_drops_to_nobody_in_a_chroot,
    .init = skip_unless_root)
{
	check_confined("frontend", true);
}

Test(exec_confine, executor_image_drops_to_nobody,
    .init = skip_unless_root)
{
	check_confined("executor", true);
}

Test(exec_confine, broker_image_drops_to_nobody, .init = skip_unless_root)
{
	check_confined("broker", true);
}

static void
check_violation(const char *role, const char *action)
{
	char how[128], err[512], c;
	struct child ch;

	start(&ch, role, action, NULL);
	cr_assert_eq(read(ch.ready, &c, 1), 1, "child did not confine");
	finish(&ch, how, sizeof(how));
	read_all(ch.err, err, sizeof(err));
	cr_assert_str_eq(how, VIOLATION, "%s %s: %s (stderr: %s)", role,
	    action, how, err);
}

Test(exec_confine, frontend_violations_kill, .init = skip_under_asan)
{
	check_violation("frontend", "open");
	check_violation("frontend", "socket");
	check_violation("frontend", "execve");
}

Test(exec_confine, executor_violations_kill, .init = skip_under_asan)
{
	check_violation("executor", "execve");
	check_violation("executor", "openw");
}

Test(exec_confine, broker_violations_kill, .init = skip_under_asan)
{
	check_violation("broker", "execve");
	check_violation("broker", "socket");
	check_violation("broker", "open");
}

/* Invariant 1: a stray printf of the executor or broker reaches stderr. */
static void
check_stdout_goes_to_stderr(const char *role)
{
	char how[128], out[256], err[256], c;
	struct child ch;

	start(&ch, role, "stdout", NULL);
	cr_assert_eq(read(ch.ready, &c, 1), 1, "child did not confine");
	finish(&ch, how, sizeof(how));
	cr_assert_str_eq(how, "exited with status 0");
	read_all(ch.out, out, sizeof(out));
	read_all(ch.err, err, sizeof(err));
	cr_assert_str_eq(out, "", "%s wrote to the protocol stream", role);
	cr_assert_str_eq(err, "noise on stdout \"$(id)\"\n");
}

Test(exec_confine, executor_stdout_lands_on_stderr, .init = skip_under_asan)
{
	check_stdout_goes_to_stderr("executor");
}

Test(exec_confine, broker_stdout_lands_on_stderr, .init = skip_under_asan)
{
	check_stdout_goes_to_stderr("broker");
}

/* Failing closed: a sandbox that cannot be had ends the child with 71. */
Test(exec_confine, unsafe_chroot_refuses_to_start)
{
	char parent[] = "/tmp/sp-exec-XXXXXX", how[128], err[512], c;
	struct child ch;

	if (geteuid() != 0)
		cr_skip_test("chroot happens only as root");
	cr_assert_not_null(mkdtemp(parent));
	cr_assert_eq(chmod(parent, 0777), 0);
	start(&ch, "frontend", "wait", parent);
	cr_assert_eq(read(ch.ready, &c, 1), 0, "child confined itself");
	finish(&ch, how, sizeof(how));
	read_all(ch.err, err, sizeof(err));
	cr_assert_str_eq(how, "exited with status 71");
	cr_assert_not_null(strstr(err, "sandbox: chroot: Operation not "
	    "permitted"), "stderr: %s", err);
	rmdir(parent);
}
