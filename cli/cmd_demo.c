/*
 * sp demo (docs/design.md section 3): a real MCP session through Sallyport,
 * with nothing to set up.  A local HTTP target (cli/demo_target.h, in a
 * child process on 127.0.0.1, a free port) stands for an API that wants
 * a bearer token; a temporary directory holds the token (0600), the
 * policy (contrib/examples/demo.json, pointed at that target) and the
 * audit log.  `sp mcp` runs on it as an assistant's client would start
 * it, and the demo drives a short session: initialize, tools/list, a good
 * tools/call, one with bad arguments, one a human confirms (the demo's
 * client answers the elicitation as a human would, retyping the id), and
 * a hostile line.  The transcript
 * goes to stdout; exit 0 when every step went as expected, 1 otherwise.
 * Everything is removed at the end.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "cli/demo_target.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"

#define DEMO_TOKEN_BYTES 24
#define DEMO_LINE_MAX (1024u * 1024)
#define DEMO_REPLY_MS 10000
/* Room for "/" and a file name of ours after the directory. */
#define DEMO_DIR_MAX (PATH_MAX - 64)

struct demo {
	char dir[DEMO_DIR_MAX];		/* the temporary directory, or "" */
	char token[DEMO_TOKEN_BYTES * 2 + 1];
	struct demo_target target;	/* the HTTP API */
	pid_t mcp;			/* sp mcp, or 0 */
	int to_mcp;			/* its stdin */
	int from_mcp;			/* its stdout */
	char *pending;			/* bytes read past the last line (owned) */
	size_t pending_len;
	bool failed;			/* a step did not go as expected */
	const char *run_as;		/* server.run_as when root, or NULL */
};

/*
 * The user a root demo's executor drops to.  As root, sp mcp needs a
 * server.run_as of the executor's own, apart from the frontend's nobody
 * (docs/sp.1); Debian's base system always has daemon, a user with no
 * login and no files of its own, so the demo names it.  NULL after
 * logging when there is none to use.
 */
#define DEMO_ROOT_RUN_AS "daemon"

static const char *
demo_root_run_as(void)
{
	const struct passwd *pw = getpwnam(DEMO_ROOT_RUN_AS);
	const struct passwd *nobody;
	uid_t uid;

	if (pw == NULL || pw->pw_uid == 0) {
		log_error("sp demo as root needs the system user %s for its "
		    "executor, and there is none; run it as an unprivileged "
		    "user", DEMO_ROOT_RUN_AS);
		return NULL;
	}
	uid = pw->pw_uid;
	nobody = getpwnam("nobody");
	if (nobody != NULL && nobody->pw_uid == uid) {
		log_error("sp demo as root: %s has nobody's uid; run it as an "
		    "unprivileged user", DEMO_ROOT_RUN_AS);
		return NULL;
	}
	return DEMO_ROOT_RUN_AS;
}

/* A random hex token: what an operator's API token would be. */
static bool
demo_make_token(struct demo *d)
{
	uint8_t raw[DEMO_TOKEN_BYTES];
	int fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1 ||
	    read(fd, raw, sizeof(raw)) != sizeof(raw)) {
		log_error("/dev/urandom: %s", strerror(errno));
		if (fd != -1)
			(void)close(fd);
		return false;
	}
	(void)close(fd);
	hash_hex(raw, sizeof(raw), d->token);
	return true;
}

/* Writes len bytes to dir/name with mode 0600; false after logging. */
static bool
demo_write_file(const struct demo *d, const char *name, const char *data,
    size_t len)
{
	char path[PATH_MAX];
	int fd;
	bool ok;

	(void)snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) == -1) {
		log_error("%s: %s", path, strerror(errno));
		return false;
	}
	ok = write(fd, data, len) == (ssize_t)len;
	if (close(fd) == -1 || !ok) {
		log_error("%s: cannot write", path);
		return false;
	}
	return true;
}

