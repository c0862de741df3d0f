/*
 * Confinement of the three Sallyport processes (docs/design.md section 1,
 * invariant 5).  A child, freshly exec'd with its fds already placed by
 * spawn_place_fds() (common/spawn.h), does in this order:
 *
 *   1. sandbox_stdout_to_stderr()   broker and executor, before any library
 *   2. initialise libraries, read every file it needs (policy bytes,
 *      credentials, CA bundle, known_hosts), look up the user to become
 *      (sandbox_user_ids), build its event_base, set signal dispositions
 *      (only the broker's table has rt_sigaction)
 *   3. sandbox_confine()            chroot (root only), drop uid/gid and
 *                                   verify, parent-death signal, not
 *                                   dumpable, no-new-privs, seccomp
 *
 * A child started by spawn_child() already has its parent-death signal
 * and knows its parent is alive, so getppid() at its start is the pid to
 * put in sandbox_spec.parent.
 *
 * The steps of sandbox_confine() always run in that order, and in
 * SANDBOX_REQUIRED mode it stops at the first one that fails, so a caller
 * that gets false exits 71 without having run a single unconfined line of
 * session code.
 */
#ifndef SP_COMMON_SANDBOX_H
#define SP_COMMON_SANDBOX_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A role's filter (enum record_role, common/record.h): the frontend
 * computes and does protocol I/O only; the executor has network,
 * threads and read-only files; the broker supervises and holds the open
 * audit log.
 */
#include "common/record.h"

enum sandbox_mode {
	SANDBOX_REQUIRED,	/* any missing step is a failure (exit 71) */
	SANDBOX_BEST_EFFORT,	/* go on, and report what is missing */
};

struct sandbox_spec {
	enum record_role role;
	enum sandbox_mode mode;
	/*
	 * Used only when the process runs as root.  chroot_dir (borrowed,
	 * NULL for none) must be an empty root-owned directory, e.g. one
	 * made by sandbox_make_empty_dir().  uid/gid is the unprivileged
	 * user to become; it must not be 0.
	 */
	const char *chroot_dir;
	uid_t uid;
	gid_t gid;
	/*
	 * The pid the process expects as its parent, for the parent-death
	 * signal; 0 means no parent-death signal (the broker).
	 */
	pid_t parent;
	/*
	 * Broker only: the pids it may kill(2) once confined (borrowed,
	 * n_children entries, each > 0).
	 */
	const pid_t *children;
	size_t n_children;
};

#define SANDBOX_REPORT_MAX 512

/*
 * What sandbox_confine() could not install, as "step: reason" items
 * joined by "; " (e.g. "seccomp filter: Function not implemented").
 * Empty when n_missing is 0.  Plain storage, owned by the caller.
 */
struct sandbox_report {
	size_t n_missing;
	char text[SANDBOX_REPORT_MAX];
};

/*
 * Runs the confinement steps of spec->role in the fixed order above.
 * Returns true when the process may go on: every step succeeded, or the
 * mode is SANDBOX_BEST_EFFORT (then report lists what is missing).
 * Returns false in SANDBOX_REQUIRED mode at the first failed step, which
 * report names.  Logs nothing: the caller decides how to say it.
 */
bool sandbox_confine(const struct sandbox_spec *spec,
    struct sandbox_report *report);

/* Points fd 1 at whatever fd 2 is, so nothing can write the protocol. */
bool sandbox_stdout_to_stderr(void);

/*
 * Asks for SIGKILL when the parent dies, then checks that the parent is
 * still `parent` (it may have died before the request took effect).
 * The kernel clears this on a uid change, so sandbox_confine() sets it
 * again after dropping privileges.
 */
bool sandbox_parent_death_kill(pid_t parent);

/* No core dumps, no ptrace by the same uid, /proc/PID files root-owned. */
bool sandbox_set_nondumpable(void);

/* prctl(PR_SET_NO_NEW_PRIVS): execve can never again raise privileges. */
bool sandbox_no_new_privs(void);

/*
 * Loads role's seccomp allow-list (common/sandbox_filter.c); the default
 * action kills the whole process with SIGSYS.  Applies to every thread of
 * the process.  children (borrowed, may be NULL when n_children is 0) are
 * the only pids the broker may signal.  Returns false with errno set when
 * the kernel or libseccomp refuses.
 */
bool sandbox_load_filter(enum record_role role, const pid_t *children,
    size_t n_children);

/* How the broker (re)opens its audit log, relative to its directory. */
#define SANDBOX_AUDIT_LOG_FLAGS \
	(O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW)

/*
 * The broker's filter, as sandbox_load_filter(RECORD_ROLE_BROKER, ...)
 * plus, when audit_dir is not -1, openat(2) relative to that directory
 * fd with exactly SANDBOX_AUDIT_LOG_FLAGS and fstatat(2) in it: what
 * following a rotated audit log needs (audit/audit_log.h); the same in
 * state_dir when state_dir is not -1 (state/state_dir.h); no other
 * directory.  With an approval socket (broker/approvals.h, not -1):
 * accept4(2) on approvals_socket alone, getsockopt(2) of SO_PEERCRED and
 * SO_PEERGROUPS, and unlinkat(2) in approvals_dir, for the socket's own
 * removal at the session's end.  With shared_state (the policy's
 * "state", state/pg.h): what reconnecting to PostgreSQL through a unix
 * socket needs (socket, connect, poll; docs/internals/seccomp.md).
 */
bool sandbox_load_broker_filter(const pid_t *children, size_t n_children,
    int audit_dir, int state_dir, int approvals_dir, int approvals_socket,
    bool shared_state);

/*
 * Creates a fresh empty directory under parent (mkdtemp), owned by root
 * and mode 0755, and writes its path into out (size outsize).  Fails if
 * the path does not fit, or if the directory is not what was asked for.
 */
bool sandbox_make_empty_dir(const char *parent, char *out, size_t outsize);

/* chroot(dir) then chdir("/"); refuses a dir that is not empty. */
bool sandbox_chroot(const char *dir);

/*
 * Looks up a user by name (before confinement: it reads the passwd
 * database) for sandbox_spec's uid and gid.  Fails with ENOENT for an
 * unknown user and EINVAL for one whose uid or gid is 0, so a policy's
 * run_as can never name a root account as the place to drop to.
 */
bool sandbox_user_ids(const char *name, uid_t *uid, gid_t *gid);

/*
 * Drops supplementary groups, gid and uid (real, effective and saved) to
 * uid/gid, then verifies that neither root uid nor gid can be regained.
 * uid 0 and gid 0 are refused as targets.
 */
bool sandbox_drop_privileges(uid_t uid, gid_t gid);

#endif
