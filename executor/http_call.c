/*
 * The life of one HTTP call, start to end: check the request, know its
 * addresses (a literal's own, a recent answer, or a name resolved on a
 * thread), check and pin them, then attempts on the engine's multi
 * handle until a result is known, then one callback.
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
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "executor/http.h"
#include "executor/http_addr.h"
#include "executor/http_build.h"
#include "executor/http_int.h"
#include "executor/http_resolve.h"
#include "executor/http_response.h"

#define ADDRS_MAX		16
#define PATH_MAX_LEN		8192	/* a redirect's path and query */
#define ATTEMPT_MIN_MS		1000	/* an attempt needs at least this */
#define CONNECT_ATTEMPTS_MAX	3	/* GET/HEAD on connection failure */
#define BACKOFF_MS		100
#define REDIRECTS_MAX		5
#define RETRY_AFTER_HONOURED_S	60
#define BODY_CHUNK_MIN		16384

struct http_call {
	TAILQ_ENTRY(http_call) entry;		/* in the engine's calls */
	struct http_engine *engine;		/* borrowed */
	const struct http_request *req;		/* borrowed, see http.h */
	http_done_fn done;
	void *arg;
	char *path;				/* current path; owned */
	enum http_method method;		/* current (303 turns into GET) */
	CURL *easy;				/* the attempt in flight, owned */
	struct curl_slist *headers;		/* the attempt's, owned, holds the secret */
	struct curl_slist *pin;			/* "host:port:addr,..." for curl, owned */
	struct event *timer;			/* name, back-off, Retry-After, delivery */
	struct sockaddr_storage addrs[ADDRS_MAX];
	size_t naddrs;
	struct http_resolve_job *job;		/* while a name resolves, shared */
	bool starting;				/* inside submit */
	bool ended;				/* result final, delivery pending */
	bool waited;				/* Retry-After honoured once */
	bool refused_at_connect;
	unsigned attempt_sends;			/* requests curl began to write this attempt */
	bool mutation_sent;			/* a mutating attempt may have been applied */
	uint64_t start_us, deadline_us, resolve_us;
	uint8_t *body;				/* owned, up to req->body_max */
	size_t body_cap;
	char errbuf[CURL_ERROR_SIZE];
	struct http_result result;
};

static void call_attempt_start(struct http_call *);

static bool
method_is_safe(enum http_method m)
{
	return m == HTTP_METHOD_GET || m == HTTP_METHOD_HEAD;
}

static uint64_t
call_remaining_ms(const struct http_call *c)
{
	uint64_t now = clock_monotonic_us();

	return now >= c->deadline_us ? 0 : (c->deadline_us - now) / 1000;
}

void
http_calls_init(struct http_calls *calls)
{
	TAILQ_INIT(&calls->head);
	calls->n = 0;
}

static void
calls_remove(struct http_calls *calls, struct http_call *c)
{
	TAILQ_REMOVE(&calls->head, c, entry);
	calls->n--;
}

static void
call_attempt_release(struct http_call *c)
{
	if (c->easy != NULL) {
		http_engine_easy_put(c->engine, c->easy);
		c->easy = NULL;
	}
	http_headers_free(c->headers);
	c->headers = NULL;
}

static void
call_free(struct http_call *c)
{
	call_attempt_release(c);
	if (c->job != NULL)
		http_resolve_abandon(c->job);
	curl_slist_free_all(c->pin);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c->body);
	free(c->path);
	free(c);
}