static void
demo_tool(cJSON *tools)
{
	cJSON *t = cJSON_CreateObject(), *http, *id;

	cJSON_AddItemToArray(tools, t);
	cJSON_AddStringToObject(t, "name", "get_item");
	cJSON_AddStringToObject(t, "description",
	    "Read one item of the demo API by its id.");
	cJSON_AddStringToObject(t, "target", "demo-api");
	cJSON_AddStringToObject(t, "scope", "read");
	http = cJSON_AddObjectToObject(t, "http");
	cJSON_AddStringToObject(http, "method", "GET");
	cJSON_AddStringToObject(http, "path", "/items/{id}");
	id = cJSON_AddObjectToObject(cJSON_AddObjectToObject(t, "params"),
	    "id");
	cJSON_AddStringToObject(id, "type", "integer");
	cJSON_AddNumberToObject(id, "minimum", 1);
	cJSON_AddNumberToObject(id, "maximum", 1000000);
	cJSON_AddStringToObject(id, "description", "Item id");
}

/* rename_item: mutating, and a human retypes the id to confirm it. */
static void
demo_confirm_tool(cJSON *tools)
{
	cJSON *t = cJSON_CreateObject(), *o, *params;

	cJSON_AddItemToArray(tools, t);
	cJSON_AddStringToObject(t, "name", "rename_item");
	cJSON_AddStringToObject(t, "description",
	    "Rename one item of the demo API; a human confirms it first.");
	cJSON_AddStringToObject(t, "target", "demo-api");
	cJSON_AddStringToObject(t, "scope", "write");
	cJSON_AddTrueToObject(t, "mutating");
	o = cJSON_AddObjectToObject(t, "confirm");
	cJSON_AddStringToObject(o, "message", "Rename item {id} to {name}");
	cJSON_AddStringToObject(o, "retype", "id");
	cJSON_AddNumberToObject(o, "timeout_s", 120);
	o = cJSON_AddObjectToObject(t, "http");
	cJSON_AddStringToObject(o, "method", "PUT");
	cJSON_AddStringToObject(o, "path", "/items/{id}");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "body"), "name",
	    "{name}");
	params = cJSON_AddObjectToObject(t, "params");
	o = cJSON_AddObjectToObject(params, "id");
	cJSON_AddStringToObject(o, "type", "integer");
	cJSON_AddNumberToObject(o, "minimum", 1);
	cJSON_AddNumberToObject(o, "maximum", 1000000);
	cJSON_AddStringToObject(o, "description", "Item id");
	o = cJSON_AddObjectToObject(params, "name");
	cJSON_AddStringToObject(o, "type", "string");
	cJSON_AddNumberToObject(o, "maxLength", 80);
	cJSON_AddStringToObject(o, "description", "The new name");
}

/*
 * contrib/examples/demo.json with this run's port, token file and audit
 * log (tests/integration/demo_transcript.py keeps the two the same).  Caller
 * frees with cJSON_free().
 */
static char *
demo_policy_text(const struct demo *d)
{
	const char *scopes[] = { "read", "write" };
	cJSON *p = cJSON_CreateObject(), *o;
	char buf[PATH_MAX + 64];
	char *text;

	cJSON_AddNumberToObject(p, "sallyport", 1);
	o = cJSON_AddObjectToObject(p, "server");
	cJSON_AddStringToObject(o, "name", "sallyport-demo");
	cJSON_AddStringToObject(o, "on_invalid", "close");
	if (d->run_as != NULL)
		cJSON_AddStringToObject(o, "run_as", d->run_as);
	cJSON_AddNumberToObject(cJSON_AddObjectToObject(p, "limits"),
	    "call_timeout_ms", 5000);
	(void)snprintf(buf, sizeof(buf), "%s/audit.jsonl", d->dir);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "audit"), "path",
	    buf);
	o = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "credentials"),
	    "demo-token");
	cJSON_AddStringToObject(o, "type", "bearer");
	(void)snprintf(buf, sizeof(buf), "%s/demo.token", d->dir);
	cJSON_AddStringToObject(o, "file", buf);
	o = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "targets"),
	    "demo-api");
	cJSON_AddStringToObject(o, "type", "http");
	(void)snprintf(buf, sizeof(buf), "http://127.0.0.1:%u",
	    (unsigned)d->target.port);
	cJSON_AddStringToObject(o, "base_url", buf);
	cJSON_AddStringToObject(o, "credential", "demo-token");
	o = cJSON_AddArrayToObject(p, "tools");
	demo_tool(o);
	demo_confirm_tool(o);
	o = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "profiles"),
	    "default");
	cJSON_AddItemToObject(o, "scopes", cJSON_CreateStringArray(scopes, 2));
	text = cJSON_Print(p);
	cJSON_Delete(p);
	return text;
}

