/*
 * The end of an audit log's chain, found under the writer's lock
 * (audit/audit_tail.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit_tail.h"
#include "common/log.h"

#define TAIL_BLOCK 4096

static bool
audit_tail_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;
	size_t done = 0;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_error("pread: %s", n == 0 ? "file shrank" :
			    strerror(errno));
			return false;
		}
		done += (size_t)n;
	}
	return true;
}

/*
 * Finds the last "\n" strictly before offset before, looking back at most
 * AUDIT_LINE_MAX + 1 bytes.  *pos is its offset, or -1 when the line
 * starts the file.  false on a read error or a line over the cap.
 */
static bool
audit_tail_rfind_newline(int fd, off_t before, off_t *pos)
{
	char block[TAIL_BLOCK];
	off_t at = before, floor = 0;
	size_t n;
	char *nl;

	if (before > (off_t)AUDIT_LINE_MAX + 1)
		floor = before - (off_t)AUDIT_LINE_MAX - 1;
	while (at > floor) {
		n = (size_t)(at - floor) < sizeof(block) ?
		    (size_t)(at - floor) : sizeof(block);
		at -= (off_t)n;
		if (!audit_tail_pread(fd, block, n, at))
			return false;
		if ((nl = memrchr(block, '\n', n)) != NULL) {
			*pos = at + (nl - block);
			return true;
		}
	}
	if (floor > 0) {
		log_error("last line is longer than %d bytes", AUDIT_LINE_MAX);
		return false;
	}
	*pos = -1;
	return true;
}

/* Reads the bytes [start, end) into a fresh buffer the caller frees. */
static char *
audit_tail_read_span(int fd, off_t start, off_t end)
{
	size_t len = (size_t)(end - start);
	char *buf;

	if ((buf = malloc(len + 1)) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	if (!audit_tail_pread(fd, buf, len, start)) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* Chains to the complete line ending at tail->end - 1. */
static bool
audit_tail_read_last(int fd, struct audit_tail *tail)
{
	struct audit_record rec;
	off_t nl;
	char *line;
	size_t len;
	enum audit_parse p;

	if (!audit_tail_rfind_newline(fd, tail->end - 1, &nl))
		return false;
	len = (size_t)(tail->end - 1 - (nl + 1));
	if ((line = audit_tail_read_span(fd, nl + 1, tail->end - 1)) == NULL)
		return false;
	p = audit_chain_parse(line, len, &rec);
	audit_chain_line_digest(line, len, tail->digest);
	memcpy(tail->hash, rec.hash, sizeof(tail->hash));
	free(line);
	if (p != AUDIT_PARSE_OK) {
		/* Chaining on would make a forged record look vouched for. */
		log_error("last record is %s; run sp audit verify",
		    p == AUDIT_PARSE_MALFORMED ? "malformed" : "edited");
		return false;
	}
	tail->seq = rec.seq;
	return true;
}

/* Cuts the bytes after the last "\n", remembering their size and digest. */
static bool
audit_tail_cut_torn(int fd, off_t size, struct audit_tail *tail)
{
	off_t nl;
	char *torn;

	if (!audit_tail_rfind_newline(fd, size, &nl))
		return false;
	tail->end = nl + 1;
	tail->torn_bytes = (size_t)(size - tail->end);
	if ((torn = audit_tail_read_span(fd, tail->end, size)) == NULL)
		return false;
	audit_chain_line_digest(torn, tail->torn_bytes, tail->torn_digest);
	free(torn);
	if (ftruncate(fd, tail->end) == -1) {
		log_error("ftruncate: %s", strerror(errno));
		return false;
	}
	log_warn("cut a torn tail of %zu bytes at offset %jd",
	    tail->torn_bytes, (intmax_t)tail->end);
	return true;
}

/*
 * True when the bytes just before the file's end are this writer's last
 * line, compared in blocks.  Checked under the lock because the size
 * alone proves nothing: a file cut back (a copy-truncate rotation) and
 * refilled by another session, or edited in place, may end at the same
 * offset with another line there.
 */
static bool
audit_tail_is_own(int fd, const struct audit_own_line *own)
{
	char block[TAIL_BLOCK];
	off_t at = own->tail.end - (off_t)own->len;
	size_t done = 0, n;

	if (at < 0)
		return false;
	while (done < own->len) {
		n = own->len - done < sizeof(block) ?
		    own->len - done : sizeof(block);
		if (!audit_tail_pread(fd, block, n, at + (off_t)done) ||
		    memcmp(block, own->line + done, n) != 0)
			return false;
		done += n;
	}
	return true;
}

/*
 * Called with the lock held.  When the file still ends with this
 * writer's last line, byte for byte, that line is the tail and is not
 * parsed or hashed again: one read instead of three, no parse and no
 * SHA-256 per record.  Otherwise (another writer's line, a torn tail, an
 * edit) the tail is read as any writer reads it, and an edited record is
 * refused.
 */
bool
audit_tail_find(int fd, const struct audit_own_line *own,
    struct audit_tail *tail)
{
	struct stat st;
	char last;

	memset(tail, 0, sizeof(*tail));
	audit_chain_genesis(tail->digest);
	if (fstat(fd, &st) == -1) {
		log_error("fstat: %s", strerror(errno));
		return false;
	}
	if (own != NULL && own->valid && st.st_size == own->tail.end &&
	    audit_tail_is_own(fd, own)) {
		*tail = own->tail;
		return true;
	}
	tail->end = st.st_size;
	if (st.st_size == 0)
		return true;
	if (!audit_tail_pread(fd, &last, 1, st.st_size - 1))
		return false;
	if (last != '\n' && !audit_tail_cut_torn(fd, st.st_size, tail))
		return false;
	if (tail->end == 0)
		return true;
	return audit_tail_read_last(fd, tail);
}
