/*
 * The seccomp allow-lists, one table per role.  Each table is the whole
 * truth for its role: a syscall not listed kills the process (SIGSYS,
 * SCMP_ACT_KILL_PROCESS).  A rule with an argument condition allows only
 * calls that match it; several rules for one syscall are alternatives.
 *
 * Rules that hold for every role:
 *  - no execve/execveat, fork, ptrace, mount, chroot, setns, unshare,
 *    kexec, bpf, perf_event_open, module loading, uid changes: unlisted.
 *  - no memory is ever writable and executable, nor made executable
 *    after it was writable: mprotect never adds PROT_EXEC.  Only the
 *    executor may mmap executable memory, never writable too (two rules:
 *    no PROT_EXEC, or no PROT_WRITE), for NSS modules glibc's resolver
 *    may load.
 *  - fcntl only reads and sets fd/file status flags (libevent's
 *    non-blocking setup; F_DUPFD is not listed).
 *  - ioctl only FIONREAD (libevent's evbuffer_read asks how much to read).
 *  - fstat of an open fd, which glibc makes newfstatat(fd, "",
 *    AT_EMPTY_PATH) (stdio asks it on first use of a stream).  The path
 *    pointer cannot be inspected, so with that flag a caller could still
 *    name a path: it learns metadata, never contents.
 *  - tgkill only to this process, so abort() still ends in SIGABRT; the
 *    broker may kill(2) its children's pids and no other (not 0, not -1).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/sandbox.h"

#define FILTER_MAX_ARGS 2

/*
 * Some comparisons name a pid only known at load time: its own (tgkill)
 * or a child's (the broker's kill).  The table holds the rule once; a
 * PID_EACH_CHILD rule is added once per child, with the pid as args[0].
 */
enum filter_pid {
	PID_NONE,
	PID_SELF,
	PID_EACH_CHILD,
	FD_AUDIT_DIR,		/* args[0] is one of the broker's directory
				 * fds: the audit log's, state_dir */
	FD_APPROVALS_DIR,	/* args[0] is state_dir/approvals' fd */
	FD_APPROVALS_SOCKET,	/* args[0] is the approval socket */
	IF_SHARED_STATE,	/* added only with PostgreSQL (state/pg.h) */
	UNLESS_SHARED_STATE,	/* added only without it */
};

struct filter_rule {
	int nr;			/* SCMP_SYS(name) */
	uint32_t action;	/* SCMP_ACT_ALLOW or SCMP_ACT_ERRNO(e) */
	enum filter_pid pid_arg0;
	unsigned int n_args;
	struct scmp_arg_cmp args[FILTER_MAX_ARGS];
};

/* Plain initializers (no compound literals) so the tables stay const. */
#define CMP(n, op, a, b) { (n), (op), (a), (b) }
#define ALLOW(name) \
	{ SCMP_SYS(name), SCMP_ACT_ALLOW, PID_NONE, 0, { { 0 } } }
#define ALLOW_IF(name, n, op, a, b) \
	{ SCMP_SYS(name), SCMP_ACT_ALLOW, PID_NONE, 1, { CMP(n, op, a, b) } }
#define ALLOW_EQ(name, n, v) ALLOW_IF(name, n, SCMP_CMP_EQ, (v), 0)
#define ALLOW_MASK(name, n, mask, v) \
	ALLOW_IF(name, n, SCMP_CMP_MASKED_EQ, (mask), (v))
/* Refused with an errno a library survives (a probe), not killed. */
#define REFUSE(name, e) \
	{ SCMP_SYS(name), SCMP_ACT_ERRNO(e), PID_NONE, 0, { { 0 } } }
#define REFUSE_EQ(name, n, v, e) \
	{ SCMP_SYS(name), SCMP_ACT_ERRNO(e), PID_NONE, 1, \
	  { CMP(n, SCMP_CMP_EQ, (v), 0) } }

