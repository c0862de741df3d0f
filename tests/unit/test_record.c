#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/record.h"
#include "tests/unit/record_equal.h"

/* ---- helpers ---------------------------------------------------------- */

static struct record_limits
limits_default(void)
{
	struct record_limits l;

	record_limits_default(&l);
	return l;
}

static struct record_text
text(const char *s)
{
	return (struct record_text){ .ptr = (char *)s, .len = strlen(s) };
}

static struct record_bytes
blob(const void *p, size_t len)
{
	return (struct record_bytes){ .ptr = (uint8_t *)p, .len = len };
}

static struct value
str_value(const char *s)
{
	struct value v = { .kind = VALUE_STRING };

	v.u.str.ptr = (char *)s;
	v.u.str.len = strlen(s);
	return v;
}

static void
fingerprint(const char *seed, uint8_t out[HASH_SHA256_LEN])
{
	hash_sha256(seed, strlen(seed), out);
}

static void
put_u16_at(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_u32_at(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get_u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Offset of a marker that occurs exactly once in the record. */
static size_t
marker_offset(const uint8_t *rec, size_t len, const char *marker)
{
	size_t n = strlen(marker);
	const uint8_t *p = memmem(rec, len, marker, n);

	cr_assert_not_null(p, "marker %s not found", marker);
	cr_assert_null(memmem(p + 1, len - (size_t)(p - rec) - 1, marker, n),
	    "marker %s not unique", marker);
	return (size_t)(p - rec);
}

/* A copy of the encoded bytes that a test may patch. */
struct sample {
	uint8_t *bytes;
	size_t len;
};

static struct sample
sample_take(struct buf *b)
{
	struct sample s = { .len = buf_len(b) };

	s.bytes = malloc(s.len + 1);
	cr_assert_not_null(s.bytes);
	memcpy(s.bytes, buf_ptr(b), s.len);
	buf_free(b);
	return s;
}

/* ---- sample records, one rich instance of each type ------------------- */

static const char action_arg1[] = "A1:say \"hi\"\n$(rm -rf /)`id`";
static const char action_arg2[] =
    "A2:%2e%2e/caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91 \xe4\xb8\xad";
static const char action_arg3[] = "A3:'single' \\back\\ \t\r";

static void
sample_action_fill(struct record_action *a, struct value *args)
{
	memset(a, 0, sizeof(*a));
	a->call_id = 0x0102030405060708ULL;
	a->tool_index = 0xfffffffeU;
	fingerprint("catalog v1", a->fingerprint);
	args[0] = str_value(action_arg1);
	args[1] = (struct value){ .kind = VALUE_INTEGER, .u.integer = INT64_MIN };
	args[2] = (struct value){ .kind = VALUE_BOOLEAN, .u.boolean = true };
	args[3] = (struct value){ .kind = VALUE_DECIMAL,
	    .u.decimal_minor = -1234567 };
	args[4] = (struct value){ .kind = VALUE_ABSENT };
	args[5] = str_value(action_arg2);
	args[6] = (struct value){ .kind = VALUE_INTEGER, .u.integer = INT64_MAX };
	args[7] = (struct value){ .kind = VALUE_BOOLEAN, .u.boolean = false };
	args[8] = str_value("");
	args[9] = str_value(action_arg3);
	a->args = args;
	a->arg_count = 10;
}

static const char body_bytes[] = "BO:{\"a\":\"x\0y\",\n\"b\":\"$(id)\"}";

static void
sample_http_fill(struct record_result *r)
{
	memset(r, 0, sizeof(*r));
	r->call_id = UINT64_MAX;
	r->outcome = RECORD_OUTCOME_FAILED;
	r->kind = RECORD_RESULT_HTTP;
	r->flags = RESULT_REQUEST_SENT | RESULT_STARTED | RESULT_HAS_RETRY_AFTER;
	r->duration_us = 1234567;
	r->message = text("M1:target said \"busy\"\nretry later");
	r->http.status = 503;
	r->http.retry_after_s = 120;
	r->http.content_type = text("CT:application/json; charset=\"utf-8\"");
	r->http.location = text("LO:/items/42?q=%2e%2e&x=\xc3\xa9");
	r->http.body = blob(body_bytes, sizeof(body_bytes) - 1);
	r->http.body_total = 8123;
	r->http.connect_us = 250;
	r->http.first_byte_us = 9000;
}

static const char out_bytes[] = "SO:line 1\nline \"2\"\0tail";
static const char err_bytes[] = "SE:warning: $(whoami) \xe2\x9a\xa0";

static void
sample_ssh_fill(struct record_result *r)
{
	memset(r, 0, sizeof(*r));
	r->call_id = 42;
	r->outcome = RECORD_OUTCOME_UNKNOWN;
	r->kind = RECORD_RESULT_SSH;
	r->flags = RESULT_REQUEST_SENT | RESULT_STARTED;
	r->duration_us = 30000000;
	r->message = text("M2:killed by signal");
	r->ssh.end = RECORD_SSH_END_SIGNAL;
	r->ssh.signal = text("TERM");
	r->ssh.out = blob(out_bytes, sizeof(out_bytes) - 1);
	r->ssh.out_total = 1u << 20;
	r->ssh.err = blob(err_bytes, sizeof(err_bytes) - 1);
	r->ssh.err_total = sizeof(err_bytes) - 1;
}

static struct record_text event_shapes[] = {
	{ .ptr = (char *)"S1:string(36)", .len = 13 },
	{ .ptr = (char *)"S2:***\"1\n4", .len = 10 },
	{ .ptr = (char *)"S3:\xe2\x82\xac""12", .len = 8 },
};

static void
sample_event_fill(struct record_audit_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = RECORD_AUDIT_EXECUTION;
	ev->flags = AUDIT_HAS_SHA256 | AUDIT_STARTED;
	ev->frame_no = 17;
	ev->reason = text("upstream-timeout-x9");
	ev->code = -32602;
	fingerprint("offending", ev->sha256);
	ev->call_id = 99;
	ev->tool_index = 3;
	ev->outcome = RECORD_OUTCOME_UNKNOWN;
	ev->status = -1;
	ev->duration_us = 5000001;
	ev->shapes = event_shapes;
	ev->shape_count = 3;
}

/* ---- decoders with one signature, checking the failure contract ------- */

typedef enum record_error (*decode_fn)(const uint8_t *, size_t,
    const struct record_limits *);

static bool
all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

#define DECODE_WRAPPER(name, type, call, release)			\
static enum record_error						\
decode_##name(const uint8_t *d, size_t n, const struct record_limits *l) \
{									\
	type out;							\
	enum record_error e;						\
									\
	(void)l;							\
	memset(&out, 0xa5, sizeof(out));				\
	e = call;							\
	if (e != RECORD_OK)						\
		cr_assert(all_zero(&out, sizeof(out)),			\
		    #name ": output not zeroed on failure");		\
	release;							\
	return e;							\
}

DECODE_WRAPPER(hello, struct record_hello,
    record_hello_decode(d, n, &out), (void)0)
DECODE_WRAPPER(action, struct record_action,
    record_action_decode(d, n, l, &out), record_action_free(&out))
DECODE_WRAPPER(cancel, struct record_cancel,
    record_cancel_decode(d, n, &out), (void)0)
DECODE_WRAPPER(result, struct record_result,
    record_result_decode(d, n, l, &out), record_result_free(&out))
DECODE_WRAPPER(event, struct record_audit_event,
    record_audit_event_decode(d, n, l, &out), record_audit_event_free(&out))
DECODE_WRAPPER(ack, struct record_audit_ack,
    record_audit_ack_decode(d, n, &out), (void)0)

struct kind_case {
	const char *name;
	enum record_type type;
	decode_fn decode;
	struct sample s;
	const char *markers[6];	/* texts whose u32 length precedes them */
};

static void
cases_fill(struct kind_case *c)
{
	struct record_limits l = limits_default();
	struct record_hello hello = { .role = RECORD_ROLE_EXECUTOR };
	struct record_action action;
	struct value args[10];
	struct record_cancel cancel = { .call_id = 0x8000000000000001ULL };
	struct record_result http, ssh;
	struct record_audit_event ev;
	struct record_audit_ack ack = { .call_id = 7,
	    .status = RECORD_AUDIT_FAILED };
	struct buf b;

	fingerprint("hello", hello.fingerprint);
	sample_action_fill(&action, args);
	sample_http_fill(&http);
	sample_ssh_fill(&ssh);
	sample_event_fill(&ev);
	c[0] = (struct kind_case){ "hello", RECORD_HELLO, decode_hello,
	    .markers = { NULL } };
	c[1] = (struct kind_case){ "action", RECORD_ACTION, decode_action,
	    .markers = { "A1:", "A2:", "A3:" } };
	c[2] = (struct kind_case){ "cancel", RECORD_CANCEL, decode_cancel,
	    .markers = { NULL } };
	c[3] = (struct kind_case){ "http result", RECORD_RESULT, decode_result,
	    .markers = { "M1:", "CT:", "LO:", "BO:" } };
	c[4] = (struct kind_case){ "ssh result", RECORD_RESULT, decode_result,
	    .markers = { "M2:", "TERM", "SO:", "SE:" } };
	c[5] = (struct kind_case){ "audit event", RECORD_AUDIT_EVENT,
	    decode_event, .markers = { "upstream-", "S1:", "S2:", "S3:" } };
	c[6] = (struct kind_case){ "audit ack", RECORD_AUDIT_ACK, decode_ack,
	    .markers = { NULL } };
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&hello, &b), RECORD_OK);
	c[0].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_action_encode(&action, &l, &b), RECORD_OK);
	c[1].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_cancel_encode(&cancel, &b), RECORD_OK);
	c[2].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_result_encode(&http, &l, &b), RECORD_OK);
	c[3].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_result_encode(&ssh, &l, &b), RECORD_OK);
	c[4].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_audit_event_encode(&ev, &l, &b), RECORD_OK);
	c[5].s = sample_take(&b);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_audit_ack_encode(&ack, &b), RECORD_OK);
	c[6].s = sample_take(&b);
}

