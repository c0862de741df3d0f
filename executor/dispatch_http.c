/*
 * HTTP actions: the request is built only from the tool's templates
 * (policy/expand.h) and the target, the credential added from the
 * store, and the engine's result turned into a result record.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "executor/dispatch_int.h"
#include "executor/redact.h"
#include "policy/expand.h"

void
dispatch_http_clear(struct call_http *h)
{
	size_t i;

	free(h->path);
	free(h->body);
	for (i = 0; h->header_values != NULL && i < h->nheaders; i++)
		free(h->header_values[i]);
	free(h->header_values);
	free(h->headers);
	memset(h, 0, sizeof(*h));
}

/* base path + expanded path + "?" + expanded query, as one string. */
static bool
dispatch_http_path(struct dispatch_call *c, const struct policy_target *t,
    char *why, size_t why_size)
{
	struct policy_buf path, query;
	bool ok;

	policy_buf_init(&path, DISPATCH_PATH_MAX);
	policy_buf_init(&query, DISPATCH_PATH_MAX);
	ok = policy_buf_append_str(&path, t->base_path) &&
	    expand_http_path(c->tool, c->args, &path, why, why_size) &&
	    expand_http_query(c->tool, c->args, &query, why, why_size);
	if (ok && query.len > 0)
		ok = policy_buf_append_byte(&path, '?') &&
		    policy_buf_append(&path, query.data, query.len);
	if (ok && (c->http.path = policy_buf_steal(&path, NULL)) == NULL)
		ok = false;
	if (!ok && why[0] == '\0')
		snprintf(why, why_size, "the path is longer than %u bytes",
		    DISPATCH_PATH_MAX);
	policy_buf_free(&path);
	policy_buf_free(&query);
	return ok;
}

/* Keeps an expanded value (an empty one has no data) under name. */
static bool
dispatch_http_header_add(struct call_http *h, const char *name,
    const struct policy_buf *v)
{
	char *copy = strdup(v->data != NULL ? v->data : "");

	if (copy == NULL)
		return false;
	h->header_values[h->nheaders] = copy;
	h->headers[h->nheaders].name = name;
	h->headers[h->nheaders].value = copy;
	h->nheaders++;
	return true;
}

static bool
dispatch_http_headers(struct dispatch_call *c, char *why, size_t why_size)
{
	const struct policy_http_action *a = &c->tool->http;
	struct call_http *h = &c->http;
	/* the journal's key, so a target that knows the header dedupes too */
	bool idem = c->tool->idem_header != NULL && c->idem_key[0] != '\0';
	struct policy_buf v;
	bool omitted;
	size_t i;

	if (a->header_count == 0 && !idem)
		return true;
	h->headers = calloc(a->header_count + 1, sizeof(*h->headers));
	h->header_values = calloc(a->header_count + 1,
	    sizeof(*h->header_values));
	if (h->headers == NULL || h->header_values == NULL) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	if (idem) {
		v.data = c->idem_key;
		if (!dispatch_http_header_add(h, c->tool->idem_header, &v)) {
			snprintf(why, why_size, "out of memory");
			return false;
		}
	}
	for (i = 0; i < a->header_count; i++) {
		policy_buf_init(&v, DISPATCH_HEADER_MAX);
		omitted = false;
		if (!expand_http_header(c->tool, i, c->args, &v, &omitted, why,
		    why_size)) {
			policy_buf_free(&v);
			return false;
		}
		if (!omitted && !dispatch_http_header_add(h,
		    a->headers[i].name, &v)) {
			policy_buf_free(&v);
			snprintf(why, why_size, "out of memory");
			return false;
		}
		policy_buf_free(&v);
	}
	return true;
}

static bool
dispatch_http_body(struct dispatch_call *c, char *why, size_t why_size)
{
	struct policy_buf b;
	size_t len = 0;

	if (c->tool->http.body == NULL)
		return true;
	policy_buf_init(&b, DISPATCH_BODY_MAX);
	if (!expand_http_body(c->tool, c->args, &b, why, why_size) ||
	    (c->http.body = policy_buf_steal(&b, &len)) == NULL) {
		if (why[0] == '\0')
			snprintf(why, why_size, "the body is longer than %u "
			    "bytes", DISPATCH_BODY_MAX);
		policy_buf_free(&b);
		return false;
	}
	c->http.req.body = c->http.body;
	c->http.req.body_len = len;
	c->http.req.content_type = "application/json";
	return true;
}