void
http_calls_abort(struct http_calls *calls)
{
	struct http_call *c;

	while ((c = TAILQ_FIRST(&calls->head)) != NULL) {
		calls_remove(calls, c);
		call_free(c);
	}
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

/* The one callback, then the call is gone. */
static void
call_deliver(struct http_call *c)
{
	c->result.body = c->body;
	c->result.timings.resolve_us = c->resolve_us;
	c->result.timings.total_us = clock_monotonic_us() - c->start_us;
	calls_remove(http_engine_calls(c->engine), c);
	c->done(&c->result, c->arg);
	call_free(c);
}

/*
 * Ends the call with its result.  Inside submit the delivery waits for
 * the loop (done never runs inside submit; http_engine_submit schedules
 * it), elsewhere it happens now.
 */
static void
call_finish(struct http_call *c, enum http_outcome outcome, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static void
call_finish(struct http_call *c, enum http_outcome outcome, const char *fmt,
    ...)
{
	va_list ap;

	call_attempt_release(c);
	if (c->job != NULL) {
		http_resolve_abandon(c->job);
		c->job = NULL;
	}
	c->result.outcome = outcome;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(c->result.message, sizeof(c->result.message), fmt, ap);
		va_end(ap);
	}
	c->ended = true;
	if (!c->starting)
		call_deliver(c);
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

/* The budget ran out while the name was resolving. */
static void
call_finish_resolving(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];

	snprintf(why, sizeof(why), "name resolution of %s did not finish "
	    "within the %u ms budget", c->req->host,
	    (unsigned)c->req->budget_ms);
	call_finish_unanswered(c, why);
}

/* The call's timer: a delivery, a name's budget, or the next attempt. */
static void
call_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	struct http_call *c = arg;

	(void)fd;
	(void)what;
	if (c->ended)
		call_deliver(c);
	else if (c->job != NULL)
		call_finish_resolving(c);
	else
		call_attempt_start(c);
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

/*
 * Every address must pass, or none is used; the passed ones are pinned
 * for curl, so a second DNS answer cannot move the call.  False when the
 * call has ended.
 */
static bool
call_addresses_ready(struct http_call *c)
{
	enum http_addr_class k;
	const char *rule;
	size_t i;

	rule = http_addrs_refusal(c->addrs, c->naddrs, c->req->addr_allow,
	    c->req->scheme == HTTP_SCHEME_HTTP, &i, &k);
	if (rule != NULL) {
		call_refuse_address(c, i, k, rule);
		return false;
	}
	if (!http_build_pin(c->req, c->addrs, c->naddrs, &c->pin)) {
		call_finish(c, HTTP_OUTCOME_FAILED, "cannot pin the checked "
		    "addresses");
		return false;
	}
	c->resolve_us = clock_monotonic_us() - c->start_us;
	return true;
}

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
	c->naddrs = n < ADDRS_MAX ? n : ADDRS_MAX;
	memcpy(c->addrs, addrs, c->naddrs * sizeof(c->addrs[0]));
	/* The answer, not the verdict: the next call checks it again. */
	http_names_put(http_engine_names(c->engine), c->req->host,
	    c->req->port, clock_monotonic_us(), c->addrs, c->naddrs);
	if (call_addresses_ready(c))
		call_attempt_start(c);
}

/*
 * The addresses known without asking the resolver: a literal's own, or a
 * name's recent answer (executor/http_resolve.h).  False when the name
 * must be resolved.
 */
static bool
call_known_addresses(struct http_call *c)
{
	size_t n;

	if (http_addr_literal(c->req->host, c->req->port, &c->addrs[0])) {
		c->naddrs = 1;
		return true;
	}
	if (!http_names_get(http_engine_names(c->engine), c->req->host,
	    c->req->port, clock_monotonic_us(), c->addrs, ADDRS_MAX, &n))
		return false;
	c->naddrs = n;
	return true;
}

/* A name on a resolver thread, the call's timer set to the budget, so a
 * stuck resolver neither blocks the loop nor outlives the call. */
static void
call_resolve_name(struct http_call *c)
{
	c->job = http_engine_resolve_start(c->engine, c->req->host,
	    c->req->port, ADDRS_MAX, call_name_answered, c);
	if (c->job == NULL) {
		call_finish(c, HTTP_OUTCOME_FAILED, "cannot resolve %s",
		    c->req->host);
		return;
	}
	if (!call_schedule(c, call_remaining_ms(c) + 1))
		call_finish(c, HTTP_OUTCOME_FAILED, "internal error before "
		    "sending");
}

/*
 * The start, inside submit: check the request, then its addresses; known
 * ones go straight to the first attempt (no loop turn), a name waits for
 * its resolver thread.  An end here is delivered from the loop.
 */
static void
call_start(struct http_call *c)
{
	char why[HTTP_RESULT_TEXT_MAX];

	if (!http_request_valid(c->req, why, sizeof(why))) {
		call_finish(c, HTTP_OUTCOME_FAILED, "request refused: %s", why);
		return;
	}
	if (!call_known_addresses(c)) {
		call_resolve_name(c);
		return;
	}
	if (call_addresses_ready(c))
		call_attempt_start(c);
}

static struct http_call *
call_new(struct http_engine *e, const struct http_request *req,
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
	c->start_us = clock_monotonic_us();
	c->deadline_us = c->start_us + (uint64_t)req->budget_ms * 1000u;
	c->result.retry_after_s = -1;
	if ((c->timer = evtimer_new(http_engine_base(e), call_timer_fired,
	    c)) == NULL) {
		log_error("cannot make the call's timer");
		call_free(c);
		return NULL;
	}
	return c;
}

int
http_engine_submit(struct http_engine *e, const struct http_request *req,
    http_done_fn done, void *arg)
{
	struct http_calls *calls = http_engine_calls(e);
	struct http_call *c;

	if ((c = call_new(e, req, done, arg)) == NULL)
		return -1;
	TAILQ_INSERT_TAIL(&calls->head, c, entry);
	calls->n++;
	c->starting = true;
	call_start(c);
	c->starting = false;
	if (c->ended && !call_schedule(c, 0)) {
		log_error("cannot schedule the call's result");
		calls_remove(calls, c);
		call_free(c);
		return -1;
	}
	return 0;
}

