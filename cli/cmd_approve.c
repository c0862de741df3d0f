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
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "broker/approvals.h"
#include "cli/commands.h"
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

/*
 * The uid that owns dir/approvals, when that is a directory (not a
 * symlink) nobody else may write in, in a state_dir others cannot
 * replace it in (docs/design.md section 8.3); -2 when there is none;
 * else -1 after saying why.
 */
static long
approve_dir_owner(const char *dir)
{
	char path[4096];
	struct stat st;
	const char *why = NULL;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, APPROVALS_DIR);
	if (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH) != 0 &&
	    (st.st_mode & S_ISVTX) == 0)
		why = "its state_dir is writable by others without the sticky "
		    "bit";
	else if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return -2;
		fprintf(stderr, "sp approve: %s: %s (approvers must be able to "
		    "traverse the state_dir: mode 0711 or 0755)\n", path,
		    strerror(errno));
		return -1;
	} else if (!S_ISDIR(st.st_mode))
		why = "a symlink or not a directory";
	else if ((st.st_mode & 022) != 0)
		why = "writable by its group or others";
	if (why == NULL)
		return (long)st.st_uid;
	fprintf(stderr, "sp approve: %s: %s: not a session's approvals "
	    "directory, not used\n", path, why);
	return -1;
}

/* Whether fd's listening end runs as owner; errno EPERM when not. */
static bool
approve_peer_is(int fd, long owner)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return false;
	if (len == sizeof(cred) && (long)cred.uid == owner)
		return true;
	errno = EPERM;
	return false;
}

/*
 * Connected to dir/approvals/name, or -1 (errno set): the listening end
 * must be the directory's owner, not a socket another user put there.
 */
