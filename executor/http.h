/*
 * The executor's HTTP engine: libcurl's multi interface on the caller's
 * libevent loop.  One engine per executor; many requests in flight; one
 * connection pool, so connections to a target are kept alive and reused.
 *
 * A request arrives fully prepared (the policy already expanded and
 * validated it); the engine re-checks what it must not trust (header
 * bytes, path bytes, host), resolves the host itself, checks every
 * address against the target's rules, pins curl to the checked addresses,
 * adds the credential, and reports one result through a callback.
 */
#ifndef SP_EXECUTOR_HTTP_H
#define SP_EXECUTOR_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/http_method.h"
#include "executor/http_addr.h"

struct event_base;
struct http_engine;

enum http_scheme {
	HTTP_SCHEME_HTTPS,
	HTTP_SCHEME_HTTP,
};

enum http_credential_kind {
	HTTP_CREDENTIAL_NONE,
	HTTP_CREDENTIAL_BEARER,	/* Authorization: Bearer <secret> */
	HTTP_CREDENTIAL_BASIC,	/* Authorization: Basic base64(<secret>), secret "user:pass" */
	HTTP_CREDENTIAL_HEADER,	/* <header_name>: <secret> */
};

/*
 * A credential as the executor's credential store holds it (borrowed).
 * The engine copies the secret only into the header line it builds for
 * an attempt, zeroes that line when the attempt ends, and never logs it
 * or puts it in a result.  libcurl copies header lines into its own
 * request buffer, which it frees without zeroing.
 */
struct http_credential {
	enum http_credential_kind kind;
	const char *header_name;	/* HTTP_CREDENTIAL_HEADER only */
	const char *secret;		/* not NUL-terminated necessarily */
	size_t secret_len;
};

struct http_header {
	const char *name;
	const char *value;
};

/*
 * A prepared request.  The caller owns it and everything it points to,
 * and keeps all of it alive and unchanged until the completion callback
 * has returned.
 */
struct http_request {
	enum http_method method;
	enum http_scheme scheme;	/* http: loopback addresses only */
	const char *host;		/* name, IPv4 literal or bare IPv6 literal */
	uint16_t port;
	const char *path;		/* expanded path and query, starts with '/' */
	const struct http_header *headers;
	size_t nheaders;
	const void *body;		/* may be NULL when body_len is 0 */
	size_t body_len;
	const char *content_type;	/* NULL: no Content-Type sent */
	const struct http_credential *credential;	/* NULL: none */
	const void *ca_blob;		/* PEM bundle; NULL: system default */
	size_t ca_len;
	bool follow_redirects;		/* same scheme, host and port only */
	unsigned addr_allow;		/* HTTP_ALLOW_* bits */
	uint32_t budget_ms;		/* the whole call, retries and waits included */
	size_t body_max;		/* response bytes kept; the rest is counted */
};

enum http_outcome {
	HTTP_OUTCOME_OK,	/* a response arrived; any status is data */
	HTTP_OUTCOME_FAILED,	/* known not applied: not reached, or a safe method */
	HTTP_OUTCOME_UNKNOWN,	/* a mutating request may have been applied */
};

struct http_timings {
	uint64_t resolve_us;	/* the engine's own resolution and checks */
	uint64_t connect_us;	/* last attempt, from curl, 0 when reused */
	uint64_t tls_us;
	uint64_t first_byte_us;
	uint64_t transfer_us;	/* last attempt, total */
	uint64_t total_us;	/* the whole call, waits included */
};

#define HTTP_RESULT_TEXT_MAX	256
#define HTTP_RESULT_LOCATION_MAX 2048

/*
 * One call's result.  Owned by the engine and valid only while the
 * completion callback runs: copy what must outlive it.
 */
