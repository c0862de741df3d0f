#include "config.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_verify.h"
#include "common/audit_chain.h"
#include "common/hash.h"
#include "tests/unit/audit_fixture.h"

#define RECORDS 9

static const uint8_t test_key[] = "k3y with \"quotes\"\n";
static char dir[64], path[128];

static void
setup(void)
{
	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
}

static void
teardown(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(audit_chain, .init = setup, .fini = teardown);

static enum audit_verify_status
verify(struct audit_verify_report *rep)
{
	return audit_verify_file(path, NULL, 0, rep);
}

Test(audit_chain, hash_is_sha256_of_the_line_up_to_hash_closed_by_a_brace)
{
	const char *body = "{\"seq\":1,\"ts\":\"t\",\"session\":\"s\","
	    "\"kind\":\"k\",\"prev\":\"0000000000000000000000000000000000000000"
	    "000000000000000000000000\",\"x\":\"a\\\"b\"}";
	char hash[HASH_SHA256_HEX_LEN + 1], expect[HASH_SHA256_HEX_LEN + 1];
	struct audit_record rec;
	uint8_t d[HASH_SHA256_LEN];
	size_t len;
	char *line;

	line = audit_chain_seal(body, strlen(body), NULL, 0, &len, hash);
	cr_assert_not_null(line);
	hash_sha256(body, strlen(body), d);
	hash_hex(d, sizeof(d), expect);
	cr_assert_str_eq(hash, expect);
	cr_assert_eq(line[len - 1], '\n');
	cr_assert_eq(memcmp(line, body, strlen(body) - 1), 0);
	cr_assert_eq(audit_chain_parse(line, len - 1, &rec), AUDIT_PARSE_OK);
	cr_assert_str_eq(rec.hash, expect);
	cr_assert_eq(rec.seq, 1);
	cr_assert_not(rec.has_hmac);
	free(line);
}

Test(audit_chain, records_with_hostile_text_stay_one_line_and_verify)
{
	struct audit_verify_report rep;
	size_t len, lines = 0, i;
	char *data;

	fixture_write_records(path, "sess-A", RECORDS, NULL, 0);
	data = fixture_read_file(path, &len);
	for (i = 0; i < len; i++)
		lines += data[i] == '\n';
	cr_assert_eq(lines, RECORDS);
	cr_assert(strstr(data, "two\\nlines\\r\\n") != NULL);
	cr_assert(strstr(data, "h\xc3\xa9llo") != NULL);
	free(data);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, RECORDS);
	cr_assert_eq(rep.sessions, 1);
	cr_assert_not(rep.torn_tail);
}

/* Every byte of every record's body, flipped one at a time, is caught at
 * that record (its hash no longer matches, or it stops being a record). */
Test(audit_chain, editing_any_body_byte_names_that_record)
{
	struct audit_verify_report rep;
	size_t len, line, off, end, pos;
	char *orig, *data;

	fixture_write_records(path, "sess-A", 4, NULL, 0);
	orig = fixture_read_file(path, &len);
	data = malloc(len);
	for (line = 1; line <= 4; line++) {
		off = fixture_line_offset(orig, len, line);
		end = (size_t)((char *)memchr(orig + off, '\n', len - off) - orig);
		/* body and the hash digits; the hmac region is not there */
		for (pos = off; pos < end - 2; pos += 3) {
			memcpy(data, orig, len);
			data[pos] = (char)(data[pos] == 'x' ? 'y' : 'x');
			fixture_write_file(path, data, len);
			cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN,
			    "line %zu byte %zu", line, pos - off);
			cr_assert_eq(rep.break_line, line, "line %zu byte %zu: "
			    "named %zu", line, pos - off, rep.break_line);
			cr_assert(rep.why == AUDIT_BREAK_EDITED ||
			    rep.why == AUDIT_BREAK_MALFORMED);
			cr_assert_eq(rep.records, line - 1);
		}
	}
	free(data);
	free(orig);
}

Test(audit_chain, editing_a_value_is_reported_as_edited_with_its_seq)
{
	struct audit_verify_report rep;
	char *data, *p;
	size_t len;

	fixture_write_records(path, "sess-A", RECORDS, NULL, 0);
	data = fixture_read_file(path, &len);
	p = data + fixture_line_offset(data, len, 5);
	p = strstr(p, "\"i\":4");
	cr_assert_not_null(p);
	p[4] = '7';
	fixture_write_file(path, data, len);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_EDITED);
	cr_assert_eq(rep.break_line, 5);
	cr_assert(rep.break_has_seq);
	cr_assert_eq(rep.break_seq, 5);
	free(data);
}

