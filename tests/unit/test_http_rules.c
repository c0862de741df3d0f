/*
 * Pure rules of the HTTP engine: address classes and Retry-After values.
 */
#include "config.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "executor/http_addr.h"
#include "executor/http_response.h"

static enum http_addr_class
classify(const char *text)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return http_addr_classify((struct sockaddr *)sin, sizeof(*sin));
	}
	cr_assert_eq(inet_pton(AF_INET6, text, &sin6->sin6_addr), 1, "%s", text);
	sin6->sin6_family = AF_INET6;
	return http_addr_classify((struct sockaddr *)sin6, sizeof(*sin6));
}

Test(http_addr, classes)
{
	static const struct { const char *addr; enum http_addr_class c; } t[] = {
		{ "93.184.216.34", HTTP_ADDR_PUBLIC },
		{ "8.8.8.8", HTTP_ADDR_PUBLIC },
		{ "172.32.0.1", HTTP_ADDR_PUBLIC },
		{ "100.128.0.1", HTTP_ADDR_PUBLIC },
		{ "169.253.255.255", HTTP_ADDR_PUBLIC },
		{ "127.0.0.1", HTTP_ADDR_LOOPBACK },
		{ "127.255.1.2", HTTP_ADDR_LOOPBACK },
		{ "::1", HTTP_ADDR_LOOPBACK },
		{ "::ffff:127.0.0.1", HTTP_ADDR_LOOPBACK },
		{ "10.0.0.1", HTTP_ADDR_PRIVATE },
		{ "172.16.0.1", HTTP_ADDR_PRIVATE },
		{ "172.31.255.255", HTTP_ADDR_PRIVATE },
		{ "192.168.1.1", HTTP_ADDR_PRIVATE },
		{ "100.64.0.1", HTTP_ADDR_PRIVATE },
		{ "100.127.255.255", HTTP_ADDR_PRIVATE },
		{ "fc00::1", HTTP_ADDR_PRIVATE },
		{ "fdff:1::2", HTTP_ADDR_PRIVATE },
		{ "169.254.0.1", HTTP_ADDR_LINK_LOCAL },
		{ "169.254.169.253", HTTP_ADDR_LINK_LOCAL },
		{ "fe80::1", HTTP_ADDR_LINK_LOCAL },
		{ "febf::1", HTTP_ADDR_LINK_LOCAL },
		{ "169.254.169.254", HTTP_ADDR_METADATA },
		{ "::ffff:169.254.169.254", HTTP_ADDR_METADATA },
		{ "64:ff9b::169.254.169.254", HTTP_ADDR_METADATA },
		{ "fd00:ec2::254", HTTP_ADDR_METADATA },
		{ "0.0.0.0", HTTP_ADDR_UNSPECIFIED },
		{ "0.1.2.3", HTTP_ADDR_UNSPECIFIED },
		{ "::", HTTP_ADDR_UNSPECIFIED },
		{ "::ffff:0.0.0.0", HTTP_ADDR_UNSPECIFIED },
		{ "224.0.0.1", HTTP_ADDR_MULTICAST },
		{ "239.255.255.250", HTTP_ADDR_MULTICAST },
		{ "ff02::1", HTTP_ADDR_MULTICAST },
		{ "255.255.255.255", HTTP_ADDR_BROADCAST },
		{ "240.0.0.1", HTTP_ADDR_RESERVED },
		{ "::169.254.169.254", HTTP_ADDR_RESERVED },
		{ "fec0::1", HTTP_ADDR_RESERVED },
		{ "2001:db8::1", HTTP_ADDR_PUBLIC },
		{ "2606:4700::1111", HTTP_ADDR_PUBLIC },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect_eq(classify(t[i].addr), t[i].c, "%s: %s", t[i].addr,
		    http_addr_class_name(classify(t[i].addr)));
}

Test(http_addr, permissions)
{
	const unsigned all = HTTP_ALLOW_LOOPBACK | HTTP_ALLOW_PRIVATE |
	    HTTP_ALLOW_LINK_LOCAL | HTTP_ALLOW_METADATA;

	cr_assert(http_addr_permitted(HTTP_ADDR_PUBLIC, 0));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_LOOPBACK, 0));
	cr_assert(http_addr_permitted(HTTP_ADDR_LOOPBACK, HTTP_ALLOW_LOOPBACK));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_PRIVATE, HTTP_ALLOW_LOOPBACK));
	cr_assert(http_addr_permitted(HTTP_ADDR_PRIVATE, HTTP_ALLOW_PRIVATE));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_LINK_LOCAL,
	    HTTP_ALLOW_PRIVATE | HTTP_ALLOW_LOOPBACK));
	cr_assert(http_addr_permitted(HTTP_ADDR_LINK_LOCAL,
	    HTTP_ALLOW_LINK_LOCAL));
	/* Allowing link-local does not open the metadata service. */
	cr_assert_not(http_addr_permitted(HTTP_ADDR_METADATA,
	    all & ~HTTP_ALLOW_METADATA));
	cr_assert(http_addr_permitted(HTTP_ADDR_METADATA, HTTP_ALLOW_METADATA));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_UNSPECIFIED, all));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_MULTICAST, all));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_BROADCAST, all));
	cr_assert_not(http_addr_permitted(HTTP_ADDR_RESERVED, all));
}