static bool
demo_setup_files(struct demo *d)
{
	const char *tmp = getenv("TMPDIR");
	char *policy;
	bool ok;

	if (tmp == NULL || *tmp != '/' || strlen(tmp) > DEMO_DIR_MAX - 32)
		tmp = "/tmp";
	(void)snprintf(d->dir, sizeof(d->dir), "%s/sp-demo-XXXXXX", tmp);
	if (mkdtemp(d->dir) == NULL) {
		log_error("mkdtemp %s: %s", d->dir, strerror(errno));
		d->dir[0] = '\0';
		return false;
	}
	if ((policy = demo_policy_text(d)) == NULL) {
		log_error("out of memory");
		return false;
	}
	ok = demo_write_file(d, "demo.token", d->token, strlen(d->token)) &&
	    demo_write_file(d, "policy.json", policy, strlen(policy));
	cJSON_free(policy);
	return ok;
}

/* `sp mcp --config DIR/policy.json`, this very binary, on two pipes. */
static bool
demo_mcp_start(struct demo *d)
{
	int in[2], out[2];
	char config[PATH_MAX];

	(void)snprintf(config, sizeof(config), "%s/policy.json", d->dir);
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1) {
		log_error("pipe2: %s", strerror(errno));
		return false;
	}
	if ((d->mcp = fork()) == -1) {
		log_error("fork: %s", strerror(errno));
		return false;
	}
	if (d->mcp == 0) {
		if (dup2(in[0], STDIN_FILENO) == -1 ||
		    dup2(out[1], STDOUT_FILENO) == -1)
			_exit(SP_EXIT_INTERNAL);
		execl("/proc/self/exe", "sp", "mcp", "--config", config,
		    (char *)NULL);
		_exit(SP_EXIT_INTERNAL);
	}
	(void)close(in[0]);
	(void)close(out[1]);
	d->to_mcp = in[1];
	d->from_mcp = out[0];
	return true;
}

/* Milliseconds left until deadline_ms (clock_monotonic_ms()), >= 0. */
static int
demo_ms_left(uint64_t deadline_ms)
{
	uint64_t now = clock_monotonic_ms();

	return now >= deadline_ms ? 0 : (int)(deadline_ms - now);
}

/*
 * The next line sp mcp writes, without its '\n' (caller frees), or NULL
 * at end of output, past DEMO_LINE_MAX, or after DEMO_REPLY_MS.
 */
static char *
demo_read_line(struct demo *d)
{
	struct pollfd pfd = { .fd = d->from_mcp, .events = POLLIN };
	uint64_t deadline;
	char *nl, *line, *grown;
	ssize_t n;

	deadline = clock_monotonic_ms() + DEMO_REPLY_MS;
	while (d->pending_len == 0 ||
	    (nl = memchr(d->pending, '\n', d->pending_len)) == NULL) {
		if (d->pending_len >= DEMO_LINE_MAX ||
		    poll(&pfd, 1, demo_ms_left(deadline)) <= 0 ||
		    (grown = realloc(d->pending, d->pending_len + 65536)) ==
		    NULL)
			return NULL;
		d->pending = grown;
		if ((n = read(d->from_mcp, d->pending + d->pending_len,
		    65536)) <= 0)
			return NULL;
		d->pending_len += (size_t)n;
	}
	if ((line = strndup(d->pending, (size_t)(nl - d->pending))) == NULL)
		return NULL;
	d->pending_len -= (size_t)(nl + 1 - d->pending);
	memmove(d->pending, nl + 1, d->pending_len);
	return line;
}

/* One expectation; a miss is shown and remembered. */
static void
demo_expect(struct demo *d, bool ok, const char *what)
{
	printf("   %s %s\n", ok ? "ok:" : "NOT AS EXPECTED:", what);
	(void)fflush(stdout);
	if (!ok)
		d->failed = true;
}

/* Shows one line (ending '\n') without the '\n', then writes it whole. */
static bool
demo_write_line(struct demo *d, const char *line)
{
	size_t len = strlen(line);

	printf("client -> %.*s\n", (int)(len - 1), line);
	(void)fflush(stdout);
	return write(d->to_mcp, line, len) == (ssize_t)len;
}

static void
demo_send(struct demo *d, const char *line)
{
	if (!demo_write_line(d, line))
		demo_expect(d, false, "sp mcp takes the line");
}

/*
 * Sends a line after a malformed one: sp mcp may already have closed the
 * session and its input, so a refused write (EPIPE) is what it should do,
 * not a miss.
 */