static void
delete_line(size_t lineno)
{
	size_t len, off, end;
	char *data;

	data = fixture_read_file(path, &len);
	off = fixture_line_offset(data, len, lineno);
	end = fixture_line_offset(data, len, lineno + 1);
	memmove(data + off, data + end, len - end);
	fixture_write_file(path, data, len - (end - off));
	free(data);
}

Test(audit_chain, deleting_a_line_names_the_record_after_the_gap)
{
	struct audit_verify_report rep;
	size_t victim;

	for (victim = 1; victim < RECORDS; victim += 3) {
		fixture_write_records(path, "sess-A", RECORDS, NULL, 0);
		delete_line(victim);
		cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
		cr_assert_eq(rep.why, AUDIT_BREAK_REMOVED, "victim %zu", victim);
		cr_assert_eq(rep.break_line, victim);
		cr_assert_eq(rep.break_seq, victim + 1);
		cr_assert_eq(rep.expected_seq, victim);
		remove(path);
	}
}

static void
swap_lines(size_t a)
{
	size_t len, off_a, off_b, end_b, la, lb;
	char *data, *out;

	data = fixture_read_file(path, &len);
	off_a = fixture_line_offset(data, len, a);
	off_b = fixture_line_offset(data, len, a + 1);
	end_b = fixture_line_offset(data, len, a + 2);
	la = off_b - off_a;
	lb = end_b - off_b;
	out = malloc(len);
	memcpy(out, data, off_a);
	memcpy(out + off_a, data + off_b, lb);
	memcpy(out + off_a + lb, data + off_a, la);
	memcpy(out + end_b, data + end_b, len - end_b);
	fixture_write_file(path, out, len);
	free(out);
	free(data);
}

Test(audit_chain, swapping_two_lines_is_reported_as_reordered)
{
	struct audit_verify_report rep;

	fixture_write_records(path, "sess-A", RECORDS, NULL, 0);
	swap_lines(3);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_REORDERED);
	cr_assert_eq(rep.break_line, 3);
	cr_assert_eq(rep.break_seq, 4);
	cr_assert_eq(rep.records, 2);
}

Test(audit_chain, swapping_the_last_two_lines_is_reordered_too)
{
	struct audit_verify_report rep;

	fixture_write_records(path, "sess-A", 3, NULL, 0);
	swap_lines(2);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_REORDERED);
	cr_assert_eq(rep.break_line, 2);
}

Test(audit_chain, torn_tail_is_reported_as_torn_not_as_tampering)
{
	struct audit_verify_report rep;
	const char torn[] = "{\"seq\":10,\"ts\":\"2026-";
	size_t len;
	char *data;

	fixture_write_records(path, "sess-A", RECORDS, NULL, 0);
	data = fixture_read_file(path, &len);
	data = realloc(data, len + sizeof(torn));
	memcpy(data + len, torn, sizeof(torn) - 1);
	fixture_write_file(path, data, len + sizeof(torn) - 1);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_OK);
	cr_assert(rep.torn_tail);
	cr_assert_eq(rep.torn_line, RECORDS + 1);
	cr_assert_eq(rep.torn_bytes, sizeof(torn) - 1);
	cr_assert_eq(rep.records, RECORDS);
	free(data);
}

Test(audit_chain, a_complete_record_without_its_newline_is_still_torn)
{
	struct audit_verify_report rep;
	size_t len;
	char *data;

	fixture_write_records(path, "sess-A", 2, NULL, 0);
	data = fixture_read_file(path, &len);
	fixture_write_file(path, data, len - 1);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_OK);
	cr_assert(rep.torn_tail);
	cr_assert_eq(rep.records, 1);
	free(data);
}

Test(audit_chain, unparsable_line_in_the_middle_is_a_break)
{
	struct audit_verify_report rep;
	size_t len, off;
	char *data, *out;
	const char junk[] = "{\"seq\":3,\"ts\":\n";

	fixture_write_records(path, "sess-A", 4, NULL, 0);
	data = fixture_read_file(path, &len);
	off = fixture_line_offset(data, len, 3);
	out = malloc(len + sizeof(junk));
	memcpy(out, data, off);
	memcpy(out + off, junk, sizeof(junk) - 1);
	memcpy(out + off + sizeof(junk) - 1, data + off, len - off);
	fixture_write_file(path, out, len + sizeof(junk) - 1);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_MALFORMED);
	cr_assert_eq(rep.break_line, 3);
	cr_assert_not(rep.break_has_seq);
	free(out);
	free(data);
}

/* A record resealed with a correct hash and seq but forged content: only
 * prev shows that its predecessor is not the line before it. */
