/*
 * Test support: runs tests/integration/http_target.py on 127.0.0.1 at a
 * free port and reads back the requests it logged.
 */
#ifndef SP_TESTS_HTTP_PEER_H
#define SP_TESTS_HTTP_PEER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct http_peer {
	pid_t pid;
	uint16_t port;
	char dir[64];
	char log_path[96];
	char cert_path[96];	/* "" unless started with TLS */
};

/* Starts the server and waits (at most 5 s) for its port; false on failure. */
bool http_peer_start(struct http_peer *p);

/*
 * The same over HTTPS, with a self-signed certificate for "api.test" whose
 * PEM is left in cert_path (needs the openssl command).
 */
bool http_peer_start_tls(struct http_peer *p);

/* Stops the server and removes its log. */
void http_peer_stop(struct http_peer *p);

/* The requests logged so far, as a JSON array; the caller deletes it. */
cJSON *http_peer_log(const struct http_peer *p);

/* Number of requests logged so far. */
int http_peer_requests(const struct http_peer *p);

/* Value of the first header name (case-insensitive) of a logged request. */
const char *http_peer_header(const cJSON *request, const char *name);

/* A port on 127.0.0.1 where nothing listens (bound, then closed). */
uint16_t http_peer_closed_port(void);

#endif