#define CASE_COUNT 7

static void
cases_free(struct kind_case *c)
{
	size_t i;

	for (i = 0; i < CASE_COUNT; i++)
		free(c[i].s.bytes);
}

/* ---- refusals every decoder shares ----------------------------------- */

Test(record_all, each_sample_decodes)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l), RECORD_OK,
		    "%s", c[i].name);
	cases_free(c);
}

Test(record_all, truncated_at_every_offset_is_short)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, n;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (n = 0; n < c[i].s.len; n++)
			cr_assert_eq(c[i].decode(c[i].s.bytes, n, &l),
			    RECORD_ERR_SHORT, "%s cut at %zu of %zu", c[i].name,
			    n, c[i].s.len);
	cases_free(c);
}

Test(record_all, one_byte_more_is_trailing)
{
	static const uint8_t extra[] = { 0x00, 0x01, 0xff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < sizeof(extra); j++) {
			c[i].s.bytes[c[i].s.len] = extra[j];
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len + 1,
			    &l), RECORD_ERR_TRAILING, "%s + %#x", c[i].name,
			    extra[j]);
		}
	cases_free(c);
}

Test(record_all, another_version_is_refused_and_reported)
{
	static const uint16_t versions[] = { 0, 2, 0x0100, 0xffff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	uint16_t seen;
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < 4; j++) {
			put_u16_at(c[i].s.bytes, versions[j]);
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l),
			    RECORD_ERR_VERSION, "%s v%u", c[i].name,
			    versions[j]);
			cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &seen,
			    NULL), RECORD_ERR_VERSION);
			cr_assert_eq(seen, versions[j]);
		}
	cases_free(c);
}

