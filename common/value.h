/*
 * Typed argument values: what the frontend builds from JSON arguments, what
 * an action record carries, and what the executor re-validates and expands.
 * No JSON crosses the action channel; only these.
 *
 * Ownership: a struct value owns str.ptr (heap, NUL-terminated for
 * convenience, but str.len is authoritative and the bytes contain no NUL).
 * value_free() releases it; values are never shared.
 */
#ifndef SP_COMMON_VALUE_H
#define SP_COMMON_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum value_kind {
	VALUE_ABSENT = 0,	/* optional param not supplied */
	VALUE_STRING = 1,
	VALUE_INTEGER = 2,
	VALUE_BOOLEAN = 3,
	VALUE_DECIMAL = 4,	/* integer count of minor units; scale from the policy */
};

struct value {
	enum value_kind kind;
	union {
		struct {
			char *ptr;
			size_t len;
		} str;
		int64_t integer;
		bool boolean;
		int64_t decimal_minor;
	} u;
};

/* Frees what v owns and resets it to VALUE_ABSENT.  NULL is allowed. */
void value_free(struct value *v);

/* Frees each of n values, then the array itself. */
void value_array_free(struct value *values, size_t n);

/* Makes a VALUE_STRING owning a copy of len bytes; false on allocation failure. */
bool value_set_string(struct value *v, const char *bytes, size_t len);

/*
 * SHA-256 of v's canonical form: its kind byte, then a string's bytes or
 * a number's or boolean's 8 big-endian bytes.  Two values are the same
 * call's values exactly when their digests are (the broker's limits and
 * duplicate detection compare these, never the values).
 */
void value_digest(const struct value *v, uint8_t out[32]);

#endif