/* Argument shapes the tables share (see the rules at the top). */
#define NO_EXEC(name) ALLOW_MASK(name, 2, PROT_EXEC, 0)
#define NO_WRITE(name) ALLOW_MASK(name, 2, PROT_WRITE, 0)
#define FSTAT_FD ALLOW_MASK(newfstatat, 3, AT_EMPTY_PATH, AT_EMPTY_PATH)
#define OPEN_READ_ONLY \
	ALLOW_MASK(openat, 2, O_ACCMODE | O_CREAT | O_TRUNC | O_TMPFILE, \
	    O_RDONLY)
/* Signals only to this process (tgkill) or to one of its children (kill). */
#define PID_RULE(name, which) \
	{ SCMP_SYS(name), SCMP_ACT_ALLOW, (which), 1, \
	  { CMP(0, SCMP_CMP_EQ, 0, 0) } }
#define TGKILL_SELF PID_RULE(tgkill, PID_SELF)
#define KILL_CHILD PID_RULE(kill, PID_EACH_CHILD)
/*
 * Signal return and the kernel's resumption of a call a stop and continue
 * interrupted (a timed poll, sleep or futex wait goes on through
 * restart_syscall, which acts for the call already allowed): without it a
 * process dies for being stopped by job control or a debugger.
 */
#define SIGNAL_RETURN ALLOW(rt_sigreturn), ALLOW(restart_syscall)

/*
 * Frontend: its event loop and protocol I/O on inherited fds.  No open,
 * no socket, no connect, no exec, no new processes or threads.
 */
static const struct filter_rule frontend_rules[] = {
	ALLOW(read), ALLOW(write), ALLOW(readv), ALLOW(writev),
	ALLOW(recvmsg), ALLOW(sendmsg), ALLOW(recvfrom), ALLOW(sendto),
	ALLOW(close),
	ALLOW(epoll_wait), ALLOW(epoll_pwait), ALLOW(epoll_ctl),
	ALLOW(brk), NO_EXEC(mmap), NO_EXEC(mprotect),
	ALLOW(munmap), ALLOW(mremap), ALLOW(madvise),
	ALLOW(clock_gettime), ALLOW(gettimeofday), ALLOW(getrandom),
	ALLOW(futex), ALLOW(getpid), ALLOW(gettid),
	SIGNAL_RETURN, ALLOW(rt_sigprocmask), TGKILL_SELF,
	ALLOW(exit), ALLOW(exit_group),
	ALLOW_EQ(fcntl, 1, F_GETFL), ALLOW_EQ(fcntl, 1, F_SETFL),
	ALLOW_EQ(fcntl, 1, F_GETFD), ALLOW_EQ(fcntl, 1, F_SETFD),
	ALLOW_EQ(ioctl, 1, FIONREAD),
	ALLOW(fstat), FSTAT_FD,
};

/*
 * Executor: the frontend's set plus the network and threads.  Sockets
 * only for IP (AF_UNIX and AF_NETLINK are refused with EACCES so glibc's
 * nscd and interface probes during getaddrinfo fail softly); a local
 * socketpair, which reaches nothing outside, for libcurl's wakeup and
 * resolver notifications.  Threads, for libcurl's threaded resolver, are
 * allowed and nothing else: clone must carry CLONE_THREAD, and clone3
 * (whose flags sit behind a pointer the filter cannot read) answers
 * ENOSYS so glibc falls back to clone.  Files open read-only (resolver
 * configuration); none can be created or written.
 */