Test(record_all, another_type_is_refused)
{
	static const uint16_t types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 0x0101,
	    0xffff };
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++)
		for (j = 0; j < sizeof(types) / sizeof(types[0]); j++) {
			if (types[j] == c[i].type)
				continue;
			put_u16_at(c[i].s.bytes + 2, types[j]);
			cr_assert_eq(c[i].decode(c[i].s.bytes, c[i].s.len, &l),
			    RECORD_ERR_TYPE, "%s as type %u", c[i].name,
			    types[j]);
		}
	cases_free(c);
}

Test(record_all, above_the_record_cap_is_too_long)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	uint8_t *big;
	size_t i;

	cases_fill(c);
	big = calloc(1, RECORD_MAX_BYTES + 1);
	cr_assert_not_null(big);
	for (i = 0; i < CASE_COUNT; i++) {
		memcpy(big, c[i].s.bytes, c[i].s.len);
		cr_assert_eq(c[i].decode(big, RECORD_MAX_BYTES + 1, &l),
		    RECORD_ERR_TOO_LONG, "%s", c[i].name);
	}
	free(big);
	cases_free(c);
}

Test(record_all, each_length_field_corrupted_is_refused)
{
	struct kind_case c[CASE_COUNT];
	struct record_limits l = limits_default();
	size_t i, j, at, rest;
	uint32_t len;
	enum record_error e;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++) {
		uint8_t *r = c[i].s.bytes;

		for (j = 0; c[i].markers[j] != NULL; j++) {
			at = marker_offset(r, c[i].s.len, c[i].markers[j]) - 4;
			len = get_u32_at(r + at);
			rest = c[i].s.len - at - 4;

			put_u32_at(r + at, UINT32_MAX);
			cr_assert_eq(c[i].decode(r, c[i].s.len, &l),
			    RECORD_ERR_TOO_LONG, "%s %s", c[i].name,
			    c[i].markers[j]);
			put_u32_at(r + at, (uint32_t)rest + 1);
			e = c[i].decode(r, c[i].s.len, &l);
			cr_assert(e == RECORD_ERR_SHORT || e == RECORD_ERR_TOO_LONG,
			    "%s %s past the end: %s", c[i].name,
			    c[i].markers[j], record_error_str(e));
			put_u32_at(r + at, len + 1);
			cr_assert_neq(c[i].decode(r, c[i].s.len, &l), RECORD_OK,
			    "%s %s +1", c[i].name, c[i].markers[j]);
			put_u32_at(r + at, len - 1);
			cr_assert_neq(c[i].decode(r, c[i].s.len, &l), RECORD_OK,
			    "%s %s -1", c[i].name, c[i].markers[j]);
			put_u32_at(r + at, len);
			cr_assert_eq(c[i].decode(r, c[i].s.len, &l), RECORD_OK);
		}
	}
	cases_free(c);
}

Test(record_all, peek_names_the_type_of_each_sample)
{
	struct kind_case c[CASE_COUNT];
	enum record_type type;
	uint16_t version = 0;
	size_t i;

	cases_fill(c);
	for (i = 0; i < CASE_COUNT; i++) {
		cr_assert_eq(record_peek(c[i].s.bytes, c[i].s.len, &version,
		    &type), RECORD_OK);
		cr_assert_eq(type, c[i].type);
		cr_assert_eq(version, RECORD_VERSION);
		cr_assert_eq(record_peek(c[i].s.bytes, 3, NULL, NULL),
		    RECORD_ERR_SHORT);
	}
	cases_free(c);
}

/* ---- encode helpers for the tests below ------------------------------ */

static struct sample
encode_action(const struct record_action *a, const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_action_encode(a, l, &b), RECORD_OK);
	return sample_take(&b);
}

static struct sample
encode_result(const struct record_result *r, const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_result_encode(r, l, &b), RECORD_OK);
	return sample_take(&b);
}

static struct sample
encode_event(const struct record_audit_event *ev,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_audit_event_encode(ev, l, &b), RECORD_OK);
	return sample_take(&b);
}

/* ---- hello, cancel, audit ack ---------------------------------------- */

Test(record_hello, layout_is_as_documented_and_roundtrips)
{
	struct record_hello in = { .role = RECORD_ROLE_FRONTEND }, out;
	uint8_t want[4 + 1 + HASH_SHA256_LEN] = { 0, 1, 0, 1, 2 };
	enum record_role role;
	struct buf b;

	fingerprint("tools", in.fingerprint);
	memcpy(want + 5, in.fingerprint, HASH_SHA256_LEN);
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&in, &b), RECORD_OK);
	cr_assert_eq(buf_len(&b), sizeof(want));
	cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
	buf_free(&b);
	for (role = RECORD_ROLE_BROKER; role <= RECORD_ROLE_EXECUTOR; role++) {
		want[4] = (uint8_t)role;
		cr_assert_eq(record_hello_decode(want, sizeof(want), &out),
		    RECORD_OK);
		cr_assert_eq(out.role, role);
		cr_assert_arr_eq(out.fingerprint, in.fingerprint,
		    HASH_SHA256_LEN);
	}
}

