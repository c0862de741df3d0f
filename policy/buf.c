#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/buf.h"

void
policy_buf_init(struct policy_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
policy_buf_free(struct policy_buf *b)
{
	if (b->data != NULL) {
		/* Expanded text may carry argument values: zero it. */
		explicit_bzero(b->data, b->cap);
		free(b->data);
	}
	memset(b, 0, sizeof(*b));
}

char *
policy_buf_steal(struct policy_buf *b, size_t *len)
{
	char *data;

	if (b->failed) {
		policy_buf_free(b);
		return NULL;
	}
	if (b->data == NULL && !policy_buf_append(b, "", 0))
		return NULL;
	data = b->data;
	if (len != NULL)
		*len = b->len;
	b->data = NULL;
	policy_buf_free(b);
	return data;
}

static bool
policy_buf_reserve(struct policy_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > b->max - b->len) {
		b->failed = true;
		return false;
	}
	want = b->len + extra + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap < 64 ? 64 : b->cap;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->data, cap);
	if (p == NULL) {
		log_error("out of memory (%zu bytes)", cap);
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

bool
policy_buf_append(struct policy_buf *b, const void *bytes, size_t len)
{
	if (b->failed || !policy_buf_reserve(b, len))
		return false;
	if (len > 0)
		memcpy(b->data + b->len, bytes, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

bool
policy_buf_append_str(struct policy_buf *b, const char *s)
{
	return policy_buf_append(b, s, strlen(s));
}

bool
policy_buf_append_byte(struct policy_buf *b, char c)
{
	return policy_buf_append(b, &c, 1);
}

bool
policy_buf_printf(struct policy_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Only short numeric pieces go through here. */
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		b->failed = true;
		return false;
	}
	return policy_buf_append(b, tmp, (size_t)n);
}
