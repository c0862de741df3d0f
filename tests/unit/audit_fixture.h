/*
 * Helpers shared by the audit tests: temporary logs, whole-file edits,
 * and the secret scan.  Every function asserts (Criterion) on failure.
 */
#ifndef SP_TESTS_AUDIT_FIXTURE_H
#define SP_TESTS_AUDIT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fresh private directory; path written into dir (size >= 64). */
void fixture_tmpdir(char *dir, size_t size);

/* Appends n records of kind "execution" from session, each with varied
 * members (quotes, newlines, "$()", "%2e%2e", multibyte text). */
void fixture_write_records(const char *path, const char *session, size_t n,
    const uint8_t *key, size_t key_len);

/* The whole file, NUL-terminated; caller frees.  *len without the NUL. */
char *fixture_read_file(const char *path, size_t *len);

void fixture_write_file(const char *path, const char *data, size_t len);

/* Byte offset of the start of line lineno (1-based) in data. */
size_t fixture_line_offset(const char *data, size_t len, size_t lineno);

/*
 * true when secret occurs in the file as raw bytes or as it would appear
 * inside a JSON string (quotes, backslashes and controls escaped).
 */
bool fixture_file_contains_secret(const char *path, const char *secret);

#endif
