/*
 * The frontend and broker seccomp tables (conventions in sandbox_test.h),
 * and what sandbox_load_filter refuses.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sandbox.h"
#include "tests/unit/sandbox_test.h"

/* A socket made before confinement, connected after it. */
static void
try_connect_unix(int fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, "/nonexistent/sp'\"$(id)%2e%2e");
	(void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	_exit(0);
}

/* ---- frontend ---- */

Test(frontend_filter, open_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)open("/etc/passwd", O_RDONLY);
	_exit(0);
}

Test(frontend_filter, socket_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)socket(AF_UNIX, SOCK_STREAM, 0);
	_exit(0);
}

Test(frontend_filter, connect_is_killed, KILLED)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	try_connect_unix(fd);
}

Test(frontend_filter, execve_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	try_execve();
}

/* fstat of an open fd is allowed; a stat by path is not. */
Test(frontend_filter, stat_by_path_is_killed, KILLED)
{
	struct stat st;

	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	if (fstat(2, &st) != 0)
		_exit(ALLOWED_BROKEN);
	(void)stat("/etc/passwd", &st);
	_exit(0);
}

/*
 * Another ABI's syscall (x32 numbers, the i386 entry) is another
 * architecture to the filter; it must kill the whole process, not only the
 * calling thread (the worker has other threads).  These run in a child
 * with a second, idle thread: a thread-only kill leaves it alive, and the
 * unconfined test process says so within its own budget instead of
 * hanging -- the harness's timeout does not fire for a worker whose other
 * threads live on.
 */
#ifdef UNDER_ASAN
#define FORKED .disabled = true
#else
#define FORKED .timeout = 120
#endif

static void *
idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * pid's wait status once it ends, or, if it is still there after
 * seconds, its status after SIGKILL with *hung set.
 */
static int
wait_bounded(pid_t pid, int seconds, bool *hung)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	int status = 0, i;

	*hung = false;
	for (i = 0; i < seconds * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		(void)nanosleep(&tick, NULL);
	}
	*hung = true;
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, &status, 0);
	return status;
}

/* call() under the frontend's table, in a two-thread child: SIGSYS kills
 * the child whole. */
static void
kills_whole_process(void (*call)(void))
{
	pid_t pid;
	bool hung;
	int status;

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
			_exit(ALLOWED_BROKEN);
		confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
		call();
		_exit(0);
	}
	status = wait_bounded(pid, 60, &hung);
	cr_assert(!hung, "the call left the process alive for 60 s (only "
	    "its thread killed?)");
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
	    "wait status %#x, expected death by SIGSYS", status);
}

/* getpid is allowed, but not by its x32 number: only one ABI gets in. */
static void
x32_getpid(void)
{
	if (getpid() <= 0)
		_exit(ALLOWED_BROKEN);
	(void)syscall(0x40000000 | SYS_getpid);
}

Test(frontend_filter, other_abi_syscall_is_killed, FORKED)
{
	kills_whole_process(x32_getpid);
}

#if defined(__x86_64__)
static void
i386_getpid(void)
{
	long ret = 20;	/* getpid in the i386 table */

	__asm__ volatile ("int $0x80" : "+a"(ret) : : "memory");
}

/*
 * Whether this machine offers the i386 entry at all: some kernels refuse
 * int $0x80 with no filter installed (SIGSEGV), and then there is no ABI
 * for the filter to refuse.  Proved unconfined, in a child.
 */
static bool
i386_entry_offered(int *status)
{
	bool hung;
	pid_t pid;

	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		i386_getpid();
		_exit(0);
	}
	*status = wait_bounded(pid, 60, &hung);
	return !hung && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

Test(frontend_filter, i386_syscall_kills_the_process, FORKED)
{
	int status;

	if (!i386_entry_offered(&status))
		cr_skip_test("the kernel refuses int $0x80 unconfined (wait "
		    "status %#x): no i386 entry to filter", status);
	kills_whole_process(i386_getpid);
}
#endif