static void
dispatch_http_credential(struct dispatch_call *c,
    const struct policy_target *t)
{
	const struct policy *p = c->d->ctx->policy;
	const struct policy_credential *pc;
	const struct credential_bytes *cb;
	struct http_credential *hc = &c->http.credential;

	if (!t->has_credential)
		return;
	pc = &p->credentials[t->credential_index];
	cb = &c->d->creds->creds[t->credential_index];
	hc->kind = pc->type == CREDENTIAL_BEARER ? HTTP_CREDENTIAL_BEARER :
	    pc->type == CREDENTIAL_BASIC ? HTTP_CREDENTIAL_BASIC :
	    HTTP_CREDENTIAL_HEADER;
	hc->header_name = pc->header_name;
	hc->secret = (const char *)cb->secret.ptr;
	hc->secret_len = cb->secret_len;
	c->http.req.credential = hc;
}

static void
dispatch_http_target(struct dispatch_call *c, const struct policy_target *t)
{
	const struct target_files *f =
	    &c->d->creds->targets[c->tool->target_index];
	struct http_request *r = &c->http.req;

	r->scheme = strcmp(t->scheme, "http") == 0 ? HTTP_SCHEME_HTTP :
	    HTTP_SCHEME_HTTPS;
	r->host = t->host;
	r->port = t->port;
	r->ca_blob = f->ca;
	r->ca_len = f->ca_len;
	r->follow_redirects = t->follow_redirects;
	/* Link-local does not open the metadata service: docs/design.md
	 * section 4 refuses both unless the target names each. */
	r->addr_allow = (t->allow_loopback ? HTTP_ALLOW_LOOPBACK : 0) |
	    (t->allow_private ? HTTP_ALLOW_PRIVATE : 0) |
	    (t->allow_link_local ? HTTP_ALLOW_LINK_LOCAL : 0) |
	    (t->allow_metadata ? HTTP_ALLOW_METADATA : 0);
	r->budget_ms = c->budget_ms;
	/* The reach past the record's cut lets a credential that straddles
	 * it be found and withheld (executor/redact.h). */
	r->body_max = c->d->ctx->limits.max_payload_bytes +
	    c->d->creds->withhold.reach;
}

static enum record_outcome
dispatch_http_outcome(enum http_outcome o)
{
	switch (o) {
	case HTTP_OUTCOME_OK: return RECORD_OUTCOME_OK;
	case HTTP_OUTCOME_FAILED: return RECORD_OUTCOME_FAILED;
	default: return RECORD_OUTCOME_UNKNOWN;
	}
}

/*
 * What a result shows of the target's answer, each credential in it
 * withheld; owned by the callback, released by dispatch_http_shown_free.
 */
struct http_shown {
	struct redacted content_type, location, body, message;
	uint64_t body_total;		/* as the record counts it */
};

static void
dispatch_http_shown_free(struct http_shown *s)
{
	free(s->content_type.data);
	free(s->location.data);
	free(s->body.data);
	free(s->message.data);
}

static bool
dispatch_http_withhold_text(const struct redact_set *w, const char *text,
    bool cut, size_t max, struct redacted *out)
{
	return redact_text(w, (const uint8_t *)text, strlen(text), !cut, max,
	    out);
}

/* The status, the engine's words, and whether the body was cut. */
static void
dispatch_http_message(const struct http_result *res,
    const struct http_shown *s, char *buf, size_t size)
{
	char cut[96] = "";

	if (s->body_total > s->body.len)
		snprintf(cut, sizeof(cut), "%sbody cut: kept %zu of %llu bytes",
		    res->message[0] != '\0' ? "; " : "", s->body.len,
		    (unsigned long long)s->body_total);
	if (res->message[0] == '\0' && cut[0] == '\0')
		snprintf(buf, size, "HTTP %ld", res->status);
	else if (res->status != 0)
		snprintf(buf, size, "HTTP %ld: %s%s", res->status, res->message,
		    cut);
	else
		snprintf(buf, size, "%s%s", res->message, cut);
}

/*
 * A credential in any text withholds every text: which bytes matched
 * would answer a guess (executor/redact.h).  The totals then are the
 * marker's, so no length says more.
 */
static bool
dispatch_http_withhold_all(struct http_shown *s)
{
	if (!s->body.withheld && !s->content_type.withheld &&
	    !s->location.withheld && !s->message.withheld)
		return true;
	s->body.withheld = true;
	s->body_total = strlen(REDACT_MARKER);
	return redact_withhold(&s->body) &&
	    redact_withhold(&s->content_type) &&
	    redact_withhold(&s->location) && redact_withhold(&s->message);
}

/* Every text the result carries, folded as the client will see it and
 * searched for each credential; false when memory ran out. */
