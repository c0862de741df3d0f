/*
 * Field-by-field equality of decoded records, for the unit tests and the
 * fuzz target (a decode -> encode -> decode must give the same struct).
 * Pure functions over caller-owned structs.
 */
#ifndef SP_TESTS_RECORD_EQUAL_H
#define SP_TESTS_RECORD_EQUAL_H

#include <stdbool.h>

#include "common/record.h"

bool record_hello_equal(const struct record_hello *a,
    const struct record_hello *b);
bool record_action_equal(const struct record_action *a,
    const struct record_action *b);
bool record_cancel_equal(const struct record_cancel *a,
    const struct record_cancel *b);
bool record_result_equal(const struct record_result *a,
    const struct record_result *b);
bool record_audit_event_equal(const struct record_audit_event *a,
    const struct record_audit_event *b);
bool record_audit_ack_equal(const struct record_audit_ack *a,
    const struct record_audit_ack *b);

#endif
