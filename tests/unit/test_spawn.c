/*
 * Fd placement and spawning.  Placement closes every other fd, which would
 * cut the Criterion worker off from its runner, so it runs in a forked
 * child that the test inspects from outside through /proc/PID/fd.  Each
 * placement test runs twice: with close_range(2), and with close_range
 * made to fail ENOSYS so the /proc/self/fd walk is used.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sandbox.h"
#include "common/spawn.h"
#include "tests/unit/sandbox_test.h"

#define PLACE_FAILED 3

static void
break_close_range(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
	    SCMP_SYS(close_range), 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
}

/* The fds of pid, sorted, as a string like "0 1 2 5". */
static void
fd_list(pid_t pid, char *out, size_t size)
{
	int fds[256], n = 0, i, j, t;
	char path[64];
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	cr_assert_not_null(d = opendir(path));
	while ((de = readdir(d)) != NULL && n < 256)
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d))
			fds[n++] = atoi(de->d_name);
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	out[0] = '\0';
	for (i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%d",
		    i ? " " : "", fds[i]);
}

/* "pipe:[inode]" of our own fd, to compare with the child's links. */
static void
pipe_name(int fd, char *out, size_t size)
{
	struct stat st;

	cr_assert_eq(fstat(fd, &st), 0);
	snprintf(out, size, "pipe:[%lu]", (unsigned long)st.st_ino);
}

static void
assert_link(pid_t pid, int fd, const char *want)
{
	char path[64], got[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	cr_assert_gt(n = readlink(path, got, sizeof(got) - 1), 0);
	got[n] = '\0';
	cr_assert_str_eq(got, want, "fd %d is %s, want %s", fd, got, want);
}

/* Passed fds must survive exec: close-on-exec is off on each target. */
static void
assert_inheritable(pid_t pid, int fd)
{
	char path[64], line[128];
	unsigned long flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	cr_assert_not_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "flags: %lo", &flags) == 1)
			break;
	fclose(f);
	cr_assert_eq(flags & O_CLOEXEC, 0, "fd %d is close-on-exec", fd);
}

static void
assert_exits(pid_t pid, int code)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died of signal %d",
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), code);
}

/*
 * In the child: pipe read ends a and b sit at 5 and 7 and swap places (a
 * target is another entry's source), the ready pipe goes to 3, c to 12;
 * whatever else the worker had open must be gone.
 */
static void
check_placement(bool fallback)
{
	int a[2], b[2], c[2], ready[2];
	char name_a[64], name_b[64], name_c[64], name_r[64], fds[256], y;
	pid_t pid;

	cr_assert_eq(pipe(a), 0);
	cr_assert_eq(pipe(b), 0);
	cr_assert_eq(pipe(c), 0);
	cr_assert_eq(pipe(ready), 0);
	pipe_name(a[0], name_a, sizeof(name_a));
	pipe_name(b[0], name_b, sizeof(name_b));
	pipe_name(c[0], name_c, sizeof(name_c));
	pipe_name(ready[1], name_r, sizeof(name_r));
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		struct spawn_fd map[] = {
			{ 5, 7 }, { 7, 5 }, { 109, 3 }, { c[0], 12 },
		};

		if (dup2(a[0], 105) != 105 || dup2(b[0], 107) != 107 ||
		    dup2(ready[1], 109) != 109 || dup2(105, 5) != 5 ||
		    dup2(107, 7) != 7)
			_exit(PLACE_FAILED);
		if (fallback)
			break_close_range();
		if (!spawn_place_fds(map, 4))
			_exit(PLACE_FAILED);
		(void)!write(3, "y", 1);
		(void)!read(7, &y, 1);	/* until the parent closes a[1] */
		_exit(0);
	}
	close(ready[1]);
	cr_assert_eq(read(ready[0], &y, 1), 1, "child could not place fds");
	fd_list(pid, fds, sizeof(fds));
	cr_assert_str_eq(fds, "0 1 2 3 5 7 12");
	assert_link(pid, 7, name_a);
	assert_link(pid, 5, name_b);
	assert_link(pid, 12, name_c);
	assert_link(pid, 3, name_r);
	assert_inheritable(pid, 3);
	assert_inheritable(pid, 5);
	assert_inheritable(pid, 7);
	assert_inheritable(pid, 12);
	close(a[1]);
	assert_exits(pid, 0);
}

Test(spawn, places_swaps_and_closes_the_rest)
{
	check_placement(false);
}

Test(spawn, places_without_close_range)
{
	check_placement(true);
}

static int
fd_count(void)
{
	char list[1024];
	int n = 1;
	char *p;

	fd_list(getpid(), list, sizeof(list));
	for (p = list; *p != '\0'; p++)
		n += *p == ' ';
	return n;
}

