/*
 * Verifying an audit log file (sp audit verify): the hash chain of
 * common/audit_chain.h, read line by line with a bounded reader.
 *
 * The first broken record is named by its line number (1-based) and seq,
 * with why.  A last line without "\n" is a torn tail, left by a writer
 * killed inside write(2): it is reported but is not a break, because a
 * killed writer is not tampering (and its record never counted as
 * written).  Lines in the middle always end in "\n" (writers cut torn
 * tails), so anything unparsable there is a break.
 */
#ifndef SP_BROKER_AUDIT_VERIFY_H
#define SP_BROKER_AUDIT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

enum audit_break {
	AUDIT_BREAK_NONE,
	AUDIT_BREAK_TOO_LONG,		/* a line over AUDIT_LINE_MAX */
	AUDIT_BREAK_MALFORMED,		/* not a record */
	AUDIT_BREAK_EDITED,		/* hash does not match the bytes */
	AUDIT_BREAK_MISSING_HMAC,	/* a key was given, the record has none */
	AUDIT_BREAK_BAD_HMAC,		/* the HMAC is not the key's */
	AUDIT_BREAK_REMOVED,		/* seq gap, the missing seqs never come */
	AUDIT_BREAK_REORDERED,		/* seq out of order */
	AUDIT_BREAK_PREV_MISMATCH,	/* right seq, but prev is not the line before */
};

struct audit_verify_report {
	uint64_t records;		/* intact records before any break */
	uint64_t sessions;		/* distinct session ids among them */
	uint64_t repaired;		/* records that say they cut a torn tail */
	char last_hash[HASH_SHA256_HEX_LEN + 1];	/* of the last intact record */
	bool torn_tail;
	size_t torn_line;		/* its line number */
	size_t torn_bytes;
	enum audit_break why;
	size_t break_line;		/* line number of the first broken record */
	bool break_has_seq;		/* whether the line said a seq */
	uint64_t break_seq;
	uint64_t expected_seq;
};

enum audit_verify_status {
	AUDIT_VERIFY_OK,		/* the chain holds (maybe with a torn tail) */
	AUDIT_VERIFY_BROKEN,		/* report->why names the first break */
	AUDIT_VERIFY_UNREADABLE,	/* logged why */
};

/* Verifies the file at path; key may be NULL (then hmac is not checked). */
enum audit_verify_status audit_verify_file(const char *path,
    const uint8_t *key, size_t key_len, struct audit_verify_report *report);

/* A short English phrase for why ("edited (hash mismatch)"). */
const char *audit_break_reason(enum audit_break why);

#endif
