/*
 * sp approve [--config FILE | --state-dir DIR] --list
 * sp approve [--config FILE | --state-dir DIR] ID [--deny]
 *
 * The approver's side of confirm.via "operator" (docs/design.md section
 * 8.3, broker/approvals.h): it talks to the approval sockets of running
 * sessions under state_dir/approvals/.  It decides nothing: each session's
 * broker reads who connected from the kernel and refuses or passes the
 * answer on, and the executor decides.  The retyped value of a tool with
 * retype is read from the terminal (or one line of stdin), never argv,
 * which any user of the host can read.
 *
 * Exit status (docs/sp.1): 0 listed, or the answer was taken (approved:
 * the executor accepted; denied: the call was denied); 1 refused (not an
 * approver, others_only, no such waiting call, already answered, or the
 * executor did not accept: a wrong retyped value, expired); 64 usage; 69
 * the session cannot be reached (ended); 74 I/O error; 78 no state_dir.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "broker/approvals.h"
#include "broker/commands.h"
#include "common/exit.h"
#include "common/json.h"
#include "common/text_escape.h"
#include "policy/load.h"
#include "policy/source.h"

#define APPROVE_USAGE "usage: sp approve [--config FILE | --state-dir DIR] " \
	"--list\n       sp approve [--config FILE | --state-dir DIR] ID " \
	"[--deny]\n"
/* A session's broker answers at once; a decision takes the executor a
 * moment.  Generous for a loaded host. */
#define APPROVE_WAIT_MS 60000
#define APPROVE_REPLY_MAX (64 * 1024)

struct approve_args {
	const char *config;
	const char *state_dir;
	const char *id;
	bool list;
	bool deny;
};

static bool
approve_parse(int argc, char **argv, struct approve_args *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0)
			a->list = true;
		else if (strcmp(argv[i], "--deny") == 0)
			a->deny = true;
		else if ((strcmp(argv[i], "--config") == 0 ||
		    strcmp(argv[i], "--state-dir") == 0) && i + 1 < argc) {
			if (argv[i][2] == 'c')
				a->config = argv[++i];
			else
				a->state_dir = argv[++i];
		} else if (argv[i][0] != '-' && a->id == NULL)
			a->id = argv[i];
		else
			return false;
	}
	return a->list != (a->id != NULL) && !(a->list && a->deny) &&
	    !(a->config != NULL && a->state_dir != NULL);
}

/* state_dir from --state-dir or the policy; NULL after saying why. */
static char *
approve_state_dir(const struct approve_args *a)
{
	struct policy_diags diags = { 0 };
	const char *path = policy_config_path(a->config);
	struct policy *p;
	char *bytes, *dir = NULL, why[128];
	size_t len;

	if (a->state_dir != NULL)
		return strdup(a->state_dir);
	if (!policy_read_file(path, &bytes, &len, why, sizeof(why))) {
		fprintf(stderr, "sp approve: %s: cannot read the policy: %s "
		    "(--state-dir DIR names the directory instead)\n", path, why);
		return NULL;
	}
	p = policy_load(path, bytes, len, &diags);
	free(bytes);
	if (p == NULL || diags.errors > 0)
		fprintf(stderr, "sp approve: %s: the policy does not load (sp "
		    "check says why)\n", path);
	else if (p->state_dir == NULL)
		fprintf(stderr, "sp approve: %s: names no state_dir: no "
		    "session has an approval socket\n", path);
	else
		dir = strdup(p->state_dir);
	policy_free(p);
	policy_diags_free(&diags);
	return dir;
}

/* Connected to dir/approvals/name, or -1 (errno set). */
static int
approve_connect(const char *dir, const char *name)
{
	struct sockaddr_un sa;
	int fd, n, saved;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s/%s", dir,
	    APPROVALS_DIR, name);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static bool
