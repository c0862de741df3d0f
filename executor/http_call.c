/*
 * The life of one HTTP call: check and resolve, then attempts on the
 * engine's multi handle until a result is known, then one callback.
 *
 * Outcomes: a response is always "ok" (its status is data).  Without a
 * response, "failed" when the request provably did not reach the target
 * (refused, resolve, connect or TLS failure) and also for GET/HEAD, which
 * apply nothing even when they did arrive; "unknown" when a mutating
 * request may have been sent before the connection broke.
 */
#include "config.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "executor/http_addr.h"
#include "executor/http_build.h"
#include "executor/http_call.h"
#include "executor/http_names.h"
#include "executor/http_retry.h"

#define ATTEMPT_MIN_MS		1000	/* an attempt needs at least this */
#define CONNECT_ATTEMPTS_MAX	3	/* GET/HEAD on connection failure */
#define BACKOFF_MS		100
#define REDIRECTS_MAX		5
#define RETRY_AFTER_HONOURED_S	60

static void call_attempt_start(struct http_call *);
static bool call_start_now(struct http_call *);

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool
method_is_safe(enum http_method m)
{
	return m == HTTP_METHOD_GET || m == HTTP_METHOD_HEAD;
}

static uint64_t
call_remaining_ms(const struct http_call *c)
{
	uint64_t now = now_us();

	return now >= c->deadline_us ? 0 : (c->deadline_us - now) / 1000;
}

static void
call_attempt_release(struct http_call *c)
{
	if (c->easy != NULL) {
		curl_multi_remove_handle(http_engine_multi(c->engine), c->easy);
		http_engine_easy_put(c->engine, c->easy);
		c->easy = NULL;
	}
	http_headers_free(c->headers);
	c->headers = NULL;
}

void
http_call_free(struct http_call *c)
{
	call_attempt_release(c);
	if (c->job != NULL)
		http_resolve_abandon(c->job);
	curl_slist_free_all(c->resolve);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c->body);
	free(c->path);
	free(c);
}

/* Ends the call: one callback, then the call is gone. */
static void
call_finish(struct http_call *c, enum http_outcome outcome, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
call_finish(struct http_call *c, enum http_outcome outcome, const char *fmt,
    ...)
{
	struct http_engine *e = c->engine;
	va_list ap;

	call_attempt_release(c);
	c->result.outcome = outcome;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(c->result.message, sizeof(c->result.message), fmt, ap);
		va_end(ap);
	}
	c->result.body = c->body;
	c->result.timings.resolve_us = c->resolve_us;
	c->result.timings.total_us = now_us() - c->start_us;
	http_engine_call_ended(e, c);
	c->done(&c->result, c->arg);
	http_call_free(c);
}

static void
call_finish_unanswered(struct http_call *c, const char *why)
{
	enum http_outcome o = HTTP_OUTCOME_FAILED;

	if (c->mutation_sent)
		o = HTTP_OUTCOME_UNKNOWN;
	call_finish(c, o, "%s", why);
}

static void
call_finish_budget(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];

	snprintf(why, sizeof(why), "no answer within the %u ms budget",
	    (unsigned)c->req->budget_ms);
	call_finish_unanswered(c, why);
}

static void
call_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	call_attempt_start(arg);
}

static bool
call_schedule(struct http_call *c, uint64_t delay_ms)
{
	struct timeval tv = { (time_t)(delay_ms / 1000),
	    (suseconds_t)(delay_ms % 1000) * 1000 };

	if (evtimer_add(c->timer, &tv) == -1) {
		log_error("evtimer_add failed");
		return false;
	}
	return true;
}

struct http_call *
http_call_new(struct http_engine *e, const struct http_request *req,
    http_done_fn done, void *arg)
{
	struct http_call *c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->path = strdup(req->path != NULL ? req->path : "")) == NULL) {
		log_error("out of memory");
		free(c);
		return NULL;
	}
	c->engine = e;
	c->req = req;
	c->done = done;
	c->arg = arg;
	c->method = req->method;
	c->start_us = now_us();
	c->deadline_us = c->start_us + (uint64_t)req->budget_ms * 1000u;
	c->result.retry_after_s = -1;
	/* Otherwise started from the loop, so done never runs inside submit. */
	if ((c->timer = evtimer_new(http_engine_base(e), call_timer_fired,
	    c)) == NULL || (!call_start_now(c) && !call_schedule(c, 0))) {
		log_error("cannot schedule the call");
		http_call_free(c);
		return NULL;
	}
	return c;
}

