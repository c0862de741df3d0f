/*
 * Where each JSON value sits in the policy text (see locate.h).  The
 * strict scan is the wire layer's (common/json.h, json_scan_text); this
 * file only turns the offsets it reports into records with a parent,
 * a member index and a line and column, and pairs them with cJSON's tree.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "policy/locate.h"

/* Turns increasing byte offsets into 1-based lines and code-point columns. */
struct locate_cursor {
	const unsigned char *text;
	size_t pos;
	unsigned line, col;
};

struct locate_scan {
	struct json_locations *out;
	size_t cap;
	struct locate_cursor at;
	/* the last value at each depth, and how many children it has had */
	size_t last[JSON_LOCATE_MAX_DEPTH + 1];
	size_t children[JSON_LOCATE_MAX_DEPTH + 1];
};

static void
locate_cursor_move(struct locate_cursor *c, size_t offset, unsigned *line,
    unsigned *col)
{
	unsigned char b;

	for (; c->pos < offset; c->pos++) {
		b = c->text[c->pos];
		if (b == '\n') {
			c->line++;
			c->col = 1;
		} else if ((b & 0xc0) != 0x80)
			c->col++;
	}
	*line = c->line;
	*col = c->col;
}

static struct json_location *
locate_new_record(struct locate_scan *ls)
{
	struct json_location *grown;
	size_t ncap;

	if (ls->out->count == ls->cap) {
		ncap = ls->cap ? ls->cap * 2 : 64;
		grown = reallocarray(ls->out->items, ncap, sizeof(*grown));
		if (grown == NULL) {
			log_error("out of memory for %zu locations", ncap);
			return NULL;
		}
		ls->out->items = grown;
		ls->cap = ncap;
	}
	return memset(&ls->out->items[ls->out->count++], 0,
	    sizeof(struct json_location));
}

/* json_scan_observer: one record per value, in document order. */
static const char *
locate_value(void *arg, unsigned depth, size_t offset, size_t key_offset)
{
	struct locate_scan *ls = arg;
	struct json_location *l;
	size_t self = ls->out->count;

	/* json_scan_text stops deeper nesting, so depth indexes last[] */
	if (self >= JSON_LOCATE_MAX_VALUES)
		return "too many values";
	if ((l = locate_new_record(ls)) == NULL)
		return "out of memory";
	l->parent = depth == 0 ? SIZE_MAX : ls->last[depth - 1];
	l->index = depth == 0 ? 0 : ls->children[depth - 1]++;
	l->offset = offset;
	if (key_offset != SIZE_MAX)
		locate_cursor_move(&ls->at, key_offset, &l->key_line,
		    &l->key_col);
	locate_cursor_move(&ls->at, offset, &l->line, &l->col);
	ls->last[depth] = self;
	ls->children[depth] = 0;
	return NULL;
}

bool
json_locations_scan(const char *text, size_t len, struct json_locations *out,
    struct json_syntax_error *err)
{
	struct locate_scan ls = {
		.out = out, .at = { (const unsigned char *)text, 0, 1, 1 },
	};
	struct json_scan_observer obs = { locate_value, &ls };
	struct locate_cursor from_start = { (const unsigned char *)text, 0, 1,
	    1 };
	struct json_error jerr;

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	if (json_scan_text((const uint8_t *)text, len, JSON_LOCATE_MAX_DEPTH,
	    &obs, &jerr))
		return true;
	err->offset = jerr.offset <= len ? jerr.offset : len;
	locate_cursor_move(&from_start, err->offset, &err->line, &err->col);
	snprintf(err->message, sizeof(err->message), "%s", jerr.reason);
	json_locations_free(out);
	return false;
}

static bool
bind_node(struct json_locations *locs, size_t *next, const cJSON *node)
{
	const cJSON *child;

	if (*next >= locs->count)
		return false;
	locs->items[(*next)++].node = node;
	for (child = node->child; child != NULL; child = child->next)
		if (!bind_node(locs, next, child))
			return false;
	return true;
}

static int
compare_by_node(const void *a, const void *b, void *arg)
{
	const struct json_locations *locs = arg;
	uintptr_t x = (uintptr_t)locs->items[*(const size_t *)a].node;
	uintptr_t y = (uintptr_t)locs->items[*(const size_t *)b].node;

	return x < y ? -1 : x > y;
}

bool
json_locations_bind(struct json_locations *locs, const cJSON *root)
{
	size_t next = 0, i;

	if (!bind_node(locs, &next, root) || next != locs->count) {
		log_error("scanner and cJSON disagree on the document shape");
		return false;
	}
	free(locs->by_node);
	locs->by_node = reallocarray(NULL, locs->count, sizeof(size_t));
	if (locs->by_node == NULL) {
		log_error("out of memory");
		return false;
	}
	for (i = 0; i < locs->count; i++)
		locs->by_node[i] = i;
	qsort_r(locs->by_node, locs->count, sizeof(size_t), compare_by_node,
	    locs);
	return true;
}

const struct json_location *
json_locations_find(const struct json_locations *locs, const cJSON *node)
{
	size_t lo = 0, hi = locs->count, mid;
	const struct json_location *l;

	if (locs->by_node == NULL)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		l = &locs->items[locs->by_node[mid]];
		if (l->node == node)
			return l;
		if ((uintptr_t)l->node < (uintptr_t)node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
json_locations_free(struct json_locations *locs)
{
	free(locs->items);
	free(locs->by_node);
	memset(locs, 0, sizeof(*locs));
}