Test(record_hello, role_out_of_range_is_refused_both_ways)
{
	static const uint8_t roles[] = { 0, 4, 0xff };
	struct record_hello in = { .role = RECORD_ROLE_FRONTEND }, out;
	struct sample s;
	struct buf b;
	size_t i;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&in, &b), RECORD_OK);
	s = sample_take(&b);
	for (i = 0; i < sizeof(roles); i++) {
		s.bytes[4] = roles[i];
		cr_assert_eq(record_hello_decode(s.bytes, s.len, &out),
		    RECORD_ERR_RANGE, "role %u", roles[i]);
		in.role = (enum record_role)roles[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_hello_encode(&in, &b), RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
	free(s.bytes);
}

Test(record_cancel, layout_is_as_documented_and_roundtrips)
{
	static const uint64_t ids[] = { 0, 1, 0x0102030405060708ULL,
	    UINT64_MAX };
	uint8_t want[12] = { 0, 1, 0, 4 };
	struct record_cancel in, out;
	struct buf b;
	size_t i;

	for (i = 0; i < 4; i++) {
		in.call_id = ids[i];
		put_u32_at(want + 4, (uint32_t)(ids[i] >> 32));
		put_u32_at(want + 8, (uint32_t)ids[i]);
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_cancel_encode(&in, &b), RECORD_OK);
		cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
		cr_assert_eq(buf_len(&b), sizeof(want));
		cr_assert_eq(record_cancel_decode(buf_ptr(&b), buf_len(&b),
		    &out), RECORD_OK);
		cr_assert(record_cancel_equal(&in, &out));
		buf_free(&b);
	}
}

Test(record_audit_ack, layout_roundtrip_and_status_range)
{
	uint8_t want[13] = { 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0x30, 0x39,
	    RECORD_AUDIT_WRITTEN };
	struct record_audit_ack in = { .call_id = 12345,
	    .status = RECORD_AUDIT_WRITTEN }, out;
	static const uint8_t bad[] = { 0, 3, 0xff };
	struct buf b;
	size_t i;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_audit_ack_encode(&in, &b), RECORD_OK);
	cr_assert_eq(buf_len(&b), sizeof(want));
	cr_assert_arr_eq(buf_ptr(&b), want, sizeof(want));
	buf_free(&b);
	cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
	    RECORD_OK);
	cr_assert(record_audit_ack_equal(&in, &out));
	want[12] = RECORD_AUDIT_FAILED;
	cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
	    RECORD_OK);
	cr_assert_eq(out.status, RECORD_AUDIT_FAILED);
	for (i = 0; i < sizeof(bad); i++) {
		want[12] = bad[i];
		cr_assert_eq(record_audit_ack_decode(want, sizeof(want), &out),
		    RECORD_ERR_RANGE, "status %u", bad[i]);
		in.status = (enum record_audit_ack_status)bad[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_audit_ack_encode(&in, &b), RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
}

/* ---- action ---------------------------------------------------------- */

Test(record_action, layout_is_as_documented)
{
	/* call 5, tool 2, fingerprint 0x11.., ["a\"b", -2, true, absent, 3] */
	uint8_t want[] = {
		0, 1, 0, 2,
		0, 0, 0, 0, 0, 0, 0, 5,
		0, 0, 0, 2,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0, 5,
		VALUE_STRING, 0, 0, 0, 3, 'a', '"', 'b',
		VALUE_INTEGER, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
		VALUE_BOOLEAN, 1,
		VALUE_ABSENT,
		VALUE_DECIMAL, 0, 0, 0, 0, 0, 0, 0, 3,
	};
	struct record_limits l = limits_default();
	struct value args[5] = {
		str_value("a\"b"),
		{ .kind = VALUE_INTEGER, .u.integer = -2 },
		{ .kind = VALUE_BOOLEAN, .u.boolean = true },
		{ .kind = VALUE_ABSENT },
		{ .kind = VALUE_DECIMAL, .u.decimal_minor = 3 },
	};
	struct record_action in = { .call_id = 5, .tool_index = 2,
	    .args = args, .arg_count = 5 }, out;
	struct sample s;

	memset(in.fingerprint, 0x11, HASH_SHA256_LEN);
	s = encode_action(&in, &l);
	cr_assert_eq(s.len, sizeof(want));
	cr_assert_arr_eq(s.bytes, want, sizeof(want));
	cr_assert_eq(record_action_decode(want, sizeof(want), &l, &out),
	    RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_str_eq(out.args[0].u.str.ptr, "a\"b");
	record_action_free(&out);
	cr_assert_null(out.args);
	free(s.bytes);
}

Test(record_action, varied_arguments_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[10];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_str_eq(out.args[5].u.str.ptr, action_arg2);
	cr_assert_eq(out.args[1].u.integer, INT64_MIN);
	cr_assert_eq(out.args[6].u.integer, INT64_MAX);
	cr_assert_eq(out.args[8].kind, VALUE_STRING);
	cr_assert_str_eq(out.args[8].u.str.ptr, "");
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, zero_values_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_action in = { 0 }, out;
	struct value args[3] = {
		{ .kind = VALUE_INTEGER }, { .kind = VALUE_DECIMAL },
		{ .kind = VALUE_BOOLEAN },
	};
	struct sample s;

	s = encode_action(&in, &l);
	cr_assert_eq(s.len, 4 + 8 + 4 + 32 + 2);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	cr_assert_null(out.args);
	free(s.bytes);

	in.args = args;
	in.arg_count = 3;
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, as_many_arguments_as_the_cap_roundtrip)
{
	struct record_limits l = limits_default();
	struct value args[RECORD_ARGS_CAP];
	char strings[RECORD_ARGS_CAP][16];
	struct record_action in = { .call_id = 1, .args = args,
	    .arg_count = RECORD_ARGS_CAP }, out;
	struct sample s;
	size_t i;

	for (i = 0; i < RECORD_ARGS_CAP; i++) {
		snprintf(strings[i], sizeof(strings[i]), "'%zu'\n", i);
		switch (i % 4) {
		case 0:
			args[i] = str_value(strings[i]);
			break;
		case 1:
			args[i] = (struct value){ .kind = VALUE_INTEGER,
			    .u.integer = -(int64_t)i * 1000003 };
			break;
		case 2:
			args[i] = (struct value){ .kind = VALUE_BOOLEAN,
			    .u.boolean = i % 8 == 2 };
			break;
		default:
			args[i] = (struct value){ .kind = VALUE_ABSENT };
		}
	}
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.arg_count, RECORD_ARGS_CAP);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
}

/* Two string arguments at the cap, every byte value but NUL. */
Test(record_action, strings_at_the_byte_cap_roundtrip)
{
	struct record_limits l = limits_default();
	char *big = malloc(RECORD_ARG_BYTES_CAP + 1);
	struct value args[2];
	struct record_action in = { .args = args, .arg_count = 2 }, out;
	struct sample s;
	size_t i;

	cr_assert_not_null(big);
	for (i = 0; i < RECORD_ARG_BYTES_CAP; i++)
		big[i] = (char)(1 + i % 255);
	big[RECORD_ARG_BYTES_CAP] = '\0';
	args[0] = str_value(big);
	args[1] = str_value(big);
	s = encode_action(&in, &l);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert(record_action_equal(&in, &out));
	record_action_free(&out);
	free(s.bytes);
	free(big);
}

Test(record_action, limits_come_from_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[10];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	l.max_args = 9;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_args = 10;
	l.max_arg_bytes = strlen(action_arg2) - 1;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_arg_bytes = strlen(action_arg2);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, caps_hold_whatever_the_parameters_say)
{
	struct record_limits l = { SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX };
	struct record_action in = { 0 }, out;
	struct sample s;

	s = encode_action(&in, &l);
	/* Count 257 with nothing after it: the cap refuses before reading. */
	put_u16_at(s.bytes + 48, RECORD_ARGS_CAP + 1);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	put_u16_at(s.bytes + 48, RECORD_ARGS_CAP);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	free(s.bytes);
}

Test(record_action, argument_count_corrupted_is_refused)
{
	struct record_limits l = limits_default();
	struct record_action in, out;
	struct value args[10];
	struct sample s;

	sample_action_fill(&in, args);
	s = encode_action(&in, &l);
	put_u16_at(s.bytes + 48, 11);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	put_u16_at(s.bytes + 48, 9);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TRAILING);
	put_u16_at(s.bytes + 48, 0xffff);
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	free(s.bytes);
}

