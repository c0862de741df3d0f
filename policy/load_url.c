/*
 * An http target's base_url: "scheme://host[:port][/base/path]" and nothing
 * more.  User information, a query or a fragment would either leak a secret
 * into logs or change what a tool's path means, so they are refused; plain
 * http is for loopback hosts only.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "policy/expand.h"
#include "policy/load_ctx.h"

#define HOST_CHARS LOAD_LOWER LOAD_DIGIT "-."
#define PATH_CHARS LOAD_LOWER LOAD_DIGIT "ABCDEFGHIJKLMNOPQRSTUVWXYZ" \
	"-._~!$&'()*+,;=:@/%"

bool
load_host_is_loopback(const char *host)
{
	unsigned char a4[4], a6[16];
	static const unsigned char one6[16] = { [15] = 1 };

	if (strcasecmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, a4) == 1)
		return a4[0] == 127;
	return inet_pton(AF_INET6, host, a6) == 1 &&
	    memcmp(a6, one6, sizeof(a6)) == 0;
}

bool
load_path_has_dot_segment(const char *path)
{
	const char *seg = path, *end;

	for (;;) {
		end = strchr(seg, '/');
		if (expand_segment_is_dots(seg, end ? (size_t)(end - seg) : strlen(seg)))
			return true;
		if (end == NULL)
			return false;
		seg = end + 1;
	}
}

static bool
url_is_hex(char c)
{
	return c != '\0' && strchr(LOAD_DIGIT "abcdefABCDEF", c) != NULL;
}

/* "" or "/a/b": allowed characters, %XX escapes, no dot segments. */
static const char *
url_check_path(const char *path)
{
	const char *p;

	for (p = path; *p != '\0'; p++) {
		if (*p == '{' || *p == '}')
			return "cannot hold placeholders";
		if (strchr(PATH_CHARS, *p) == NULL)
			return "has a character not allowed in a URL path";
		if (*p == '%' && (!url_is_hex(p[1]) || !url_is_hex(p[2])))
			return "has a '%' not followed by two hex digits";
	}
	if (load_path_has_dot_segment(path))
		return "has a '.' or '..' segment";
	return NULL;
}

/* Host (brackets removed from an IPv6 literal) and port from authority. */
static const char *
url_split_authority(struct load_ctx *ctx, char *auth, struct policy_target *t,
    bool https)
{
	char *port = NULL, *end;
	unsigned char a6[16];
	unsigned long v;

	if (auth[0] == '[') {
		if ((end = strchr(auth, ']')) == NULL)
			return "has an unclosed '['";
		*end = '\0';
		if (inet_pton(AF_INET6, auth + 1, a6) != 1)
			return "has a bad IPv6 address";
		if (end[1] == ':')
			port = end + 2;
		else if (end[1] != '\0')
			return "has text after the IPv6 address";
		t->host = ctx_strdup(ctx, auth + 1);
	} else {
		if ((port = strchr(auth, ':')) != NULL)
			*port++ = '\0';
		if (auth[0] == '\0' || !ctx_name_matches(auth, HOST_CHARS,
		    HOST_CHARS, 253))
			return "needs a host name in lower case letters, digits, "
			    "'-' and '.'";
		t->host = ctx_strdup(ctx, auth);
	}
	t->port = https ? 443 : 80;
	if (port == NULL)
		return NULL;
	v = strtoul(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || *end != '\0' || v < 1 ||
	    v > 65535)
		return "has a bad port (1 to 65535)";
	t->port = (uint16_t)v;
	return NULL;
}

/* Splits url (modified in place); returns NULL or what is wrong. */
static const char *
url_split(struct load_ctx *ctx, char *url, struct policy_target *t)
{
	char *rest, *path;
	const char *why;
	bool https;
	size_t n;

	if (strncmp(url, "https://", 8) == 0)
		https = true;
	else if (strncmp(url, "http://", 7) == 0)
		https = false;
	else
		return "must start with https:// (or http:// for a loopback host)";
	if (strpbrk(url, "?#") != NULL)
		return "must not have a query or a fragment";
	rest = url + (https ? 8 : 7);
	path = strchr(rest, '/');
	n = path ? (size_t)(path - rest) : strlen(rest);
	if (memchr(rest, '@', n) != NULL)
		return "must not hold user information (put secrets in a credential)";
	if ((why = url_check_path(path ? path : "")) != NULL)
		return why;
	t->base_path = ctx_strdup(ctx, path ? path : "");
	if (path != NULL)
		*path = '\0';
	if ((why = url_split_authority(ctx, rest, t, https)) != NULL)
		return why;
	t->scheme = ctx_strdup(ctx, https ? "https" : "http");
	if (t->base_path != NULL)
		for (n = strlen(t->base_path); n > 0 &&
		    t->base_path[n - 1] == '/'; n--)
			t->base_path[n - 1] = '\0';
	return NULL;
}

bool
load_base_url(struct load_ctx *ctx, const cJSON *node,
    struct policy_target *t)
{
	char *copy;
	const char *why;

	if (!cJSON_IsString(node)) {
		ctx_error(ctx, node, "must be a string");
		return false;
	}
	if ((copy = ctx_strdup(ctx, node->valuestring)) == NULL)
		return false;
	why = url_split(ctx, copy, t);
	free(copy);
	if (why == NULL && t->host != NULL && strcmp(t->scheme, "http") == 0 &&
	    !load_host_is_loopback(t->host))
		why = "uses http:// for a host that is not loopback; use https://";
	if (why != NULL) {
		ctx_error(ctx, node, "%s", why);
		return false;
	}
	t->base_url = ctx_strdup(ctx, node->valuestring);
	return t->base_url != NULL && t->host != NULL && t->scheme != NULL &&
	    t->base_path != NULL;
}