static const struct filter_rule executor_rules[] = {
	ALLOW(read), ALLOW(write), ALLOW(readv), ALLOW(writev),
	ALLOW(pread64), ALLOW(lseek),
	ALLOW(recvmsg), ALLOW(sendmsg), ALLOW(recvfrom), ALLOW(sendto),
	ALLOW(sendmmsg), ALLOW(close), ALLOW(shutdown),
	ALLOW_EQ(socket, 0, AF_INET), ALLOW_EQ(socket, 0, AF_INET6),
	REFUSE_EQ(socket, 0, AF_UNIX, EACCES),
	REFUSE_EQ(socket, 0, AF_NETLINK, EACCES),
	ALLOW_EQ(socketpair, 0, AF_UNIX),
	ALLOW(connect), ALLOW(getsockopt), ALLOW(setsockopt),
	ALLOW(getsockname), ALLOW(getpeername),
	ALLOW(poll), ALLOW(ppoll),
	ALLOW(epoll_wait), ALLOW(epoll_pwait), ALLOW(epoll_ctl),
	ALLOW(brk), NO_EXEC(mmap), NO_WRITE(mmap), NO_EXEC(mprotect),
	ALLOW(munmap), ALLOW(mremap), ALLOW(madvise),
	ALLOW(clock_gettime), ALLOW(gettimeofday), ALLOW(clock_nanosleep),
	ALLOW(getrandom), ALLOW(futex), ALLOW(getpid), ALLOW(gettid),
	ALLOW_MASK(clone, 0, CLONE_THREAD, CLONE_THREAD),
	REFUSE(clone3, ENOSYS),
	ALLOW(set_robust_list), ALLOW(rseq), ALLOW(sched_getaffinity),
	SIGNAL_RETURN, ALLOW(rt_sigprocmask), TGKILL_SELF,
	ALLOW(exit), ALLOW(exit_group),
	ALLOW_EQ(fcntl, 1, F_GETFL), ALLOW_EQ(fcntl, 1, F_SETFL),
	ALLOW_EQ(fcntl, 1, F_GETFD), ALLOW_EQ(fcntl, 1, F_SETFD),
	ALLOW_EQ(ioctl, 1, FIONREAD),
	OPEN_READ_ONLY, ALLOW(fstat), ALLOW(newfstatat), ALLOW(uname),
	ALLOW(munlock),		/* secret_free() at exit: credentials unlocked, zeroed */
	/* curl_multi_cleanup saves and restores SIGPIPE around closing
	 * connections (its handle for that lacks CURLOPT_NOSIGNAL). */
	ALLOW_EQ(rt_sigaction, 0, SIGPIPE),
};

/*
 * Broker, after spawning both children: supervise them (wait, kill only
 * the pids given at load time, signals), relay on its inherited sockets
 * and the children's stderr pipes (read, and fcntl F_SETFL to make them
 * non-blocking: broker/child_stderr.h),
 * and append to the audit log it opened before confinement (write, fsync,
 * locks, stat and seek for re-reading the tail).  ftruncate because the
 * writer cuts a torn tail left by a killed writer (and its own short
 * write) under the lock: without it a confined broker would be killed by
 * the first append after a crash.  No open, no socket, no exec, no fork.
 *
 * The audit anchors (audit/audit_journal.h, docs/design.md section 6)
 * go out on a socket made before this filter: sendmsg (libsystemd, to
 * journald's path) and sendto (glibc's syslog(3)) are already listed.
 * A new AF_UNIX socket is refused with EACCES, not killed: glibc's
 * syslog(3) makes one again after a failed send (syslogd restarted), and
 * libsystemd after a failed first one; either then drops the message
 * instead of ending the session.  libsystemd sends a datagram the socket
 * will not take (ENOBUFS) as a memfd: it reads the thread's name first
 * (prctl PR_GET_NAME, asserted to succeed), then memfd_create is refused
 * with EPERM and the send fails softly.
 */