Test(frontend_filter, fork_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

Test(frontend_filter, executable_mapping_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	_exit(0);
}

Test(frontend_filter, fcntl_dupfd_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)fcntl(2, F_DUPFD, 100);
	_exit(0);
}

/* abort() signals this process with tgkill; that much stays allowed. */
Test(frontend_filter, abort_still_aborts,
#ifdef UNDER_ASAN
    .disabled = true
#else
    .signal = SIGABRT
#endif
    )
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	abort();
}

Test(frontend_filter, tgkill_of_another_process_is_killed, KILLED)
{
	pid_t parent = getppid();

	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)tgkill(parent, parent, 0);
	_exit(0);
}

Test(frontend_filter, ioctl_other_than_fionread_is_killed, KILLED)
{
	struct winsize ws;

	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	(void)ioctl(2, TIOCGWINSZ, &ws);
	_exit(0);
}

Test(frontend_filter, restart_syscall_works, WORKS)
{
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	_exit(restart_syscall_returns() ? ALLOWED_OK : ALLOWED_BROKEN);
}

/* libevent's evbuffer_read asks FIONREAD how much is waiting. */
Test(frontend_filter, fionread_works, WORKS)
{
	int sv[2], n = -1;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(write(sv[1], "abc\n\"", 5), 5);
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	if (ioctl(sv[0], FIONREAD, &n) != 0 || n != 5)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/*
 * A confined frontend can still say what went wrong: a diagnostic with
 * strerror reaches stderr (a pipe here) as one line.
 */
Test(frontend_filter, logging_works, WORKS)
{
	static const char want[] =
	    ": bad \"$(id)\"?x: No such file or directory\n";
	char got[256];
	ssize_t n;
	int err[2];

	cr_assert_eq(pipe(err), 0);
	cr_assert_eq(dup2(err[1], 2), 2);
	log_init("frontend", LOG_LEVEL_INFO);
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);
	log_error("bad \"$(id)\"\nx: %s", strerror(ENOENT));
	if ((n = read(err[0], got, sizeof(got) - 1)) <= 0)
		_exit(ALLOWED_BROKEN);
	got[n] = '\0';
	/* "sp[frontend]: error: bad ...", the level word before the message */
	if (strncmp(got, "sp[frontend]: ", 14) != 0 ||
	    (size_t)n < sizeof(want) - 1 ||
	    strcmp(got + n - (sizeof(want) - 1), want) != 0 ||
	    strchr(got, '\n') != got + n - 1)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

struct loop_probe {
	char got[64];
	ssize_t n;
};

static void
on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct loop_probe *p = arg;

	(void)what;
	p->n = recv(fd, p->got, sizeof(p->got), 0);
}

/*
 * The frontend's steady state: a libevent loop iteration that reads a
 * record off its inherited SOCK_SEQPACKET channel, with memory allocated
 * on the way, after the filter.
 */
