#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

#define BUF_INITIAL_CAP 256

void
buf_init_writer(struct buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void
buf_init_reader(struct buf *b, const void *data, size_t len)
{
	memset(b, 0, sizeof(*b));
	b->rdata = data;
	b->len = len;
	b->max = len;
	b->readonly = true;
}

void
buf_free(struct buf *b)
{
	if (b->wdata != NULL) {
		/* Records carry argument values, some of them sensitive. */
		explicit_bzero(b->wdata, b->cap);
		free(b->wdata);
	}
	memset(b, 0, sizeof(*b));
}

const uint8_t *
buf_ptr(const struct buf *b)
{
	if (b->rdata == NULL)
		return NULL;
	return b->rdata + b->off;
}

size_t
buf_len(const struct buf *b)
{
	return b->len - b->off;
}

/* Makes room for n more bytes without passing b->max. */
static enum record_error
buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	uint8_t *p;

	if (b->readonly)
		return RECORD_ERR_READONLY;
	if (n > b->max - b->len)
		return RECORD_ERR_TOO_LONG;
	want = b->len + n;
	if (want <= b->cap)
		return RECORD_OK;
	cap = b->cap < BUF_INITIAL_CAP ? BUF_INITIAL_CAP : b->cap;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	if (cap > b->max)
		cap = b->max;
	p = malloc(cap);
	if (p == NULL)
		return RECORD_ERR_NOMEM;
	/* Copy rather than realloc so the old bytes can be zeroed. */
	if (b->wdata != NULL) {
		memcpy(p, b->wdata, b->len);
		explicit_bzero(b->wdata, b->cap);
		free(b->wdata);
	}
	b->wdata = p;
	b->rdata = p;
	b->cap = cap;
	return RECORD_OK;
}

enum record_error
buf_put_raw(struct buf *b, const void *data, size_t len)
{
	enum record_error e;

	if (len == 0)
		return RECORD_OK;
	if ((e = buf_reserve(b, len)) != RECORD_OK)
		return e;
	memcpy(b->wdata + b->len, data, len);
	b->len += len;
	return RECORD_OK;
}

/* Writes the low n bytes of v, most significant first. */
static enum record_error
buf_put_be(struct buf *b, uint64_t v, size_t n)
{
	uint8_t bytes[8];
	size_t i;

	for (i = 0; i < n; i++)
		bytes[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return buf_put_raw(b, bytes, n);
}

enum record_error
buf_put_u8(struct buf *b, uint8_t v)
{
	return buf_put_be(b, v, 1);
}

enum record_error
buf_put_u16(struct buf *b, uint16_t v)
{
	return buf_put_be(b, v, 2);
}

enum record_error
buf_put_u32(struct buf *b, uint32_t v)
{
	return buf_put_be(b, v, 4);
}

enum record_error
buf_put_u64(struct buf *b, uint64_t v)
{
	return buf_put_be(b, v, 8);
}

enum record_error
buf_put_string(struct buf *b, const void *data, size_t len)
{
	enum record_error e;

	if (len > UINT32_MAX)
		return RECORD_ERR_TOO_LONG;
	/* Reserve the whole field first so a failure appends nothing. */
	if (len > SIZE_MAX - 4)
		return RECORD_ERR_TOO_LONG;
	if ((e = buf_reserve(b, 4 + len)) != RECORD_OK)
		return e;
	if ((e = buf_put_u32(b, (uint32_t)len)) != RECORD_OK)
		return e;
	return buf_put_raw(b, data, len);
}

enum record_error
buf_get_raw(struct buf *b, void *out, size_t len)
{
	if (len > buf_len(b))
		return RECORD_ERR_SHORT;
	if (len == 0)
		return RECORD_OK;
	memcpy(out, b->rdata + b->off, len);
	b->off += len;
	return RECORD_OK;
}

/* Reads n bytes as a big-endian number. */
static enum record_error
buf_get_be(struct buf *b, uint64_t *v, size_t n)
{
	uint8_t bytes[8];
	uint64_t x = 0;
	size_t i;
	enum record_error e;

	if ((e = buf_get_raw(b, bytes, n)) != RECORD_OK)
		return e;
	for (i = 0; i < n; i++)
		x = x << 8 | bytes[i];
	*v = x;
	return RECORD_OK;
}

enum record_error
buf_get_u8(struct buf *b, uint8_t *v)
{
	uint64_t x;
	enum record_error e;

	if ((e = buf_get_be(b, &x, 1)) == RECORD_OK)
		*v = (uint8_t)x;
	return e;
}

enum record_error
buf_get_u16(struct buf *b, uint16_t *v)
{
	uint64_t x;
	enum record_error e;

	if ((e = buf_get_be(b, &x, 2)) == RECORD_OK)
		*v = (uint16_t)x;
	return e;
}

enum record_error
buf_get_u32(struct buf *b, uint32_t *v)
{
	uint64_t x;
	enum record_error e;

	if ((e = buf_get_be(b, &x, 4)) == RECORD_OK)
		*v = (uint32_t)x;
	return e;
}

enum record_error
buf_get_u64(struct buf *b, uint64_t *v)
{
	return buf_get_be(b, v, 8);
}

enum record_error
buf_get_string_view(struct buf *b, size_t max, const uint8_t **data,
    size_t *len)
{
	size_t saved = b->off;
	uint32_t n;
	enum record_error e;

	if ((e = buf_get_u32(b, &n)) != RECORD_OK)
		return e;
	if (n > max) {
		b->off = saved;
		return RECORD_ERR_TOO_LONG;
	}
	if (n > buf_len(b)) {
		b->off = saved;
		return RECORD_ERR_SHORT;
	}
	*data = n == 0 ? NULL : b->rdata + b->off;
	*len = n;
	b->off += n;
	return RECORD_OK;
}

enum record_error
buf_get_string(struct buf *b, size_t max, uint8_t **data, size_t *len)
{
	size_t saved = b->off;
	const uint8_t *view;
	size_t n;
	uint8_t *copy;
	enum record_error e;

	if ((e = buf_get_string_view(b, max, &view, &n)) != RECORD_OK)
		return e;
	/* n was within the input, so n + 1 cannot wrap. */
	if ((copy = malloc(n + 1)) == NULL) {
		b->off = saved;
		return RECORD_ERR_NOMEM;
	}
	if (n > 0)
		memcpy(copy, view, n);
	copy[n] = '\0';
	*data = copy;
	*len = n;
	return RECORD_OK;
}

enum record_error
buf_get_cstring(struct buf *b, size_t max, char **data, size_t *len)
{
	size_t saved = b->off;
	const uint8_t *view;
	size_t n;
	enum record_error e;
	uint8_t *copy;

	if ((e = buf_get_string_view(b, max, &view, &n)) != RECORD_OK)
		return e;
	if (n > 0 && memchr(view, '\0', n) != NULL) {
		b->off = saved;
		return RECORD_ERR_CHAR;
	}
	b->off = saved;
	if ((e = buf_get_string(b, max, &copy, &n)) != RECORD_OK)
		return e;
	*data = (char *)copy;
	*len = n;
	return RECORD_OK;
}