static bool
dispatch_http_show(const struct dispatch_call *c, const struct http_result *res,
    struct http_shown *s)
{
	const struct redact_set *w = &c->d->creds->withhold;
	size_t text_max = c->d->ctx->limits.max_text_bytes;
	char message[HTTP_RESULT_TEXT_MAX + 128];
	bool complete = res->body_total == res->body_len;

	memset(s, 0, sizeof(*s));
	if (!redact_text(w, res->body, res->body_len, complete,
	    c->d->ctx->limits.max_payload_bytes, &s->body))
		return false;
	/* What the target sent, folded: a cut must still read as one. */
	s->body_total = complete ? s->body.folded_len :
	    res->body_total > s->body.folded_len ? res->body_total :
	    s->body.folded_len + 1;
	dispatch_http_message(res, s, message, sizeof(message));
	return dispatch_http_withhold_text(w, res->content_type,
	    res->content_type_cut, text_max, &s->content_type) &&
	    dispatch_http_withhold_text(w, res->location, res->location_cut,
	    text_max, &s->location) &&
	    dispatch_http_withhold_text(w, message, false, text_max,
	    &s->message) && dispatch_http_withhold_all(s);
}

static void
dispatch_http_text(struct record_text *t, const struct redacted *r)
{
	t->ptr = (char *)r->data;
	t->len = r->len;
}

static void
dispatch_http_fill(struct record_result *r, const struct http_result *res,
    const struct http_shown *s)
{
	dispatch_http_text(&r->message, &s->message);
	if (s->content_type.withheld || s->location.withheld ||
	    s->body.withheld || s->message.withheld)
		r->flags |= RESULT_WITHHELD;
	if (res->status < 100 || res->status > 599)
		return;
	r->kind = RECORD_RESULT_HTTP;
	r->http.status = (uint16_t)res->status;
	if (res->retry_after_s >= 0) {
		r->flags |= RESULT_HAS_RETRY_AFTER;
		r->http.retry_after_s = res->retry_after_s > UINT32_MAX ?
		    UINT32_MAX : (uint32_t)res->retry_after_s;
	}
	dispatch_http_text(&r->http.content_type, &s->content_type);
	dispatch_http_text(&r->http.location, &s->location);
	r->http.body.ptr = s->body.data;
	r->http.body.len = s->body.len;
	r->http.body_total = s->body_total;
	r->http.connect_us = res->timings.connect_us;
	r->http.first_byte_us = res->timings.first_byte_us;
}

static void
dispatch_http_done(const struct http_result *res, void *arg)
{
	static const char lost[] = "the answer was lost: out of memory";
	struct dispatch_call *c = arg;
	struct record_result r;
	struct http_shown s;

	memset(&r, 0, sizeof(r));
	r.outcome = dispatch_http_outcome(res->outcome);
	r.flags = RESULT_STARTED;
	if (res->outcome != HTTP_OUTCOME_FAILED)
		r.flags |= RESULT_REQUEST_SENT;
	if (dispatch_http_show(c, res, &s))
		dispatch_http_fill(&r, res, &s);
	else {
		r.message.ptr = (char *)lost;
		r.message.len = strlen(lost);
	}
	if (r.flags & RESULT_WITHHELD)
		log_warn("call %llu: a credential in the answer was withheld",
		    (unsigned long long)c->call_id);
	dispatch_finish(c, &r, (int32_t)res->status);
	dispatch_http_shown_free(&s);
}

bool
dispatch_http_start(struct dispatch_call *c)
{
	const struct policy *p = c->d->ctx->policy;
	const struct policy_target *t = &p->targets[c->tool->target_index];
	char why[DISPATCH_WHY_MAX] = "";
	char message[DISPATCH_WHY_MAX + 64];

	c->http.req.method = c->tool->http.method;
	if (!dispatch_http_path(c, t, why, sizeof(why)) ||
	    !dispatch_http_headers(c, why, sizeof(why)) ||
	    !dispatch_http_body(c, why, sizeof(why))) {
		log_warn("call %llu: request not built: %s",
		    (unsigned long long)c->call_id, why);
		snprintf(message, sizeof(message), "the request could not be "
		    "built: %s", why);
		dispatch_answer(c, RECORD_OUTCOME_INVALID, 0, message);
		return false;
	}
	dispatch_http_target(c, t);
	c->http.req.path = c->http.path;
	c->http.req.headers = c->http.headers;
	c->http.req.nheaders = c->http.nheaders;
	dispatch_http_credential(c, t);
	if (http_engine_submit(c->d->http, &c->http.req, dispatch_http_done,
	    c) == -1) {
		dispatch_answer(c, RECORD_OUTCOME_FAILED, 0,
		    "the HTTP engine could not take the request");
		return false;
	}
	return true;
}
