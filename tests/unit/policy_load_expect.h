/*
 * Helpers of the policy_load() tests: the expected line:col of a
 * diagnostic is computed from where a unique needle sits in the policy
 * text, so a test states "this message, at this piece of text".
 */
#ifndef SP_TESTS_POLICY_LOAD_EXPECT_H
#define SP_TESTS_POLICY_LOAD_EXPECT_H

#include <stdbool.h>

#include "policy/load.h"

#define HEAD "{\"sallyport\": 1,\n"
#define T_HTTP "\"targets\": {\"api\": {\"type\": \"http\", " \
	"\"base_url\": \"https://api.example.com\"}},\n"
#define TOOL_HEAD "\"tools\": [{\"name\": \"t\", \"description\": \"d\", " \
	"\"target\": \"api\", \"scope\": \"read\",\n"
/* A policy with one http tool whose action and params are given. */
#define TOOL(rest) HEAD T_HTTP TOOL_HEAD rest "}]}"
#define GET_ID "\"http\": {\"method\": \"GET\", \"path\": \"/items/{id}\"},\n"
#define SSH_HEAD HEAD "\"credentials\": {\"k\": {\"type\": \"ssh-key\", " \
	"\"private_key\": \"/k\"}},\n\"targets\": {\"web\": {\"type\": \"ssh\", " \
	"\"host\": \"web1.example.com\", \"user\": \"ops\", \"credential\": \"k\""

/* 1-based line and code-point column of needle, which must be unique. */
void text_position_of(const char *text, const char *needle, unsigned *line,
    unsigned *col);

/* Every diagnostic, one per line (caller frees). */
char *diags_joined(const struct policy_diags *d);

/* The text is refused with "t.json:L:C: message" among its diagnostics. */
void expect_among(const char *text, const char *needle, const char *message);

/* As expect_among, and that diagnostic is the only one. */
void expect_only(const char *text, const char *needle, const char *message);

/* Loads text, asserting no diagnostic; the caller frees the policy. */
struct policy *load_ok(const char *text);

/*
 * Loads text, asserting it loads with warnings only; returns every
 * diagnostic, one per line (caller frees).
 */
char *load_warnings(const char *text);

#endif
