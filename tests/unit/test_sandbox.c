/*
 * The three seccomp tables, each loaded for real in Criterion's per-test
 * worker.  After the filter no cr_assert can run (the worker reports with
 * sendmsg, which the frontend and broker tables do not give it), so a test
 * ends with _exit(status) or dies, and states what it expects:
 * .signal = SIGSYS for a forbidden call, .exit_code = ALLOWED_OK for a
 * path that must keep working.  A forbidden call that returns (the filter
 * missing, or too wide) exits 0, which fails both kinds of test.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
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

static void
confine_or_exit(enum sandbox_role role, const pid_t *children, size_t n)
{
	if (!sandbox_load_filter(role, children, n))
		_exit(LOAD_FAILED);
}

static void
try_execve(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };

	execve("/bin/true", argv, envp);
	_exit(0);
}

/* A socket made before confinement, connected after it. */
static void
try_connect_unix(int fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, "/nonexistent/sp'\"$(id)%2e%2e");
	(void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	_exit(0);
}

/*
 * An unconfined peer on 127.0.0.1 (port chosen by the kernel) that echoes
 * one message back, then exits.  Returns its pid; *sa is its address.
 */
static pid_t
echo_peer(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	char buf[256];
	ssize_t n;
	pid_t pid;
	int lfd, c;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	cr_assert_eq(getsockname(lfd, (struct sockaddr *)sa, &len), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		alarm(5);
		if ((c = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		if ((n = read(c, buf, sizeof(buf))) > 0)
			(void)!write(c, buf, (size_t)n);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* ---- frontend ---- */

Test(frontend_filter, open_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	(void)open("/etc/passwd", O_RDONLY);
	_exit(0);
}

Test(frontend_filter, socket_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	(void)socket(AF_UNIX, SOCK_STREAM, 0);
	_exit(0);
}

Test(frontend_filter, connect_is_killed, KILLED)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	try_connect_unix(fd);
}

Test(frontend_filter, execve_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	try_execve();
}

Test(frontend_filter, fork_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

Test(frontend_filter, executable_mapping_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	_exit(0);
}

Test(frontend_filter, fcntl_dupfd_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
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
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	abort();
}

Test(frontend_filter, tgkill_of_another_process_is_killed, KILLED)
{
	pid_t parent = getppid();

	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	(void)tgkill(parent, parent, 0);
	_exit(0);
}

Test(frontend_filter, ioctl_other_than_fionread_is_killed, KILLED)
{
	struct winsize ws;

	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	(void)ioctl(2, TIOCGWINSZ, &ws);
	_exit(0);
}

/* libevent's evbuffer_read asks FIONREAD how much is waiting. */
Test(frontend_filter, fionread_works, WORKS)
{
	int sv[2], n = -1;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(write(sv[1], "abc\n\"", 5), 5);
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);
	if (ioctl(sv[0], FIONREAD, &n) != 0 || n != 5)
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
	confine_or_exit(SANDBOX_ROLE_FRONTEND, NULL, 0);

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

/* ---- executor ---- */

Test(executor_filter, execve_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	try_execve();
}

Test(executor_filter, open_for_writing_is_killed, KILLED)
{
	char path[] = "/tmp/sp-test-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path);
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)open(path, O_WRONLY | O_CREAT, 0600);
	_exit(0);
}

Test(executor_filter, open_read_write_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)open("/dev/null", O_RDWR);
	_exit(0);
}

Test(executor_filter, fork_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

Test(executor_filter, ptrace_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	_exit(0);
}

Test(executor_filter, mount_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)mount("none", "/mnt", "tmpfs", 0, NULL);
	_exit(0);
}

Test(executor_filter, packet_socket_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)socket(AF_PACKET, SOCK_RAW, 0);
	_exit(0);
}

Test(executor_filter, writable_executable_mapping_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	(void)mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	_exit(0);
}

static void *
open_for_writing_later(void *arg)
{
	int *go = arg;
	char c;

	if (read(go[0], &c, 1) == 1)
		(void)open("/dev/null", O_WRONLY);
	return NULL;
}

/*
 * A thread that existed before confinement is confined too (the filter
 * is synchronised to every thread), so its forbidden open kills.
 */
Test(executor_filter, older_thread_is_confined_too, KILLED)
{
	pthread_t t;
	int go[2];

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pthread_create(&t, NULL, open_for_writing_later, go), 0);
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if (write(go[1], "g", 1) != 1)
		_exit(ALLOWED_BROKEN);
	(void)pthread_join(t, NULL);
	_exit(0);
}

