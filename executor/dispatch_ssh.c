/*
 * SSH actions: targets registered with the engine once, at start-up
 * (hosts resolved then, keys handed over as bytes); each call's command
 * is the tool's argv expanded and quoted word by word by
 * expand_ssh_command(), and the engine's result becomes a result record.
 */
#include "config.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "executor/dispatch_int.h"
#include "executor/redact.h"
#include "policy/expand.h"

/* The first address host resolves to, as numeric text. */
static bool
dispatch_ssh_resolve(const char *host, char *addr, size_t size)
{
	struct addrinfo hints, *res = NULL;
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		log_error("%s: %s", host,
		    gai_strerror(e));
		return false;
	}
	e = getnameinfo(res->ai_addr, res->ai_addrlen, addr, (socklen_t)size,
	    NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (e != 0) {
		log_error("%s: %s", host,
		    gai_strerror(e));
		return false;
	}
	return true;
}

static int
dispatch_ssh_target(struct dispatch *d, size_t index)
{
	const struct policy *p = d->ctx->policy;
	const struct policy_target *t = &p->targets[index];
	const struct target_files *f = &d->creds->targets[index];
	const struct credential_bytes *cb;
	struct ssh_target st;
	char addr[NI_MAXHOST];

	if (!t->has_credential ||
	    p->credentials[t->credential_index].type != CREDENTIAL_SSH_KEY) {
		log_error("%s has no ssh-key credential",
		    t->name);
		return -1;
	}
	if (!dispatch_ssh_resolve(t->host, addr, sizeof(addr)))
		return -1;
	cb = &d->creds->creds[t->credential_index];
	memset(&st, 0, sizeof(st));
	st.address = addr;
	st.host_name = t->host;
	st.port = t->port;
	st.user = t->user;
	st.known_hosts = f->known_hosts;
	st.known_hosts_len = f->known_hosts_len;
	st.has_host_key_sha256 = t->has_host_key_sha256;
	memcpy(st.host_key_sha256, t->host_key_sha256, HASH_SHA256_LEN);
	st.private_key = (const char *)cb->secret.ptr;
	st.private_key_len = cb->secret_len;
	st.public_key = cb->public_key;
	st.public_key_len = cb->public_key_len;
	st.passphrase = cb->passphrase.ptr != NULL ?
	    (const char *)cb->passphrase.ptr : NULL;
	return ssh_engine_add_target(d->ssh, &st);
}

bool
dispatch_ssh_targets(struct dispatch *d)
{
	const struct policy *p = d->ctx->policy;
	size_t i;

	if ((d->ssh_target_ids = calloc(p->target_count + 1,
	    sizeof(*d->ssh_target_ids))) == NULL) {
		log_error("out of memory");
		return false;
	}
	for (i = 0; i < p->target_count; i++) {
		d->ssh_target_ids[i] = -1;
		if (p->targets[i].type == TARGET_SSH &&
		    (d->ssh_target_ids[i] = dispatch_ssh_target(d, i)) == -1) {
			log_error("target %s not usable",
			    p->targets[i].name);
			return false;
		}
	}
	return true;
}

static enum record_outcome
dispatch_ssh_outcome(enum ssh_outcome o)
{
	switch (o) {
	case SSH_OK: return RECORD_OUTCOME_OK;
	case SSH_FAILED: return RECORD_OUTCOME_FAILED;
	case SSH_DENIED: return RECORD_OUTCOME_DENIED;
	default: return RECORD_OUTCOME_UNKNOWN;
	}
}

/* A stream as the record shows it: folded as the client will see it, cut
 * to max, searched for each credential; *total says a cut. */
static bool
dispatch_ssh_stream(const struct redact_set *w, struct redacted *shown,
    uint64_t *total, const struct ssh_stream *s, size_t max)
{
	uint64_t seen = s->total < s->len ? s->len : s->total;
	bool complete = seen == s->len;

	if (!redact_text(w, (const uint8_t *)s->data, s->len, complete, max,
	    shown))
		return false;
	*total = complete ? shown->folded_len : seen > shown->folded_len ?
	    seen : shown->folded_len + 1;
	return true;
}

/* Appends "; stdout cut at N of M bytes" when a stream was cut. */
static void
dispatch_ssh_cut_note(char *buf, size_t size, const char *name, size_t shown,
    uint64_t total)
{
	size_t n = strlen(buf);

	if (total > shown && n < size)
		snprintf(buf + n, size - n, "; %s cut at %zu of %llu bytes",
		    name, shown, (unsigned long long)total);
}

/* What the result shows; owned by the callback. */
struct ssh_shown {
	struct redacted out, err, message;
};

