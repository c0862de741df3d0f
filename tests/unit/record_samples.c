#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tests/unit/record_samples.h"

const char sample_action_arg1[] = "A1:say \"hi\"\n$(rm -rf /)`id`";
const char sample_action_arg2[] =
    "A2:%2e%2e/caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91 \xe4\xb8\xad";
const char sample_action_arg3[] = "A3:'single' \\back\\ \t\r";
const char sample_body[] = "BO:{\"a\":\"x\0y\",\n\"b\":\"$(id)\"}";
const size_t sample_body_len = sizeof(sample_body) - 1;
const char sample_out[] = "SO:line 1\nline \"2\"\0tail";
const char sample_err[] = "SE:warning: $(whoami) \xe2\x9a\xa0";

struct record_text sample_event_shapes[SAMPLE_EVENT_SHAPES] = {
	{ .ptr = (char *)"S1:string(36)", .len = 13 },
	{ .ptr = (char *)"S2:***\"1\n4", .len = 10 },
	{ .ptr = (char *)"S3:\xe2\x82\xac" "12", .len = 8 },
};

static void
require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "record_samples: %s\n", what);
		abort();
	}
}

struct record_limits
limits_default(void)
{
	struct record_limits l;

	record_limits_default(&l);
	return l;
}

struct record_text
text(const char *s)
{
	return (struct record_text){ .ptr = (char *)s, .len = strlen(s) };
}

struct record_bytes
blob(const void *p, size_t len)
{
	return (struct record_bytes){ .ptr = (uint8_t *)p, .len = len };
}

struct value
str_value(const char *s)
{
	struct value v = { .kind = VALUE_STRING };

	v.u.str.ptr = (char *)s;
	v.u.str.len = strlen(s);
	return v;
}

void
fingerprint(const char *seed, uint8_t out[HASH_SHA256_LEN])
{
	hash_sha256(seed, strlen(seed), out);
}

void
put_u16_at(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void
put_u32_at(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t
get_u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

size_t
marker_offset(const uint8_t *rec, size_t len, const char *marker)
{
	size_t n = strlen(marker);
	const uint8_t *p = memmem(rec, len, marker, n);

	require(p != NULL, marker);
	require(memmem(p + 1, len - (size_t)(p - rec) - 1, marker, n) == NULL,
	    marker);
	return (size_t)(p - rec);
}

struct sample
sample_take(struct buf *b)
{
	struct sample s = { .len = buf_len(b) };

	s.bytes = malloc(s.len + 1);
	require(s.bytes != NULL, "out of memory");
	memcpy(s.bytes, buf_ptr(b), s.len);
	buf_free(b);
	return s;
}

void
sample_action_fill(struct record_action *a, struct value *args)
{
	memset(a, 0, sizeof(*a));
	a->call_id = 0x0102030405060708ULL;
	a->tool_index = 0xfffffffeU;
	fingerprint("catalog v1", a->fingerprint);
	args[0] = str_value(sample_action_arg1);
	args[1] = (struct value){ .kind = VALUE_INTEGER, .u.integer = INT64_MIN };
	args[2] = (struct value){ .kind = VALUE_BOOLEAN, .u.boolean = true };
	args[3] = (struct value){ .kind = VALUE_DECIMAL,
	    .u.decimal_minor = -1234567 };
	args[4] = (struct value){ .kind = VALUE_ABSENT };
	args[5] = str_value(sample_action_arg2);
	args[6] = (struct value){ .kind = VALUE_INTEGER, .u.integer = INT64_MAX };
	args[7] = (struct value){ .kind = VALUE_BOOLEAN, .u.boolean = false };
	args[8] = str_value("");
	args[9] = str_value(sample_action_arg3);
	a->args = args;
	a->arg_count = SAMPLE_ACTION_ARGS;
}

void
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
	r->http.body = blob(sample_body, sample_body_len);
	r->http.body_total = 8123;
	r->http.connect_us = 250;
	r->http.first_byte_us = 9000;
}

void
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
	r->ssh.out = blob(sample_out, sizeof(sample_out) - 1);
	r->ssh.out_total = 1u << 20;
	r->ssh.err = blob(sample_err, sizeof(sample_err) - 1);
	r->ssh.err_total = sizeof(sample_err) - 1;
}

void
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
	ev->shapes = sample_event_shapes;
	ev->shape_count = SAMPLE_EVENT_SHAPES;
}

struct sample
encode_hello(const struct record_hello *h)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_hello_encode(h, &b) == RECORD_OK, "encode hello");
	return sample_take(&b);
}

struct sample
encode_action(const struct record_action *a, const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_action_encode(a, l, &b) == RECORD_OK, "encode action");
	return sample_take(&b);
}

struct sample
encode_cancel(const struct record_cancel *c)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_cancel_encode(c, &b) == RECORD_OK, "encode cancel");
	return sample_take(&b);
}

struct sample
encode_result(const struct record_result *r, const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_result_encode(r, l, &b) == RECORD_OK, "encode result");
	return sample_take(&b);
}

struct sample
encode_event(const struct record_audit_event *ev,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_audit_event_encode(ev, l, &b) == RECORD_OK,
	    "encode audit event");
	return sample_take(&b);
}

struct sample
encode_ack(const struct record_audit_ack *ack)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(record_audit_ack_encode(ack, &b) == RECORD_OK,
	    "encode audit ack");
	return sample_take(&b);
}

/* A refused record must leave the writer as it was: one marker byte. */
static enum record_error
status_checked(struct buf *b, enum record_error e)
{
	if (e != RECORD_OK)
		require(buf_len(b) == 1 && buf_ptr(b)[0] == 0x5a,
		    "a refused record left bytes behind");
	buf_free(b);
	return e;
}

enum record_error
encode_result_status(const struct record_result *r,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(buf_put_u8(&b, 0x5a) == RECORD_OK, "marker");
	return status_checked(&b, record_result_encode(r, l, &b));
}

enum record_error
encode_event_status(const struct record_audit_event *ev,
    const struct record_limits *l)
{
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	require(buf_put_u8(&b, 0x5a) == RECORD_OK, "marker");
	return status_checked(&b, record_audit_event_encode(ev, l, &b));
}
