/*
 * Writes the seed corpus of fuzz_record: one file per sample record, named
 * after what it holds, into the directory given as the only argument.
 * Run by hand after a layout change (see tests/fuzz/local.mk); the output is
 * committed under tests/fuzz/corpus/fuzz_record/.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/record_samples.h"

static int
seed_write(const char *dir, const char *name, struct sample s)
{
	char path[4096];
	FILE *f;
	int ok;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		fprintf(stderr, "seed_write: path too long\n");
		free(s.bytes);
		return -1;
	}
	if ((f = fopen(path, "wb")) == NULL) {
		perror(path);
		free(s.bytes);
		return -1;
	}
	ok = fwrite(s.bytes, 1, s.len, f) == s.len;
	ok = fclose(f) == 0 && ok;
	free(s.bytes);
	if (!ok)
		fprintf(stderr, "seed_write: %s: write failed\n", path);
	return ok ? 0 : -1;
}

static int
seeds_small(const char *dir)
{
	struct record_hello hello = { .role = RECORD_ROLE_FRONTEND };
	struct record_cancel cancel = { .call_id = 0x0102030405060708ULL };
	struct record_audit_ack ack = { .call_id = 3,
	    .status = RECORD_AUDIT_WRITTEN };
	struct record_audit_ack denied = { .call_id = 4,
	    .status = RECORD_AUDIT_DENIED,
	    .message = text("denied by limit per_day of x: 2 of 2") };
	struct record_audit_ack dup = { .call_id = 5,
	    .status = RECORD_AUDIT_DUPLICATE, .first_call_id = 3 };
	struct record_audit_ack replay = { .call_id = 6,
	    .status = RECORD_AUDIT_REPLAY,
	    .message = text("replayed from the idempotency journal") };
	struct record_audit_ack keyed = { .call_id = 7,
	    .status = RECORD_AUDIT_WRITTEN,
	    .message = text("0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef") };

	fingerprint("catalog", hello.fingerprint);
	return seed_write(dir, "hello", encode_hello(&hello)) |
	    seed_write(dir, "cancel", encode_cancel(&cancel)) |
	    seed_write(dir, "audit-ack", encode_ack(&ack)) |
	    seed_write(dir, "audit-ack-denied", encode_ack(&denied)) |
	    seed_write(dir, "audit-ack-duplicate", encode_ack(&dup)) |
	    seed_write(dir, "audit-ack-replay", encode_ack(&replay)) |
	    seed_write(dir, "audit-ack-key", encode_ack(&keyed));
}

static int
seeds_action(const char *dir)
{
	struct record_limits l = limits_default();
	struct value args[SAMPLE_ACTION_ARGS];
	struct record_action a;
	int rc;

	sample_action_fill(&a, args);
	rc = seed_write(dir, "action-varied", encode_action(&a, &l));
	a.arg_count = 2;
	rc |= seed_write(dir, "action-two", encode_action(&a, &l));
	memset(&a, 0, sizeof(a));
	return rc | seed_write(dir, "action-empty", encode_action(&a, &l));
}

static int
seeds_result(const char *dir)
{
	struct record_limits l = limits_default();
	struct record_result r;
	int rc;

	sample_http_fill(&r);
	rc = seed_write(dir, "result-http", encode_result(&r, &l));
	sample_ssh_fill(&r);
	rc |= seed_write(dir, "result-ssh-signal", encode_result(&r, &l));
	r.ssh.end = RECORD_SSH_END_EXIT;
	r.ssh.signal = text("");
	r.ssh.exit_status = 2;
	rc |= seed_write(dir, "result-ssh-exit", encode_result(&r, &l));
	memset(&r, 0, sizeof(r));
	r.outcome = RECORD_OUTCOME_DENIED;
	r.message = text("scope \"write\" not granted");
	return rc | seed_write(dir, "result-denied", encode_result(&r, &l));
}

static int
seeds_event(const char *dir)
{
	struct record_limits l = limits_default();
	struct record_audit_event ev;
	uint8_t digests[SAMPLE_EVENT_SHAPES][HASH_SHA256_LEN];
	size_t i;
	int rc;

	sample_event_fill(&ev);
	rc = seed_write(dir, "event-execution", encode_event(&ev, &l));
	ev.kind = RECORD_AUDIT_INTENT;
	ev.outcome = RECORD_OUTCOME_NONE;
	ev.flags = 0;
	memset(ev.sha256, 0, sizeof(ev.sha256));
	ev.digests = digests;
	ev.digest_count = SAMPLE_EVENT_SHAPES;
	for (i = 0; i < SAMPLE_EVENT_SHAPES; i++)
		fingerprint(sample_event_shapes[i].ptr, digests[i]);
	rc |= seed_write(dir, "event-intent", encode_event(&ev, &l));
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_REJECTION;
	ev.flags = AUDIT_HAS_SHA256;
	ev.frame_no = 4;
	ev.reason = text("not-json");
	ev.code = -32700;
	fingerprint("{\"jsonrpc\":", ev.sha256);
	rc |= seed_write(dir, "event-rejection", encode_event(&ev, &l));
	ev.flags |= AUDIT_HAS_TOOL;
	ev.reason = text("scope-denied");
	ev.method = text("tools/call");
	ev.tool_index = 1;
	ev.shapes = sample_event_shapes;
	ev.shape_count = SAMPLE_EVENT_SHAPES;
	rc |= seed_write(dir, "event-rejection-tool", encode_event(&ev, &l));
	memset(&ev, 0, sizeof(ev));
	ev.kind = RECORD_AUDIT_CLIENT;
	ev.method = text("initialize");
	ev.shapes = sample_event_shapes;
	ev.shape_count = RECORD_AUDIT_CLIENT_TEXTS;
	return rc | seed_write(dir, "event-client", encode_event(&ev, &l));
}

static struct sample
seed_encoded(enum record_error e, struct buf *b)
{
	if (e != RECORD_OK) {
		fprintf(stderr, "make_record_corpus: confirm seed not encoded\n");
		exit(1);
	}
	return sample_take(b);
}

static int
seeds_confirm(const char *dir)
{
	struct record_limits l = limits_default();
	struct record_confirm_challenge_msg m = { .call_id = 2,
	    .challenge = { .expiry_ms = 120000 } };
	struct record_confirm_answer a = { .call_id = 2,
	    .verdict = RECORD_CONFIRM_ACCEPT, .has_retyped = true,
	    .retyped = { (char *)"42", 2 } };
	struct buf b;
	int rc;

	memset(m.challenge.nonce, 0x6e, sizeof(m.challenge.nonce));
	memset(m.challenge.mac, 0x6d, sizeof(m.challenge.mac));
	a.challenge = m.challenge;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	rc = seed_write(dir, "confirm-challenge", seed_encoded(
	    record_confirm_challenge_encode(&m, &b), &b));
	buf_init_writer(&b, RECORD_MAX_BYTES);
	return rc | seed_write(dir, "confirm-answer", seed_encoded(
	    record_confirm_answer_encode(&a, &l, &b), &b));
}

static int
seeds_operator(const char *dir)
{
	struct record_limits l = limits_default();
	struct record_operator_ask ask = { .call_id = 3, .tool_index = 1,
	    .challenge = { .expiry_ms = 120000 },
	    .message = { (char *)"Delete \"$(id)\"?", 15 } };
	struct record_operator_answer ans = { .approver_uid = 1001,
	    .answer = { .call_id = 3, .verdict = RECORD_CONFIRM_ACCEPT,
	    .has_retyped = true, .retyped = { (char *)"-7", 2 } } };
	struct buf b;
	int rc;

	memset(ask.challenge.mac, 0x6d, sizeof(ask.challenge.mac));
	ans.answer.challenge = ask.challenge;
	buf_init_writer(&b, RECORD_MAX_BYTES);
	rc = seed_write(dir, "operator-ask", seed_encoded(
	    record_operator_ask_encode(&ask, &b), &b));
	buf_init_writer(&b, RECORD_MAX_BYTES);
	return rc | seed_write(dir, "operator-answer", seed_encoded(
	    record_operator_answer_encode(&ans, &l, &b), &b));
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make_record_corpus DIR\n");
		return 64;
	}
	if ((seeds_small(argv[1]) | seeds_action(argv[1]) |
	    seeds_result(argv[1]) | seeds_event(argv[1]) |
	    seeds_confirm(argv[1]) | seeds_operator(argv[1])) != 0)
		return 1;
	return 0;
}