static const struct filter_rule broker_rules[] = {
	ALLOW(read), ALLOW(write), ALLOW(readv), ALLOW(writev),
	ALLOW(pread64), ALLOW(pwrite64), ALLOW(lseek),
	ALLOW(recvmsg), ALLOW(sendmsg), ALLOW(recvfrom), ALLOW(sendto),
	ALLOW(close),
	ALLOW(fsync), ALLOW(fdatasync), ALLOW(flock), ALLOW(fstat), FSTAT_FD,
	ALLOW(ftruncate),
	ALLOW(epoll_wait), ALLOW(epoll_pwait), ALLOW(epoll_ctl),
	ALLOW(brk), NO_EXEC(mmap), NO_EXEC(mprotect),
	ALLOW(munmap), ALLOW(mremap), ALLOW(madvise),
	ALLOW(clock_gettime), ALLOW(gettimeofday), ALLOW(getrandom),
	ALLOW(futex), ALLOW(getpid), ALLOW(gettid),
	ALLOW(wait4), ALLOW(waitid),
	KILL_CHILD,
	ALLOW(rt_sigaction), ALLOW(rt_sigprocmask), SIGNAL_RETURN,
	TGKILL_SELF, ALLOW(exit), ALLOW(exit_group),
	ALLOW_EQ(fcntl, 1, F_GETFL), ALLOW_EQ(fcntl, 1, F_SETFL),
	ALLOW_EQ(fcntl, 1, F_GETFD), ALLOW_EQ(fcntl, 1, F_SETFD),
	ALLOW_EQ(fcntl, 1, F_SETLK), ALLOW_EQ(fcntl, 1, F_SETLKW),
	ALLOW_EQ(fcntl, 1, F_OFD_SETLK), ALLOW_EQ(fcntl, 1, F_OFD_SETLKW),
	ALLOW_EQ(ioctl, 1, FIONREAD),
	{ SCMP_SYS(socket), SCMP_ACT_ERRNO(EACCES), UNLESS_SHARED_STATE, 1,
	  { CMP(0, SCMP_CMP_EQ, AF_UNIX, 0) } },
	ALLOW_EQ(prctl, 0, PR_GET_NAME), REFUSE(memfd_create, EPERM),
	/*
	 * The shared state on PostgreSQL (state/pg.h, docs/internals/
	 * seccomp.md): a lost connection is made again by libpq's reset,
	 * through a unix socket only -- a stream socket of AF_UNIX (the
	 * datagram ones of syslog and journald are still refused as
	 * above), its connect, the wait for it (poll), whether it
	 * succeeded (SO_ERROR) and its own address (getsockname).  Not
	 * SO_PEERCRED: libpq's requirepeer then looks the uid up in the
	 * user database, which no rule here allows, so it is refused at
	 * start (state/pg.c).  connect cannot see the path: any unix
	 * socket the service user may reach could be connected to.  Added
	 * only when the policy names "state".
	 */
	{ SCMP_SYS(socket), SCMP_ACT_ALLOW, IF_SHARED_STATE, 2,
	  { CMP(0, SCMP_CMP_EQ, AF_UNIX, 0),
	    CMP(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM) } },
	{ SCMP_SYS(socket), SCMP_ACT_ERRNO(EACCES), IF_SHARED_STATE, 2,
	  { CMP(0, SCMP_CMP_EQ, AF_UNIX, 0),
	    CMP(1, SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM) } },
	{ SCMP_SYS(connect), SCMP_ACT_ALLOW, IF_SHARED_STATE, 0, { { 0 } } },
	{ SCMP_SYS(poll), SCMP_ACT_ALLOW, IF_SHARED_STATE, 0, { { 0 } } },
	{ SCMP_SYS(ppoll), SCMP_ACT_ALLOW, IF_SHARED_STATE, 0, { { 0 } } },
	{ SCMP_SYS(getsockname), SCMP_ACT_ALLOW, IF_SHARED_STATE, 0,
	  { { 0 } } },
	{ SCMP_SYS(getsockopt), SCMP_ACT_ALLOW, IF_SHARED_STATE, 2,
	  { CMP(1, SCMP_CMP_EQ, SOL_SOCKET, 0),
	    CMP(2, SCMP_CMP_EQ, SO_ERROR, 0) } },
	/*
	 * Rotation under a running session (docs/design.md section 6): when
	 * the audit log was renamed away, the writer stats its name and
	 * opens it anew, both relative to the directory fd it opened
	 * (O_PATH) before confinement, the open with exactly the log's own
	 * flags (append, create 0600, no symlink).  arg0 pins the directory,
	 * so no other file can be opened or created; the name inside it
	 * cannot be inspected, so a broker could create another file in the
	 * log's directory, which its owner can do anyway.  Added only when
	 * the session has a log (sandbox_load_broker_filter()).  The same two
	 * rules again for state_dir's directory fd, when the policy names
	 * one: its limits file is followed the same way when replaced
	 * (state/state_dir.h), opened with the same flags.
	 */
	{ SCMP_SYS(openat), SCMP_ACT_ALLOW, FD_AUDIT_DIR, 2,
	  { CMP(0, SCMP_CMP_EQ, 0, 0),
	    CMP(2, SCMP_CMP_EQ, SANDBOX_AUDIT_LOG_FLAGS, 0) } },
	{ SCMP_SYS(newfstatat), SCMP_ACT_ALLOW, FD_AUDIT_DIR, 1,
	  { CMP(0, SCMP_CMP_EQ, 0, 0) } },
	/*
	 * Out-of-band approval (broker/approvals.h, docs/internals/
	 * seccomp.md): sp approve connects to the session's approval
	 * socket, listening since before this filter.  accept4 only on that
	 * socket (no other listening socket exists, and none can be made);
	 * the kernel's identity of the caller (SO_PEERCRED, SO_PEERGROUPS),
	 * which only reads; and unlinkat in state_dir/approvals alone, not
	 * a directory (flags 0), so the socket goes with its session.  Added
	 * only when the session has the socket.
	 */
	{ SCMP_SYS(accept4), SCMP_ACT_ALLOW, FD_APPROVALS_SOCKET, 1,
	  { CMP(0, SCMP_CMP_EQ, 0, 0) } },
	{ SCMP_SYS(unlinkat), SCMP_ACT_ALLOW, FD_APPROVALS_DIR, 2,
	  { CMP(0, SCMP_CMP_EQ, 0, 0), CMP(2, SCMP_CMP_EQ, 0, 0) } },
	{ SCMP_SYS(getsockopt), SCMP_ACT_ALLOW, FD_APPROVALS_SOCKET, 2,
	  { CMP(1, SCMP_CMP_EQ, SOL_SOCKET, 0),
	    CMP(2, SCMP_CMP_EQ, SO_PEERCRED, 0) } },
	{ SCMP_SYS(getsockopt), SCMP_ACT_ALLOW, FD_APPROVALS_SOCKET, 2,
	  { CMP(1, SCMP_CMP_EQ, SOL_SOCKET, 0),
	    CMP(2, SCMP_CMP_EQ, SO_PEERGROUPS, 0) } },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct filter_rule *
filter_rules_for(enum record_role role, size_t *n)
{
	switch (role) {
	case RECORD_ROLE_FRONTEND:
		*n = NELEM(frontend_rules);
		return frontend_rules;
	case RECORD_ROLE_EXECUTOR:
		*n = NELEM(executor_rules);
		return executor_rules;
	case RECORD_ROLE_BROKER:
		*n = NELEM(broker_rules);
		return broker_rules;
	}
	*n = 0;
	return NULL;
}

/* Adds r with args[0] comparing to pid.  0 or a negative errno. */
static int
filter_add_pid_rule(scmp_filter_ctx ctx, const struct filter_rule *r,
    pid_t pid)
{
	struct scmp_arg_cmp arg = r->args[0];

	arg.datum_a = (scmp_datum_t)pid;
	return seccomp_rule_add_array(ctx, r->action, r->nr, 1, &arg);
}

/* r with args[0] comparing to the audit directory fd; none without one. */
/* The broker's directories, -1 for one it does not hold. */
struct filter_dirs {
	int audit;
	int state;
	int approvals_dir;
	int approvals_socket;
	bool shared_state;	/* the policy names "state" (PostgreSQL) */
};

/* An approvals rule: args[0] pinned to its fd, unless it compares no fd
 * (getsockopt: the accepted fds are not known yet); none without one. */
static int
filter_add_approvals_rule(scmp_filter_ctx ctx, const struct filter_rule *r,
    const struct filter_dirs *dirs)
{
	struct scmp_arg_cmp args[FILTER_MAX_ARGS];
	int fd = r->pid_arg0 == FD_APPROVALS_DIR ? dirs->approvals_dir :
	    dirs->approvals_socket;

	if (fd < 0 || dirs->approvals_socket < 0)
		return 0;
	memcpy(args, r->args, sizeof(args));
	if (r->nr == SCMP_SYS(getsockopt))
		return seccomp_rule_add_array(ctx, r->action, r->nr,
		    r->n_args, args);
	args[0].datum_a = (scmp_datum_t)fd;
	return seccomp_rule_add_array(ctx, r->action, r->nr, r->n_args, args);
}

static int
filter_add_dir_rule(scmp_filter_ctx ctx, const struct filter_rule *r,
    const struct filter_dirs *dirs)
{
	struct scmp_arg_cmp args[FILTER_MAX_ARGS];
	const int fds[] = { dirs->audit, dirs->state };
	size_t i;
	int rc;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i] < 0)
			continue;
		memcpy(args, r->args, sizeof(args));
		args[0].datum_a = (scmp_datum_t)fds[i];
		if ((rc = seccomp_rule_add_array(ctx, r->action, r->nr,
		    r->n_args, args)) < 0)
			return rc;
	}
	return 0;
}

