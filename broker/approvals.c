/*
 * The approval socket of a session (broker/approvals.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "broker/approvals.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "policy/startcheck.h"

/* Supplementary groups read of a connection; more are not looked at. */
#define APPROVALS_GROUPS_MAX 64

struct approvals_client;

/* A call that waits; free slot when call_id is 0. */
struct approvals_pending {
	uint64_t call_id;
	uint32_t tool_index;
	struct record_confirm_challenge challenge;
	char *message;			/* owned */
	char digest[APPROVALS_DIGEST_HEX + 1];	/* of what --list shows */
	uint64_t since_ms;		/* monotonic */
	bool answered;			/* an OPERATOR_ANSWER went out */
	bool denied;
	uint32_t approver_uid;
	struct approvals_client *waiting;	/* told the decision, or NULL */
};

struct approvals_client {
	struct approvals *ap;
	struct bufferevent *bev;	/* NULL: free slot */
	struct event *timer;
	uid_t uid;
	gid_t gid;
	gid_t groups[APPROVALS_GROUPS_MAX];
	size_t group_count;
};

struct approvals {
	const struct policy *policy;
	char session[40];
	uid_t requester;
	int dir_fd;			/* state_dir/approvals, O_PATH */
	int listen_fd;
	char name[64];			/* SESSION.sock, in dir_fd */
	struct event *ev_accept;
	approvals_send_fn send;
	void *send_arg;
	struct approvals_pending *pending;	/* max_pending slots */
	size_t max_pending;
	struct approvals_client clients[APPROVALS_CLIENTS_MAX];
};

bool
approvals_needed(const struct policy *policy)
{
	size_t i;

	for (i = 0; i < policy->tool_count; i++)
		if (policy->tools[i].confirm &&
		    policy->tools[i].confirm_spec.via_operator)
			return true;
	return false;
}

/*
 * state_dir/approvals, the broker's own: made 0755 when missing (sp
 * approve --list reads it), else used only when it is a directory (not
 * a symlink) owned by the broker's uid and writable by nobody else.
 * Another user's directory could hold sockets swapped or served by
 * that user (docs/design.md section 8.3).  Its fd, or -1 after logging.
 */