bool
http_engine_cancel(struct http_engine *e, const void *arg, bool *maybe_sent)
{
	struct http_calls *calls = http_engine_calls(e);
	struct http_call *c;

	TAILQ_FOREACH(c, &calls->head, entry)
		if (c->arg == arg)
			break;
	if (c == NULL)
		return false;
	*maybe_sent = c->attempt_sends > 0 || c->mutation_sent || c->waited ||
	    c->result.redirects > 0;
	calls_remove(calls, c);
	call_free(c);
	return true;
}

/* Every socket curl opens: the address is checked once more here. */
static curl_socket_t
call_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct http_call *c = arg;
	enum http_addr_class k;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKET_BAD;
	k = http_addr_classify(&a->addr, a->addrlen);
	if (!http_addr_permitted(k, c->req->addr_allow)) {
		c->refused_at_connect = true;
		http_engine_socket_refused(c->engine);
		return CURL_SOCKET_BAD;
	}
	return http_engine_socket_open(c->engine, a);
}

/*
 * Called each time curl is about to write a request.  curl re-sends a
 * request by itself when a reused connection dies unanswered; a mutating
 * request must never reach the target twice, so a second send is aborted.
 * The connection's peer is checked here too, before any byte is written.
 */
static int
call_before_send(void *arg, char *peer_ip, char *local_ip, int peer_port,
    int local_port)
{
	struct http_call *c = arg;

	(void)local_ip;
	(void)peer_port;
	(void)local_port;
	if (!http_addr_text_permitted(peer_ip, c->req->addr_allow)) {
		c->refused_at_connect = true;
		return CURL_PREREQFUNC_ABORT;
	}
	if (c->attempt_sends > 0 && !method_is_safe(c->method))
		return CURL_PREREQFUNC_ABORT;
	c->attempt_sends++;
	return CURL_PREREQFUNC_OK;
}

static bool
call_body_reserve(struct http_call *c, size_t need)
{
	size_t cap = c->body_cap;
	uint8_t *p;

	if (need <= cap)
		return true;
	cap = cap < BODY_CHUNK_MIN ? BODY_CHUNK_MIN : cap * 2;
	if (cap < need)
		cap = need;
	if (cap > c->req->body_max)
		cap = c->req->body_max;
	if ((p = realloc(c->body, cap)) == NULL) {
		log_error("out of memory");
		return false;
	}
	c->body = p;
	c->body_cap = cap;
	return true;
}

/* Keeps up to body_max bytes; the rest is counted and dropped. */
static size_t
call_body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_call *c = arg;
	size_t len = size * nmemb, keep = 0;
	struct http_result *r = &c->result;

	r->body_total += len;
	if (r->body_len < c->req->body_max)
		keep = c->req->body_max - r->body_len;
	if (keep > len)
		keep = len;
	if (keep > 0) {
		if (!call_body_reserve(c, r->body_len + keep))
			return 0;
		memcpy(c->body + r->body_len, data, keep);
		r->body_len += keep;
	}
	return len;
}

/* The call's own hooks on the attempt: its checks, its body, its errors. */
static bool
call_easy_hooks(struct http_call *c)
{
	CURL *easy = c->easy;

	return curl_easy_setopt(easy, CURLOPT_PRIVATE, c) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, c->errbuf) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, call_body_write) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_WRITEDATA, c) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION,
	    call_open_socket) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, c) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION,
	    http_engine_socket_close) == CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, c->engine) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, call_before_send) ==
	    CURLE_OK &&
	    curl_easy_setopt(easy, CURLOPT_PREREQDATA, c) == CURLE_OK;
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
	    !http_build_attempt(c->easy, c->req, c->method, c->path, c->pin,
	    remaining_ms, &c->headers) || !call_easy_hooks(c) ||
	    !http_engine_easy_add(c->engine, c->easy)) {
		log_error("cannot start the request");
		call_attempt_release(c);
		return false;
	}
	c->result.attempts++;
	return true;
}

/* The next attempt to the checked, pinned addresses, budget permitting. */
static void
call_attempt_start(struct http_call *c)
{
	uint64_t remaining = call_remaining_ms(c);

	if (remaining < ATTEMPT_MIN_MS) {
		call_finish_budget(c);
		return;
	}
	if (!call_attempt_begin(c, remaining))
		call_finish(c, HTTP_OUTCOME_FAILED, "internal error before "
		    "sending");
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
	char path[PATH_MAX_LEN];
	char *copy;

	if (c->result.redirects >= REDIRECTS_MAX ||
	    !http_response_redirect_path(c->easy, c->req, path, sizeof(path)))
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

	http_response_read(c->easy, r);
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

	http_response_timings(c->easy, &c->result.timings);
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