static int
filter_add_rule(scmp_filter_ctx ctx, const struct filter_rule *r,
    const pid_t *children, size_t n_children, const struct filter_dirs *dirs)
{
	size_t i;
	int rc;

	switch (r->pid_arg0) {
	case IF_SHARED_STATE:
	case UNLESS_SHARED_STATE:
		if (dirs->shared_state != (r->pid_arg0 == IF_SHARED_STATE))
			return 0;
		return seccomp_rule_add_array(ctx, r->action, r->nr,
		    r->n_args, r->args);
	case FD_AUDIT_DIR:
		return filter_add_dir_rule(ctx, r, dirs);
	case FD_APPROVALS_DIR:
	case FD_APPROVALS_SOCKET:
		return filter_add_approvals_rule(ctx, r, dirs);
	case PID_NONE:
		return seccomp_rule_add_array(ctx, r->action, r->nr,
		    r->n_args, r->args);
	case PID_SELF:
		return filter_add_pid_rule(ctx, r, getpid());
	case PID_EACH_CHILD:
		for (i = 0; i < n_children; i++)
			if (children[i] <= 0)
				return -EINVAL;
			else if ((rc = filter_add_pid_rule(ctx, r,
			    children[i])) < 0)
				return rc;
		return 0;
	}
	return -EINVAL;
}