static void
call_refuse_address(struct http_call *c, size_t i, enum http_addr_class k,
    const char *rule)
{
	char text[NI_MAXHOST];

	if (!http_addr_format((const struct sockaddr *)&c->addrs[i],
	    sizeof(c->addrs[i]), text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	call_finish(c, HTTP_OUTCOME_FAILED, "address %s of %s is %s: %s; not "
	    "connected", text, c->req->host, http_addr_class_name(k), rule);
}

/* Every address must pass, or none is used; false when the call ended. */
static bool
call_check_addresses(struct http_call *c)
{
	enum http_addr_class k;
	const char *rule;
	size_t i;

	if ((rule = http_call_address_refusal(c, &i, &k)) == NULL)
		return true;
	call_refuse_address(c, i, k, rule);
	return false;
}

/* Checks and pins resolved addresses; false when the call has ended. */
static bool
call_resolved(struct http_call *c, uint64_t t0)
{
	if (!call_check_addresses(c))
		return false;
	if (!http_call_pin_addresses(c)) {
		call_finish(c, HTTP_OUTCOME_FAILED, "cannot pin the checked "
		    "addresses");
		return false;
	}
	c->resolved = true;
	c->resolve_us = now_us() - t0;
	return true;
}

static void call_attempt_start(struct http_call *);

/* A name's answer from the resolver thread, on the loop. */
static void
call_name_answered(void *arg, bool ok, const struct sockaddr_storage *addrs,
    size_t n)
{
	struct http_call *c = arg;

	c->job = NULL;
	evtimer_del(c->timer);
	if (!ok) {
		call_finish(c, HTTP_OUTCOME_FAILED, "cannot resolve %s",
		    c->req->host);
		return;
	}
	c->naddrs = n < HTTP_CALL_ADDRS_MAX ? n : HTTP_CALL_ADDRS_MAX;
	memcpy(c->addrs, addrs, c->naddrs * sizeof(c->addrs[0]));
	/* The answer, not the verdict: the next call checks it again. */
	http_names_put(http_engine_names(c->engine), c->req->host,
	    c->req->port, now_us(), c->addrs, c->naddrs);
	if (call_resolved(c, c->start_us))
		call_attempt_start(c);
}

/*
 * The addresses known without asking the resolver: a literal's own, or a
 * name's recent answer (executor/http_names.h).  False when the name
 * must be resolved.
 */
static bool
call_known_addresses(struct http_call *c)
{
	size_t n;

	if (http_literal_address(c->req->host, c->req->port, &c->addrs[0])) {
		c->naddrs = 1;
		return true;
	}
	if (!http_names_get(http_engine_names(c->engine), c->req->host,
	    c->req->port, now_us(), c->addrs, HTTP_CALL_ADDRS_MAX, &n))
		return false;
	c->naddrs = n;
	return true;
}

/* Undoes what call_start_now set before it gave up. */
static void
call_forget_addresses(struct http_call *c)
{
	c->naddrs = 0;
	c->resolved = false;
	curl_slist_free_all(c->resolve);
	c->resolve = NULL;
}

/*
 * Checks, then resolves: known addresses at once, a name on a thread with the
 * call's timer set to the budget, so a stuck resolver neither blocks the
 * loop nor outlives the call.  False when the call is not ready to go on
 * now (ended, or waiting for the name).
 */
static bool
call_resolve(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];
	uint64_t t0 = now_us();

	if (!http_request_valid(c->req, why, sizeof(why))) {
		call_finish(c, HTTP_OUTCOME_FAILED, "request refused: %s", why);
		return false;
	}
	if (!call_known_addresses(c)) {
		c->job = http_engine_resolve_start(c->engine, c->req->host,
		    c->req->port, HTTP_CALL_ADDRS_MAX, call_name_answered, c);
		if (c->job == NULL) {
			call_finish(c, HTTP_OUTCOME_FAILED, "cannot resolve %s",
			    c->req->host);
			return false;
		}
		if (!call_schedule(c, call_remaining_ms(c) + 1))
			call_finish(c, HTTP_OUTCOME_FAILED, "internal error "
			    "before sending");
		return false;
	}
	return call_resolved(c, t0);
}

/* The budget ran out while the name was resolving. */
static void
call_finish_resolving(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];

	http_resolve_abandon(c->job);
	c->job = NULL;
	snprintf(why, sizeof(why), "name resolution of %s did not finish "
	    "within the %u ms budget", c->req->host,
	    (unsigned)c->req->budget_ms);
	call_finish_unanswered(c, why);
}

