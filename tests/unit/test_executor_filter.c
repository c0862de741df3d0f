/*
 * The executor's seccomp table (conventions in sandbox_test.h): network,
 * threads, read-only files, libcurl; no exec, fork, ptrace, mount, writes.
 * Peers are unconfined forks on 127.0.0.1, on ports the kernel picks.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/sandbox.h"
#include "tests/unit/sandbox_test.h"

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

Test(executor_filter, restart_syscall_works, WORKS)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	_exit(restart_syscall_returns() ? ALLOWED_OK : ALLOWED_BROKEN);
}

Test(executor_filter, execve_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	try_execve();
}

Test(executor_filter, open_for_writing_is_killed, KILLED)
{
	char path[] = "/tmp/sp-test-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path);
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)open(path, O_WRONLY | O_CREAT, 0600);
	_exit(0);
}

Test(executor_filter, open_read_write_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)open("/dev/null", O_RDWR);
	_exit(0);
}

Test(executor_filter, fork_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	if (fork() == 0)
		_exit(0);
	_exit(0);
}

Test(executor_filter, ptrace_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	_exit(0);
}

Test(executor_filter, mount_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)mount("none", "/mnt", "tmpfs", 0, NULL);
	_exit(0);
}

Test(executor_filter, packet_socket_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)socket(AF_PACKET, SOCK_RAW, 0);
	_exit(0);
}

Test(executor_filter, writable_executable_mapping_is_killed, KILLED)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	(void)mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	_exit(0);
}

/* Write code, then make it executable: the W-then-X path is closed too. */
Test(executor_filter, making_written_memory_executable_is_killed, KILLED)
{
	unsigned char *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(page, MAP_FAILED);
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	page[0] = 0xc3;		/* ret */
	(void)mprotect(page, 4096, PROT_READ | PROT_EXEC);
	_exit(0);
}

/* A read-only executable mapping (how ld.so maps a module) stays allowed. */
Test(executor_filter, read_exec_mapping_works, WORKS)
{
	void *p;

	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
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
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
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
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
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
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
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

	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	if (pthread_create(&t, NULL, resolve_localhost, &ok) != 0 ||
	    pthread_join(t, NULL) != 0 || !ok)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

/* Local sockets and netlink fail softly, so getaddrinfo can degrade. */
Test(executor_filter, unix_socket_is_refused_not_killed, WORKS)
{
	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
	if (socket(AF_UNIX, SOCK_STREAM, 0) != -1 || errno != EACCES)
		_exit(ALLOWED_BROKEN);
	_exit(ALLOWED_OK);
}

Test(executor_filter, read_only_open_works, WORKS)
{
	char buf[16];
	int fd;

	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
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

	confine_or_exit(RECORD_ROLE_EXECUTOR, NULL, 0);
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