approve_send(int fd, const cJSON *req)
{
	char *text = cJSON_PrintUnformatted(req);
	size_t len, off = 0;
	ssize_t n;
	bool ok = text != NULL;

	len = ok ? strlen(text) : 0;
	while (ok && off <= len) {
		n = off < len ? send(fd, text + off, len - off, MSG_NOSIGNAL) :
		    send(fd, "\n", 1, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			ok = false;
		else
			off += (size_t)n;
	}
	cJSON_free(text);
	return ok;
}

/* Everything the broker sends until it closes; NULL on an error. */
static char *
approve_read_all(int fd, size_t *len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *buf = malloc(APPROVE_REPLY_MAX + 1);
	ssize_t n;
	int r;

	*len = 0;
	while (buf != NULL) {
		if ((r = poll(&pfd, 1, APPROVE_WAIT_MS)) == -1 && errno == EINTR)
			continue;
		if (r <= 0 || (n = read(fd, buf + *len,
		    APPROVE_REPLY_MAX - *len)) < 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		*len += (size_t)n;
		if (*len == APPROVE_REPLY_MAX)
			break;
	}
	if (buf != NULL)
		buf[*len] = '\0';
	return buf;
}

/* One request, its reply lines; NULL (errno) when the session is gone. */
static char *
approve_ask(const char *dir, const char *name, const cJSON *req, size_t *len)
{
	int fd = approve_connect(dir, name), saved;
	char *reply;

	if (fd == -1)
		return NULL;
	if (!approve_send(fd, req)) {
		saved = errno;
		(void)close(fd);
		errno = saved;
		return NULL;
	}
	(void)shutdown(fd, SHUT_WR);
	reply = approve_read_all(fd, len);
	saved = errno;
	(void)close(fd);
	errno = saved;
	return reply;
}

/* A text a target or a model chose, safe for a terminal: every
 * character that does not show what it is escaped as the question's
 * values are (common/text_escape.h); the executor escaped those already,
 * so they print as they came. */
static void
approve_print_text(const char *s)
{
	char e[TEXT_ESCAPE_MAX];
	size_t i = 0, n = strlen(s), elen, chars;

	while (i < n) {
		i += text_escape_next((const uint8_t *)s + i, n - i, 0, e,
		    &elen, &chars);
		fputs(e, stdout);
	}
}

/* Each line's parsed object to fn; false when a line is not one. */
static bool
approve_lines(char *reply, size_t len, void (*fn)(const cJSON *, void *),
    void *arg)
{
	struct json_doc doc;
	struct json_error err;
	char *line = reply, *nl;

	while (line < reply + len) {
		if ((nl = memchr(line, '\n', (size_t)(reply + len - line))) ==
		    NULL)
			return false;
		memset(&doc, 0, sizeof(doc));
		if (!json_parse_frame((const uint8_t *)line,
		    (size_t)(nl - line), 4, &doc, &err) ||
		    !cJSON_IsObject(doc.root))
			return false;
		fn(doc.root, arg);
		json_doc_free(&doc);
		line = nl + 1;
	}
	return true;
}

static const char *
approve_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double
approve_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void
approve_print_entry(const cJSON *o, void *arg)
{
	const char *id = approve_str(o, "id"), *tool = approve_str(o, "tool"),
	    *msg = approve_str(o, "message"), *retype = approve_str(o, "retype");

	(void)arg;
	if (id == NULL || tool == NULL || msg == NULL)
		return;
	printf("%s\t%s\tuid %.0f\t%.0fs\t", id, tool,
	    approve_num(o, "requester_uid"), approve_num(o, "age_s"));
	approve_print_text(msg);
	if (retype != NULL) {
		fputs("\t(retype ", stdout);
		approve_print_text(retype);
		putchar(')');
	}
	putchar('\n');
}

static bool
approve_is_socket_name(const char *name)
{
	size_t n = strlen(name), s = sizeof(APPROVALS_SUFFIX) - 1;

	return n > s && strcmp(name + n - s, APPROVALS_SUFFIX) == 0 &&
	    name[0] != '.';
}

static int
approve_list(const char *dir)
{
	char path[4096];
	cJSON *req = cJSON_CreateObject();
	struct dirent *e;
	DIR *d;
	char *reply;
	size_t len;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, APPROVALS_DIR);
	if (req == NULL || cJSON_AddStringToObject(req, "op", "list") == NULL) {
		cJSON_Delete(req);
		return SP_EXIT_INTERNAL;
	}
	if ((d = opendir(path)) == NULL) {
		cJSON_Delete(req);
		if (errno == ENOENT)
			return SP_EXIT_OK;	/* no session ever listened */
		fprintf(stderr, "sp approve: %s: %s\n", path, strerror(errno));
		return SP_EXIT_IOERR;
	}
	while ((e = readdir(d)) != NULL) {
		if (!approve_is_socket_name(e->d_name))
			continue;
		/* a session that ended, or whose socket is not ours to reach */
		if ((reply = approve_ask(dir, e->d_name, req, &len)) == NULL)
			continue;
		if (!approve_lines(reply, len, approve_print_entry, NULL))
			fprintf(stderr, "sp approve: %s: an answer that is not "
			    "JSON lines\n", e->d_name);
		free(reply);
	}
	(void)closedir(d);
	cJSON_Delete(req);
	(void)fflush(stdout);
	return ferror(stdout) ? SP_EXIT_IOERR : SP_EXIT_OK;
}

struct approve_find {
	const char *id;
	char *retype;		/* owned: the param to retype, if listed */
	bool found;
};

static void
approve_find_entry(const cJSON *o, void *arg)
{
	struct approve_find *f = arg;
	const char *id = approve_str(o, "id"), *retype = approve_str(o,
	    "retype");

	if (id == NULL || strcmp(id, f->id) != 0)
		return;
	f->found = true;
	if (retype != NULL && f->retype == NULL)
		f->retype = strdup(retype);
}

/* One line typed by the approver: on the terminal, else stdin. */
static char *
approve_read_retyped(const char *param)
{
	FILE *tty = fopen("/dev/tty", "r+");
	FILE *in = tty != NULL && isatty(STDIN_FILENO) ? tty : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (in == tty) {
		fputs("Retype ", tty);
		for (; *param != '\0'; param++)
			fputc((unsigned char)*param < 0x20 ? '?' : *param, tty);
		fputs(": ", tty);
		(void)fflush(tty);
	}
	n = getline(&line, &cap, in);
	if (tty != NULL)
		(void)fclose(tty);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	return line;
}

static void
approve_take_decision(const cJSON *o, void *arg)
{
	const char **out = arg;
	const char *d = approve_str(o, "decision"), *e = approve_str(o, "error");

	if (d != NULL) {
		printf("%s\n", d);
		if (*out == NULL)
			*out = strcmp(d, "accepted") == 0 ||
			    strcmp(d, "denied") == 0 ? "ok" : "refused";
	} else if (e != NULL) {
		fputs("sp approve: refused: ", stderr);
		for (; *e != '\0'; e++)
			fputc((unsigned char)*e < 0x20 ? '?' : *e, stderr);
		fputc('\n', stderr);
		*out = "refused";
	}
}

/* SESSION.CALL into the socket's name and the call number. */
static bool
approve_split_id(const char *id, char *name, size_t size, double *call)
{
	const char *dot = strrchr(id, '.');
	char *end;
	unsigned long long v;
	size_t i;

	if (dot == NULL || dot == id || (size_t)(dot - id) + 6 > size)
		return false;
	for (i = 0; id + i < dot; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	errno = 0;
	v = strtoull(dot + 1, &end, 10);
	if (errno != 0 || *end != '\0' || end == dot + 1 || v == 0 ||
	    v > 9007199254740991ULL)
		return false;
	(void)snprintf(name, size, "%.*s%s", (int)(dot - id), id,
	    APPROVALS_SUFFIX);
	*call = (double)v;
	return true;
}

/* What the listing asks to have retyped for a's call (the caller frees
 * it), or NULL: nothing to retype, a denial, or no listing. */
static char *
approve_retype_wanted(const char *dir, const char *name,
    const struct approve_args *a)
{
	struct approve_find f = { a->id, NULL, false };
	cJSON *req;
	char *reply;
	size_t len;

	if (a->deny || (req = cJSON_CreateObject()) == NULL)
		return NULL;
	if (cJSON_AddStringToObject(req, "op", "list") != NULL &&
	    (reply = approve_ask(dir, name, req, &len)) != NULL) {
		(void)approve_lines(reply, len, approve_find_entry, &f);
		free(reply);
	}
	cJSON_Delete(req);
	return f.retype;
}

/* The approve or deny request for call, with the value typed (or NULL);
 * the caller owns it.  NULL when out of memory. */
static cJSON *
approve_request(const struct approve_args *a, double call, const char *typed)
{
	cJSON *req = cJSON_CreateObject();

	if (req == NULL || cJSON_AddStringToObject(req, "op", a->deny ? "deny" :
	    "approve") == NULL || cJSON_AddNumberToObject(req, "call", call) ==
	    NULL || (typed != NULL &&
	    cJSON_AddStringToObject(req, "retyped", typed) == NULL)) {
		cJSON_Delete(req);
		return NULL;
	}
	return req;
}

/* Sends req to session name and reads the decision: 0 ok, 1 refused. */
static int
approve_decide(const char *dir, const char *name, const char *id, cJSON *req)
{
	const char *outcome = NULL;
	char *reply;
	size_t len;
	int status;

	if ((reply = approve_ask(dir, name, req, &len)) == NULL) {
		fprintf(stderr, "sp approve: %s: session not reachable (it "
		    "ended?): %s\n", id, strerror(errno));
		return SP_EXIT_UNAVAILABLE;
	}
	if (!approve_lines(reply, len, approve_take_decision, &outcome) ||
	    outcome == NULL) {
		fprintf(stderr, "sp approve: %s: no decision came back\n", id);
		status = SP_EXIT_IOERR;
	} else
		status = strcmp(outcome, "ok") == 0 ? SP_EXIT_OK : 1;
	free(reply);
	return status;
}

static int
approve_one(const char *dir, const struct approve_args *a)
{
	char name[128], *retype, *typed = NULL;
	cJSON *req;
	double call;
	int status;

	if (!approve_split_id(a->id, name, sizeof(name), &call)) {
		fprintf(stderr, "sp approve: %s: not an id of sp approve --list "
		    "(SESSION.CALL)\n", a->id);
		return SP_EXIT_USAGE;
	}
	retype = approve_retype_wanted(dir, name, a);
	if (retype != NULL && (typed = approve_read_retyped(retype)) == NULL) {
		fprintf(stderr, "sp approve: %s: no value typed\n", retype);
		free(retype);
		return SP_EXIT_IOERR;
	}
	free(retype);
	req = approve_request(a, call, typed);
	free(typed);
	if (req == NULL)
		return SP_EXIT_INTERNAL;
	status = approve_decide(dir, name, a->id, req);
	cJSON_Delete(req);
	return status;
}

int
cmd_approve(int argc, char **argv)
{
	struct approve_args a;
	char *dir;
	int status;

	if (!approve_parse(argc, argv, &a)) {
		fputs(APPROVE_USAGE, stderr);
		return SP_EXIT_USAGE;
	}
	if ((dir = approve_state_dir(&a)) == NULL)
		return SP_EXIT_CONFIG;
	status = a.list ? approve_list(dir) : approve_one(dir, &a);
	free(dir);
	return status;
}