static void
dispatch_ssh_describe(const struct ssh_result *res, struct record_result *r,
    char *message, size_t size)
{
	if (res->exited) {
		r->kind = RECORD_RESULT_SSH;
		r->ssh.end = RECORD_SSH_END_EXIT;
		r->ssh.exit_status = res->exit_status;
		snprintf(message, size, "exit status %d (stdout "
		    "%llu bytes, stderr %llu bytes)", res->exit_status,
		    (unsigned long long)res->out.total,
		    (unsigned long long)res->err.total);
	} else if (res->signal != NULL) {
		r->kind = RECORD_RESULT_SSH;
		r->ssh.end = RECORD_SSH_END_SIGNAL;
		r->ssh.signal.ptr = (char *)res->signal;
		r->ssh.signal.len = strnlen(res->signal, RECORD_TOKEN_MAX);
		snprintf(message, size, "killed by signal %s", res->signal);
	} else {
		snprintf(message, size, "%s", res->message != NULL ?
		    res->message : "the command did not run to its end");
	}
}

/* Streams and message into r, each credential withheld; false when
 * memory ran out. */
static bool
dispatch_ssh_show(const struct dispatch_call *c, const struct ssh_result *res,
    struct record_result *r, char *message, size_t size, struct ssh_shown *s)
{
	const struct redact_set *w = &c->d->creds->withhold;
	const struct record_limits *lim = &c->d->ctx->limits;

	if (r->kind == RECORD_RESULT_SSH) {
		if (!dispatch_ssh_stream(w, &s->out, &r->ssh.out_total,
		    &res->out, lim->max_payload_bytes) ||
		    !dispatch_ssh_stream(w, &s->err, &r->ssh.err_total,
		    &res->err, lim->max_payload_bytes))
			return false;
		dispatch_ssh_cut_note(message, size, "stdout", s->out.len,
		    r->ssh.out_total);
		dispatch_ssh_cut_note(message, size, "stderr", s->err.len,
		    r->ssh.err_total);
	}
	if (!redact_text(w, (const uint8_t *)message, strlen(message), true,
	    lim->max_text_bytes, &s->message))
		return false;
	if (s->out.withheld || s->err.withheld || s->message.withheld) {
		/* every text, and no length: see dispatch_http_withhold_all */
		if (!redact_withhold(&s->out) || !redact_withhold(&s->err) ||
		    !redact_withhold(&s->message))
			return false;
		r->flags |= RESULT_WITHHELD;
		if (r->kind == RECORD_RESULT_SSH)
			r->ssh.out_total = r->ssh.err_total = s->out.len;
	}
	r->ssh.out.ptr = s->out.data;
	r->ssh.out.len = s->out.len;
	r->ssh.err.ptr = s->err.data;
	r->ssh.err.len = s->err.len;
	r->message.ptr = (char *)s->message.data;
	r->message.len = s->message.len;
	return true;
}

static void
dispatch_ssh_done(const struct ssh_result *res, void *arg)
{
	static const char lost[] = "the answer was lost: out of memory";
	struct dispatch_call *c = arg;
	struct record_result r;
	struct ssh_shown s;
	char message[512];

	c->ssh = NULL;
	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	r.outcome = dispatch_ssh_outcome(res->outcome);
	r.flags = RESULT_STARTED;
	if (res->outcome == SSH_OK || res->outcome == SSH_UNKNOWN)
		r.flags |= RESULT_REQUEST_SENT;
	dispatch_ssh_describe(res, &r, message, sizeof(message));
	if (!dispatch_ssh_show(c, res, &r, message, sizeof(message), &s)) {
		memset(&r.ssh, 0, sizeof(r.ssh));
		r.kind = RECORD_RESULT_NONE;
		r.message.ptr = (char *)lost;
		r.message.len = strlen(lost);
	}
	if (r.flags & RESULT_WITHHELD)
		log_warn("call %llu: a credential in the output was withheld",
		    (unsigned long long)c->call_id);
	dispatch_finish(c, &r, res->exited ? res->exit_status : 0);
	free(s.out.data);
	free(s.err.data);
	free(s.message.data);
}

bool
dispatch_ssh_start(struct dispatch_call *c)
{
	struct ssh_request req;
	struct policy_buf cmd;
	char why[DISPATCH_WHY_MAX] = "";
	char message[DISPATCH_WHY_MAX + 64];
	int target = c->d->ssh_target_ids[c->tool->target_index];

	policy_buf_init(&cmd, DISPATCH_COMMAND_MAX);
	if (!expand_ssh_command(c->tool, c->args, &cmd, why, sizeof(why)) ||
	    cmd.data == NULL) {
		policy_buf_free(&cmd);
		log_warn("call %llu: command not built: %s",
		    (unsigned long long)c->call_id, why);
		snprintf(message, sizeof(message), "the command could not be "
		    "built: %s", why[0] != '\0' ? why : "too long");
		dispatch_answer(c, RECORD_OUTCOME_INVALID, 0, message);
		return false;
	}
	memset(&req, 0, sizeof(req));
	req.command = cmd.data;
	/* Past the record's cut by the reach, as for HTTP bodies. */
	req.output_limit = c->d->ctx->limits.max_payload_bytes +
	    c->d->creds->withhold.reach;
	req.timeout_ms = c->budget_ms;
	/* The engine copies the command before returning. */
	c->ssh = ssh_call_start(c->d->ssh, target, &req, dispatch_ssh_done, c);
	policy_buf_free(&cmd);
	if (c->ssh == NULL) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "the SSH engine could not take the command");
		return false;
	}
	return true;
}
