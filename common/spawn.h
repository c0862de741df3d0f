/*
 * Starting a child with exactly the fds it is meant to have (docs/design.md
 * section 1, invariants 5 and 7): the listed fds at fixed numbers, fds 0-2
 * as they are, every other fd closed; then a fresh image by exec.
 */
#ifndef SP_COMMON_SPAWN_H
#define SP_COMMON_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Most fds one child can be given. */
#define SPAWN_MAX_FDS 16

/* Place the open fd `from` at number `to` in the child. */
struct spawn_fd {
	int from;
	int to;
};

/*
 * Moves each map[i].from to map[i].to (sources may overlap targets in any
 * order; nothing is clobbered before it is copied), clears close-on-exec
 * on the targets, and closes every other fd >= 3.  Fds 0, 1 and 2 stay
 * open unless a target replaces them.  Refuses (EINVAL) more than
 * SPAWN_MAX_FDS entries, negative fds and duplicate targets, before
 * touching any fd.  Uses close_range(2), or /proc/self/fd where that is
 * missing, so it runs only before confinement.
 */
bool spawn_place_fds(const struct spawn_fd *map, size_t n);

/* Marks every fd >= lowfd close-on-exec. */
bool spawn_cloexec_from(int lowfd);

/*
 * Forks; the child asks for SIGKILL on the caller's death (checking the
 * caller is still its parent), places its fds with spawn_place_fds() and
 * execs path with argv (borrowed, NULL-terminated) and the caller's
 * environment.  A child that cannot do so says why on stderr and exits
 * 127.  Returns the child's pid, or -1 if fork fails.
 */
pid_t spawn_child(const char *path, char *const argv[],
    const struct spawn_fd *map, size_t n);

/*
 * spawn_child(), the image being the file exe is open on (an O_PATH fd
 * is enough; kept, borrowed) rather than a path looked up at exec: what
 * the caller opened is what runs, even if the path has since been
 * replaced (a package upgrade).  exe stays open across the fd placement
 * and is closed by the exec.  name is the file's name for diagnostics.
 * Returns -1 after logging if exe is negative or fork fails.
 */
pid_t spawn_child_exe(int exe, const char *name, char *const argv[],
    const struct spawn_fd *map, size_t n);

/*
 * Says in words how a child ended, from a waitpid() status, into out
 * (always NUL-terminated): "exited with status 71", "killed by SIGKILL",
 * or for SIGSYS "killed by SIGSYS (sandbox violation: a forbidden system
 * call)", so the broker can say which role died and why.
 */
void spawn_describe_exit(int status, char *out, size_t size);

#endif