static int
approve_connect(const char *dir, const char *name, long owner)
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
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    !approve_peer_is(fd, owner)) {
		saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Why a session's socket could not be reached, from errno. */
static const char *
approve_unreachable(int err)
{
	switch (err) {
	case EACCES:
		return "permission denied (the state_dir and approvals/ must "
		    "let approvers traverse them: mode 0711 or 0755)";
	case ECONNREFUSED:
	case ENOENT:
		return "no session listens (it ended)";
	case EPERM:
		return "its socket is not served by the approvals directory's "
		    "owner: not used";
	case ETIMEDOUT:
		return "the session did not answer";
	default:
		return strerror(err);
	}
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
			else if (r > 0 && errno == ECONNRESET && *len > 0)
				break;	/* it closed, our request unread */
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
approve_ask(const char *dir, long owner, const char *name, const cJSON *req,
    size_t *len)
{
	int fd = approve_connect(dir, name, owner), saved;
	char *reply;

	bool sent;

	if (fd == -1)
		return NULL;
	/* a broker that refuses the caller says why and closes without
	 * reading: its line may be all there is, the send failing */
	sent = approve_send(fd, req);
	saved = errno;
	(void)shutdown(fd, SHUT_WR);
	if ((reply = approve_read_all(fd, len)) != NULL && !sent && *len == 0) {
		free(reply);
		reply = NULL;
		errno = saved;
	}
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

/* What --list saw of the sessions: what it showed, who refused. */
struct approve_listing {
	size_t sessions;	/* sockets tried */
	size_t unreached;	/* of them, not listed */
	const char *why[4];	/* distinct reasons: static, or refusal */
	size_t why_count[4];
	char refusal[160];	/* the first session's refusal */
};

static void
approve_note(struct approve_listing *l, const char *why)
{
	size_t i;

	l->unreached++;
	for (i = 0; i < 4 && l->why[i] != NULL; i++)
		if (strcmp(l->why[i], why) == 0)
			break;
	if (i == 4)
		i = 3;		/* the rest counted under the last reason */
	else
		l->why[i] = why;
	l->why_count[i]++;
}

static void
approve_print_entry(const cJSON *o, void *arg)
{
	struct approve_listing *l = arg;
	const char *id = approve_str(o, "id"), *tool = approve_str(o, "tool"),
	    *msg = approve_str(o, "message"), *retype = approve_str(o, "retype"),
	    *error = approve_str(o, "error");

	if (error != NULL) {
		/* the first session's words stand for every refusal */
		if (l->refusal[0] == '\0')
			(void)snprintf(l->refusal, sizeof(l->refusal),
			    "refused: %s", error);
		approve_note(l, l->refusal);
		return;
	}
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

/* One line on stderr: how many sessions --list could not show, why. */
static void
approve_say_unreached(const struct approve_listing *l)
{
	const char *p;
	size_t i;

	fprintf(stderr, "sp approve: %zu of %zu sessions not listed:",
	    l->unreached, l->sessions);
	for (i = 0; i < 4 && l->why[i] != NULL; i++) {
		fprintf(stderr, "%s %zu ", i > 0 ? ";" : "", l->why_count[i]);
		for (p = l->why[i]; *p != '\0'; p++)
			fputc((unsigned char)*p < 0x20 ? '?' : *p, stderr);
	}
	fputc('\n', stderr);
}

/* 0 when every session was reached, or only ended ones were not; 69
 * when one could not be reached or refused the caller. */
static int
approve_list_status(const struct approve_listing *l)
{
	const char *ended = approve_unreachable(ECONNREFUSED);
	size_t i;

	if (l->unreached == 0)
		return SP_EXIT_OK;
	approve_say_unreached(l);
	for (i = 0; i < 4 && l->why[i] != NULL; i++)
		if (l->why[i] != ended)
			return SP_EXIT_UNAVAILABLE;
	return SP_EXIT_OK;
}

static int
approve_list(const char *dir, long owner)
{
	struct approve_listing l;
	char path[4096];
	cJSON *req = cJSON_CreateObject();
	struct dirent *e;
	DIR *d;
	char *reply;
	size_t len;

	memset(&l, 0, sizeof(l));
	(void)snprintf(path, sizeof(path), "%s/%s", dir, APPROVALS_DIR);
	if (req == NULL || cJSON_AddStringToObject(req, "op", "list") == NULL) {
		cJSON_Delete(req);
		return SP_EXIT_INTERNAL;
	}
	if ((d = opendir(path)) == NULL) {
		cJSON_Delete(req);
		fprintf(stderr, "sp approve: %s: %s\n", path, strerror(errno));
		return SP_EXIT_IOERR;
	}
	while ((e = readdir(d)) != NULL) {
		if (!approve_is_socket_name(e->d_name))
			continue;
		l.sessions++;
		if ((reply = approve_ask(dir, owner, e->d_name, req, &len)) ==
		    NULL) {
			approve_note(&l, approve_unreachable(errno));
			continue;
		}
		if (!approve_lines(reply, len, approve_print_entry, &l))
			approve_note(&l, "an answer that is not JSON lines");
		free(reply);
	}
	(void)closedir(d);
	cJSON_Delete(req);
	(void)fflush(stdout);
	return ferror(stdout) ? SP_EXIT_IOERR : approve_list_status(&l);
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

/* An id of --list, SESSION.CALL.DIGEST: what an answer binds to. */
struct approve_id {
	char name[128];		/* SESSION.sock */
	char session[64];
	double call;
	char digest[APPROVALS_DIGEST_HEX + 1];
};

/* n characters of s, each a lowercase hex digit. */
static bool
approve_is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return false;
	return n > 0;
}

static bool
approve_split_id(const char *id, struct approve_id *out)
{
	const char *dot = strchr(id, '.'), *last = strrchr(id, '.');
	char *end;
	unsigned long long v;

	if (dot == NULL || last == dot || (size_t)(dot - id) + 1 >
	    sizeof(out->session) || !approve_is_hex(id, (size_t)(dot - id)) ||
	    strlen(last + 1) != APPROVALS_DIGEST_HEX ||
	    !approve_is_hex(last + 1, APPROVALS_DIGEST_HEX) ||
	    !(dot[1] >= '1' && dot[1] <= '9'))
		return false;
	errno = 0;
	v = strtoull(dot + 1, &end, 10);
	if (errno != 0 || end != last || v > 9007199254740991ULL)
		return false;
	(void)snprintf(out->session, sizeof(out->session), "%.*s",
	    (int)(dot - id), id);
	(void)snprintf(out->name, sizeof(out->name), "%s%s", out->session,
	    APPROVALS_SUFFIX);
	(void)snprintf(out->digest, sizeof(out->digest), "%s", last + 1);
	out->call = (double)v;
	return true;
}

/* What the listing asks to have retyped for a's call (the caller frees
 * it), or NULL: nothing to retype, a denial, or no listing. */
static char *
approve_retype_wanted(const char *dir, long owner, const char *name,
    const struct approve_args *a)
{
	struct approve_find f = { a->id, NULL, false };
	cJSON *req;
	char *reply;
	size_t len;

	if (a->deny || (req = cJSON_CreateObject()) == NULL)
		return NULL;
	if (cJSON_AddStringToObject(req, "op", "list") != NULL &&
	    (reply = approve_ask(dir, owner, name, req, &len)) != NULL) {
		(void)approve_lines(reply, len, approve_find_entry, &f);
		free(reply);
	}
	cJSON_Delete(req);
	return f.retype;
}

/* The approve or deny request for id, bound to its session and digest,
 * with the value typed (or NULL); the caller owns it.  NULL when out of
 * memory. */
static cJSON *
approve_request(const struct approve_args *a, const struct approve_id *id,
    const char *typed)
{
	cJSON *req = cJSON_CreateObject();

	if (req == NULL || cJSON_AddStringToObject(req, "op", a->deny ? "deny" :
	    "approve") == NULL || cJSON_AddStringToObject(req, "session",
	    id->session) == NULL || cJSON_AddNumberToObject(req, "call",
	    id->call) == NULL || cJSON_AddStringToObject(req, "digest",
	    id->digest) == NULL || (typed != NULL &&
	    cJSON_AddStringToObject(req, "retyped", typed) == NULL)) {
		cJSON_Delete(req);
		return NULL;
	}
	return req;
}

/* Sends req to session name and reads the decision: 0 ok, 1 refused. */
static int
approve_decide(const char *dir, long owner, const char *name,
    const char *id, cJSON *req)
{
	const char *outcome = NULL;
	char *reply;
	size_t len;
	int status;

	if ((reply = approve_ask(dir, owner, name, req, &len)) == NULL) {
		fprintf(stderr, "sp approve: %s: session not reachable: %s\n",
		    id, approve_unreachable(errno));
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
approve_one(const char *dir, long owner, const struct approve_args *a)
{
	struct approve_id id;
	char *retype, *typed = NULL;
	cJSON *req;
	int status;

	if (!approve_split_id(a->id, &id)) {
		fprintf(stderr, "sp approve: %s: not an id of sp approve --list "
		    "(SESSION.CALL.DIGEST)\n", a->id);
		return SP_EXIT_USAGE;
	}
	retype = approve_retype_wanted(dir, owner, id.name, a);
	if (retype != NULL && (typed = approve_read_retyped(retype)) == NULL) {
		fprintf(stderr, "sp approve: %s: no value typed\n", retype);
		free(retype);
		return SP_EXIT_IOERR;
	}
	free(retype);
	req = approve_request(a, &id, typed);
	free(typed);
	if (req == NULL)
		return SP_EXIT_INTERNAL;
	status = approve_decide(dir, owner, id.name, a->id, req);
	cJSON_Delete(req);
	return status;
}

int
cmd_approve(int argc, char **argv)
{
	struct approve_args a;
	char *dir;
	long owner;
	int status;

	if (!approve_parse(argc, argv, &a)) {
		fputs(APPROVE_USAGE, stderr);
		return SP_EXIT_USAGE;
	}
	if ((dir = approve_state_dir(&a)) == NULL)
		return SP_EXIT_CONFIG;
	if ((owner = approve_dir_owner(dir)) == -1)
		status = SP_EXIT_UNAVAILABLE;
	else if (owner == -2 && a.list)
		status = SP_EXIT_OK;	/* no session ever listened */
	else if (owner == -2) {
		fprintf(stderr, "sp approve: %s: session not reachable: %s\n",
		    a.id, approve_unreachable(ENOENT));
		status = SP_EXIT_UNAVAILABLE;
	} else
		status = a.list ? approve_list(dir, owner) :
		    approve_one(dir, owner, &a);
	free(dir);
	return status;
}