/* What the executor needs: an IP socket, connect, a round trip on it. */
Test(executor_filter, inet_socket_round_trip, WORKS)
{
	static const char msg[] = "ping \"$(id)\"\n%2e%2e \xe2\x82\xac";
	struct sockaddr_in sa;
	char buf[64];
	int fd;

	(void)echo_peer(&sa);
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		_exit(ALLOWED_BROKEN);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		_exit(ALLOWED_BROKEN);
	if (send(fd, msg, sizeof(msg) - 1, 0) != (ssize_t)sizeof(msg) - 1)
		_exit(ALLOWED_BROKEN);
	if (recv(fd, buf, sizeof(buf), MSG_WAITALL) !=
	    (ssize_t)sizeof(msg) - 1 || memcmp(buf, msg, sizeof(msg) - 1) != 0)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/*
 * An unconfined HTTP peer on 127.0.0.1 that answers one request with a
 * fixed body, then exits.  Returns its port.
 */
static int
http_peer(void)
{
	static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n"
	    "Connection: close\r\n\r\nq\"$()\xc3\xa9\n";
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char buf[1024];
	pid_t pid;
	int lfd, c;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_geq(lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(lfd, 1), 0);
	cr_assert_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		alarm(5);
		if ((c = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		(void)!read(c, buf, sizeof(buf));
		(void)!write(c, reply, sizeof(reply) - 1);
		_exit(0);
	}
	close(lfd);
	return ntohs(sa.sin_port);
}

struct body {
	char bytes[64];
	size_t len;
};

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t len = size * n;

	if (len > sizeof(b->bytes) - b->len)
		return 0;
	memcpy(b->bytes + b->len, data, len);
	b->len += len;
	return len;
}

/*
 * libcurl, initialised before confinement as the executor will, performs
 * a request afterwards: its multi handle's wakeup socketpair, the
 * non-blocking connect and the polling all fit the table.  (libcurl
 * answers "localhost" itself; the resolver thread is the next test.)
 */
Test(executor_filter, libcurl_request_works, WORKS)
{
	struct body body = { .len = 0 };
	char url[96];
	long code = 0;
	CURL *h;

	snprintf(url, sizeof(url), "http://localhost:%d/items/%%2e%%2e",
	    http_peer());
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_not_null(h = curl_easy_init());
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 4000L);
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if (curl_easy_perform(h) != CURLE_OK)
		_exit(ALLOWED_BROKEN);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200 || body.len != 8 ||
	    memcmp(body.bytes, "q\"$()\xc3\xa9\n", 8) != 0)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

static void *
resolve_localhost(void *arg)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
	    .ai_flags = AI_ADDRCONFIG }, *res;
	int *ok = arg;

	if (getaddrinfo("localhost", "443", &hints, &res) == 0) {
		*ok = res->ai_family == AF_INET || res->ai_family == AF_INET6;
		freeaddrinfo(res);
	}
	return NULL;
}

/*
 * Name resolution as libcurl's threaded resolver does it: getaddrinfo on
 * a thread started after confinement (reading /etc/hosts, nsswitch.conf,
 * probing nscd and interfaces).
 */