Test(record_action, unknown_value_kind_is_refused)
{
	static const uint8_t kinds[] = { 5, 6, 0x80, 0xff };
	struct record_limits l = limits_default();
	struct value arg = { .kind = VALUE_INTEGER, .u.integer = 7 };
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct buf b;
	struct sample s;
	size_t i;

	s = encode_action(&in, &l);
	for (i = 0; i < sizeof(kinds); i++) {
		s.bytes[50] = kinds[i];
		cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "kind %u", kinds[i]);
		arg.kind = (enum value_kind)kinds[i];
		buf_init_writer(&b, RECORD_MAX_BYTES);
		cr_assert_eq(record_action_encode(&in, &l, &b),
		    RECORD_ERR_RANGE);
		cr_assert_eq(buf_len(&b), 0);
		buf_free(&b);
	}
	free(s.bytes);
}

Test(record_action, boolean_other_than_zero_or_one_is_refused)
{
	struct record_limits l = limits_default();
	struct value arg = { .kind = VALUE_BOOLEAN, .u.boolean = true };
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct sample s;

	s = encode_action(&in, &l);
	cr_assert_eq(s.bytes[51], 1);
	s.bytes[51] = 2;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[51] = 0xff;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[51] = 0;
	cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	cr_assert_eq(out.args[0].u.boolean, false);
	record_action_free(&out);
	free(s.bytes);
}

Test(record_action, nul_inside_a_string_argument_is_refused)
{
	struct record_limits l = limits_default();
	struct value arg = str_value("abc");
	struct record_action in = { .args = &arg, .arg_count = 1 }, out;
	struct buf b;
	struct sample s;
	size_t i;

	s = encode_action(&in, &l);
	for (i = 0; i < 3; i++) {
		s.bytes[55 + i] = '\0';
		cr_assert_eq(record_action_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "NUL at %zu", i);
		s.bytes[55 + i] = (uint8_t)"abc"[i];
	}
	arg.u.str.ptr = (char *)"a\0c";
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_CHAR);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
	free(s.bytes);
}

Test(record_action, encoder_refuses_what_the_limits_refuse)
{
	struct record_limits l = limits_default();
	struct record_action in;
	struct value args[10];
	struct buf b;

	sample_action_fill(&in, args);
	l.max_args = 9;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(buf_put_u8(&b, 0x42), BUF_OK);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	l.max_args = 10;
	l.max_arg_bytes = 3;
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 1, "what was there is kept, nothing added");
	cr_assert_eq(buf_ptr(&b)[0], 0x42);
	buf_free(&b);
}

Test(record_action, a_record_above_the_cap_is_not_encoded)
{
	struct record_limits l = limits_default();
	char *big = malloc(RECORD_ARG_BYTES_CAP + 1);
	struct value args[4];
	struct record_action in = { .args = args, .arg_count = 4 };
	struct buf b;
	size_t i;

	cr_assert_not_null(big);
	memset(big, 'x', RECORD_ARG_BYTES_CAP);
	big[RECORD_ARG_BYTES_CAP] = '\0';
	for (i = 0; i < 4; i++)
		args[i] = str_value(big);
	buf_init_writer(&b, SIZE_MAX);
	cr_assert_eq(record_action_encode(&in, &l, &b), RECORD_ERR_TOO_LONG);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
	free(big);
}