Test(spawn, bad_maps_are_refused_before_any_fd_moves)
{
	struct spawn_fd dup_target[] = { { 0, 60 }, { 1, 61 }, { 2, 60 } };
	struct spawn_fd negative[] = { { 0, 60 }, { -1, 61 } };
	struct spawn_fd too_many[SPAWN_MAX_FDS + 1];
	int before = fd_count(), i;

	cr_assert_not(spawn_place_fds(dup_target, 3));
	cr_assert_eq(errno, EINVAL);
	cr_assert_not(spawn_place_fds(negative, 2));
	cr_assert_eq(errno, EINVAL);
	for (i = 0; i <= SPAWN_MAX_FDS; i++) {
		too_many[i].from = 2;
		too_many[i].to = 60 + i;
	}
	cr_assert_not(spawn_place_fds(too_many, SPAWN_MAX_FDS + 1));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(fcntl(60, F_GETFD), -1, "fd 60 was opened");
	cr_assert_eq(fd_count(), before);
}

static void
check_cloexec(bool fallback)
{
	int low = open("/dev/null", O_RDONLY), std[3], i;

	cr_assert_geq(low, 0);
	cr_assert_eq(dup2(low, 100), 100);
	cr_assert_eq(dup2(low, 200), 200);
	cr_assert_eq(dup2(low, 201), 201);
	for (i = 0; i < 3; i++)
		std[i] = fcntl(i, F_GETFD);
	if (fallback)
		break_close_range();
	cr_assert(spawn_cloexec_from(150));
	cr_assert_eq(fcntl(100, F_GETFD) & FD_CLOEXEC, 0);
	cr_assert_eq(fcntl(200, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	cr_assert_eq(fcntl(201, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	cr_assert(spawn_cloexec_from(3));
	cr_assert_eq(fcntl(low, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	cr_assert_eq(fcntl(100, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	for (i = 0; i < 3; i++)
		cr_assert_eq(fcntl(i, F_GETFD), std[i], "fd %d changed", i);
	cr_assert_not(spawn_cloexec_from(-1));
	cr_assert_eq(errno, EINVAL);
}

Test(spawn, cloexec_from_marks_every_fd_above)
{
	check_cloexec(false);
}

Test(spawn, cloexec_from_without_close_range)
{
	check_cloexec(true);
}

/* Waits (at most 2 s) until pid's image is the program named comm. */
static void
wait_for_exec(pid_t pid, const char *comm)
{
	char path[64], got[32] = "";
	int tries;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (tries = 0; tries < 200; tries++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(got, sizeof(got), f) == NULL)
				got[0] = '\0';
			fclose(f);
		}
		got[strcspn(got, "\n")] = '\0';
		if (strcmp(got, comm) == 0)
			return;
		usleep(10000);
	}
	cr_assert_fail("pid %d never became %s (is %s)", (int)pid, comm, got);
}

/*
 * A real exec: the new image holds 0-2 and the two passed fds at their
 * numbers and nothing else, though the parent had an inheritable fd
 * open.  Looked at from outside once the child is `sleep`.
 */
Test(spawn, exec_image_holds_only_passed_fds)
{
	char *argv[] = { "sleep", "5", NULL };
	char fds[256], name_a[64], name_b[64];
	int a[2], b[2], leaked, status, tries;
	pid_t pid;

	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(b, O_CLOEXEC), 0);
	pipe_name(a[1], name_a, sizeof(name_a));
	pipe_name(b[0], name_b, sizeof(name_b));
	cr_assert_geq(leaked = open("/dev/null", O_RDONLY), 0);
	{
		struct spawn_fd map[] = { { b[0], 3 }, { a[1], 4 } };

		cr_assert_gt(pid = spawn_child("/bin/sleep", argv, map, 2), 0);
	}
	wait_for_exec(pid, "sleep");
	/*
	 * sleep's own start-up opens files for a moment (locale); a leaked
	 * fd would stay, so wait until the list settles, within 2 s.
	 */
	for (tries = 0; tries < 200; tries++) {
		fd_list(pid, fds, sizeof(fds));
		if (strcmp(fds, "0 1 2 3 4") == 0)
			break;
		usleep(10000);
	}
	cr_assert_str_eq(fds, "0 1 2 3 4");
	assert_link(pid, 3, name_b);
	assert_link(pid, 4, name_a);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	close(leaked);
}

static void
copy_program(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	cr_assert_geq(in = open(from, O_RDONLY | O_CLOEXEC), 0);
	cr_assert_geq(out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0755), 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	cr_assert_eq(n, 0);
	close(in);
	cr_assert_eq(close(out), 0);
}

/* Until pid's image is the file named want (which must happen soon). */
static void
wait_for_exe(pid_t pid, const char *want, char *fds, size_t size)
{
	char path[64], got[PATH_MAX];
	ssize_t n = 0;
	int tries;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (tries = 0; tries < 200; tries++) {
		if ((n = readlink(path, got, sizeof(got) - 1)) < 0)
			n = 0;
		got[n] = '\0';
		fd_list(pid, fds, size);
		if (strcmp(got, want) == 0 && strcmp(fds, "0 1 2 3 4") == 0)
			return;
		usleep(10000);
	}
	cr_assert_str_eq(got, want);
}

/*
 * fexecve from an O_PATH fd (broker/children.h): the child runs the file
 * that was opened, though its name has since been given to another file
 * (as a package upgrade renames the new version over the old), and it
 * holds the passed fds alone, not the one it was started from.
 */
Test(spawn, exec_by_fd_runs_the_file_opened)
{
	char dir[] = "/tmp/sp-spawn-XXXXXX", prog[64], other[64], want[96];
	char fds[256];
	char *argv[] = { "sleep", "5", NULL };
	int a[2], exe, status;
	pid_t pid;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/sp-\xc3\xa9 $(x)", dir);
	snprintf(other, sizeof(other), "%s/new", dir);
	snprintf(want, sizeof(want), "%s (deleted)", prog);
	copy_program("/bin/sleep", prog);
	copy_program("/bin/true", other);
	cr_assert_geq(exe = open(prog, O_PATH | O_CLOEXEC), 0);
	cr_assert_eq(rename(other, prog), 0);
	cr_assert_eq(pipe2(a, O_CLOEXEC), 0);
	{
		struct spawn_fd map[] = { { a[0], 3 }, { a[1], 4 } };

		cr_assert_gt(pid = spawn_child_exe(exe, prog, argv, map, 2), 0);
		cr_assert_eq(spawn_child_exe(-1, prog, argv, map, 2), -1);
	}
	wait_for_exe(pid, want, fds, sizeof(fds));
	cr_assert_str_eq(fds, "0 1 2 3 4");
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(exe);
	cr_assert_eq(unlink(prog), 0);
	cr_assert_eq(rmdir(dir), 0);
}

Test(spawn, failed_exec_exits_127)
{
	char *argv[] = { "no such \"$(prog)\"", NULL };
	pid_t pid;

	cr_assert_gt(pid = spawn_child("/nonexistent/sp-\xc3\xa9", argv,
	    NULL, 0), 0);
	assert_exits(pid, 127);
}

/*
 * The spawned child dies with its parent: A spawns a shell that says it
 * runs, then becomes a long sleep holding the write end of `alive`; A
 * exits; the pipe must close well before the sleep would have ended.
 */
Test(spawn, child_dies_with_its_parent, .timeout = 10)
{
	char *argv[] = { "sh", "-c", "printf r >&4; exec 4>&-; exec sleep 5",
	    NULL };
	struct pollfd pfd;
	int alive[2], ready[2];
	pid_t a;
	char c;

	cr_assert_eq(pipe2(alive, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_geq(a = fork(), 0);
	if (a == 0) {
		struct spawn_fd map[] = { { alive[1], 3 }, { ready[1], 4 } };

		if (spawn_child("/bin/sh", argv, map, 2) <= 0)
			_exit(1);
		close(ready[1]);
		_exit(read(ready[0], &c, 1) == 1 ? 0 : 2);
	}
	close(alive[1]);
	close(ready[1]);
	assert_exits(a, 0);
	pfd.fd = alive[0];
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 3000), 1, "spawned child outlived parent");
	cr_assert_eq(read(alive[0], &c, 1), 0);
}

static void
describe_child(void (*body)(void), char *out, size_t size)
{
	int status;
	pid_t pid;

	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		body();
		_exit(99);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	spawn_describe_exit(status, out, size);
}

static void
exit_71(void)
{
	_exit(71);
}

static void
die_by_kill(void)
{
	raise(SIGKILL);
}

/* A real violation: the frontend table, then socket(). */
static void
violate_sandbox(void)
{
	if (sandbox_load_filter(RECORD_ROLE_FRONTEND, NULL, 0))
		(void)socket(AF_INET, SOCK_STREAM, 0);
}

Test(spawn, exit_is_described_in_words)
{
	char out[128];

	describe_child(exit_71, out, sizeof(out));
	cr_assert_str_eq(out, "exited with status 71");
	describe_child(die_by_kill, out, sizeof(out));
	cr_assert_str_eq(out, "killed by SIGKILL");
	describe_child(violate_sandbox, out, sizeof(out));
#ifndef UNDER_ASAN
	cr_assert_str_eq(out,
	    "killed by SIGSYS (sandbox violation: a forbidden system call)");
#endif
	spawn_describe_exit(0x7f | (SIGSTOP << 8), out, 8);
	cr_assert_eq(strlen(out), 7, "cut to the buffer");
}