static int
approvals_own_dir(const char *state_dir)
{
	struct stat st;
	const char *why = NULL;
	int sfd, fd = -1;

	if ((sfd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(sfd, &st) == -1) {
		log_error("state_dir %s: %s", state_dir, strerror(errno));
		if (sfd != -1)
			(void)close(sfd);
		return -1;
	}
	if ((why = policy_state_dir_shared_why(&st)) == NULL &&
	    mkdirat(sfd, APPROVALS_DIR, 0755) == -1 && errno != EEXIST)
		why = strerror(errno);
	else if (why == NULL && (fd = openat(sfd, APPROVALS_DIR, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		why = errno == ELOOP || errno == ENOTDIR ? "a symlink or not a "
		    "directory" : strerror(errno);
	else if (why == NULL && fstat(fd, &st) == -1)
		why = strerror(errno);
	else if (why == NULL)
		why = policy_approvals_dir_why(&st);
	/* made 0700 under umask 077 */
	if (why == NULL && fchmod(fd, 0755) == -1)
		why = strerror(errno);
	(void)close(sfd);
	if (why == NULL)
		return fd;
	log_error("%s/%s: %s: not sp's own approvals directory (sp runs as "
	    "uid %u); remove it and let sp make it", state_dir, APPROVALS_DIR,
	    why, (unsigned)geteuid());
	if (fd != -1)
		(void)close(fd);
	return -1;
}

/*
 * Bound through the directory's fd (/proc/self/fd/N/NAME), so the socket
 * lands in the directory checked whatever its path now leads to; mode
 * 0666: SO_PEERCRED decides who gets further than accept (design.md
 * section 8.3), so an approver listed by uid alone reaches it too.
 */
static bool
approvals_bind(struct approvals *ap)
{
	struct sockaddr_un sa;
	int n;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s",
	    ap->dir_fd, ap->name);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path) ||
	    (ap->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(ap->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		log_error("approval socket %s: %s", ap->name, strerror(errno));
		return false;
	}
	if (fchmodat(ap->dir_fd, ap->name, 0666, 0) == -1 ||
	    listen(ap->listen_fd, APPROVALS_CLIENTS_MAX) == -1) {
		log_error("approval socket %s: %s", ap->name, strerror(errno));
		(void)unlinkat(ap->dir_fd, ap->name, 0);
		return false;
	}
	return true;
}

struct approvals *
approvals_open(const struct policy *policy, const char *session_id,
    uid_t requester, size_t max_pending)
{
	struct approvals *ap = calloc(1, sizeof(*ap));

	if (ap == NULL || (ap->pending = calloc(max_pending ? max_pending : 1,
	    sizeof(*ap->pending))) == NULL) {
		log_error("approvals: out of memory");
		free(ap);
		return NULL;
	}
	ap->policy = policy;
	ap->requester = requester;
	ap->max_pending = max_pending ? max_pending : 1;
	ap->listen_fd = -1;
	(void)snprintf(ap->session, sizeof(ap->session), "%s", session_id);
	(void)snprintf(ap->name, sizeof(ap->name), "%s%s", session_id,
	    APPROVALS_SUFFIX);
	if ((ap->dir_fd = approvals_own_dir(policy->state_dir)) == -1 ||
	    !approvals_bind(ap)) {
		approvals_free(ap);
		return NULL;
	}
	return ap;
}

int
approvals_dir_fd(const struct approvals *ap)
{
	return ap != NULL ? ap->dir_fd : -1;
}

int
approvals_listen_fd(const struct approvals *ap)
{
	return ap != NULL ? ap->listen_fd : -1;
}

static void
approvals_client_close(struct approvals_client *cl)
{
	struct approvals *ap = cl->ap;
	size_t i;

	for (i = 0; i < ap->max_pending; i++)
		if (ap->pending[i].waiting == cl)
			ap->pending[i].waiting = NULL;
	if (cl->timer != NULL)
		event_free(cl->timer);
	if (cl->bev != NULL)
		bufferevent_free(cl->bev);	/* closes the fd */
	memset(cl, 0, sizeof(*cl));
	cl->ap = ap;
}

/* Writes one line of o, then (when last) closes once it is sent. */
static void
approvals_reply(struct approvals_client *cl, cJSON *o, bool last)
{
	char *text = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	if (text == NULL || bufferevent_write(cl->bev, text, strlen(text)) ||
	    bufferevent_write(cl->bev, "\n", 1)) {
		log_error("approvals: reply not sent");
		cJSON_free(text);
		approvals_client_close(cl);
		return;
	}
	cJSON_free(text);
	/* the write callback closes once the output is drained */
	if (last)
		bufferevent_disable(cl->bev, EV_READ);
}

static void
approvals_error(struct approvals_client *cl, const char *why)
{
	cJSON *o = cJSON_CreateObject();

	if (o != NULL)
		(void)cJSON_AddStringToObject(o, "error", why);
	approvals_reply(cl, o, true);
	cJSON_Delete(o);
}

static bool
approvals_id_listed(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Whether the kernel names the connection's uid or one of its groups
 * among tool's approvers. */
static bool
approvals_listed(const struct approvals_client *cl,
    const struct policy_tool *tool)
{
	const struct policy_confirm *c = &tool->confirm_spec;
	bool listed;
	size_t i;

	listed = approvals_id_listed(c->approver_uids, c->approver_uid_count,
	    (uint32_t)cl->uid) || approvals_id_listed(c->approver_gids,
	    c->approver_gid_count, (uint32_t)cl->gid);
	for (i = 0; !listed && i < cl->group_count; i++)
		listed = approvals_id_listed(c->approver_gids,
		    c->approver_gid_count, (uint32_t)cl->groups[i]);
	return listed;
}

/* The kernel's word on who connected against the tool's approvers. */
static const char *
approvals_refusal(const struct approvals *ap,
    const struct approvals_client *cl, const struct policy_tool *tool)
{
	if (!approvals_listed(cl, tool))
		return "you are not among this tool's approvers";
	if (tool->confirm_spec.others_only && cl->uid == ap->requester)
		return "this tool needs another person's approval "
		    "(others_only): you asked for it";
	return NULL;
}

/* Whether the connection is an approver of any operator tool: nobody
 * else gets a request read (the socket is 0666). */
static bool
approvals_any_listed(const struct approvals *ap,
    const struct approvals_client *cl)
{
	const struct policy_tool *tool;
	size_t i;

	for (i = 0; i < ap->policy->tool_count; i++) {
		tool = &ap->policy->tools[i];
		if (tool->confirm && tool->confirm_spec.via_operator &&
		    approvals_listed(cl, tool))
			return true;
	}
	return false;
}

static struct approvals_pending *
approvals_find(struct approvals *ap, uint64_t call_id)
{
	size_t i;

	if (call_id == 0)
		return NULL;
	for (i = 0; i < ap->max_pending; i++)
		if (ap->pending[i].call_id == call_id)
			return &ap->pending[i];
	return NULL;
}

static cJSON *
approvals_entry(const struct approvals *ap, const struct approvals_pending *p)
{
	const struct policy_tool *tool = &ap->policy->tools[p->tool_index];
	const struct policy_confirm *c = &tool->confirm_spec;
	cJSON *o = cJSON_CreateObject();
	char id[96];
	bool ok;

	(void)snprintf(id, sizeof(id), "%s.%" PRIu64 ".%s", ap->session,
	    p->call_id, p->digest);
	ok = o != NULL && cJSON_AddStringToObject(o, "id", id) != NULL &&
	    cJSON_AddStringToObject(o, "tool", tool->name) != NULL &&
	    cJSON_AddStringToObject(o, "message", p->message) != NULL &&
	    cJSON_AddNumberToObject(o, "requester_uid", ap->requester) !=
	    NULL && cJSON_AddNumberToObject(o, "age_s", (double)
	    ((clock_monotonic_ms() - p->since_ms) / 1000)) != NULL &&
	    (c->retype == POLICY_CONFIRM_NO_RETYPE ||
	    cJSON_AddStringToObject(o, "retype",
	    tool->params[c->retype].name) != NULL);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static void
approvals_list(struct approvals_client *cl)
{
	struct approvals *ap = cl->ap;
	const struct approvals_pending *p;
	cJSON *o;
	size_t i;

	for (i = 0; i < ap->max_pending; i++) {
		p = &ap->pending[i];
		if (p->call_id == 0 || p->answered ||
		    approvals_refusal(ap, cl,
		    &ap->policy->tools[p->tool_index]) != NULL)
			continue;
		if ((o = approvals_entry(ap, p)) == NULL) {
			approvals_error(cl, "out of memory");
			return;
		}
		approvals_reply(cl, o, false);
		cJSON_Delete(o);
		if (cl->bev == NULL)
			return;
	}
	/* the end of the list: the connection closes */
	if (evbuffer_get_length(bufferevent_get_output(cl->bev)) == 0)
		approvals_client_close(cl);
}

/* "call": a positive integer; 0 when it is not one. */
static uint64_t
approvals_call_id(const cJSON *req)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "call");

	if (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
	    v->valuedouble > 9007199254740991.0 ||
	    v->valuedouble != (double)(uint64_t)v->valuedouble)
		return 0;
	return (uint64_t)v->valuedouble;
}

/*
 * Whether req names this session and exactly the waiting call p as
 * --list showed it (its digest): an answer that reached this socket under
 * another session's name, or for another question, is not passed on.
 */
static bool
approvals_bound(const struct approvals *ap, const cJSON *req,
    const struct approvals_pending *p)
{
	const cJSON *session = cJSON_GetObjectItemCaseSensitive(req, "session");
	const cJSON *digest = cJSON_GetObjectItemCaseSensitive(req, "digest");

	return cJSON_IsString(session) && cJSON_IsString(digest) &&
	    strcmp(session->valuestring, ap->session) == 0 &&
	    strcmp(digest->valuestring, p->digest) == 0;
}

static void
approvals_answer(struct approvals_client *cl, const cJSON *req, bool accept)
{
	struct approvals *ap = cl->ap;
	const cJSON *typed = cJSON_GetObjectItemCaseSensitive(req, "retyped");
	struct approvals_pending *p = approvals_find(ap, approvals_call_id(req));
	struct record_operator_answer a;
	const char *why;

	if (p == NULL) {
		approvals_error(cl, "no call of this session waits for that "
		    "approval (it ended, or never was)");
		return;
	}
	if (!approvals_bound(ap, req, p)) {
		log_warn("approvals: uid %u answered call %" PRIu64 " for "
		    "another session or question: not passed on",
		    (unsigned)cl->uid, p->call_id);
		approvals_error(cl, "this is not the call that ID names (another "
		    "session's socket, or another question): nothing was "
		    "passed on; list again");
		return;
	}
	if ((why = approvals_refusal(ap, cl,
	    &ap->policy->tools[p->tool_index])) != NULL) {
		log_warn("approvals: uid %u refused for call %" PRIu64 ": %s",
		    (unsigned)cl->uid, p->call_id, why);
		approvals_error(cl, why);
		return;
	}
	if (p->answered) {
		approvals_error(cl, "this call was already answered");
		return;
	}
	if (typed != NULL && (!accept || !cJSON_IsString(typed))) {
		approvals_error(cl, "retyped: a string, with an approval only");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.approver_uid = (uint32_t)cl->uid;
	a.answer.call_id = p->call_id;
	a.answer.verdict = accept ? RECORD_CONFIRM_ACCEPT :
	    RECORD_CONFIRM_DECLINE;
	a.answer.challenge = p->challenge;
	if (typed != NULL) {
		a.answer.has_retyped = true;
		a.answer.retyped.ptr = typed->valuestring;
		a.answer.retyped.len = strlen(typed->valuestring);
	}
	if (!ap->send(ap->send_arg, &a)) {
		approvals_error(cl, "the approval could not be passed on");
		return;
	}
	p->answered = true;
	p->denied = !accept;
	p->approver_uid = (uint32_t)cl->uid;
	p->waiting = cl;
	log_info("approvals: uid %u %s call %" PRIu64, (unsigned)cl->uid,
	    accept ? "approved" : "denied", p->call_id);
	bufferevent_disable(cl->bev, EV_READ);
	if (cl->timer != NULL)
		(void)event_del(cl->timer);	/* waits for the decision */
}

static void
approvals_request(struct approvals_client *cl, const char *line, size_t len)
{
	struct json_doc doc;
	struct json_error err;
	const cJSON *op;

	memset(&doc, 0, sizeof(doc));
	if (!json_parse_frame((const uint8_t *)line, len, 4, &doc, &err) ||
	    !cJSON_IsObject(doc.root) ||
	    !cJSON_IsString(op = cJSON_GetObjectItemCaseSensitive(doc.root,
	    "op"))) {
		json_doc_free(&doc);
		approvals_error(cl, "not a request");
		return;
	}
	if (strcmp(op->valuestring, "list") == 0)
		approvals_list(cl);
	else if (strcmp(op->valuestring, "approve") == 0)
		approvals_answer(cl, doc.root, true);
	else if (strcmp(op->valuestring, "deny") == 0)
		approvals_answer(cl, doc.root, false);
	else
		approvals_error(cl, "op: list, approve or deny");
	json_doc_free(&doc);
}

static void
approvals_on_read(struct bufferevent *bev, void *arg)
{
	struct approvals_client *cl = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;
	char *line;

	if ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) == NULL) {
		if (evbuffer_get_length(in) > APPROVALS_LINE_MAX)
			approvals_error(cl, "request too long");
		return;
	}
	bufferevent_disable(bev, EV_READ);	/* one request per connection */
	approvals_request(cl, line, len);
	free(line);
}

/* An approve or deny that waits for the executor's decision. */
static bool
approvals_waiting(const struct approvals_client *cl)
{
	size_t i;

	for (i = 0; i < cl->ap->max_pending; i++)
		if (cl->ap->pending[i].waiting == cl)
			return true;
	return false;
}

static void
approvals_on_write(struct bufferevent *bev, void *arg)
{
	struct approvals_client *cl = arg;

	/* reading was turned off once the last line was queued */
	if ((bufferevent_get_enabled(bev) & EV_READ) == 0 &&
	    !approvals_waiting(cl))
		approvals_client_close(cl);
}

static void
approvals_on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	approvals_client_close(arg);
}

static void
approvals_on_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	approvals_client_close(arg);
}