/* ---- result ---------------------------------------------------------- */

static void
result_roundtrip(const struct record_result *in, const struct record_limits *l)
{
	struct record_result out;
	struct sample s = encode_result(in, l);

	cr_assert_eq(record_result_decode(s.bytes, s.len, l, &out), RECORD_OK);
	cr_assert(record_result_equal(in, &out));
	/* Decoded texts are C strings of their length. */
	cr_assert_eq(strlen(out.message.ptr), out.message.len);
	record_result_free(&out);
	cr_assert_null(out.message.ptr);
	free(s.bytes);
}

Test(record_result, http_ssh_and_none_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_result r;
	enum record_outcome o;

	sample_http_fill(&r);
	result_roundtrip(&r, &l);
	sample_ssh_fill(&r);
	result_roundtrip(&r, &l);
	r.ssh.end = RECORD_SSH_END_EXIT;
	r.ssh.signal = text("");
	r.ssh.exit_status = -1;
	result_roundtrip(&r, &l);
	r.ssh.exit_status = 255;
	result_roundtrip(&r, &l);
	for (o = RECORD_OUTCOME_OK; o <= RECORD_OUTCOME_INVALID; o++) {
		memset(&r, 0, sizeof(r));
		r.outcome = o;
		r.message = text("MN:denied by \"scope\"\n\xe2\x9b\x94");
		result_roundtrip(&r, &l);
	}
}

Test(record_result, zero_values_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_OK,
	    .kind = RECORD_RESULT_HTTP };

	result_roundtrip(&r, &l);
	r.kind = RECORD_RESULT_SSH;
	result_roundtrip(&r, &l);
	r.kind = RECORD_RESULT_NONE;
	result_roundtrip(&r, &l);
}

Test(record_result, payloads_at_the_cap_roundtrip_with_any_byte)
{
	struct record_limits l = limits_default();
	uint8_t *big = malloc(RECORD_PAYLOAD_CAP);
	char *msg = malloc(RECORD_TEXT_CAP + 1);
	struct record_result r;
	size_t i;

	cr_assert_not_null(big);
	cr_assert_not_null(msg);
	for (i = 0; i < RECORD_PAYLOAD_CAP; i++)
		big[i] = (uint8_t)(i * 7);
	memset(msg, 'm', RECORD_TEXT_CAP);
	msg[RECORD_TEXT_CAP] = '\0';
	sample_http_fill(&r);
	r.message = text(msg);
	r.http.body = blob(big, RECORD_PAYLOAD_CAP);
	r.http.body_total = RECORD_PAYLOAD_CAP;
	result_roundtrip(&r, &l);
	sample_ssh_fill(&r);
	r.ssh.out = blob(big, RECORD_PAYLOAD_CAP);
	r.ssh.err = blob(big, RECORD_PAYLOAD_CAP);
	r.ssh.out_total = r.ssh.err_total = UINT64_MAX;
	result_roundtrip(&r, &l);
	free(big);
	free(msg);
}

Test(record_result, limits_come_from_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;

	sample_http_fill(&r);
	s = encode_result(&r, &l);
	l.max_payload_bytes = r.http.body.len - 1;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_payload_bytes = r.http.body.len;
	/* The content type is the longest text of the sample. */
	cr_assert_gt(r.http.content_type.len, r.message.len);
	cr_assert_gt(r.http.content_type.len, r.http.location.len);
	l.max_text_bytes = r.http.content_type.len - 1;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_text_bytes = r.http.content_type.len;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	free(s.bytes);
}

/* A result with an empty message: outcome at 12, kind 13, flags 14..17. */
Test(record_result, outcome_kind_and_flags_out_of_range_are_refused)
{
	static const uint8_t outcomes[] = { 0, 6, 0xff };
	static const uint32_t flags[] = { 0x08, 0x100, 0x80000000U };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_DENIED }, out;
	struct sample s = encode_result(&r, &l);
	size_t i;

	cr_assert_eq(s.len, 30);
	for (i = 0; i < sizeof(outcomes); i++) {
		s.bytes[12] = outcomes[i];
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "outcome %u", outcomes[i]);
	}
	s.bytes[12] = RECORD_OUTCOME_DENIED;
	s.bytes[13] = 3;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[13] = RECORD_RESULT_NONE;
	for (i = 0; i < 3; i++) {
		put_u32_at(s.bytes + 14, flags[i]);
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "flags %#x", flags[i]);
	}
	put_u32_at(s.bytes + 14, RESULT_HAS_RETRY_AFTER);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "Retry-After without HTTP");
	put_u32_at(s.bytes + 14, RESULT_REQUEST_SENT | RESULT_STARTED);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	free(s.bytes);
}

/*
 * An HTTP result with empty texts: status at 30, Retry-After 32..35, body
 * length 44..47, body from 48; then body total, connect, first byte.
 */
Test(record_result, http_fields_that_disagree_are_refused)
{
	static const uint16_t statuses[] = { 1, 99, 600, 0xffff };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_OK,
	    .kind = RECORD_RESULT_HTTP }, out;
	struct sample s;
	size_t i;

	r.http.status = 200;
	r.http.body = blob("a\"\0", 3);
	r.http.body_total = 3;
	s = encode_result(&r, &l);
	cr_assert_eq(s.len, 48 + 3 + 24);
	for (i = 0; i < 4; i++) {
		put_u16_at(s.bytes + 30, statuses[i]);
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "status %u", statuses[i]);
	}
	put_u16_at(s.bytes + 30, 0);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	put_u16_at(s.bytes + 30, 599);
	put_u32_at(s.bytes + 32, 30);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "Retry-After without its flag");
	put_u32_at(s.bytes + 14, RESULT_HAS_RETRY_AFTER);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	put_u32_at(s.bytes + 51 + 4, 2);	/* body total 2 < 3 shown */
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	free(s.bytes);

	r.http.status = 100;
	r.http.body_total = 2;
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_INCONSISTENT);
	r.http.body_total = 3;
	r.http.status = 600;
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_RANGE);
}

