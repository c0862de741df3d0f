/*
 * The second half of json_parse_frame() (common/json.h): the tree cJSON
 * builds from text the scanner in json.c already accepted, checked for
 * what cJSON lets through (duplicate keys), with each number's own text
 * kept so integers and ids stay exact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/json_tree.h"
#include "common/log.h"

/*
 * Offset of the n-th (0-based, document order) '{' outside strings: where
 * the n-th object of a preorder walk of the tree begins.
 */
static size_t
json_object_offset(const uint8_t *s, size_t len, size_t n)
{
	bool in_string = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"')
			in_string = true;
		else if (s[i] == '{' && n-- == 0)
			return i;
	}
	return 0;
}

static const char json_no_memory[] = "out of memory";

static int
json_compare_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Keys never contain NUL (the scanner refused \u0000), so strcmp is exact. */
static bool
json_keys_unique(const cJSON *object, const char **why)
{
	const cJSON *child;
	const char **keys;
	size_t n = 0, i;
	bool unique = true;

	for (child = object->child; child != NULL; child = child->next)
		n++;
	if (n < 2)
		return true;
	keys = calloc(n, sizeof(*keys));
	if (keys == NULL) {
		log_error("cannot allocate %zu keys", n);
		*why = json_no_memory;
		return false;
	}
	for (i = 0, child = object->child; child != NULL; child = child->next)
		keys[i++] = child->string;
	qsort(keys, n, sizeof(*keys), json_compare_keys);
	for (i = 1; i < n && unique; i++)
		unique = strcmp(keys[i - 1], keys[i]) != 0;
	free(keys);
	if (!unique)
		*why = "duplicate object key";
	return unique;
}

/* Preorder walk; *objects counts objects seen, to locate a bad one. */
static bool
json_check_tree(const cJSON *item, size_t *objects, const char **why)
{
	const cJSON *child;

	if (cJSON_IsObject(item)) {
		if (!json_keys_unique(item, why))
			return false;
		(*objects)++;
	}
	for (child = item->child; child != NULL; child = child->next)
		if (!json_check_tree(child, objects, why))
			return false;
	return true;
}

/*
 * Finds the next number token at or after *cursor, outside strings.  The
 * text has passed the scanner, so the first '-' or digit outside a string
 * starts a number and the token runs over [0-9+-.eE].
 */
static bool
json_next_number(const char *text, size_t len, size_t *cursor,
    size_t *start, size_t *tok_len)
{
	size_t i = *cursor;

	for (; i < len; i++) {
		if (text[i] == '"') {
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
			continue;
		}
		if (text[i] == '-' || (text[i] >= '0' && text[i] <= '9'))
			break;
	}
	if (i >= len)
		return false;
	*start = i;
	while (i < len && strchr("0123456789+-.eE", text[i]) != NULL)
		i++;
	*tok_len = i - *start;
	*cursor = i;
	return true;
}

/*
 * Preorder walk in document order (cJSON keeps member and element order),
 * so the n-th number item is the n-th number token.
 */
static bool
json_attach_numbers(cJSON *item, const char *text, size_t len,
    size_t *cursor)
{
	size_t start, tok_len;
	cJSON *child;

	if (cJSON_IsNumber(item)) {
		if (!json_next_number(text, len, cursor, &start, &tok_len))
			return false;
		item->valuestring = cJSON_malloc(tok_len + 1);
		if (item->valuestring == NULL) {
			log_error("cannot allocate %zu bytes", tok_len + 1);
			return false;
		}
		memcpy(item->valuestring, text + start, tok_len);
		item->valuestring[tok_len] = '\0';
	}
	for (child = item->child; child != NULL; child = child->next)
		if (!json_attach_numbers(child, text, len, cursor))
			return false;
	return true;
}

bool
json_build_tree(const char *copy, size_t len, struct json_doc *doc,
    struct json_error *err)
{
	const char *end = NULL;
	const char *why = NULL;
	size_t objects = 0, cursor = 0;

	/* Length includes the NUL: cJSON's terminator check reads it. */
	doc->root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
	if (doc->root == NULL || end != copy + len) {
		err->reason = "JSON parser refused the value";
		err->offset = end != NULL && end >= copy && end <= copy + len ?
		    (size_t)(end - copy) : 0;
		return false;
	}
	if (!json_check_tree(doc->root, &objects, &why)) {
		err->reason = why;
		err->valid_json = why != json_no_memory;
		err->offset = json_object_offset((const uint8_t *)copy, len,
		    objects);
		return false;
	}
	if (!json_attach_numbers(doc->root, copy, len, &cursor)) {
		err->reason = "number text not kept";
		return false;
	}
	return true;
}
