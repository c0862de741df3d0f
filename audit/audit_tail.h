/*
 * Where an audit log file's chain ends (docs/design.md section 6), read
 * backwards from the file's end with the writer's lock held: a torn tail
 * (bytes after the last newline, from a writer killed mid-line) is cut
 * and remembered, and a last record that is malformed or edited is
 * refused, since chaining on would make a forged record look vouched for.
 */
#ifndef SP_AUDIT_AUDIT_TAIL_H
#define SP_AUDIT_AUDIT_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/audit_chain.h"
#include "common/hash.h"

/* Where the file's chain ends, as found under the lock. */
struct audit_tail {
	off_t end;			/* offset just after the last "\n" */
	uint64_t seq;			/* of the last record, 0 when none */
	char digest[HASH_SHA256_HEX_LEN + 1];	/* prev for the next record */
	char hash[HASH_SHA256_HEX_LEN + 1];	/* the last record's hash */
	bool rotated;			/* seq and digest are the file before's */
	size_t torn_bytes;		/* cut off after end, 0 when none */
	char torn_digest[HASH_SHA256_HEX_LEN + 1];
};

/*
 * The last line one writer appended and where the file then ended: while
 * the file still ends with that line, byte for byte, it is the tail, found
 * with one read and no parse.  line ('\n' last) is owned by the writer.
 */
struct audit_own_line {
	bool valid;
	struct audit_tail tail;
	char *line;
	size_t len;
};

/* Finds fd's tail into *tail; own (or NULL) is the writer's last line.
 * false on a read error, a line over AUDIT_LINE_MAX or a last record
 * that is not intact (each logged). */
bool audit_tail_find(int fd, const struct audit_own_line *own,
    struct audit_tail *tail);

#endif