/*
 * An SSH result with an empty message: end at 30, exit status 31..34,
 * signal length 35..38, signal bytes from 39.
 */
Test(record_result, ssh_end_exit_status_and_signal_must_agree)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_FAILED,
	    .kind = RECORD_RESULT_SSH }, out;
	struct sample s;

	/* No end: neither exit status nor signal. */
	s = encode_result(&r, &l);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	put_u32_at(s.bytes + 31, 1);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	s.bytes[30] = RECORD_SSH_END_EXIT;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	s.bytes[30] = RECORD_SSH_END_SIGNAL;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "signal end with no signal");
	s.bytes[30] = 3;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	free(s.bytes);

	r.ssh.end = RECORD_SSH_END_SIGNAL;
	r.ssh.signal = text("KILL");
	s = encode_result(&r, &l);
	s.bytes[30] = RECORD_SSH_END_EXIT;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "exit with a signal");
	s.bytes[30] = RECORD_SSH_END_NONE;
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "no end with a signal");
	s.bytes[30] = RECORD_SSH_END_SIGNAL;
	put_u32_at(s.bytes + 31, 137);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "signal with an exit status");
	free(s.bytes);

	r.ssh.exit_status = 9;
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_INCONSISTENT);
}

Test(record_result, signal_name_outside_its_alphabet_is_refused)
{
	static const char bad[] = { 'k', ' ', '"', '\n', '\0', '-', '$',
	    (char)0xc3 };
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_FAILED,
	    .kind = RECORD_RESULT_SSH, .ssh.end = RECORD_SSH_END_SIGNAL }, out;
	char name[RECORD_TOKEN_MAX + 2];
	struct sample s;
	size_t i;

	r.ssh.signal = text("KILL");
	s = encode_result(&r, &l);
	for (i = 0; i < sizeof(bad); i++) {
		s.bytes[40] = (uint8_t)bad[i];
		cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "byte %#x", (unsigned)(uint8_t)bad[i]);
	}
	free(s.bytes);
	r.ssh.signal = text("Kill");
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_CHAR);

	memset(name, 'X', sizeof(name));
	name[RECORD_TOKEN_MAX] = '\0';
	r.ssh.signal = text(name);
	result_roundtrip(&r, &l);
	name[RECORD_TOKEN_MAX] = 'X';
	name[RECORD_TOKEN_MAX + 1] = '\0';
	r.ssh.signal = text(name);
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_TOO_LONG);
}

Test(record_result, stream_totals_below_what_is_shown_are_refused)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;

	sample_ssh_fill(&r);
	s = encode_result(&r, &l);
	/* err_total is the last field, out_total precedes stderr. */
	put_u32_at(s.bytes + s.len - 8, 0);
	put_u32_at(s.bytes + s.len - 4, (uint32_t)r.ssh.err.len - 1);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT);
	put_u32_at(s.bytes + s.len - 4, (uint32_t)r.ssh.err.len);
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out), RECORD_OK);
	record_result_free(&out);
	free(s.bytes);

	r.ssh.out_total = r.ssh.out.len - 1;
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_INCONSISTENT);
}

Test(record_result, nul_inside_a_text_is_refused_but_allowed_in_bodies)
{
	struct record_limits l = limits_default();
	struct record_result r, out;
	struct sample s;
	size_t at;

	sample_http_fill(&r);
	s = encode_result(&r, &l);
	at = marker_offset(s.bytes, s.len, "CT:");
	s.bytes[at + 5] = '\0';
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	s.bytes[at + 5] = 'x';
	at = marker_offset(s.bytes, s.len, "M1:");
	s.bytes[at + 3] = '\0';
	cr_assert_eq(record_result_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	free(s.bytes);

	r.http.location = (struct record_text){ .ptr = (char *)"/a\0b",
	    .len = 4 };
	cr_assert_eq(record_result_encode(&r, &l, &(struct buf){ 0 }),
	    RECORD_ERR_CHAR);
	cr_assert_not_null(memchr(body_bytes, '\0', sizeof(body_bytes) - 1));
}

Test(record_result, encoder_refuses_outcome_none)
{
	struct record_limits l = limits_default();
	struct record_result r = { .outcome = RECORD_OUTCOME_NONE };
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_result_encode(&r, &l, &b), RECORD_ERR_RANGE);
	cr_assert_eq(buf_len(&b), 0);
	buf_free(&b);
}

/* ---- audit event ----------------------------------------------------- */

static void
event_roundtrip(const struct record_audit_event *in,
    const struct record_limits *l)
{
	struct record_audit_event out;
	struct sample s = encode_event(in, l);

	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, l, &out),
	    RECORD_OK);
	cr_assert(record_audit_event_equal(in, &out));
	record_audit_event_free(&out);
	cr_assert_null(out.shapes);
	free(s.bytes);
}

Test(record_audit_event, every_kind_roundtrips)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev;

	sample_event_fill(&ev);
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.flags = AUDIT_HAS_SHA256;
	ev.frame_no = UINT64_MAX;
	ev.reason = text("not-utf8");
	ev.code = -32700;
	fingerprint("\xff\xfe{\"jsonrpc\"", ev.sha256);
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	ev.call_id = 1;
	ev.tool_index = 0;
	ev.shapes = event_shapes;
	ev.shape_count = 3;
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_VIOLATION;
	ev.reason = text("record-trailing");
	event_roundtrip(&ev, &l);

	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CANCELLATION;
	ev.flags = AUDIT_STARTED;
	ev.call_id = 0x7fffffffffffffffULL;
	ev.tool_index = UINT32_MAX;
	event_roundtrip(&ev, &l);
}