static void
call_attempt_reset_result(struct http_call *c)
{
	struct http_result *r = &c->result;

	r->status = 0;
	r->content_type[0] = '\0';
	r->content_type_cut = false;
	r->location[0] = '\0';
	r->location_cut = false;
	r->retry_after_s = -1;
	r->body_len = 0;
	r->body_total = 0;
	c->errbuf[0] = '\0';
	c->refused_at_connect = false;
	c->attempt_sends = 0;
}

/* Sets up and adds an attempt; false (nothing kept) on failure. */
static bool
call_attempt_begin(struct http_call *c, uint64_t remaining_ms)
{
	call_attempt_reset_result(c);
	if ((c->easy = http_engine_easy_get(c->engine)) == NULL ||
	    !http_easy_setup(c, remaining_ms) ||
	    curl_multi_add_handle(http_engine_multi(c->engine), c->easy) !=
	    CURLM_OK) {
		log_error("call_attempt_begin: cannot start the request");
		call_attempt_release(c);
		return false;
	}
	c->result.attempts++;
	http_engine_stats_mut(c->engine)->requests_started++;
	return true;
}

static void
call_attempt_start(struct http_call *c)
{
	uint64_t remaining;

	if (c->job != NULL) {
		call_finish_resolving(c);
		return;
	}
	if (!c->resolved && !call_resolve(c))
		return;
	remaining = call_remaining_ms(c);
	if (remaining < ATTEMPT_MIN_MS) {
		call_finish_budget(c);
		return;
	}
	if (!call_attempt_begin(c, remaining))
		call_finish(c, HTTP_OUTCOME_FAILED, "internal error before "
		    "sending");
}

/*
 * The first attempt to a host whose addresses are known (a literal, or a
 * name answered recently), begun inside submit: it saves the loop turn of
 * the scheduled start.  Only when nothing can end the call
 * here (done must never run inside submit); otherwise false, nothing is
 * changed, and the scheduled start does the same steps and reports.
 */
static bool
call_start_now(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];
	enum http_addr_class k;
	uint64_t remaining;
	size_t i;

	if (!http_request_valid(c->req, why, sizeof(why)) ||
	    !call_known_addresses(c))
		return false;
	remaining = call_remaining_ms(c);
	if (http_call_address_refusal(c, &i, &k) != NULL ||
	    remaining < ATTEMPT_MIN_MS || !http_call_pin_addresses(c)) {
		call_forget_addresses(c);
		return false;
	}
	c->resolved = true;
	c->resolve_us = now_us() - c->start_us;
	if (call_attempt_begin(c, remaining))
		return true;
	call_forget_addresses(c);
	return false;
}

static uint64_t
info_us(CURL *easy, CURLINFO what)
{
	curl_off_t v = 0;

	if (curl_easy_getinfo(easy, what, &v) != CURLE_OK || v < 0)
		return 0;
	return (uint64_t)v;
}

static void
call_collect_timings(struct http_call *c)
{
	struct http_timings *t = &c->result.timings;

	t->connect_us = info_us(c->easy, CURLINFO_CONNECT_TIME_T);
	t->tls_us = info_us(c->easy, CURLINFO_APPCONNECT_TIME_T);
	t->first_byte_us = info_us(c->easy, CURLINFO_STARTTRANSFER_TIME_T);
	t->transfer_us = info_us(c->easy, CURLINFO_TOTAL_TIME_T);
}

