/*
 * Inside the wire layer only: json.c's scanner hands accepted text to
 * json_build_tree() (json_tree.c).  Other modules use common/json.h.
 */
#ifndef SP_COMMON_JSON_TREE_H
#define SP_COMMON_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/json.h"

/*
 * Parses text (len bytes, NUL at text[len]) that json.c's scanner
 * accepted into doc->root, owned by doc (json_doc_free()).  false with
 * err->reason and err->offset set when cJSON refuses it, an object has a
 * duplicate key, or memory runs out; doc->root may then hold a partial
 * tree for the caller to free.
 */
bool json_build_tree(const char *text, size_t len, struct json_doc *doc,
    struct json_error *err);

#endif