Test(record_audit_event, as_many_shapes_as_the_cap_roundtrip)
{
	struct record_limits l = limits_default();
	struct record_text shapes[RECORD_ARGS_CAP];
	char strings[RECORD_ARGS_CAP][24];
	struct record_audit_event ev = { .kind = RECORD_AUDIT_INTENT,
	    .shapes = shapes, .shape_count = RECORD_ARGS_CAP };
	size_t i;

	for (i = 0; i < RECORD_ARGS_CAP; i++) {
		snprintf(strings[i], sizeof(strings[i]), "string(%zu) \"\xc3\xa9\"",
		    i);
		shapes[i] = text(strings[i]);
	}
	event_roundtrip(&ev, &l);
}

/*
 * A minimal event (empty reason, no sha256, no shapes): kind at 4, flags
 * 5, reason length 14..17, code 18..21, outcome 34, shape count 47..48.
 */
Test(record_audit_event, kind_flags_and_outcome_out_of_range_are_refused)
{
	static const uint8_t kinds[] = { 0, 6, 0xff };
	static const uint8_t flags[] = { 0x04, 0x80, 0xff };
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_EXECUTION,
	    .outcome = RECORD_OUTCOME_OK }, out;
	struct sample s = encode_event(&ev, &l);
	size_t i;

	cr_assert_eq(s.len, 49);
	for (i = 0; i < 3; i++) {
		s.bytes[4] = kinds[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "kind %u", kinds[i]);
	}
	s.bytes[4] = RECORD_AUDIT_EXECUTION;
	for (i = 0; i < 3; i++) {
		s.bytes[5] = flags[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_RANGE, "flags %#x", flags[i]);
	}
	s.bytes[5] = AUDIT_STARTED;
	s.bytes[34] = 6;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_RANGE);
	s.bytes[34] = RECORD_OUTCOME_NONE;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "an execution without an outcome");
	s.bytes[4] = RECORD_AUDIT_INTENT;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	s.bytes[34] = RECORD_OUTCOME_OK;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_INCONSISTENT, "an intent with an outcome");
	free(s.bytes);

	ev.kind = RECORD_AUDIT_REJECTION;
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_INCONSISTENT);
	ev.kind = RECORD_AUDIT_EXECUTION;
	ev.flags = 0x10;
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_RANGE);
}

Test(record_audit_event, sha256_flag_decides_whether_the_bytes_are_there)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev, out;
	struct sample s;

	sample_event_fill(&ev);
	s = encode_event(&ev, &l);
	s.bytes[5] &= (uint8_t)~AUDIT_HAS_SHA256;
	cr_assert_neq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	free(s.bytes);

	ev.flags &= ~AUDIT_HAS_SHA256;
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_INCONSISTENT, "sha256 bytes without the flag");
	memset(ev.sha256, 0, sizeof(ev.sha256));
	s = encode_event(&ev, &l);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_audit_event_free(&out);
	free(s.bytes);

	/* The flag on a minimal event asks for 32 bytes it does not have. */
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_INTENT;
	s = encode_event(&ev, &l);
	s.bytes[5] |= AUDIT_HAS_SHA256;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	free(s.bytes);
}

Test(record_audit_event, reason_outside_its_alphabet_is_refused)
{
	static const char bad[] = { 'A', ' ', '"', '\n', '\0', '_', '{', '\\',
	    (char)0xe2 };
	struct record_limits l = limits_default();
	struct record_audit_event ev = { .kind = RECORD_AUDIT_REJECTION }, out;
	char reason[RECORD_TOKEN_MAX + 2];
	struct sample s;
	size_t i;

	ev.reason = text("bad-frame");
	s = encode_event(&ev, &l);
	for (i = 0; i < sizeof(bad); i++) {
		s.bytes[18 + 3] = (uint8_t)bad[i];
		cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
		    RECORD_ERR_CHAR, "byte %#x", (unsigned)(uint8_t)bad[i]);
	}
	free(s.bytes);
	ev.reason = text("Bad frame");
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_CHAR);

	memset(reason, 'z', sizeof(reason));
	reason[RECORD_TOKEN_MAX] = '\0';
	ev.reason = text(reason);
	event_roundtrip(&ev, &l);
	reason[RECORD_TOKEN_MAX] = 'z';
	reason[RECORD_TOKEN_MAX + 1] = '\0';
	ev.reason = text(reason);
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_TOO_LONG);
}

Test(record_audit_event, shapes_are_bounded_by_the_parameters)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev, out;
	struct sample s;
	size_t at;

	sample_event_fill(&ev);
	s = encode_event(&ev, &l);
	l.max_args = 2;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	cr_assert_eq(record_audit_event_encode(&ev, &l, &(struct buf){ 0 }),
	    RECORD_ERR_TOO_LONG);
	l.max_args = 3;
	l.max_text_bytes = 12;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	l.max_text_bytes = 13;
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_OK);
	record_audit_event_free(&out);

	/* Shape count: one more runs out, one fewer leaves bytes behind. */
	l = limits_default();
	at = marker_offset(s.bytes, s.len, "S1:") - 6;
	put_u16_at(s.bytes + at, 4);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_SHORT);
	put_u16_at(s.bytes + at, 2);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TRAILING);
	put_u16_at(s.bytes + at, RECORD_ARGS_CAP + 1);
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_TOO_LONG);
	put_u16_at(s.bytes + at, 3);

	at = marker_offset(s.bytes, s.len, "S2:");
	s.bytes[at + 4] = '\0';
	cr_assert_eq(record_audit_event_decode(s.bytes, s.len, &l, &out),
	    RECORD_ERR_CHAR);
	free(s.bytes);
}
