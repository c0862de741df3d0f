/*
 * Internal to the HTTP engine (http.c and http_call.c): one call's state
 * and the few engine services a call uses.  Nothing outside executor/http*
 * includes this.
 */
#ifndef SP_EXECUTOR_HTTP_CALL_H
#define SP_EXECUTOR_HTTP_CALL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "executor/http.h"
#include "executor/http_resolve.h"

#define HTTP_CALL_ADDRS_MAX	16
#define HTTP_CALL_URL_MAX	8192

struct event;

struct http_call {
	TAILQ_ENTRY(http_call) entry;
	struct http_engine *engine;		/* borrowed */
	const struct http_request *req;		/* borrowed, see http.h */
	http_done_fn done;
	void *arg;
	char *path;				/* current path; owned */
	enum http_method method;		/* current (303 turns into GET) */
	CURL *easy;				/* the attempt in flight, owned */
	struct curl_slist *headers;		/* the attempt's, owned, holds the secret */
	struct curl_slist *resolve;		/* "host:port:addr,..." pin, owned */
	struct event *timer;			/* start, back-off and Retry-After wait */
	struct sockaddr_storage addrs[HTTP_CALL_ADDRS_MAX];
	size_t naddrs;
	bool resolved;
	struct http_resolve_job *job;		/* while a name resolves, shared */
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

/* Allocates a call and schedules its start on the loop; NULL on failure. */
struct http_call *http_call_new(struct http_engine *e,
    const struct http_request *req, http_done_fn done, void *arg);

/* The attempt in flight ended with rc (from curl_multi_info_read). */
void http_call_attempt_done(struct http_call *c, CURLcode rc);

/*
 * Sets up c->easy (already created) for one attempt with remaining_ms of
 * budget; builds c->headers.  False on failure (logged).  http_easy.c.
 */
bool http_easy_setup(struct http_call *c, uint64_t remaining_ms);

/* Frees a call without calling its callback (engine shutdown). */
void http_call_free(struct http_call *c);

/*
 * Where a call goes (http_origin.c).  http_literal_address fills *ss
 * with host:port when host is an IPv4 or IPv6 literal, else false.
 * http_call_address_refusal names the rule the first of c->addrs breaks
 * (its index and class in *i, *k), or NULL when all pass.  http_call_pin_addresses sets c->resolve (owned by
 * c) to curl's pin of a name to c->addrs; false when it does not fit.
 * http_call_read_response fills c->result's status, type, Location and
 * Retry-After from the attempt's handle.  http_call_redirect_path writes
 * the path of a redirect that keeps the call's scheme, host and port.
 */
bool http_literal_address(const char *host, uint16_t port,
    struct sockaddr_storage *ss);
const char *http_call_address_refusal(const struct http_call *c, size_t *i,
    enum http_addr_class *k);
bool http_call_pin_addresses(struct http_call *c);
void http_call_read_response(struct http_call *c);
bool http_call_redirect_path(struct http_call *c, char *path, size_t size);

/* Engine services for calls (http.c). */
CURLM *http_engine_multi(const struct http_engine *e);
struct event_base *http_engine_base(const struct http_engine *e);
struct http_socks *http_engine_socks(const struct http_engine *e);
struct http_names *http_engine_names(const struct http_engine *e);
struct http_engine_stats *http_engine_stats_mut(struct http_engine *e);
/*
 * An easy handle for an attempt: a pooled one (reset, no option left
 * from its last use) or a new one; NULL when out of memory.  The caller
 * owns it until it hands it back with http_engine_easy_put (after
 * curl_multi_remove_handle), which resets it or frees it when the pool
 * is full.
 */
CURL *http_engine_easy_get(struct http_engine *e);
void http_engine_easy_put(struct http_engine *e, CURL *easy);
/* The same resolver on a thread (executor/http_resolve.h). */
struct http_resolve_job *http_engine_resolve_start(struct http_engine *e,
    const char *host, uint16_t port, size_t max, http_resolved_fn done,
    void *arg);
void http_engine_call_ended(struct http_engine *e, struct http_call *c);

#endif