struct http_result {
	enum http_outcome outcome;
	long status;			/* 0 when no response */
	char content_type[HTTP_RESULT_TEXT_MAX];
	bool content_type_cut;		/* the target's was longer */
	long retry_after_s;		/* -1 when absent or unparsable */
	char location[HTTP_RESULT_LOCATION_MAX];	/* raw Location, "" when absent */
	bool location_cut;		/* the target's was longer */
	const uint8_t *body;		/* body_len bytes, not NUL-terminated; NULL when 0 */
	size_t body_len;		/* <= body_max; body_total > body_len: cut */
	uint64_t body_total;		/* bytes the target sent */
	unsigned attempts;		/* requests started */
	unsigned redirects;		/* redirects followed */
	struct http_timings timings;
	char message[HTTP_RESULT_TEXT_MAX];	/* short English, never a secret */
};

/*
 * Called exactly once per submitted request, from the event loop.
 *
 * Retries: GET and HEAD only, when the connection failed before anything
 * was sent (up to 3 attempts, short back-off), and once after a 503/429
 * whose Retry-After is at most 60 s and fits in the budget with a 1 s
 * attempt after it.  Otherwise a Retry-After is returned at once with
 * "the service asks to wait N s" in the message.
 */
typedef void (*http_done_fn)(const struct http_result *result, void *arg);

/*
 * Resolver: fills up to max addresses of host:port into addrs, sets *n;
 * returns false when the name does not resolve.  The default is
 * getaddrinfo, run on a resolver thread; tests install a mapping through
 * http_engine_set_resolver.  An answer is reused for the same host and
 * port for 60 s (as curl's own DNS cache); each call still checks the
 * addresses against its own target's rules, and the connected peer is
 * checked again (executor/http_names.h).
 */
typedef bool (*http_resolve_fn)(void *arg, const char *host, uint16_t port,
    struct sockaddr_storage *addrs, size_t max, size_t *n);

struct http_engine_stats {
	uint64_t connections_opened;	/* sockets opened for curl */
	uint64_t connections_refused;	/* refused by the address check at connect */
	uint64_t requests_started;
};

/*
 * Creates an engine on base (borrowed, must outlive the engine).
 * max_host_connections bounds connections per host (0: 8).  curl_global_init
 * must have been called by main.  Returns NULL on failure (logged).
 */
struct http_engine *http_engine_new(struct event_base *base,
    long max_host_connections);

/*
 * Bounds the reset easy handles kept for later attempts (default
 * HTTP_EASY_POOL_DEFAULT, at most HTTP_EASY_POOL_MAX); a session's
 * max_inflight is the natural size, as no more attempts run at once.
 */
#define HTTP_EASY_POOL_DEFAULT	16
#define HTTP_EASY_POOL_MAX	64
void http_engine_set_easy_pool(struct http_engine *e, size_t max);

/* How long a resolved name is reused (0: resolve for every call);
 * forgets the answers kept so far. */
void http_engine_set_name_ttl(struct http_engine *e, uint32_t ttl_ms);

/* Replaces the resolver (and forgets its answers); fn NULL restores
 * getaddrinfo.  arg is borrowed.
 * A literal host never reaches it: it is its own address. */
void http_engine_set_resolver(struct http_engine *e, http_resolve_fn fn,
    void *arg);

/*
 * Starts a request.  Returns 0 when accepted (done will be called, maybe
 * from this call's loop iteration but never from inside this function),
 * -1 when the engine could not take it (out of memory; nothing called).
 */
int http_engine_submit(struct http_engine *e, const struct http_request *req,
    http_done_fn done, void *arg);

/*
 * Abandons the request submitted with arg: its transfer is aborted and
 * its callback never runs.  Returns false when no request in flight has
 * that arg.  *maybe_sent says whether any request bytes may have reached
 * the target (an attempt began writing, or a response was seen), so the
 * caller can tell "not applied" from "may have been applied".  Not to be
 * called from inside a completion callback.
 */
bool http_engine_cancel(struct http_engine *e, const void *arg,
    bool *maybe_sent);

/* Number of requests whose callback has not run yet. */
size_t http_engine_inflight(const struct http_engine *e);

void http_engine_stats(const struct http_engine *e,
    struct http_engine_stats *out);

/*
 * Aborts every request in flight without calling their callbacks, frees
 * the engine.  Not to be called from inside a completion callback.
 */
void http_engine_free(struct http_engine *e);

#endif
