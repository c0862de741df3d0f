/*
 * Fd placement for children.  Sources are first copied above every number
 * in play, so a target may be another entry's source without losing it;
 * then the copies are moved down onto their targets and everything else
 * is closed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sandbox.h"
#include "common/spawn.h"

#define SPAWN_EXEC_FAILED 127

static bool
fd_in(int fd, const int *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == fd)
			return true;
	return false;
}

/*
 * The slow way, when close_range(2) is missing: each fd >= lowfd that is
 * not kept is closed, or only marked close-on-exec.
 */
static bool
fd_walk_proc(int lowfd, const int *keep, size_t n_keep, bool cloexec_only)
{
	struct dirent *de;
	DIR *d;
	long fd;
	char *end;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return false;
	while ((de = readdir(d)) != NULL) {
		fd = strtol(de->d_name, &end, 10);
		if (*end != '\0' || end == de->d_name || fd < lowfd ||
		    fd > INT_MAX || fd == dirfd(d) ||
		    fd_in((int)fd, keep, n_keep))
			continue;
		if (cloexec_only)
			(void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		else
			(void)close((int)fd);
	}
	closedir(d);
	return true;
}

bool
spawn_cloexec_from(int lowfd)
{
	if (lowfd < 0) {
		errno = EINVAL;
		return false;
	}
	if (close_range((unsigned int)lowfd, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return true;
	if (errno != ENOSYS && errno != EINVAL)
		return false;
	return fd_walk_proc(lowfd, NULL, 0, true);
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Closes every fd >= 3 but the sorted keep[]: the gaps between them. */
static bool
close_all_but(const int *keep, size_t n_keep)
{
	unsigned int lo = 3;
	size_t i;

	for (i = 0; i < n_keep; i++) {
		if (keep[i] < 3)
			continue;
		if ((unsigned int)keep[i] > lo &&
		    close_range(lo, (unsigned int)keep[i] - 1, 0) == -1)
			return fd_walk_proc(3, keep, n_keep, false);
		lo = (unsigned int)keep[i] + 1;
	}
	if (close_range(lo, ~0U, 0) == -1)
		return fd_walk_proc(3, keep, n_keep, false);
	return true;
}

/* Targets sorted, distinct and non-negative; sources non-negative. */
static bool
map_is_valid(const struct spawn_fd *map, size_t n, int *targets,
    int *above)
{
	size_t i;

	if (n > SPAWN_MAX_FDS)
		return false;
	*above = 2;
	for (i = 0; i < n; i++) {
		if (map[i].from < 0 || map[i].to < 0)
			return false;
		targets[i] = map[i].to;
		if (map[i].from > *above)
			*above = map[i].from;
		if (map[i].to > *above)
			*above = map[i].to;
	}
	qsort(targets, n, sizeof(targets[0]), cmp_int);
	for (i = 1; i < n; i++)
		if (targets[i] == targets[i - 1])
			return false;
	return true;
}

/*
 * spawn_place_fds(), and when exe is not NULL, *exe is kept open too:
 * moved above every fd in play, close-on-exec, for fexecve().
 */
static bool
place_fds_keeping(const struct spawn_fd *map, size_t n, int *exe)
{
	int targets[SPAWN_MAX_FDS + 1], copies[SPAWN_MAX_FDS], above;
	size_t i;

	if (!map_is_valid(map, n, targets, &above)) {
		errno = EINVAL;
		return false;
	}
	if (exe != NULL && *exe > above)
		above = *exe;
	/* Copies above every source and target cannot collide with either. */
	for (i = 0; i < n; i++)
		if ((copies[i] = fcntl(map[i].from, F_DUPFD_CLOEXEC,
		    above + 1)) == -1)
			return false;
	/* Above every target, so targets[] stays sorted with it. */
	if (exe != NULL) {
		if ((*exe = fcntl(*exe, F_DUPFD_CLOEXEC, above + 1)) == -1)
			return false;
		targets[n] = *exe;
	}
	/* dup2 clears close-on-exec on the target, as a passed fd needs. */
	for (i = 0; i < n; i++)
		if (dup2(copies[i], map[i].to) == -1)
			return false;
	return close_all_but(targets, n + (exe != NULL));
}

bool
spawn_place_fds(const struct spawn_fd *map, size_t n)
{
	return place_fds_keeping(map, n, NULL);
}

/*
 * Between fork and exec: nothing here may return.  The image is the file
 * exe names (fexecve) when exe >= 0, else path.
 */
static void
spawn_exec_child(pid_t parent, const char *path, int exe,
    char *const argv[], const struct spawn_fd *map, size_t n)
{
	if (!sandbox_parent_death_kill(parent)) {
		log_error("parent-death signal: %s", strerror(errno));
		_exit(SPAWN_EXEC_FAILED);
	}
	if (!place_fds_keeping(map, n, exe >= 0 ? &exe : NULL)) {
		log_error("placing fds: %s", strerror(errno));
		_exit(SPAWN_EXEC_FAILED);
	}
	if (exe >= 0)
		fexecve(exe, argv, environ);
	else
		execv(path, argv);
	log_error("exec %s: %s", path, strerror(errno));
	_exit(SPAWN_EXEC_FAILED);
}

static pid_t
spawn_fork(const char *path, int exe, char *const argv[],
    const struct spawn_fd *map, size_t n)
{
	pid_t parent = getpid(), pid;

	if ((pid = fork()) == -1) {
		log_error("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		spawn_exec_child(parent, path, exe, argv, map, n);
	return pid;
}

pid_t
spawn_child(const char *path, char *const argv[],
    const struct spawn_fd *map, size_t n)
{
	return spawn_fork(path, -1, argv, map, n);
}

pid_t
spawn_child_exe(int exe, const char *name, char *const argv[],
    const struct spawn_fd *map, size_t n)
{
	if (exe < 0) {
		errno = EBADF;
		log_error("exec %s: %s", name, strerror(errno));
		return -1;
	}
	return spawn_fork(name, exe, argv, map, n);
}

void
spawn_describe_exit(int status, char *out, size_t size)
{
	const char *abbrev;
	int sig;

	if (size == 0)
		return;
	if (WIFEXITED(status)) {
		snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
		return;
	}
	if (!WIFSIGNALED(status)) {
		snprintf(out, size, "stopped or continued (status %#x)", status);
		return;
	}
	sig = WTERMSIG(status);
	/* sigabbrev_np needs no locale data, unlike strsignal. */
	if ((abbrev = sigabbrev_np(sig)) == NULL)
		snprintf(out, size, "killed by signal %d", sig);
	else if (sig == SIGSYS)
		snprintf(out, size, "killed by SIGSYS (sandbox violation: "
		    "a forbidden system call)");
	else
		snprintf(out, size, "killed by SIG%s%s", abbrev,
		    WCOREDUMP(status) ? " (core dumped)" : "");
}