static int
filter_build(scmp_filter_ctx ctx, enum record_role role,
    const pid_t *children, size_t n_children, const struct filter_dirs *dirs)
{
	const struct filter_rule *rules;
	size_t i, n;
	int rc;

	if ((rules = filter_rules_for(role, &n)) == NULL)
		return -EINVAL;
	/* Every thread, not only the caller, must be confined. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0)
		return rc;
	/* Another ABI's syscall numbers (i386, x32) kill like any other. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = filter_add_rule(ctx, &rules[i], children,
		    n_children, dirs)) < 0)
			return rc;
	return 0;
}

static bool
filter_load(enum record_role role, const pid_t *children, size_t n_children,
    const struct filter_dirs *dirs)
{
	scmp_filter_ctx ctx;
	int rc, saved;

	if ((ctx = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL) {
		errno = ENOMEM;
		return false;
	}
	if ((rc = filter_build(ctx, role, children, n_children,
	    dirs)) < 0) {
		seccomp_release(ctx);
		errno = -rc;
		return false;
	}
	errno = 0;
	rc = seccomp_load(ctx);
	/*
	 * libseccomp 2.5.4 answers -EFAULT for any refused load, even with
	 * SYSRAWRC; the kernel's reason is what it leaves in errno.
	 */
	saved = errno != 0 ? errno : -rc;
	seccomp_release(ctx);
	if (rc < 0) {
		errno = saved;
		return false;
	}
	return true;
}

bool
sandbox_load_filter(enum record_role role, const pid_t *children,
    size_t n_children)
{
	const struct filter_dirs none = { -1, -1, -1, -1, false };

	return filter_load(role, children, n_children, &none);
}

bool
sandbox_load_broker_filter(const pid_t *children, size_t n_children,
    int audit_dir, int state_dir, int approvals_dir, int approvals_socket,
    bool shared_state)
{
	const struct filter_dirs dirs = { audit_dir, state_dir, approvals_dir,
	    approvals_socket, shared_state };

	return filter_load(RECORD_ROLE_BROKER, children, n_children, &dirs);
}
