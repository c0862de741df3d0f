#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/audit_chain.h"
#include "common/hex.h"
#include "common/log.h"

#define HASH_PREFIX ",\"hash\":\""
#define HMAC_PREFIX "\",\"hmac\":\""
#define HASH_PREFIX_LEN (sizeof(HASH_PREFIX) - 1)
#define HMAC_PREFIX_LEN (sizeof(HMAC_PREFIX) - 1)
/* `,"hash":"<64>"}` and `,"hash":"<64>","hmac":"<64>"}` */
#define SUFFIX_LEN (HASH_PREFIX_LEN + HASH_SHA256_HEX_LEN + 2)
#define SUFFIX_HMAC_LEN (SUFFIX_LEN + HMAC_PREFIX_LEN + HASH_SHA256_HEX_LEN)

void
audit_chain_genesis(char out[HASH_SHA256_HEX_LEN + 1])
{
	memset(out, '0', HASH_SHA256_HEX_LEN);
	out[HASH_SHA256_HEX_LEN] = '\0';
}

void
audit_chain_line_digest(const char *line, size_t len,
    char out[HASH_SHA256_HEX_LEN + 1])
{
	uint8_t d[HASH_SHA256_LEN];

	hash_sha256(line, len, d);
	hash_hex(d, sizeof(d), out);
}

static bool
audit_chain_hmac_hex(const uint8_t *key, size_t key_len,
    const char hash_text[HASH_SHA256_HEX_LEN + 1],
    char out[HASH_SHA256_HEX_LEN + 1])
{
	uint8_t raw[HASH_SHA256_LEN], mac[HASH_SHA256_LEN];

	if (!hash_parse_hex_sha256(hash_text, HASH_SHA256_HEX_LEN, raw))
		return false;
	if (!hash_hmac_sha256(key, key_len, raw, sizeof(raw), mac))
		return false;
	hash_hex(mac, sizeof(mac), out);
	return true;
}

char *
audit_chain_seal(const char *body, size_t body_len, const uint8_t *key,
    size_t key_len, size_t *line_len, char hash_text[HASH_SHA256_HEX_LEN + 1])
{
	char mac[HASH_SHA256_HEX_LEN + 1];
	char *line;
	size_t cap, n;
	int w;

	if (body_len < 2 || body[0] != '{' || body[body_len - 1] != '}' ||
	    body_len > AUDIT_LINE_MAX - SUFFIX_HMAC_LEN) {
		log_error("record body is not a bounded JSON object");
		return NULL;
	}
	audit_chain_line_digest(body, body_len, hash_text);
	if (key != NULL && !audit_chain_hmac_hex(key, key_len, hash_text, mac)) {
		log_error("HMAC failed");
		return NULL;
	}
	cap = body_len + SUFFIX_HMAC_LEN + 2;
	if ((line = malloc(cap)) == NULL) {
		log_error("out of memory");
		return NULL;
	}
	n = body_len - 1;	/* the body without its closing brace */
	memcpy(line, body, n);
	if (key != NULL)
		w = snprintf(line + n, cap - n, HASH_PREFIX "%s" HMAC_PREFIX "%s\"}\n",
		    hash_text, mac);
	else
		w = snprintf(line + n, cap - n, HASH_PREFIX "%s\"}\n", hash_text);
	if (w < 0 || (size_t)w >= cap - n) {
		log_error("line does not fit");
		free(line);
		return NULL;
	}
	*line_len = n + (size_t)w;
	return line;
}

/*
 * Splits the fixed-length tail off the line, so a nested "hash" member
 * inside the kind's own members can never be taken for the record's.
 * Returns the body length without its closing brace, or 0.
 */
static size_t
audit_chain_split(const char *line, size_t len, struct audit_record *rec)
{
	const char *t;

	if (len > SUFFIX_HMAC_LEN + 1) {
		t = line + len - SUFFIX_HMAC_LEN;
		if (memcmp(t, HASH_PREFIX, HASH_PREFIX_LEN) == 0 &&
		    memcmp(t + HASH_PREFIX_LEN + HASH_SHA256_HEX_LEN, HMAC_PREFIX,
		    HMAC_PREFIX_LEN) == 0 && memcmp(line + len - 2, "\"}", 2) == 0) {
			memcpy(rec->hash, t + HASH_PREFIX_LEN, HASH_SHA256_HEX_LEN);
			memcpy(rec->hmac, line + len - 2 - HASH_SHA256_HEX_LEN,
			    HASH_SHA256_HEX_LEN);
			rec->has_hmac = true;
			return len - SUFFIX_HMAC_LEN;
		}
	}
	if (len <= SUFFIX_LEN + 1)
		return 0;
	t = line + len - SUFFIX_LEN;
	if (memcmp(t, HASH_PREFIX, HASH_PREFIX_LEN) != 0 ||
	    memcmp(line + len - 2, "\"}", 2) != 0)
		return 0;
	memcpy(rec->hash, t + HASH_PREFIX_LEN, HASH_SHA256_HEX_LEN);
	rec->has_hmac = false;
	return len - SUFFIX_LEN;
}