static void
demo_send_after_bad_line(struct demo *d, const char *line)
{
	if (demo_write_line(d, line))
		return;
	if (errno == EPIPE)
		printf("   (sp mcp had already closed its input)\n");
	else
		demo_expect(d, false, "the line is written or refused by a "
		    "closed session");
}

/* Reads, shows and parses one answer (caller deletes); NULL: none. */
static cJSON *
demo_answer(struct demo *d)
{
	char *line = demo_read_line(d);
	cJSON *msg;

	if (line == NULL) {
		demo_expect(d, false, "an answer arrives within 10 s");
		return NULL;
	}
	printf("server <- %s\n", line);
	msg = cJSON_Parse(line);
	free(line);
	if (msg == NULL)
		demo_expect(d, false, "the answer is JSON");
	return msg;
}

/* The result's structuredContent.outcome ("" when absent). */
static const char *
demo_outcome(const cJSON *msg, bool *is_error)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(msg, "result");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(r, "structuredContent"),
	    "outcome");

	*is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
	    "isError"));
	return cJSON_IsString(o) ? o->valuestring : "";
}

static void
demo_step_initialize(struct demo *d)
{
	cJSON *msg;

	printf("\n# The client starts the session.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
	    "{\"elicitation\":{}},\"clientInfo\":{\"name\":\"sp-demo\",\"version\":\"1\"}}}\n");
	msg = demo_answer(d);
	demo_expect(d, cJSON_GetObjectItemCaseSensitive(msg, "result") != NULL,
	    "initialize is answered");
	cJSON_Delete(msg);
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n");
	printf("   (a notification: no answer)\n");
}

static void
demo_step_list(struct demo *d)
{
	const cJSON *tools;
	cJSON *msg;

	printf("\n# It asks which tools the policy grants.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
	msg = demo_answer(d);
	tools = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(msg, "result"), "tools");
	demo_expect(d, cJSON_GetArraySize(tools) == 2,
	    "two tools, get_item and rename_item, with their schemas");
	cJSON_Delete(msg);
}

static void
demo_step_good_call(struct demo *d)
{
	bool is_error;
	cJSON *msg;

	printf("\n# A good call: the executor adds the token and asks the "
	    "API;\n# the API's text comes back sanitized, marked as data.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":7}}}\n");
	msg = demo_answer(d);
	demo_expect(d, strcmp(demo_outcome(msg, &is_error), "ok") == 0 &&
	    !is_error, "outcome ok");
	demo_expect(d, demo_target_count(&d->target) == 1,
	    "the API saw exactly one request");
	cJSON_Delete(msg);
}

static void
demo_step_bad_call(struct demo *d)
{
	int before = demo_target_count(&d->target);
	bool is_error;
	cJSON *msg;

	printf("\n# Bad arguments: refused before anything leaves the host; "
	    "the\n# model reads why and can correct itself.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",\"arguments\":"
	    "{\"id\":\"7; rm -rf ~\"}}}\n");
	msg = demo_answer(d);
	demo_expect(d, strcmp(demo_outcome(msg, &is_error), "invalid") == 0 &&
	    is_error, "outcome invalid, isError");
	demo_expect(d, demo_target_count(&d->target) == before,
	    "the API saw no new request");
	cJSON_Delete(msg);
}

/* The elicitation/create's id, as a JSON text to answer it with. */
static char *
demo_question_id(const cJSON *msg)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");

	if (!cJSON_IsString(method) ||
	    strcmp(method->valuestring, "elicitation/create") != 0 ||
	    !cJSON_IsString(id))
		return NULL;
	return cJSON_PrintUnformatted(id);
}

static void
demo_step_confirmed_call(struct demo *d)
{
	int before = demo_target_count(&d->target);
	char line[256], *id;
	bool is_error;
	cJSON *msg;

	printf("\n# A call that needs a human: before anything is sent, the "
	    "client is\n# asked, and the human types the id again to "
	    "confirm.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rename_item\","
	    "\"arguments\":{\"id\":7,\"name\":\"blue widget\"}}}\n");
	msg = demo_answer(d);
	id = demo_question_id(msg);
	demo_expect(d, id != NULL && demo_target_count(&d->target) == before,
	    "the client is asked first; the API saw nothing yet");
	cJSON_Delete(msg);
	(void)snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{\"action\":\"accept\",\"content\":{\"id\":\"7\"}}}"
	    "\n", id != NULL ? id : "null");
	cJSON_free(id);
	demo_send(d, line);
	msg = demo_answer(d);
	demo_expect(d, strcmp(demo_outcome(msg, &is_error), "ok") == 0,
	    "confirmed: outcome ok");
	demo_expect(d, demo_target_count(&d->target) == before + 1,
	    "the API saw exactly one request, after the human's yes");
	cJSON_Delete(msg);
}

