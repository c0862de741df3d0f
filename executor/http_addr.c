/*
 * Address rules for the HTTP engine (executor/http_addr.h): classifying
 * an address and checking a call's addresses against its target's rules.
 * Everything works on the numeric address; nothing here resolves names.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "executor/http_addr.h"

static enum http_addr_class
classify_v4(uint32_t a)
{
	if ((a >> 24) == 0)
		return HTTP_ADDR_UNSPECIFIED;
	if ((a >> 24) == 127)
		return HTTP_ADDR_LOOPBACK;
	if (a == 0xa9fea9feu)			/* 169.254.169.254 */
		return HTTP_ADDR_METADATA;
	if ((a >> 16) == 0xa9fe)		/* 169.254/16 */
		return HTTP_ADDR_LINK_LOCAL;
	if ((a >> 24) == 10 || (a >> 20) == 0xac1 ||	/* 10/8, 172.16/12 */
	    (a >> 16) == 0xc0a8 ||			/* 192.168/16 */
	    (a >> 22) == (0x64400000u >> 22))		/* 100.64/10 */
		return HTTP_ADDR_PRIVATE;
	if (a == 0xffffffffu)
		return HTTP_ADDR_BROADCAST;
	if ((a >> 28) == 0xe)
		return HTTP_ADDR_MULTICAST;
	if ((a >> 28) == 0xf)
		return HTTP_ADDR_RESERVED;
	return HTTP_ADDR_PUBLIC;
}

static uint32_t
v4_tail(const uint8_t *b)
{
	return (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
	    (uint32_t)b[14] << 8 | (uint32_t)b[15];
}

static bool
prefix_is(const uint8_t *b, const uint8_t *prefix, size_t n)
{
	return memcmp(b, prefix, n) == 0;
}

static enum http_addr_class
classify_v6(const struct in6_addr *in6)
{
	static const uint8_t mapped[12] = { 0,0,0,0, 0,0,0,0, 0,0,0xff,0xff };
	static const uint8_t nat64[12] = { 0,0x64,0xff,0x9b, 0,0,0,0, 0,0,0,0 };
	static const uint8_t metadata[16] = { 0xfd,0x00,0x0e,0xc2, 0,0,0,0,
	    0,0,0,0, 0,0,0x02,0x54 };
	const uint8_t *b = in6->s6_addr;

	if (prefix_is(b, mapped, sizeof(mapped)) ||
	    prefix_is(b, nat64, sizeof(nat64)))
		return classify_v4(v4_tail(b));
	if (IN6_IS_ADDR_UNSPECIFIED(in6))
		return HTTP_ADDR_UNSPECIFIED;
	if (IN6_IS_ADDR_LOOPBACK(in6))
		return HTTP_ADDR_LOOPBACK;
	if (memcmp(b, metadata, sizeof(metadata)) == 0)
		return HTTP_ADDR_METADATA;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return HTTP_ADDR_LINK_LOCAL;
	if ((b[0] & 0xfe) == 0xfc)
		return HTTP_ADDR_PRIVATE;
	if (b[0] == 0xff)
		return HTTP_ADDR_MULTICAST;
	/* ::/96 (IPv4-compatible, deprecated) and site-local fec0::/10 */
	if (b[0] == 0 && b[1] == 0 && v4_tail(b) != 0 &&
	    prefix_is(b, (const uint8_t[12]){ 0 }, 12))
		return HTTP_ADDR_RESERVED;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return HTTP_ADDR_RESERVED;
	return HTTP_ADDR_PUBLIC;
}

/*
 * Fields are copied out with memcpy: callers pass sockaddr_storage and
 * casts of it, and reading through a differently typed pointer lets the
 * compiler reorder the accesses (strict aliasing).
 */
enum http_addr_class
http_addr_classify(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	sa_family_t family;

	if (len < (socklen_t)sizeof(struct sockaddr))
		return HTTP_ADDR_RESERVED;
	memcpy(&family, (const char *)sa + offsetof(struct sockaddr,
	    sa_family), sizeof(family));
	if (family == AF_INET && len >= (socklen_t)sizeof(sin)) {
		memcpy(&sin, sa, sizeof(sin));
		return classify_v4(ntohl(sin.sin_addr.s_addr));
	}
	if (family == AF_INET6 && len >= (socklen_t)sizeof(sin6)) {
		memcpy(&sin6, sa, sizeof(sin6));
		return classify_v6(&sin6.sin6_addr);
	}
	return HTTP_ADDR_RESERVED;
}

bool
http_addr_permitted(enum http_addr_class c, unsigned allow)
{
	switch (c) {
	case HTTP_ADDR_PUBLIC:
		return true;
	case HTTP_ADDR_LOOPBACK:
		return (allow & HTTP_ALLOW_LOOPBACK) != 0;
	case HTTP_ADDR_PRIVATE:
		return (allow & HTTP_ALLOW_PRIVATE) != 0;
	case HTTP_ADDR_LINK_LOCAL:
		return (allow & HTTP_ALLOW_LINK_LOCAL) != 0;
	case HTTP_ADDR_METADATA:
		return (allow & HTTP_ALLOW_METADATA) != 0;
	default:
		return false;
	}
}

const char *
http_addr_class_name(enum http_addr_class c)
{
	switch (c) {
	case HTTP_ADDR_PUBLIC:		return "public";
	case HTTP_ADDR_LOOPBACK:	return "loopback";
	case HTTP_ADDR_PRIVATE:		return "private";
	case HTTP_ADDR_LINK_LOCAL:	return "link-local";
	case HTTP_ADDR_METADATA:	return "cloud metadata";
	case HTTP_ADDR_UNSPECIFIED:	return "unspecified";
	case HTTP_ADDR_MULTICAST:	return "multicast";
	case HTTP_ADDR_BROADCAST:	return "broadcast";
	default:			return "reserved";
	}
}

bool
http_addr_format(const struct sockaddr *sa, socklen_t len, char *buf,
    size_t size)
{
	if (size > (size_t)NI_MAXHOST)
		size = NI_MAXHOST;
	return getnameinfo(sa, len, buf, (socklen_t)size, NULL, 0,
	    NI_NUMERICHOST) == 0;
}

bool
http_addr_literal(const char *host, uint16_t port,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		return true;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return true;
	}
	return false;
}

bool
http_addr_text_permitted(const char *text, unsigned allow)
{
	struct sockaddr_storage ss;

	if (!http_addr_literal(text, 0, &ss))
		return false;
	return http_addr_permitted(http_addr_classify((struct sockaddr *)&ss,
	    sizeof(ss)), allow);
}

const char *
http_addrs_refusal(const struct sockaddr_storage *addrs, size_t n,
    unsigned allow, bool plain_http, size_t *i, enum http_addr_class *k)
{
	for (*i = 0; *i < n; (*i)++) {
		*k = http_addr_classify((const struct sockaddr *)&addrs[*i],
		    sizeof(addrs[*i]));
		if (!http_addr_permitted(*k, allow))
			return "the target does not allow it";
		if (plain_http && *k != HTTP_ADDR_LOOPBACK)
			return "plain http is for loopback only";
	}
	return NULL;
}