Test(frontend_filter, event_loop_iteration_works, WORKS)
{
	static const char msg[] = "q\"uo\nte $(id) %2e%2e \xc3\xa9\xe2\x82\xac";
	struct loop_probe probe = { .n = -1 };
	struct event_base *base;
	struct event *ev;
	int sv[2];
	char *heap;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_not_null(base = event_base_new());
	ev = event_new(base, sv[0], EV_READ, on_readable, &probe);
	cr_assert_not_null(ev);
	cr_assert_eq(event_add(ev, NULL), 0);
	confine_or_exit(RECORD_ROLE_FRONTEND, NULL, 0);

	if (write(sv[1], msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
		_exit(ALLOWED_BROKEN);
	if (event_base_loop(base, EVLOOP_ONCE) != 0)
		_exit(ALLOWED_BROKEN);
	heap = malloc(1 << 20);		/* large: mmap, not brk */
	if (heap == NULL)
		_exit(ALLOWED_BROKEN);
	memset(heap, 'x', 1 << 20);
	free(heap);
	if (probe.n != (ssize_t)sizeof(msg) - 1 ||
	    memcmp(probe.got, msg, sizeof(msg) - 1) != 0)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/* ---- broker ---- */

static pid_t
idle_child(void)
{
	pid_t parent = getpid(), pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* A test that ends in SIGSYS cannot reap it; the parent may
		 * even be gone before the death signal is asked for. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		pause();
		_exit(0);
	}
	return pid;
}

Test(broker_filter, execve_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	try_execve();
}

Test(broker_filter, socket_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	(void)socket(AF_INET, SOCK_STREAM, 0);
	_exit(0);
}

Test(broker_filter, open_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	(void)open("/etc/passwd", O_RDONLY);
	_exit(0);
}

Test(broker_filter, executable_mapping_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	_exit(0);
}

Test(broker_filter, fork_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

/* Signal 0 only probes: harmless even if the filter were missing. */
Test(broker_filter, kill_of_every_process_is_killed, KILLED)
{
	pid_t child = idle_child();

	confine_or_exit(RECORD_ROLE_BROKER, &child, 1);
	(void)kill(-1, 0);
	_exit(0);
}

Test(broker_filter, kill_of_a_stranger_is_killed, KILLED)
{
	pid_t child = idle_child();

	confine_or_exit(RECORD_ROLE_BROKER, &child, 1);
	(void)kill(getppid(), 0);
	_exit(0);
}

/* Supervision: signal each child it was given and reap it. */
Test(broker_filter, kills_and_reaps_its_children, WORKS)
{
	pid_t children[2] = { idle_child(), idle_child() };
	int status, i;

	confine_or_exit(RECORD_ROLE_BROKER, children, 2);
	for (i = 0; i < 2; i++) {
		if (kill(children[i], SIGTERM) != 0)
			_exit(ALLOWED_BROKEN);
		if (waitpid(children[i], &status, 0) != children[i] ||
		    !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
			_exit(ALLOWED_BROKEN);
	}
	_exit(ALLOWED_OK);
}

Test(broker_filter, restart_syscall_works, WORKS)
{
	pid_t child = idle_child();
	int status;
	bool ok;

	confine_or_exit(RECORD_ROLE_BROKER, &child, 1);
	ok = restart_syscall_returns();
	if (kill(child, SIGTERM) != 0 || waitpid(child, &status, 0) != child)
		_exit(ALLOWED_BROKEN);
	_exit(ok ? ALLOWED_OK : ALLOWED_BROKEN);
}

/* The audit log is opened before; appending and locking go on after. */
Test(broker_filter, appends_to_an_open_log, WORKS)
{
	char path[] = "/tmp/sp-audit-XXXXXX", tail[3];
	int fd = mkstemp(path);
	struct stat st;

	cr_assert_geq(fd, 0);
	unlink(path);
	confine_or_exit(RECORD_ROLE_BROKER, NULL, 0);
	if (flock(fd, LOCK_EX) != 0 || write(fd, "{}\n", 3) != 3 ||
	    fsync(fd) != 0 || fstat(fd, &st) != 0 || st.st_size != 3 ||
	    pread(fd, tail, 3, st.st_size - 3) != 3 ||
	    memcmp(tail, "{}\n", 3) != 0 || flock(fd, LOCK_UN) != 0)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/* The "Seccomp:" mode of this process from /proc/self/status. */
static int
seccomp_mode(void)
{
	char line[256];
	int mode = -1;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* A refused table loads nothing at all, rather than part of itself. */
Test(filter, unknown_role_is_refused)
{
	cr_assert_not(sandbox_load_filter((enum record_role)99, NULL, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(seccomp_mode(), 0);
}

Test(filter, nonpositive_child_pid_is_refused)
{
	pid_t bad[3] = { 1234, 0, 77 };

	cr_assert_not(sandbox_load_filter(RECORD_ROLE_BROKER, bad, 3));
	cr_assert_eq(errno, EINVAL);
	bad[1] = -1;
	cr_assert_not(sandbox_load_filter(RECORD_ROLE_BROKER, bad, 3));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(seccomp_mode(), 0);
}