static void
demo_step_hostile(struct demo *d)
{
	const cJSON *err;
	char *extra;
	cJSON *msg;

	printf("\n# A hostile line: a valid call with a banner after it on the "
	    "same line.\n# One error, the session closes, nothing runs.\n");
	demo_send(d, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":8}}}"
	    " Server ready\n");
	demo_send_after_bad_line(d, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"get_item\",\"arguments\":{\"id\":9}}}\n");
	msg = demo_answer(d);
	err = cJSON_GetObjectItemCaseSensitive(msg, "error");
	demo_expect(d, err != NULL && cJSON_IsNull(
	    cJSON_GetObjectItemCaseSensitive(msg, "id")),
	    "one error, id null");
	cJSON_Delete(msg);
	(void)close(d->to_mcp);
	d->to_mcp = -1;
	extra = demo_read_line(d);
	demo_expect(d, extra == NULL, "nothing more: the next call was not "
	    "read");
	free(extra);
}

/* Waits for sp mcp; true when it exited with status. */
static bool
demo_mcp_exited(struct demo *d, int status)
{
	int ws;

	if (waitpid(d->mcp, &ws, 0) == -1) {
		log_error("waitpid: %s", strerror(errno));
		return false;
	}
	d->mcp = 0;
	return WIFEXITED(ws) && WEXITSTATUS(ws) == status;
}

static void
demo_remove(const struct demo *d, const char *name)
{
	char path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s/%s", d->dir, name);
	if (unlink(path) == -1 && errno != ENOENT)
		log_error("unlink %s: %s", path, strerror(errno));
}

static void
demo_cleanup(struct demo *d)
{
	if (d->to_mcp != -1)
		(void)close(d->to_mcp);
	if (d->mcp > 0) {
		(void)kill(d->mcp, SIGTERM);
		(void)waitpid(d->mcp, NULL, 0);
	}
	demo_target_stop(&d->target);
	if (d->dir[0] != '\0') {
		demo_remove(d, "demo.token");
		demo_remove(d, "policy.json");
		demo_remove(d, "audit.jsonl");
		if (rmdir(d->dir) == -1)
			log_error("rmdir %s: %s", d->dir, strerror(errno));
	}
	free(d->pending);
}

int
cmd_demo(int argc, char **argv)
{
	struct demo d;
	int hits;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: sp demo\n");
		return SP_EXIT_USAGE;
	}
	memset(&d, 0, sizeof(d));
	if (geteuid() == 0 && (d.run_as = demo_root_run_as()) == NULL)
		return SP_EXIT_CONFIG;
	d.to_mcp = d.from_mcp = d.target.hits_fd = -1;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || !demo_make_token(&d) ||
	    !demo_target_start(&d.target, d.token) || !demo_setup_files(&d) ||
	    !demo_mcp_start(&d)) {
		demo_cleanup(&d);
		return SP_EXIT_INTERNAL;
	}
	printf("# sp demo: an HTTP API on 127.0.0.1:%u wants a bearer token;\n"
	    "# sp mcp runs on a policy that declares a read-only tool and one\n"
	    "# a human must confirm.\n",
	    (unsigned)d.target.port);
	demo_step_initialize(&d);
	demo_step_list(&d);
	demo_step_good_call(&d);
	demo_step_bad_call(&d);
	demo_step_confirmed_call(&d);
	hits = demo_target_count(&d.target);
	demo_step_hostile(&d);
	demo_expect(&d, demo_mcp_exited(&d, SP_EXIT_MALFORMED),
	    "sp mcp ended with 65 (session closed after malformed input)");
	demo_expect(&d, demo_target_count(&d.target) == hits,
	    "the API saw no request from the hostile line or after it");
	printf("\n# %s\n", d.failed ? "Something did not go as expected." :
	    "Everything went as expected.");
	demo_cleanup(&d);
	return d.failed ? 1 : SP_EXIT_OK;
}