Test(audit_chain, resealed_replacement_is_caught_by_prev)
{
	struct audit_verify_report rep;
	char body[512], hash[HASH_SHA256_HEX_LEN + 1], *data, *line, *out;
	size_t len, off, end, llen;

	fixture_write_records(path, "sess-A", 3, NULL, 0);
	snprintf(body, sizeof(body), "{\"seq\":2,\"ts\":\"2026-11-30T00:00:00"
	    ".000Z\",\"session\":\"sess-A\",\"kind\":\"execution\",\"prev\":"
	    "\"%064d\",\"forged\":true}", 7);
	line = audit_chain_seal(body, strlen(body), NULL, 0, &llen, hash);
	cr_assert_not_null(line);
	data = fixture_read_file(path, &len);
	off = fixture_line_offset(data, len, 2);
	end = fixture_line_offset(data, len, 3);
	out = malloc(len + llen);
	memcpy(out, data, off);
	memcpy(out + off, line, llen);
	memcpy(out + off + llen, data + end, len - end);
	fixture_write_file(path, out, off + llen + len - end);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_PREV_MISMATCH);
	cr_assert_eq(rep.break_line, 2);
	free(out);
	free(data);
	free(line);
}

Test(audit_chain, hmac_holds_with_the_right_key_only)
{
	static const uint8_t wrong[] = "k3y with \"quotes\"\r";
	struct audit_verify_report rep;

	fixture_write_records(path, "sess-K", RECORDS, test_key,
	    sizeof(test_key) - 1);
	cr_assert_eq(audit_verify_file(path, test_key, sizeof(test_key) - 1,
	    &rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, RECORDS);
	cr_assert_eq(audit_verify_file(path, wrong, sizeof(wrong) - 1, &rep),
	    AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_BAD_HMAC);
	cr_assert_eq(rep.break_line, 1);
	/* Without a key the chain itself still verifies. */
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_OK);
}

Test(audit_chain, hmac_edited_in_one_record_is_named)
{
	struct audit_verify_report rep;
	size_t len, off;
	char *data, *mac;

	fixture_write_records(path, "sess-K", 5, test_key, sizeof(test_key) - 1);
	data = fixture_read_file(path, &len);
	off = fixture_line_offset(data, len, 4);
	mac = strstr(data + off, "\"hmac\":\"");
	cr_assert_not_null(mac);
	mac[8] = (char)(mac[8] == 'a' ? 'b' : 'a');
	fixture_write_file(path, data, len);
	cr_assert_eq(audit_verify_file(path, test_key, sizeof(test_key) - 1,
	    &rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_BAD_HMAC);
	cr_assert_eq(rep.break_line, 4);
	/* Without the key, the next record's prev still catches the edit. */
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_PREV_MISMATCH);
	cr_assert_eq(rep.break_line, 5);
	free(data);
}

Test(audit_chain, plain_log_checked_with_a_key_misses_its_hmac)
{
	struct audit_verify_report rep;

	fixture_write_records(path, "sess-A", 2, NULL, 0);
	cr_assert_eq(audit_verify_file(path, test_key, sizeof(test_key) - 1,
	    &rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_MISSING_HMAC);
	cr_assert_eq(rep.break_line, 1);
}

Test(audit_chain, overlong_line_is_refused_without_reading_it_whole)
{
	struct audit_verify_report rep;
	size_t len, big = (size_t)AUDIT_LINE_MAX + 10;
	char *data, *out;

	fixture_write_records(path, "sess-A", 2, NULL, 0);
	data = fixture_read_file(path, &len);
	out = malloc(len + big + 1);
	memcpy(out, data, len);
	memset(out + len, 'a', big);
	out[len + big] = '\n';
	fixture_write_file(path, out, len + big + 1);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_TOO_LONG);
	cr_assert_eq(rep.break_line, 3);
	cr_assert_eq(rep.records, 2);
	free(out);
	free(data);
}

Test(audit_chain, missing_file_is_unreadable_not_broken)
{
	struct audit_verify_report rep;

	cr_assert_eq(verify(&rep), AUDIT_VERIFY_UNREADABLE);
}

Test(audit_chain, sessions_are_counted_distinct)
{
	struct audit_verify_report rep;

	fixture_write_records(path, "sess-B", 2, NULL, 0);
	fixture_write_records(path, "sess-A", 3, NULL, 0);
	fixture_write_records(path, "sess-B", 1, NULL, 0);
	fixture_write_records(path, "sess-C", 1, NULL, 0);
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, 7);
	cr_assert_eq(rep.sessions, 3);
}

Test(audit_chain, a_replayed_line_is_reordered_not_merely_unchained)
{
	struct audit_verify_report rep;
	size_t len, off, end;
	char *data, *out;

	fixture_write_records(path, "sess-A", 5, NULL, 0);
	data = fixture_read_file(path, &len);
	off = fixture_line_offset(data, len, 2);
	end = fixture_line_offset(data, len, 3);
	out = malloc(len + (end - off));
	memcpy(out, data, end);
	memcpy(out + end, data + off, end - off);	/* line 2 again */
	memcpy(out + end + (end - off), data + end, len - end);
	fixture_write_file(path, out, len + (end - off));
	cr_assert_eq(verify(&rep), AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_REORDERED);
	cr_assert_eq(rep.break_line, 3);
	cr_assert_eq(rep.break_seq, 2);
	free(out);
	free(data);
}

