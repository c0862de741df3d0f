/*
 * sp audit verify [--key FILE] FILE
 * sp audit verify [--key FILE] --anchors JOURNAL FILE...
 *
 * Exit statuses: 0 the chain holds (a torn tail alone is reported on a
 * warning line and still exits 0: a killed writer is not tampering);
 * 1 the chain is broken (the first broken record is named by line and
 * seq); 64 usage; 66 the log or key cannot be read.
 * Results go to stderr through common/log.h like every diagnostic (stdout
 * is reserved for the MCP stream); the summary names the last hash, to
 * compare with the anchor a session printed when it ended.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "broker/audit_anchors.h"
#include "broker/audit_log.h"
#include "broker/audit_verify.h"
#include "broker/commands.h"
#include "common/log.h"

#define CMD_AUDIT_USAGE \
	"usage: sp audit verify [--key FILE] FILE | " \
	"sp audit verify [--key FILE] --anchors JOURNAL FILE..."

/* Results go through common/log.h too: one sanitized line each. */
static void
cmd_audit_print_ok(const char *path, const struct audit_verify_report *rep)
{
	log_info("%s: ok: %" PRIu64 " records, %" PRIu64 " sessions, last hash "
	    "%s, %" PRIu64 " torn tails cut by later writers", path,
	    rep->records, rep->sessions, rep->last_hash, rep->repaired);
	if (rep->torn_tail)
		log_warn("%s: warning: line %zu: torn tail (%zu bytes without "
		    "newline, an interrupted write, not a record)", path,
		    rep->torn_line, rep->torn_bytes);
}

static void
cmd_audit_print_broken(const char *path, const struct audit_verify_report *rep)
{
	char seq[32] = "unknown";

	if (rep->break_has_seq)
		snprintf(seq, sizeof(seq), "%" PRIu64, rep->break_seq);
	log_error("%s: broken: line %zu (seq %s, expected seq %" PRIu64 "): "
	    "%s; %" PRIu64 " records intact before it", path, rep->break_line,
	    seq, rep->expected_seq, audit_break_reason(rep->why), rep->records);
}

static int
cmd_audit_verify(const char *path, const char *key_path)
{
	struct audit_verify_report rep;
	uint8_t key[AUDIT_KEY_MAX];
	size_t key_len = 0;
	enum audit_verify_status st;

	if (key_path != NULL && !audit_key_read(key_path, key, &key_len))
		return SP_EXIT_NOINPUT;
	st = audit_verify_file(path, key_path != NULL ? key : NULL, key_len,
	    &rep);
	explicit_bzero(key, sizeof(key));
	switch (st) {
	case AUDIT_VERIFY_OK:
		cmd_audit_print_ok(path, &rep);
		return SP_EXIT_OK;
	case AUDIT_VERIFY_BROKEN:
		cmd_audit_print_broken(path, &rep);
		return SP_EXIT_AUDIT_BROKEN;
	case AUDIT_VERIFY_UNREADABLE:
		break;
	}
	return SP_EXIT_NOINPUT;
}

/* The anchors after the chain: a broken chain's status stands. */
static int
cmd_audit_anchors(const char *journal, char *const *logs, size_t n,
    int status)
{
	switch (audit_anchors_check(journal, logs, n)) {
	case AUDIT_ANCHORS_HELD:
		return status;
	case AUDIT_ANCHORS_NOT_HELD:
		return status == SP_EXIT_OK ? SP_EXIT_AUDIT_BROKEN : status;
	case AUDIT_ANCHORS_MALFORMED:
		return status == SP_EXIT_OK ? SP_EXIT_MALFORMED : status;
	case AUDIT_ANCHORS_UNREADABLE:
		break;
	}
	return SP_EXIT_NOINPUT;
}

int
cmd_audit(int argc, char **argv)
{
	const char *key_path = NULL, *anchors = NULL;
	int i, f, rc, status;

	if (argc < 2 || strcmp(argv[1], "verify") != 0) {
		log_error(CMD_AUDIT_USAGE);
		return SP_EXIT_USAGE;
	}
	for (i = 2; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2)
		if (strcmp(argv[i], "--key") == 0)
			key_path = argv[i + 1];
		else if (strcmp(argv[i], "--anchors") == 0)
			anchors = argv[i + 1];
		else
			break;
	if (i >= argc || (anchors == NULL && i != argc - 1)) {
		log_error(CMD_AUDIT_USAGE);
		return SP_EXIT_USAGE;
	}
	/* With --anchors, several files (rotated ones): each chain, then
	 * the anchors against them all. */
	for (status = SP_EXIT_OK, f = i; f < argc; f++)
		if ((rc = cmd_audit_verify(argv[f], key_path)) != SP_EXIT_OK &&
		    status == SP_EXIT_OK)
			status = rc;
	if (anchors != NULL)
		status = cmd_audit_anchors(anchors, &argv[i],
		    (size_t)(argc - i), status);
	return status;
}