/* The address curl actually used, checked against the rules again. */
static bool
call_peer_permitted(struct http_call *c, char *text, size_t size)
{
	char *ip = NULL;

	if (curl_easy_getinfo(c->easy, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK ||
	    ip == NULL || *ip == '\0')
		return true;	/* nothing was connected */
	snprintf(text, size, "%s", ip);
	return http_addr_text_permitted(ip, c->req->addr_allow);
}

static bool
status_is_redirect(long s)
{
	return s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

/* Follows a same-origin redirect; false when the call should end here. */
static bool
call_follow(struct http_call *c)
{
	char path[HTTP_CALL_URL_MAX];
	char *copy;

	if (c->result.redirects >= REDIRECTS_MAX ||
	    !http_call_redirect_path(c, path, sizeof(path)))
		return false;
	if ((copy = strdup(path)) == NULL) {
		log_error("out of memory");
		return false;
	}
	free(c->path);
	c->path = copy;
	/* 303 always, and 301/302 after a mutating method, become GET. */
	if (c->result.status == 303 || (c->result.status <= 302 &&
	    !method_is_safe(c->method)))
		c->method = HTTP_METHOD_GET;
	c->result.redirects++;
	call_attempt_release(c);
	call_attempt_start(c);
	return true;
}

/* Waits once for a short Retry-After; false when the call should end. */
static bool
call_wait_retry_after(struct http_call *c)
{
	long s = c->result.retry_after_s;

	if (c->waited || !method_is_safe(c->method) ||
	    s > RETRY_AFTER_HONOURED_S ||
	    call_remaining_ms(c) < (uint64_t)s * 1000u + ATTEMPT_MIN_MS)
		return false;
	c->waited = true;
	call_attempt_release(c);
	return call_schedule(c, (uint64_t)s * 1000u);
}

static void
call_response_done(struct http_call *c)
{
	struct http_result *r = &c->result;

	http_call_read_response(c);
	if ((r->status == 503 || r->status == 429) && r->retry_after_s >= 0) {
		if (call_wait_retry_after(c))
			return;
		call_finish(c, HTTP_OUTCOME_OK, "the service asks to wait "
		    "%ld s", r->retry_after_s);
		return;
	}
	if (status_is_redirect(r->status) && r->location[0] != '\0') {
		if (!c->req->follow_redirects) {
			call_finish(c, HTTP_OUTCOME_OK, "redirect not followed "
			    "(the target does not allow redirects)");
			return;
		}
		if (call_follow(c))
			return;
		call_finish(c, HTTP_OUTCOME_OK, "redirect not followed (another "
		    "host or port, or too many redirects)");
		return;
	}
	call_finish(c, HTTP_OUTCOME_OK, NULL);
}

static bool
error_is_before_send(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
}

/* Retries a GET/HEAD whose connection failed; false when it may not. */
static bool
call_retry_connect(struct http_call *c, CURLcode rc, bool sent)
{
	uint64_t backoff = (uint64_t)BACKOFF_MS * c->result.attempts;

	if (!error_is_before_send(rc) || sent || c->refused_at_connect ||
	    !method_is_safe(c->method) ||
	    c->result.attempts >= CONNECT_ATTEMPTS_MAX ||
	    call_remaining_ms(c) < backoff + ATTEMPT_MIN_MS)
		return false;
	call_attempt_release(c);
	return call_schedule(c, backoff);
}

static void
call_error_done(struct http_call *c, CURLcode rc, bool sent)
{
	char why[HTTP_RESULT_TEXT_MAX + CURL_ERROR_SIZE];

	if (call_retry_connect(c, rc, sent))
		return;
	if (c->refused_at_connect)
		snprintf(why, sizeof(why), "connection refused by the address "
		    "rules; nothing was sent");
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(why, sizeof(why), "no answer within the %u ms budget",
		    (unsigned)c->req->budget_ms);
	else
		snprintf(why, sizeof(why), "%s%s%s", curl_easy_strerror(rc),
		    c->errbuf[0] != '\0' ? ": " : "", c->errbuf);
	call_finish_unanswered(c, why);
}

void
http_call_attempt_done(struct http_call *c, CURLcode rc)
{
	char peer[64] = "?";
	bool sent;

	call_collect_timings(c);
	sent = rc == CURLE_OK || c->attempt_sends > 0;
	if (sent && !method_is_safe(c->method))
		c->mutation_sent = true;
	if (!call_peer_permitted(c, peer, sizeof(peer))) {
		char why[HTTP_RESULT_TEXT_MAX];

		c->result.body_len = 0;
		c->result.status = 0;
		snprintf(why, sizeof(why), "connected address %s refused by "
		    "the address rules", peer);
		call_finish_unanswered(c, why);
		return;
	}
	if (rc == CURLE_OK)
		call_response_done(c);
	else
		call_error_done(c, rc, sent);
}