static char *
big_body(size_t fill)
{
	const char *head = "{\"seq\":1,\"ts\":\"t\",\"session\":\"s\",\"kind\":"
	    "\"k\",\"prev\":\"00000000000000000000000000000000000000000000000"
	    "00000000000000000\",\"x\":\"";
	size_t h = strlen(head);
	char *b = malloc(h + fill + 3);

	memcpy(b, head, h);
	memset(b + h, 'a', fill);
	memcpy(b + h + fill, "\"}", 3);
	return b;
}

Test(audit_chain, seal_and_parse_refuse_lines_over_the_cap)
{
	char hash[HASH_SHA256_HEX_LEN + 1];
	struct audit_record rec;
	size_t len;
	char *body, *line;

	body = big_body(AUDIT_LINE_MAX - 400);
	line = audit_chain_seal(body, strlen(body), NULL, 0, &len, hash);
	cr_assert_not_null(line);
	cr_assert_eq(audit_chain_parse(line, len - 1, &rec), AUDIT_PARSE_OK);
	free(line);
	free(body);
	body = big_body(AUDIT_LINE_MAX);
	cr_assert_null(audit_chain_seal(body, strlen(body), NULL, 0, &len,
	    hash));
	/* a well-formed, correctly hashed line that is simply too long */
	len = strlen(body);
	line = malloc(len + 80);
	memcpy(line, body, len - 1);
	audit_chain_line_digest(body, len, hash);
	snprintf(line + len - 1, 80, ",\"hash\":\"%s\"}", hash);
	cr_assert_eq(audit_chain_parse(line, strlen(line), &rec),
	    AUDIT_PARSE_MALFORMED);
	free(line);
	free(body);
}

Test(audit_chain, parse_refuses_nul_and_foreign_shapes)
{
	static const char *const bad[] = {
		"",
		"{}",
		"not json at all",
		"{\"seq\":1,\"hash\":\"zz\"}",
		"{\"seq\":1,\"hash\":\"" "0000000000000000000000000000000000000000"
		    "000000000000000000000000" "\"}",
	};
	struct audit_record rec;
	char hash[HASH_SHA256_HEX_LEN + 1], *body, *line;
	size_t i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(audit_chain_parse(bad[i], strlen(bad[i]), &rec),
		    AUDIT_PARSE_MALFORMED, "%s", bad[i]);
	/* correctly hashed, but a C string reader would see less than a
	 * JSON reader: refused */
	body = big_body(10);
	body[strlen(body) - 5] = '\0';
	line = audit_chain_seal(body, strlen(body) + 1 + 4, NULL, 0, &len,
	    hash);
	cr_assert_not_null(line);
	cr_assert_eq(audit_chain_parse(line, len - 1, &rec),
	    AUDIT_PARSE_MALFORMED);
	line[strlen(body)] = 'a';
	cr_assert_neq(audit_chain_parse(line, len - 1, &rec),
	    AUDIT_PARSE_MALFORMED, "the same line without the NUL is a record");
	free(line);
	free(body);
}

/* A forged hmac differing from the right one in any single digit fails. */
Test(audit_chain, hmac_check_compares_every_digit)
{
	static const char body[] = "{\"seq\":1,\"ts\":\"t\",\"session\":\"s\","
	    "\"kind\":\"k\",\"prev\":\"0000000000000000000000000000000000000000"
	    "000000000000000000000000\",\"note\":\"$(id) \\\"q\\\"\"}";
	struct audit_record rec;
	char hash_text[HASH_SHA256_HEX_LEN + 1], right;
	size_t line_len, i;
	char *line;

	line = audit_chain_seal(body, sizeof(body) - 1, test_key,
	    sizeof(test_key) - 1, &line_len, hash_text);
	cr_assert_not_null(line);
	cr_assert_eq(audit_chain_parse(line, line_len - 1, &rec),
	    AUDIT_PARSE_OK);
	cr_assert(rec.has_hmac);
	cr_assert(audit_chain_hmac_ok(&rec, test_key, sizeof(test_key) - 1));
	for (i = 0; i < HASH_SHA256_HEX_LEN; i++) {
		right = rec.hmac[i];
		rec.hmac[i] = right == '0' ? '1' : '0';
		cr_assert_not(audit_chain_hmac_ok(&rec, test_key,
		    sizeof(test_key) - 1), "digit %zu not compared", i);
		rec.hmac[i] = right;
	}
	free(line);
}
