/*
 * Verifying audit log files (sp audit verify): the hash chain of
 * common/audit_chain.h, read line by line with a bounded reader, across
 * rotated files given oldest first.
 *
 * Across files: the first record of a file after a rotation carries
 * rotated_from {seq, hash}; it must name the last record of the file
 * given before it (same seq, same hash, and its prev that line's
 * digest).  A later seq says files are missing between, an earlier one
 * or a file that an earlier file continues from says they are out of
 * order, the same seq with another hash says the file before was
 * replaced or edited.  The first file given may continue a file not
 * given (reported, not a break); files before it that hold no record
 * leave it the first.  Every later file must link to the one
 * before it: one that starts a new chain (seq 1, 64 zeros) is a break,
 * named as files out of order when an earlier file continues from its
 * end, else as not linked (nothing shows that it followed the file
 * before; each such file verifies on its own).
 *
 * The first broken record is named by its line number (1-based) and seq,
 * with why.  A last line without "\n" is a torn tail, left by a writer
 * killed inside write(2): it is reported but is not a break, because a
 * killed writer is not tampering (and its record never counted as
 * written).  Lines in the middle always end in "\n" (writers cut torn
 * tails), so anything unparsable there is a break.
 */
#ifndef SP_AUDIT_AUDIT_VERIFY_H
#define SP_AUDIT_AUDIT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/audit_chain.h"
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
	AUDIT_BREAK_FILE_MISSING,	/* rotated_from after the file before's end */
	AUDIT_BREAK_FILE_ORDER,		/* files given out of order */
	AUDIT_BREAK_FILE_REPLACED,	/* rotated_from's hash is not the file before's */
	AUDIT_BREAK_FILE_UNLINKED,	/* a later file starts a new chain */
};

#define AUDIT_VERIFY_FILES_MAX 1024

struct audit_verify_report {
	size_t files;			/* files read, up to the break */
	bool hmac_checked;		/* a key was given */
	bool continues;			/* the first file goes on from one not given */
	size_t continues_file;		/* index of that file (earlier ones empty) */
	uint64_t continues_seq;
	char continues_hash[HASH_SHA256_HEX_LEN + 1];
	uint64_t last_seq;
	uint64_t records;		/* intact records before any break */
	uint64_t sessions;		/* distinct session ids among them */
	uint64_t repaired;		/* records that say they cut a torn tail */
	char last_hash[HASH_SHA256_HEX_LEN + 1];	/* of the last intact record */
	bool torn_tail;
	size_t torn_file;		/* index of its file */
	size_t torn_line;		/* its line number */
	size_t torn_bytes;
	enum audit_break why;
	size_t break_file;		/* index of the file it is in */
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

/* Verifies n (1..AUDIT_VERIFY_FILES_MAX) files as one chain, oldest
 * first; report indices are into paths. */
enum audit_verify_status audit_verify_files(const char *const *paths,
    size_t n, const uint8_t *key, size_t key_len,
    struct audit_verify_report *report);

/*
 * Called with each intact record as it is read, before any break: its
 * line (len bytes, no newline, borrowed for the call), what the line says
 * of itself, and the index of its file in paths.  How sp metrics counts
 * (cli/metrics_audit.h) with this reader rather than a second one.
 */
typedef void audit_verify_each_fn(void *arg, size_t file, const char *line,
    size_t len, const struct audit_record *rec);

/* audit_verify_files(), calling each(each_arg, ...) per intact record. */
enum audit_verify_status audit_verify_files_each(const char *const *paths,
    size_t n, const uint8_t *key, size_t key_len,
    struct audit_verify_report *report, audit_verify_each_fn *each,
    void *each_arg);

/* A short English phrase for why ("edited (hash mismatch)"). */
const char *audit_break_reason(enum audit_break why);

#endif
