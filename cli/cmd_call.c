/*
 * sp call [--config FILE] [--profile NAME] TOOL [ARGS_JSON]: one
 * tools/call for an operator trying a tool (docs/design.md section 3).
 * Nothing here checks or runs the call: an sp mcp is started on this
 * very binary, whose client is this process on a socket pair (so its
 * peer credentials are the operator's, as for a local client), fed a
 * fixed script (initialize, notifications/initialized, the tools/call)
 * and then end of input; the same three processes, checks and audit as
 * any session then decide.  The call's answer is printed on stdout as
 * one JSON line (its result, or its JSON-RPC error); exit 0 when the
 * outcome is ok, 1 for any other outcome, sp mcp's own status when no
 * answer came (78 for a broken policy, say: its refusal is on stderr).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "cli/cmd_args.h"
#include "cli/commands.h"
#include "common/json.h"
#include "common/log.h"
#include "common/spawn.h"

#define CALL_ARGS_MAX (1024 * 1024)	/* the default max_frame_bytes */
#define CALL_OUTPUT_MAX (16 * 1024 * 1024)
#define CALL_ID 1

struct call_io {
	char *out;		/* what sp mcp wrote, owned */
	size_t out_len;
};

/* ARGS_JSON: one JSON object, read by the project's strict parser. */
static bool
call_args_ok(const char *text)
{
	struct json_doc doc;
	struct json_error err;
	size_t len = strlen(text);
	bool ok;

	if (len > CALL_ARGS_MAX || !json_parse_frame((const uint8_t *)text,
	    len, JSON_DEPTH_DEFAULT, &doc, &err)) {
		log_error("ARGS_JSON is not JSON%s%s", len > CALL_ARGS_MAX ?
		    "" : ": ", len > CALL_ARGS_MAX ? " of at most 1 MiB" :
		    err.reason);
		return false;
	}
	ok = cJSON_IsObject(doc.root);
	if (!ok)
		log_error("ARGS_JSON must be a JSON object");
	json_doc_free(&doc);
	return ok;
}

/*
 * The three lines of the script.  args is spliced as written (after
 * call_args_ok()), so numbers reach the session exactly as the operator
 * typed them; a newline there can only be whitespace and becomes a space.
 */
static char *
call_script(const char *tool, const char *args)
{
	cJSON *name = cJSON_CreateString(tool);
	char *quoted, *script = NULL, *p;

	if (name == NULL || (quoted = cJSON_PrintUnformatted(name)) == NULL) {
		cJSON_Delete(name);
		return NULL;
	}
	cJSON_Delete(name);
	if (asprintf(&script,
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"sp call\","
	    "\"version\":\"%s\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
	    "\"params\":{\"name\":%s,\"arguments\":", PACKAGE_VERSION, CALL_ID,
	    quoted) < 0)
		script = NULL;
	cJSON_free(quoted);
	if (script == NULL)
		return NULL;
	/* the arguments, then "}}\n" and its NUL */
	if ((p = realloc(script, strlen(script) + strlen(args) + 4)) == NULL) {
		free(script);
		return NULL;
	}
	script = p;
	p = script + strlen(script);
	for (; *args != '\0'; args++)
		*p++ = *args == '\n' || *args == '\r' ? ' ' : *args;
	memcpy(p, "}}\n", 4);
	return script;
}

static bool
call_write_all(int fd, const char *s, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, s, len)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		s += n;
		len -= (size_t)n;
	}
	return true;
}

