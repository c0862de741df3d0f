/*
 * Resolved names kept for a short time (executor/http_names.h): a fixed
 * table, no allocation per entry, searched linearly (it is small).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "executor/http_names.h"

struct name_entry {
	char host[HTTP_NAMES_HOST_MAX];	/* "" when the slot is free */
	uint16_t port;
	uint64_t expires_us;
	struct sockaddr_storage addrs[HTTP_NAMES_ADDRS_MAX];
	size_t naddrs;
};

struct http_names {
	uint64_t ttl_us;
	struct name_entry entries[HTTP_NAMES_MAX];
};

struct http_names *
http_names_new(void)
{
	struct http_names *n;

	if ((n = calloc(1, sizeof(*n))) == NULL) {
		log_error("http_names_new: out of memory");
		return NULL;
	}
	n->ttl_us = (uint64_t)HTTP_NAMES_TTL_MS * 1000u;
	return n;
}

void
http_names_free(struct http_names *n)
{
	free(n);
}

void
http_names_clear(struct http_names *n)
{
	for (size_t i = 0; i < HTTP_NAMES_MAX; i++)
		n->entries[i].host[0] = '\0';
}

void
http_names_set_ttl(struct http_names *n, uint64_t ttl_ms)
{
	n->ttl_us = ttl_ms * 1000u;
	http_names_clear(n);
}

/* The slot holding host:port, or HTTP_NAMES_MAX when none does. */
static size_t
names_index(const struct http_names *n, const char *host, uint16_t port)
{
	size_t i;

	for (i = 0; i < HTTP_NAMES_MAX; i++) {
		const struct name_entry *e = &n->entries[i];

		if (e->host[0] != '\0' && e->port == port &&
		    strcmp(e->host, host) == 0)
			break;
	}
	return i;
}

bool
http_names_get(const struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us, struct sockaddr_storage *addrs, size_t max,
    size_t *count)
{
	size_t i = names_index(n, host, port);
	const struct name_entry *e = &n->entries[i];

	if (i == HTTP_NAMES_MAX || now_us >= e->expires_us || max == 0)
		return false;
	*count = e->naddrs < max ? e->naddrs : max;
	memcpy(addrs, e->addrs, *count * sizeof(addrs[0]));
	return true;
}

/* The slot for host:port: its own, a free or expired one, or the oldest. */
static struct name_entry *
names_slot(struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us)
{
	size_t i = names_index(n, host, port);
	struct name_entry *oldest = &n->entries[0], *e;

	if (i < HTTP_NAMES_MAX)
		return &n->entries[i];
	for (i = 0; i < HTTP_NAMES_MAX; i++) {
		e = &n->entries[i];
		if (e->host[0] == '\0' || now_us >= e->expires_us)
			return e;
		if (e->expires_us < oldest->expires_us)
			oldest = e;
	}
	return oldest;
}

void
http_names_put(struct http_names *n, const char *host, uint16_t port,
    uint64_t now_us, const struct sockaddr_storage *addrs, size_t count)
{
	size_t len = strlen(host);
	struct name_entry *e;

	if (n->ttl_us == 0 || count == 0 || len >= HTTP_NAMES_HOST_MAX)
		return;
	e = names_slot(n, host, port, now_us);
	memcpy(e->host, host, len + 1);
	e->port = port;
	e->expires_us = now_us + n->ttl_us;
	e->naddrs = count < HTTP_NAMES_ADDRS_MAX ? count : HTTP_NAMES_ADDRS_MAX;
	memcpy(e->addrs, addrs, e->naddrs * sizeof(addrs[0]));
}