static bool
audit_chain_copy_string(const cJSON *obj, const char *name, char *out,
    size_t cap)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
	size_t n;

	if (!cJSON_IsString(item) || item->valuestring == NULL)
		return false;
	n = strlen(item->valuestring);
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, item->valuestring, n + 1);
	return true;
}

static bool
audit_chain_read_seq(const cJSON *obj, uint64_t *seq)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, "seq");
	double d;

	if (!cJSON_IsNumber(item))
		return false;
	d = item->valuedouble;
	if (!(d >= 1 && d <= (double)AUDIT_SEQ_MAX) || d != (double)(uint64_t)d)
		return false;
	*seq = (uint64_t)d;
	return true;
}

/* rotated_from, when there, must be {seq, hash} as the writer makes it. */
static bool
audit_chain_read_rotated(const cJSON *obj, struct audit_record *rec)
{
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(obj,
	    "rotated_from");

	if (from == NULL)
		return true;
	rec->rotated = true;
	return cJSON_IsObject(from) &&
	    audit_chain_read_seq(from, &rec->rotated_seq) &&
	    audit_chain_copy_string(from, "hash", rec->rotated_hash,
	    sizeof(rec->rotated_hash)) &&
	    strlen(rec->rotated_hash) == HASH_SHA256_HEX_LEN &&
	    hex_is_lowercase(rec->rotated_hash, HASH_SHA256_HEX_LEN);
}

static bool
audit_chain_read_members(const cJSON *obj, struct audit_record *rec)
{
	char ts[40];

	if (!cJSON_IsObject(obj) || !audit_chain_read_seq(obj, &rec->seq))
		return false;
	if (!audit_chain_copy_string(obj, "ts", ts, sizeof(ts)) ||
	    !audit_chain_copy_string(obj, "session", rec->session,
	    sizeof(rec->session)) ||
	    !audit_chain_copy_string(obj, "kind", rec->kind, sizeof(rec->kind)) ||
	    !audit_chain_copy_string(obj, "prev", rec->prev, sizeof(rec->prev)))
		return false;
	rec->repaired_torn_tail =
	    cJSON_GetObjectItemCaseSensitive(obj, "torn_tail") != NULL;
	if (!audit_chain_read_rotated(obj, rec))
		return false;
	return strlen(rec->prev) == HASH_SHA256_HEX_LEN &&
	    hex_is_lowercase(rec->prev, HASH_SHA256_HEX_LEN);
}

/* Parses body (NUL-terminated, exactly len bytes) as one JSON object. */
static bool
audit_chain_parse_body(const char *body, size_t len, struct audit_record *rec)
{
	const char *end = NULL;
	cJSON *obj;
	bool ok;

	obj = cJSON_ParseWithLengthOpts(body, len, &end, false);
	ok = obj != NULL && end == body + len &&
	    audit_chain_read_members(obj, rec);
	cJSON_Delete(obj);
	return ok;
}

enum audit_parse
audit_chain_parse(const char *line, size_t len, struct audit_record *rec)
{
	char digest[HASH_SHA256_HEX_LEN + 1];
	size_t n;
	char *body;
	bool ok;

	memset(rec, 0, sizeof(*rec));
	if (len > AUDIT_LINE_MAX || memchr(line, '\0', len) != NULL ||
	    memchr(line, '\n', len) != NULL)
		return AUDIT_PARSE_MALFORMED;
	if ((n = audit_chain_split(line, len, rec)) == 0)
		return AUDIT_PARSE_MALFORMED;
	if (!hex_is_lowercase(rec->hash, HASH_SHA256_HEX_LEN) ||
	    (rec->has_hmac &&
	    !hex_is_lowercase(rec->hmac, HASH_SHA256_HEX_LEN)))
		return AUDIT_PARSE_MALFORMED;
	if ((body = malloc(n + 2)) == NULL) {
		log_error("out of memory");
		return AUDIT_PARSE_MALFORMED;
	}
	memcpy(body, line, n);
	body[n] = '}';
	body[n + 1] = '\0';
	ok = audit_chain_parse_body(body, n + 1, rec);
	audit_chain_line_digest(body, n + 1, digest);
	free(body);
	if (!ok)
		return AUDIT_PARSE_MALFORMED;
	if (strcmp(digest, rec->hash) != 0)
		return AUDIT_PARSE_HASH_MISMATCH;
	return AUDIT_PARSE_OK;
}

bool
audit_chain_hmac_ok(const struct audit_record *rec, const uint8_t *key,
    size_t key_len)
{
	char mac[HASH_SHA256_HEX_LEN + 1];

	if (!rec->has_hmac)
		return false;
	if (!audit_chain_hmac_hex(key, key_len, rec->hash, mac))
		return false;
	/* parse checked rec->hmac is 64 lowercase hex digits */
	return hash_equal_ct(mac, rec->hmac, HASH_SHA256_HEX_LEN);
}