/* Everything sp mcp writes, up to CALL_OUTPUT_MAX. */
static bool
call_read_all(int fd, struct call_io *io)
{
	size_t cap = 0;
	ssize_t n;
	char *grown;

	for (;;) {
		if (io->out_len + 65536 + 1 > cap) {
			if (cap >= CALL_OUTPUT_MAX) {
				log_error("the session's output is over %d bytes",
				    CALL_OUTPUT_MAX);
				return false;
			}
			cap = cap ? cap * 2 : 65536 * 2;
			if ((grown = realloc(io->out, cap)) == NULL)
				return false;
			io->out = grown;
		}
		n = read(fd, io->out + io->out_len, cap - io->out_len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		io->out_len += (size_t)n;
	}
	if (io->out != NULL)
		io->out[io->out_len] = '\0';
	return n == 0;
}

/* The session: sp mcp on a socket pair, the script in, its output out. */
static int
call_session(const struct cmd_args *a, const char *script, struct call_io *io)
{
	char *argv[8];
	struct spawn_fd map[2];
	int in[2], out[2], status, n = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) == -1) {
		log_error("socketpair: %s", strerror(errno));
		return SP_EXIT_INTERNAL;
	}
	argv[n++] = (char *)"sp";
	argv[n++] = (char *)"mcp";
	if (a->config != NULL) {
		argv[n++] = (char *)"--config";
		argv[n++] = (char *)a->config;
	}
	if (a->profile != NULL) {
		argv[n++] = (char *)"--profile";
		argv[n++] = (char *)a->profile;
	}
	argv[n] = NULL;
	map[0].from = in[1];
	map[0].to = STDIN_FILENO;
	map[1].from = out[1];
	map[1].to = STDOUT_FILENO;
	if ((pid = spawn_child("/proc/self/exe", argv, map, 2)) == -1) {
		log_error("fork: %s", strerror(errno));
		return SP_EXIT_INTERNAL;
	}
	(void)close(in[1]);
	(void)close(out[1]);
	if (!call_write_all(in[0], script, strlen(script)))
		log_warn("the session ended before it read the call");
	(void)shutdown(in[0], SHUT_WR);
	(void)call_read_all(out[0], io);
	(void)close(in[0]);
	(void)close(out[0]);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return SP_EXIT_INTERNAL;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return SP_EXIT_INTERNAL;
}

/* The answer with id, parsed from io's lines (caller frees), or NULL. */
static cJSON *
call_answer(const struct call_io *io, int id)
{
	const char *line = io->out, *nl;
	cJSON *m, *mid;
	char *copy;

	while (line != NULL && *line != '\0') {
		nl = strchr(line, '\n');
		copy = strndup(line, nl != NULL ? (size_t)(nl - line) :
		    strlen(line));
		m = copy != NULL ? cJSON_Parse(copy) : NULL;
		free(copy);
		mid = cJSON_GetObjectItemCaseSensitive(m, "id");
		if (cJSON_IsNumber(mid) && mid->valuedouble == id)
			return m;
		cJSON_Delete(m);
		line = nl != NULL ? nl + 1 : NULL;
	}
	return NULL;
}

/* Prints what answered the call; 0 for an ok outcome, else 1. */
static int
call_print(const cJSON *answer)
{
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(answer,
	    "result");
	const cJSON *part = result != NULL ? result :
	    cJSON_GetObjectItemCaseSensitive(answer, "error");
	char *text;
	bool failed;

	failed = result == NULL || cJSON_IsTrue(
	    cJSON_GetObjectItemCaseSensitive(result, "isError"));
	if (part == NULL || (text = cJSON_PrintUnformatted(part)) == NULL)
		return 1;
	printf("%s\n", text);
	cJSON_free(text);
	if (fflush(stdout) != 0)
		return SP_EXIT_IOERR;
	return failed ? 1 : 0;
}

/* No answer to the call: what the session said instead. */
static int
call_no_answer(const struct call_io *io, int status)
{
	cJSON *init = call_answer(io, 0);
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(init, "error");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");

	if (cJSON_IsString(msg))
		log_error("%s", msg->valuestring);
	else
		log_error("the session ended (status %d) without answering "
		    "the call", status);
	cJSON_Delete(init);
	return status != SP_EXIT_OK ? status : SP_EXIT_INTERNAL;
}

int
cmd_call(int argc, char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct call_io io = { 0 };
	struct cmd_args a;
	const char *args;
	cJSON *answer;
	char *script;
	int status;

	if (!cmd_args_parse(argc, argv, CMD_ARG_PROFILE | CMD_ARG_WORDS, &a) ||
	    a.word_count < 1 || a.word_count > 2) {
		log_error("usage: sp call [--config FILE] [--profile NAME] TOOL "
		    "[ARGS_JSON]");
		return SP_EXIT_USAGE;
	}
	args = a.word_count == 2 ? a.words[1] : "{}";
	if (!call_args_ok(args))
		return SP_EXIT_USAGE;
	if ((script = call_script(a.words[0], args)) == NULL) {
		log_error("out of memory");
		return SP_EXIT_INTERNAL;
	}
	/* a session that ends early is an EPIPE on the script, not a death */
	(void)sigaction(SIGPIPE, &ign, NULL);
	status = call_session(&a, script, &io);
	free(script);
	if ((answer = call_answer(&io, CALL_ID)) != NULL)
		status = call_print(answer);
	else
		status = call_no_answer(&io, status);
	cJSON_Delete(answer);
	free(io.out);
	return status;
}
