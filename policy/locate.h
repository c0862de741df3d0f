/*
 * Where each JSON value sits in the policy text.  cJSON keeps no
 * positions, so a strict scanner walks the text first (RFC 8259 grammar,
 * UTF-8 checked, no NUL, no raw control characters, bounded depth) and
 * records every value in document order; json_locations_bind() then pairs
 * those records with the cJSON tree, which has the same pre-order.
 *
 * Lines and columns are 1-based; a column counts code points, not bytes.
 *
 * Ownership: json_locations_scan() fills a caller-owned struct whose array
 * it allocates; json_locations_free() releases the array.  node pointers
 * are borrowed from the cJSON tree given to json_locations_bind().
 */
#ifndef SP_POLICY_LOCATE_H
#define SP_POLICY_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define JSON_LOCATE_MAX_DEPTH 64
#define JSON_LOCATE_MAX_VALUES 200000

struct json_location {
	const cJSON *node;		/* set by json_locations_bind() */
	size_t parent;			/* index of the container; SIZE_MAX for the root */
	size_t index;			/* position among its parent's members */
	size_t offset;			/* byte offset of the value's first byte */
	unsigned line, col;		/* of the value */
	unsigned key_line, key_col;	/* of the member name; 0 outside objects */
};

struct json_locations {
	struct json_location *items;	/* in document (pre-)order */
	size_t count;
	size_t *by_node;		/* indexes sorted by node address */
};

struct json_syntax_error {
	unsigned line, col;
	size_t offset;			/* byte offset where the scan stopped */
	char message[96];
};

/*
 * Scans len bytes of text.  On success fills out and returns true; on a
 * syntax error fills err (out is left empty) and returns false.
 */
bool json_locations_scan(const char *text, size_t len,
    struct json_locations *out, struct json_syntax_error *err);

/* Pairs the records with root's tree; false if their shapes differ. */
bool json_locations_bind(struct json_locations *locs, const cJSON *root);

/* The record of node, or NULL if node is not in the bound tree. */
const struct json_location *json_locations_find(
    const struct json_locations *locs, const cJSON *node);

void json_locations_free(struct json_locations *locs);

#endif
