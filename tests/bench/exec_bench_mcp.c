/*
 * The `mcp` mode of the bench peer (tests/bench/exec_bench_mcp.h).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/exec_bench_mcp.h"

#define MCP_LINE_MAX	(16u * 1024 * 1024)
#define MCP_REQUEST_MAX	4096

static const char mcp_initialize[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"exec-bench\",\"version\":\"1\"}}}\n";
static const char mcp_initialized[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

struct mcp_client {
	pid_t pid;
	int to;			/* the server's stdin */
	int from;		/* the server's stdout */
	char *buf;		/* lines read, not yet taken */
	size_t start;		/* first byte not yet taken */
	size_t len;		/* bytes held, from 0 */
	size_t cap;
};

uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool
mcp_spawn(struct mcp_client *c, char **argv)
{
	int in[2], out[2], devnull;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1) {
		perror("mcp_spawn: pipe2");
		return false;
	}
	if ((c->pid = fork()) == -1) {
		perror("mcp_spawn: fork");
		return false;
	}
	if (c->pid == 0) {
		/* Its stderr would interleave with the figures; failed calls
		 * are counted from the answers instead. */
		if (dup2(in[0], 0) == -1 || dup2(out[1], 1) == -1 ||
		    (devnull = open("/dev/null", O_WRONLY)) == -1 ||
		    dup2(devnull, 2) == -1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	c->cap = 65536;
	c->buf = malloc(c->cap);
	return c->buf != NULL;
}

static bool
mcp_write(const struct mcp_client *c, const char *s, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(c->to, s, len)) == -1) {
			if (errno == EINTR)
				continue;
			perror("mcp_write");
			return false;
		}
		s += n;
		len -= (size_t)n;
	}
	return true;
}

/* Makes room for one more read: compacts, then grows up to the limit. */
static bool
mcp_room(struct mcp_client *c)
{
	char *p;

	if (c->start > 0) {
		memmove(c->buf, c->buf + c->start, c->len - c->start);
		c->len -= c->start;
		c->start = 0;
	}
	if (c->len < c->cap)
		return true;
	if (c->cap >= MCP_LINE_MAX || (p = realloc(c->buf, c->cap * 2)) ==
	    NULL) {
		fprintf(stderr, "mcp_room: answer line too long\n");
		return false;
	}
	c->buf = p;
	c->cap *= 2;
	return true;
}

/* The next answer line, NUL-terminated, valid until the next call. */
static char *
mcp_read_line(struct mcp_client *c)
{
	char *nl, *line;
	ssize_t n;

	for (;;) {
		nl = memchr(c->buf + c->start, '\n', c->len - c->start);
		if (nl != NULL) {
			*nl = '\0';
			line = c->buf + c->start;
			c->start = (size_t)(nl - c->buf) + 1;
			return line;
		}
		if (!mcp_room(c))
			return NULL;
		n = read(c->from, c->buf + c->len, c->cap - c->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "mcp_read_line: the server %s\n",
			    n == 0 ? "closed its output" : strerror(errno));
			return NULL;
		}
		c->len += (size_t)n;
	}
}

/* true when line answers a call whose structuredContent says "ok". */
static bool
mcp_answer(const char *line, long *id, bool *ok)
{
	cJSON *msg = cJSON_Parse(line);
	const cJSON *jid, *outcome;

	*ok = false;
	jid = cJSON_GetObjectItemCaseSensitive(msg, "id");
	if (!cJSON_IsNumber(jid)) {
		fprintf(stderr, "mcp_answer: no numeric id: %.200s\n", line);
		cJSON_Delete(msg);
		return false;
	}
	*id = (long)jid->valuedouble;
	outcome = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(msg, "result"),
	    "structuredContent"), "outcome");
	*ok = cJSON_IsString(outcome) &&
	    strcmp(outcome->valuestring, "ok") == 0;
	cJSON_Delete(msg);
	return true;
}

static bool
mcp_send_call(const struct mcp_client *c, long id, const char *tool,
    const char *args, uint64_t *started)
{
	char req[MCP_REQUEST_MAX];
	int n;

	n = snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
	    "\"arguments\":%s}}\n", id, tool, args);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "mcp_send_call: request too long\n");
		return false;
	}
	*started = mono_us();
	return mcp_write(c, req, (size_t)n);
}

/* N calls, k in flight; ids 1..n index started[]. */
static bool
mcp_calls(struct mcp_client *c, long n, long k, const char *tool,
    const char *args)
{
	uint64_t *started = calloc((size_t)n + 1, sizeof(*started));
	uint64_t t0 = mono_us(), now;
	long sent = 0, done = 0, notok = 0, id;
	const char *line;
	bool ok;

	if (started == NULL)
		return false;
	for (; sent < k && sent < n; sent++)
		if (!mcp_send_call(c, sent + 1, tool, args, &started[sent + 1]))
			goto fail;
	while (done < n) {
		if ((line = mcp_read_line(c)) == NULL)
			goto fail;
		now = mono_us();
		if (!mcp_answer(line, &id, &ok) || id < 1 || id > sent)
			goto fail;
		printf("%" PRIu64 "\n", now - started[id]);
		notok += !ok;
		done++;
		if (sent < n && !mcp_send_call(c, sent + 1, tool, args,
		    &started[sent + 1]))
			goto fail;
		sent += sent < n;
	}
	printf("wall %" PRIu64 "\nnotok %ld\n", mono_us() - t0, notok);
	free(started);
	return true;
fail:
	free(started);
	return false;
}

static int
mcp_end(struct mcp_client *c, bool ok)
{
	int status;

	close(c->to);
	close(c->from);
	free(c->buf);
	if (waitpid(c->pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "mcp_end: the server did not exit cleanly\n");
		ok = false;
	}
	return ok ? 0 : 1;
}

int
mcp_bench_main(int argc, char **argv)
{
	struct mcp_client c;
	long n, k;
	bool ok;

	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: exec_bench_peer mcp N K TOOL ARGS -- "
		    "SP_ARGV...\n");
		return 64;
	}
	n = atol(argv[0]);
	k = atol(argv[1]);
	if (n < 1 || k < 1) {
		fprintf(stderr, "mcp_bench_main: N and K must be positive\n");
		return 64;
	}
	memset(&c, 0, sizeof(c));
	if (!mcp_spawn(&c, argv + 5))
		return 1;
	ok = mcp_write(&c, mcp_initialize, sizeof(mcp_initialize) - 1) &&
	    mcp_read_line(&c) != NULL &&
	    mcp_write(&c, mcp_initialized, sizeof(mcp_initialized) - 1) &&
	    mcp_calls(&c, n, k, argv[2], argv[3]);
	fflush(stdout);
	return mcp_end(&c, ok);
}