Test(http_addr, unknown_family_is_reserved)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	cr_assert_eq(http_addr_classify((struct sockaddr *)&ss, sizeof(ss)),
	    HTTP_ADDR_RESERVED);
	ss.ss_family = AF_INET6;
	cr_assert_eq(http_addr_classify((struct sockaddr *)&ss, 8),
	    HTTP_ADDR_RESERVED, "a short AF_INET6 address was read");
}

/* 2026-11-30 21:00:00 UTC */
#define NOW ((time_t)1796072400)

Test(http_retry, delta_seconds)
{
	long s = -1;

	cr_assert(http_retry_after_parse("2", NOW, &s));
	cr_assert_eq(s, 2);
	cr_assert(http_retry_after_parse(" 120\t", NOW, &s));
	cr_assert_eq(s, 120);
	cr_assert(http_retry_after_parse("0", NOW, &s));
	cr_assert_eq(s, 0);
	cr_assert(http_retry_after_parse("99999999999999999999999", NOW, &s));
	cr_assert_eq(s, HTTP_RETRY_AFTER_MAX_S);
}

Test(http_retry, http_dates)
{
	long s = -1;

	cr_assert(http_retry_after_parse("Mon, 30 Nov 2026 21:00:45 GMT", NOW,
	    &s));
	cr_assert_eq(s, 45);
	cr_assert(http_retry_after_parse("Monday, 30-Nov-26 21:02:00 GMT", NOW,
	    &s));
	cr_assert_eq(s, 120);
	cr_assert(http_retry_after_parse("Mon Nov 30 21:00:07 2026", NOW, &s));
	cr_assert_eq(s, 7);
	cr_assert(http_retry_after_parse("Wed, 21 Oct 2015 07:28:00 GMT", NOW,
	    &s));
	cr_assert_eq(s, 0, "a past date means now");
}

Test(http_retry, refusals_leave_value_untouched)
{
	static const char *const bad[] = { "", "  ", "-5", "12abc", "1.5",
	    "+3", "soon", "2\n", "\xe2\x82\xac", "$(sleep 9)",
	    ("Mon, 30 Nov 2026 21:00:45 GMT and then some more text to make "
	    "it longer than sixty four bytes") };
	long s = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_not(http_retry_after_parse(bad[i], NOW, &s), "%zu", i);
		cr_assert_eq(s, 77);
	}
}

Test(http_addr, numeric_text)
{
	cr_assert(http_addr_text_permitted("127.0.0.1", HTTP_ALLOW_LOOPBACK));
	cr_assert_not(http_addr_text_permitted("127.0.0.1", HTTP_ALLOW_PRIVATE));
	cr_assert(http_addr_text_permitted("::1", HTTP_ALLOW_LOOPBACK));
	cr_assert(http_addr_text_permitted("93.184.216.34", 0));
	cr_assert_not(http_addr_text_permitted("::ffff:169.254.169.254",
	    HTTP_ALLOW_LINK_LOCAL | HTTP_ALLOW_PRIVATE | HTTP_ALLOW_LOOPBACK));
	cr_assert_not(http_addr_text_permitted("localhost", HTTP_ALLOW_LOOPBACK));
	cr_assert_not(http_addr_text_permitted("", HTTP_ALLOW_LOOPBACK));
	cr_assert_not(http_addr_text_permitted("127.0.0.1 ", HTTP_ALLOW_LOOPBACK));
}
