/*
 * Address rules for HTTP targets: which peer addresses a request may
 * connect to.  The engine resolves a host itself, checks every address
 * here, and hands curl only addresses that passed, so a second DNS answer
 * cannot move a request somewhere the target's rules forbid.
 */
#ifndef SP_EXECUTOR_HTTP_ADDR_H
#define SP_EXECUTOR_HTTP_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* What a target allows beyond public addresses (bit set in addr_allow). */
#define HTTP_ALLOW_LOOPBACK	0x01u	/* 127/8, ::1 */
#define HTTP_ALLOW_PRIVATE	0x02u	/* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7 */
#define HTTP_ALLOW_LINK_LOCAL	0x04u	/* 169.254/16, fe80::/10 */
#define HTTP_ALLOW_METADATA	0x08u	/* 169.254.169.254, fd00:ec2::254 */

enum http_addr_class {
	HTTP_ADDR_PUBLIC,
	HTTP_ADDR_LOOPBACK,
	HTTP_ADDR_PRIVATE,
	HTTP_ADDR_LINK_LOCAL,
	HTTP_ADDR_METADATA,
	HTTP_ADDR_UNSPECIFIED,
	HTTP_ADDR_MULTICAST,
	HTTP_ADDR_BROADCAST,
	HTTP_ADDR_RESERVED,	/* 240/4, unknown families: never connected to */
};

/*
 * Classifies an AF_INET or AF_INET6 address; IPv4-mapped (::ffff:a.b.c.d)
 * and NAT64 (64:ff9b::a.b.c.d) addresses are classified as the IPv4
 * address they carry.  Any other family is HTTP_ADDR_RESERVED.
 */
enum http_addr_class http_addr_classify(const struct sockaddr *sa,
    socklen_t len);

/* Whether a class may be connected to under the allow bits. */
bool http_addr_permitted(enum http_addr_class c, unsigned allow);

/* Classifies numeric text ("10.0.0.1", "::1") and applies the rules;
 * text that is not an address is never permitted. */
bool http_addr_text_permitted(const char *text, unsigned allow);

/* A static English name for a class, for messages ("link-local"). */
const char *http_addr_class_name(enum http_addr_class c);

/*
 * A literal host is its own (only) address: fills *ss with host:port when
 * host is IPv4 or IPv6 numeric text; false for a name (or v6 with a zone).
 */
bool http_addr_literal(const char *host, uint16_t port,
    struct sockaddr_storage *ss);

/*
 * The rule the first refused address of addrs[0..n) breaks, its index
 * and class in *i and *k, or NULL when every address passes: each must be
 * permitted under allow, and plain http (plain_http) goes to loopback only.
 */
const char *http_addrs_refusal(const struct sockaddr_storage *addrs,
    size_t n, unsigned allow, bool plain_http, size_t *i,
    enum http_addr_class *k);

/* Numeric text of an address into buf; false when it does not fit. */
bool http_addr_format(const struct sockaddr *sa, socklen_t len, char *buf,
    size_t size);

#endif
