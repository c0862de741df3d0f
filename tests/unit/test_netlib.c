/*
 * executor/netlib.c without -lcurl -lssh2: a function called before
 * netlib_load() aborts instead of jumping to NULL, the table of bound
 * functions is read-only once filled, and after it every
 * type range of the variadic setopt/getinfo reaches the real libcurl
 * with its value intact (a file:// transfer driven through the multi
 * interface, as the HTTP engine drives its own).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <libssh2.h>

#include "executor/netlib.h"

/* Quotes, a newline, $(), %2e%2e and multibyte text: bytes, not text. */
static const char FILE_BODY[] =
    "0123'4\"5\n$(id)%2e%2e/h\xc3\xa9llo \xe6\xbc\xa2 end";

struct sink {
	char data[256];
	size_t len;
	int calls;
};

static size_t
sink_write(char *ptr, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;

	s->calls++;
	if (len > sizeof(s->data) - s->len)
		return 0;
	memcpy(s->data + s->len, ptr, len);
	s->len += len;
	return len;
}

static int
timer_seen(CURLM *m, long timeout_ms, void *arg)
{
	(void)m;
	(void)timeout_ms;
	(*(int *)arg)++;
	return 0;
}

Test(netlib, unbound_function_aborts, .signal = SIGABRT)
{
	(void)curl_easy_init();
}

Test(netlib, unbound_void_function_aborts, .signal = SIGABRT)
{
	libssh2_exit();
}

Test(netlib, unbound_variadic_function_aborts, .signal = SIGABRT)
{
	(void)curl_easy_setopt(NULL, CURLOPT_VERBOSE, 0L);
}

/* A temporary file holding FILE_BODY; returns its file:// URL. */
static char *
body_file(char *path, size_t size)
{
	char *url;
	FILE *f;
	int fd;

	snprintf(path, size, "/tmp/netlib-test-XXXXXX");
	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	cr_assert_eq(fwrite(FILE_BODY, 1, sizeof(FILE_BODY) - 1, f),
	    sizeof(FILE_BODY) - 1);
	cr_assert_eq(fclose(f), 0);
	cr_assert_gt(asprintf(&url, "file://%s", path), 0);
	return url;
}

/* Runs easy on its own multi handle until it is done; returns its code. */
static CURLcode
run_transfer(CURL *easy, int *timer_calls)
{
	CURLM *multi;
	CURLMsg *msg;
	CURLcode rc = CURLE_RECV_ERROR;
	int running = 1, left, rounds;

	cr_assert_not_null(multi = curl_multi_init());
	cr_assert_eq(curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 3L),
	    CURLM_OK);
	cr_assert_eq(curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION,
	    timer_seen), CURLM_OK);
	cr_assert_eq(curl_multi_setopt(multi, CURLMOPT_TIMERDATA,
	    timer_calls), CURLM_OK);
	cr_assert_eq(curl_multi_add_handle(multi, easy), CURLM_OK);
	for (rounds = 0; running > 0 && rounds < 100; rounds++)
		cr_assert_eq(curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT,
		    0, &running), CURLM_OK);
	while ((msg = curl_multi_info_read(multi, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy)
			rc = msg->data.result;
	cr_assert_eq(curl_multi_remove_handle(multi, easy), CURLM_OK);
	cr_assert_eq(curl_multi_cleanup(multi), CURLM_OK);
	return rc;
}

/* off is set as a long or as a curl_off_t, by the option's range. */
static void
check_resume(CURLoption option, long off)
{
	struct sink sink = { .len = 0 };
	struct curl_blob blob = { .data = (void *)"x", .len = 1,
	    .flags = CURL_BLOB_COPY };
	char path[64], *url, *priv = NULL;
	int timer_calls = 0;
	CURL *easy;
	CURLcode rc;

	url = body_file(path, sizeof(path));
	cr_assert_not_null(easy = curl_easy_init());
	/* object pointers */
	cr_assert_eq(curl_easy_setopt(easy, CURLOPT_URL, url), CURLE_OK);
	cr_assert_eq(curl_easy_setopt(easy, CURLOPT_WRITEDATA, &sink),
	    CURLE_OK);
	cr_assert_eq(curl_easy_setopt(easy, CURLOPT_PRIVATE, path), CURLE_OK);
	/* a function pointer */
	cr_assert_eq(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, sink_write),
	    CURLE_OK);
	/* a blob: accepted as one, not refused as an unknown option */
	cr_assert_eq(curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &blob),
	    CURLE_OK);
	/* a long or an off_t */
	if (option == CURLOPT_RESUME_FROM)
		rc = curl_easy_setopt(easy, option, off);
	else
		rc = curl_easy_setopt(easy, option, (curl_off_t)off);
	cr_assert_eq(rc, CURLE_OK);
	cr_assert_eq(run_transfer(easy, &timer_calls), CURLE_OK);
	cr_assert_gt(timer_calls, 0, "the multi timer callback never ran");
	cr_assert_gt(sink.calls, 0, "the write callback never ran");
	cr_assert_eq(sink.len, sizeof(FILE_BODY) - 1 - (size_t)off);
	cr_assert_eq(memcmp(sink.data, FILE_BODY + off, sink.len), 0);
	cr_assert_eq(curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv),
	    CURLE_OK);
	cr_assert_eq(priv, path);
	curl_easy_cleanup(easy);
	cr_assert_eq(unlink(path), 0);
	free(url);
}

Test(netlib, long_pointer_function_blob_forwarded)
{
	cr_assert(netlib_load());
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	check_resume(CURLOPT_RESUME_FROM, 3);
	check_resume(CURLOPT_RESUME_FROM, 11);
	curl_global_cleanup();
}

Test(netlib, off_t_forwarded)
{
	cr_assert(netlib_load());
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	check_resume(CURLOPT_RESUME_FROM_LARGE, 7);
	check_resume(CURLOPT_RESUME_FROM_LARGE, 0);
	curl_global_cleanup();
}

static void
exit_on_segv(int sig)
{
	(void)sig;
	_exit(42);
}

/* After binding, the table is read-only: binding again faults. */
Test(netlib, table_read_only_after_load, .exit_code = 42)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exit_on_segv;
	cr_assert(netlib_load());
	cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
	(void)netlib_load();
	cr_assert_fail("the table could be written after netlib_load()");
}

Test(netlib, option_outside_every_range_refused)
{
	CURL *easy;

	cr_assert(netlib_load());
	cr_assert_not_null(easy = curl_easy_init());
	cr_assert_eq(curl_easy_setopt(easy, (CURLoption)60001, 1L),
	    CURLE_UNKNOWN_OPTION);
	cr_assert_eq(curl_easy_setopt(easy, (CURLoption)-1, 1L),
	    CURLE_UNKNOWN_OPTION);
	curl_easy_cleanup(easy);
}

Test(netlib, ssh2_functions_bound)
{
	LIBSSH2_SESSION *s;

	cr_assert(netlib_load());
	cr_assert_eq(libssh2_init(0), 0);
	cr_assert_not_null(s = libssh2_session_init_ex(NULL, NULL, NULL,
	    NULL));
	libssh2_session_set_blocking(s, 0);
	cr_assert_eq(libssh2_session_last_errno(s), 0);
	cr_assert_eq(libssh2_session_free(s), 0);
	libssh2_exit();
}
