/*
 * The audit log's record format (docs/design.md section 6), shared by the
 * writer (audit/audit_log.c) and the verifier (audit/audit_verify.c).
 *
 * A record is one line of JSON ending in "\n".  Its members are, in this
 * order: seq, ts, session, kind, prev, the writer's torn_tail when it had
 * to cut one (see audit_log.h), rotated_from {seq, hash} in the first
 * record of a file that continues a rotated one (its prev and seq go on
 * from that file's last line), the kind's own members, then hash and,
 * when the log has a key, hmac:
 *
 *   {"seq":7,"ts":"...","session":"...","kind":"...","prev":"<64>",...,
 *    "hash":"<64>","hmac":"<64>"}
 *
 * The digests are defined on bytes, never on a re-serialisation:
 *   body = the line up to (not including) its final `,"hash":` member,
 *          followed by `}` (a complete JSON object);
 *   hash = SHA-256(body) as lowercase hex;
 *   hmac = HMAC-SHA-256(key, the 32 raw bytes of hash) as lowercase hex;
 *   prev = SHA-256 of the previous line's bytes without its "\n", or 64
 *          zeros in the first record, so editing any byte of a line (hmac
 *          included) breaks the next record's prev.
 * seq is 1 in the first record and grows by exactly one per line, across
 * rotated files too.
 */
#ifndef SP_COMMON_AUDIT_CHAIN_H
#define SP_COMMON_AUDIT_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

#define AUDIT_LINE_MAX (1024 * 1024)	/* bytes, without the "\n" */
#define AUDIT_SESSION_MAX 128		/* bytes of a session id */
#define AUDIT_KIND_MAX 32		/* bytes of a kind */
#define AUDIT_SEQ_MAX ((uint64_t)1 << 53)	/* exact in every JSON reader */

/* What a line says about itself; all strings NUL-terminated. */
struct audit_record {
	uint64_t seq;
	char session[AUDIT_SESSION_MAX + 1];
	char kind[AUDIT_KIND_MAX + 1];
	char prev[HASH_SHA256_HEX_LEN + 1];
	char hash[HASH_SHA256_HEX_LEN + 1];
	bool has_hmac;
	char hmac[HASH_SHA256_HEX_LEN + 1];
	bool repaired_torn_tail;	/* carries a torn_tail member */
	bool rotated;			/* carries rotated_from: the first
					 * record of a file after a rotation */
	uint64_t rotated_seq;		/* the seq and hash it names */
	char rotated_hash[HASH_SHA256_HEX_LEN + 1];
};

enum audit_parse {
	AUDIT_PARSE_OK,
	AUDIT_PARSE_MALFORMED,		/* not a record at all */
	AUDIT_PARSE_HASH_MISMATCH,	/* a record whose hash is not its body's */
};

/*
 * Seals body (a JSON object's text, ending in '}', no newline) into a
 * line: appends hash, hmac when key != NULL, and "\n".  Returns a heap
 * string the caller frees, its length (with the "\n") in *line_len, and
 * the hash in hash_text; NULL on allocation failure or a bad body.
 */
char *audit_chain_seal(const char *body, size_t body_len, const uint8_t *key,
    size_t key_len, size_t *line_len, char hash_text[HASH_SHA256_HEX_LEN + 1]);

/*
 * Parses one line (len bytes, without its "\n") into rec and checks its
 * hash.  On AUDIT_PARSE_HASH_MISMATCH rec holds what the line claims.
 */
enum audit_parse audit_chain_parse(const char *line, size_t len,
    struct audit_record *rec);

/* true when rec carries an hmac and it is the key's HMAC of rec->hash. */
bool audit_chain_hmac_ok(const struct audit_record *rec, const uint8_t *key,
    size_t key_len);

/* SHA-256 of a line's bytes (without "\n"): what the next record's prev holds. */
void audit_chain_line_digest(const char *line, size_t len,
    char out[HASH_SHA256_HEX_LEN + 1]);

/* The prev of the first record: 64 zeros. */
void audit_chain_genesis(char out[HASH_SHA256_HEX_LEN + 1]);

#endif