Test(executor_filter, getaddrinfo_on_a_thread_works, WORKS)
{
	pthread_t t;
	int ok = 0;

	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if (pthread_create(&t, NULL, resolve_localhost, &ok) != 0 ||
	    pthread_join(t, NULL) != 0 || !ok)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/* Local sockets and netlink fail softly, so getaddrinfo can degrade. */
Test(executor_filter, unix_socket_is_refused_not_killed, WORKS)
{
	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if (socket(AF_UNIX, SOCK_STREAM, 0) != -1 || errno != EACCES)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

Test(executor_filter, read_only_open_works, WORKS)
{
	char buf[16];
	int fd;

	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	if ((fd = open("/etc/hosts", O_RDONLY | O_CLOEXEC)) == -1)
		_exit(ALLOWED_BROKEN);
	if (read(fd, buf, sizeof(buf)) <= 0)
		_exit(ALLOWED_BROKEN);
	close(fd);
	_exit(ALLOWED_OK);
}

static void *
thread_body(void *arg)
{
	int *value = arg;

	*value *= 3;
	return NULL;
}

/* libcurl's threaded resolver starts threads; those must still work. */
Test(executor_filter, threads_start_and_join, WORKS)
{
	pthread_t t[3];
	int values[3] = { 2, 5, 7 }, i;

	confine_or_exit(SANDBOX_ROLE_EXECUTOR, NULL, 0);
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, thread_body, &values[i]) != 0)
			_exit(ALLOWED_BROKEN);
	for (i = 0; i < 3; i++)
		if (pthread_join(t[i], NULL) != 0)
			_exit(ALLOWED_BROKEN);
	if (values[0] != 6 || values[1] != 15 || values[2] != 21)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/* ---- broker ---- */

static pid_t
idle_child(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

Test(broker_filter, execve_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_BROKER, NULL, 0);
	try_execve();
}

Test(broker_filter, socket_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_BROKER, NULL, 0);
	(void)socket(AF_INET, SOCK_STREAM, 0);
	_exit(0);
}

Test(broker_filter, open_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_BROKER, NULL, 0);
	(void)open("/etc/passwd", O_RDONLY);
	_exit(0);
}

Test(broker_filter, fork_is_killed, KILLED)
{
	confine_or_exit(SANDBOX_ROLE_BROKER, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

/* Signal 0 only probes: harmless even if the filter were missing. */
Test(broker_filter, kill_of_every_process_is_killed, KILLED)
{
	pid_t child = idle_child();

	confine_or_exit(SANDBOX_ROLE_BROKER, &child, 1);
	(void)kill(-1, 0);
	_exit(0);
}

Test(broker_filter, kill_of_a_stranger_is_killed, KILLED)
{
	pid_t child = idle_child();

	confine_or_exit(SANDBOX_ROLE_BROKER, &child, 1);
	(void)kill(getppid(), 0);
	_exit(0);
}

/* Supervision: signal each child it was given and reap it. */
Test(broker_filter, kills_and_reaps_its_children, WORKS)
{
	pid_t children[2] = { idle_child(), idle_child() };
	int status, i;

	confine_or_exit(SANDBOX_ROLE_BROKER, children, 2);
	for (i = 0; i < 2; i++) {
		if (kill(children[i], SIGTERM) != 0)
			_exit(ALLOWED_BROKEN);
		if (waitpid(children[i], &status, 0) != children[i] ||
		    !WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
			_exit(ALLOWED_BROKEN);
	}
	_exit(ALLOWED_OK);
}

/* The audit log is opened before; appending and locking go on after. */
Test(broker_filter, appends_to_an_open_log, WORKS)
{
	char path[] = "/tmp/sp-audit-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	confine_or_exit(SANDBOX_ROLE_BROKER, NULL, 0);
	if (flock(fd, LOCK_EX) != 0 || write(fd, "{}\n", 3) != 3 ||
	    fsync(fd) != 0 || flock(fd, LOCK_UN) != 0)
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
	cr_assert_not(sandbox_load_filter((enum sandbox_role)99, NULL, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(seccomp_mode(), 0);
}

Test(filter, nonpositive_child_pid_is_refused)
{
	pid_t bad[3] = { 1234, 0, 77 };

	cr_assert_not(sandbox_load_filter(SANDBOX_ROLE_BROKER, bad, 3));
	cr_assert_eq(errno, EINVAL);
	bad[1] = -1;
	cr_assert_not(sandbox_load_filter(SANDBOX_ROLE_BROKER, bad, 3));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(seccomp_mode(), 0);
}
