#include "config.h"

#include <string.h>

#include "tests/unit/record_equal.h"

static bool
bytes_equal(const void *a, size_t a_len, const void *b, size_t b_len)
{
	return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

static bool
text_equal(const struct record_text *a, const struct record_text *b)
{
	return bytes_equal(a->ptr, a->len, b->ptr, b->len);
}

static bool
blob_equal(const struct record_bytes *a, const struct record_bytes *b)
{
	return bytes_equal(a->ptr, a->len, b->ptr, b->len);
}

static bool
value_equal(const struct value *a, const struct value *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case VALUE_ABSENT:
		return true;
	case VALUE_STRING:
		return bytes_equal(a->u.str.ptr, a->u.str.len, b->u.str.ptr,
		    b->u.str.len);
	case VALUE_INTEGER:
		return a->u.integer == b->u.integer;
	case VALUE_BOOLEAN:
		return a->u.boolean == b->u.boolean;
	case VALUE_DECIMAL:
		return a->u.decimal_minor == b->u.decimal_minor;
	}
	return false;
}

bool
record_hello_equal(const struct record_hello *a, const struct record_hello *b)
{
	return a->role == b->role &&
	    memcmp(a->fingerprint, b->fingerprint, HASH_SHA256_LEN) == 0;
}

bool
record_action_equal(const struct record_action *a,
    const struct record_action *b)
{
	size_t i;

	if (a->call_id != b->call_id || a->tool_index != b->tool_index ||
	    memcmp(a->fingerprint, b->fingerprint, HASH_SHA256_LEN) != 0 ||
	    a->arg_count != b->arg_count)
		return false;
	for (i = 0; i < a->arg_count; i++)
		if (!value_equal(&a->args[i], &b->args[i]))
			return false;
	return true;
}

bool
record_cancel_equal(const struct record_cancel *a,
    const struct record_cancel *b)
{
	return a->call_id == b->call_id;
}

static bool
http_equal(const struct record_http_result *a,
    const struct record_http_result *b)
{
	return a->status == b->status &&
	    a->retry_after_s == b->retry_after_s &&
	    text_equal(&a->content_type, &b->content_type) &&
	    text_equal(&a->location, &b->location) &&
	    blob_equal(&a->body, &b->body) &&
	    a->body_total == b->body_total &&
	    a->connect_us == b->connect_us &&
	    a->first_byte_us == b->first_byte_us;
}

static bool
ssh_equal(const struct record_ssh_result *a, const struct record_ssh_result *b)
{
	return a->end == b->end && a->exit_status == b->exit_status &&
	    text_equal(&a->signal, &b->signal) &&
	    blob_equal(&a->out, &b->out) && a->out_total == b->out_total &&
	    blob_equal(&a->err, &b->err) && a->err_total == b->err_total;
}

bool
record_result_equal(const struct record_result *a,
    const struct record_result *b)
{
	return a->call_id == b->call_id && a->outcome == b->outcome &&
	    a->kind == b->kind && a->flags == b->flags &&
	    a->duration_us == b->duration_us &&
	    text_equal(&a->message, &b->message) &&
	    http_equal(&a->http, &b->http) && ssh_equal(&a->ssh, &b->ssh);
}

bool
record_audit_event_equal(const struct record_audit_event *a,
    const struct record_audit_event *b)
{
	size_t i;

	if (a->kind != b->kind || a->flags != b->flags ||
	    a->frame_no != b->frame_no || !text_equal(&a->reason, &b->reason) ||
	    a->code != b->code || !text_equal(&a->method, &b->method) ||
	    memcmp(a->sha256, b->sha256, HASH_SHA256_LEN) != 0 ||
	    a->call_id != b->call_id || a->tool_index != b->tool_index ||
	    a->outcome != b->outcome || a->status != b->status ||
	    a->duration_us != b->duration_us ||
	    a->shape_count != b->shape_count ||
	    a->digest_count != b->digest_count ||
	    (a->digest_count > 0 && memcmp(a->digests, b->digests,
	    a->digest_count * HASH_SHA256_LEN) != 0))
		return false;
	for (i = 0; i < a->shape_count; i++)
		if (!text_equal(&a->shapes[i], &b->shapes[i]))
			return false;
	return true;
}

bool
record_audit_ack_equal(const struct record_audit_ack *a,
    const struct record_audit_ack *b)
{
	return a->call_id == b->call_id && a->status == b->status &&
	    a->first_call_id == b->first_call_id &&
	    text_equal(&a->message, &b->message);
}