/* The kernel's identity of the connection; false when it gives none. */
static bool
approvals_peer(struct approvals_client *cl, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred))
		return false;
	cl->uid = cred.uid;
	cl->gid = cred.gid;
	len = sizeof(cl->groups);
	/* ERANGE: more than APPROVALS_GROUPS_MAX; the primary gid still
	 * counts, the rest are not looked at */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, cl->groups, &len) == 0)
		cl->group_count = len / sizeof(cl->groups[0]);
	return true;
}

static struct approvals_client *
approvals_free_slot(struct approvals *ap)
{
	size_t i;

	for (i = 0; i < APPROVALS_CLIENTS_MAX; i++)
		if (ap->clients[i].bev == NULL)
			return &ap->clients[i];
	return NULL;
}

static void
approvals_on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct approvals *ap = arg;
	struct approvals_client *cl;
	struct timeval tv = { APPROVALS_CLIENT_TIMEOUT_S, 0 };
	int fd;

	(void)what;
	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) ==
	    -1)
		return;		/* EAGAIN, or the peer left: nothing to do */
	if ((cl = approvals_free_slot(ap)) == NULL) {
		log_warn("approvals: %d connections already: refused",
		    APPROVALS_CLIENTS_MAX);
		(void)close(fd);
		return;
	}
	cl->ap = ap;
	if (!approvals_peer(cl, fd) ||
	    (cl->bev = bufferevent_socket_new(event_get_base(ap->ev_accept),
	    fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		(void)close(fd);
		memset(cl, 0, sizeof(*cl));
		return;
	}
	bufferevent_setcb(cl->bev, approvals_on_read, approvals_on_write,
	    approvals_on_event, cl);
	bufferevent_setwatermark(cl->bev, EV_READ, 0, APPROVALS_LINE_MAX + 1);
	if ((cl->timer = evtimer_new(event_get_base(ap->ev_accept),
	    approvals_on_timeout, cl)) == NULL || evtimer_add(cl->timer, &tv) ||
	    bufferevent_enable(cl->bev, EV_WRITE) == -1) {
		approvals_client_close(cl);
		return;
	}
	/* nothing is read from a connection the approvers do not name */
	if (!approvals_any_listed(ap, cl))
		approvals_error(cl, "you are not among the approvers of this "
		    "session's tools");
	else if (bufferevent_enable(cl->bev, EV_READ) == -1)
		approvals_client_close(cl);
}

bool
approvals_start(struct approvals *ap, struct event_base *base,
    approvals_send_fn send, void *send_arg)
{
	size_t i;

	ap->send = send;
	ap->send_arg = send_arg;
	for (i = 0; i < APPROVALS_CLIENTS_MAX; i++)
		ap->clients[i].ap = ap;
	if ((ap->ev_accept = event_new(base, ap->listen_fd,
	    EV_READ | EV_PERSIST, approvals_on_accept, ap)) == NULL ||
	    event_add(ap->ev_accept, NULL) == -1) {
		log_error("approvals: cannot listen");
		return false;
	}
	return true;
}

/*
 * What an answer must name besides the call (approvals_bound()): the
 * first APPROVALS_DIGEST_HEX hex digits of SHA-256 over the session, the
 * call, the tool and the question as --list shows them, NUL-separated.
 */
static void
approvals_digest(const struct approvals *ap, struct approvals_pending *p)
{
	const char *tool = ap->policy->tools[p->tool_index].name;
	struct hash_sha256_ctx ctx;
	uint8_t md[HASH_SHA256_LEN];
	char call[24];

	(void)snprintf(call, sizeof(call), "%" PRIu64, p->call_id);
	hash_sha256_init(&ctx);
	hash_sha256_update(&ctx, ap->session, strlen(ap->session) + 1);
	hash_sha256_update(&ctx, call, strlen(call) + 1);
	hash_sha256_update(&ctx, tool, strlen(tool) + 1);
	hash_sha256_update(&ctx, p->message, strlen(p->message));
	hash_sha256_final(&ctx, md);
	hash_hex(md, APPROVALS_DIGEST_HEX / 2, p->digest);
}

void
approvals_ask(struct approvals *ap, const struct record_operator_ask *a)
{
	struct approvals_pending *p = NULL;
	size_t i;

	if (a->tool_index >= ap->policy->tool_count ||
	    !ap->policy->tools[a->tool_index].confirm_spec.via_operator) {
		log_error("approvals: call %" PRIu64 " is not of a tool an "
		    "operator approves; ignored", a->call_id);
		return;
	}
	for (i = 0; i < ap->max_pending && p == NULL; i++)
		if (ap->pending[i].call_id == 0)
			p = &ap->pending[i];
	if (p == NULL || approvals_find(ap, a->call_id) != NULL ||
	    (p->message = strndup(a->message.ptr, a->message.len)) == NULL) {
		/* it cannot be approved: it ends by its expiry, denied */
		log_error("approvals: call %" PRIu64 " cannot be listed",
		    a->call_id);
		return;
	}
	p->call_id = a->call_id;
	p->tool_index = a->tool_index;
	p->challenge = a->challenge;
	p->since_ms = clock_monotonic_ms();
	approvals_digest(ap, p);
	/* said when a call waits, not at every session's start (most never call
	 * a tool an operator approves); sp call's operator, or the journal,
	 * learns how to list it and the id to approve, last on the line */
	log_info("approvals: call %" PRIu64 " (%s) waits for an approver up to "
	    "%u s: sp approve --state-dir %s --list shows it; sp approve "
	    "--state-dir %s %s.%" PRIu64 ".%s", p->call_id,
	    ap->policy->tools[p->tool_index].name,
	    (unsigned)ap->policy->tools[p->tool_index].confirm_spec.timeout_s,
	    ap->policy->state_dir, ap->policy->state_dir, ap->session,
	    p->call_id, p->digest);
}

void
approvals_decided(struct approvals *ap, const struct record_audit_event *ev,
    struct audit_event_plan *plan)
{
	struct approvals_pending *p;
	cJSON *o;

	if (ap == NULL || ev->kind != RECORD_AUDIT_CONFIRMATION ||
	    (p = approvals_find(ap, ev->call_id)) == NULL ||
	    (ev->reason.len == 5 && memcmp(ev->reason.ptr, "asked", 5) == 0))
		return;
	if (p->answered) {
		plan->approver_key = p->denied ? "denied_by_uid" :
		    "approver_uid";
		plan->approver_uid = p->approver_uid;
	}
	if (p->waiting != NULL && (o = cJSON_CreateObject()) != NULL) {
		if (cJSON_AddStringToObject(o, "decision", ev->reason.ptr) !=
		    NULL)
			approvals_reply(p->waiting, o, true);
		cJSON_Delete(o);
	}
	free(p->message);
	memset(p, 0, sizeof(*p));
}

void
approvals_free(struct approvals *ap)
{
	size_t i;

	if (ap == NULL)
		return;
	for (i = 0; i < APPROVALS_CLIENTS_MAX; i++)
		if (ap->clients[i].bev != NULL)
			approvals_client_close(&ap->clients[i]);
	if (ap->ev_accept != NULL)
		event_free(ap->ev_accept);
	if (ap->listen_fd != -1) {
		/* the filter allows this one unlink, in this directory */
		if (ap->dir_fd != -1 && unlinkat(ap->dir_fd, ap->name, 0) == -1)
			log_warn("approvals: %s not removed: %s", ap->name,
			    strerror(errno));
		(void)close(ap->listen_fd);
	}
	if (ap->dir_fd != -1)
		(void)close(ap->dir_fd);
	for (i = 0; i < ap->max_pending; i++)
		free(ap->pending[i].message);
	free(ap->pending);
	free(ap);
}
