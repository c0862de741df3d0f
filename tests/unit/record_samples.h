/*
 * Sample records and byte-patching helpers shared by the record unit tests
 * and the fuzz corpus generator.  No Criterion here: a helper that cannot
 * do its job aborts, which a test reports as a crash.
 *
 * Ownership: the *_fill functions point into static sample data (never
 * freed); struct sample owns its bytes (free(3) them), with one spare byte
 * after len so a test can append.
 */
#ifndef SP_TESTS_RECORD_SAMPLES_H
#define SP_TESTS_RECORD_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/record.h"

/* Markers at the start of sample strings, each unique in its record. */
extern const char sample_action_arg1[], sample_action_arg2[],
    sample_action_arg3[];
extern const char sample_body[];	/* holds a NUL */
extern const size_t sample_body_len;
extern const char sample_out[], sample_err[];
#define SAMPLE_ACTION_ARGS 10
#define SAMPLE_EVENT_SHAPES 3

struct sample {
	uint8_t *bytes;
	size_t len;
};

struct record_limits limits_default(void);
struct record_text text(const char *s);
struct record_bytes blob(const void *p, size_t len);
struct value str_value(const char *s);
void fingerprint(const char *seed, uint8_t out[HASH_SHA256_LEN]);

void put_u16_at(uint8_t *p, uint16_t v);
void put_u32_at(uint8_t *p, uint32_t v);
uint32_t get_u32_at(const uint8_t *p);
/* Offset of a marker that must occur exactly once in the record. */
size_t marker_offset(const uint8_t *rec, size_t len, const char *marker);

/* Copies b's unread bytes into a new sample and frees b. */
struct sample sample_take(struct buf *b);

/* args must hold SAMPLE_ACTION_ARGS values. */
void sample_action_fill(struct record_action *a, struct value *args);
void sample_http_fill(struct record_result *r);
void sample_ssh_fill(struct record_result *r);
void sample_event_fill(struct record_audit_event *ev);
extern struct record_text sample_event_shapes[SAMPLE_EVENT_SHAPES];

/* Encode or abort. */
struct sample encode_hello(const struct record_hello *h);
struct sample encode_action(const struct record_action *a,
    const struct record_limits *l);
struct sample encode_cancel(const struct record_cancel *c);
struct sample encode_result(const struct record_result *r,
    const struct record_limits *l);
struct sample encode_event(const struct record_audit_event *ev,
    const struct record_limits *l);
struct sample encode_ack(const struct record_audit_ack *ack);

/*
 * The encoder's status for a record it may refuse, written to a roomy
 * writer; aborts if a refusal left anything in the writer.
 */
enum record_error encode_result_status(const struct record_result *r,
    const struct record_limits *l);
enum record_error encode_event_status(const struct record_audit_event *ev,
    const struct record_limits *l);

#endif
