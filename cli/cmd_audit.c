/*
 * sp audit verify [--key FILE] [--json] [--anchors JOURNAL] FILE...
 *
 * FILEs are one log's files in rotation order, oldest first
 * ("a.2 a.1 a"); the chain is checked across them (audit/audit_verify.h).
 * The verdict is one line on stdout, or with --json one JSON object; it
 * says whether HMACs were checked ("HMACs checked", or "HMACs not checked
 * (no --key)") and names the last hash, to compare with the anchor a
 * session printed when it ended.  Diagnostics (a file that cannot be
 * read, a torn tail) also go to stderr, one line each.  With --anchors,
 * the anchors the journal holds and the files do not are then named on
 * stdout, one line each (audit/audit_anchors.h).
 *
 * Exit statuses (docs/sp.1): 0 the chain holds (a torn tail alone is a
 * warning: a killed writer is not tampering); 1 the chain is broken, the
 * first broken record named by file, line and seq, or an anchor not
 * held; 64 usage; 65 the journal is not journalctl -o json; 66 a log,
 * the key or the journal cannot be read.
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit/audit_anchors.h"
#include "audit/audit_log.h"
#include "audit/audit_verify.h"
#include "cli/commands.h"
#include "common/log.h"

#define CMD_AUDIT_USAGE "usage: sp audit verify [--key FILE] [--json] " \
	"[--anchors JOURNAL] FILE..."

struct cmd_audit_opts {
	const char *key_path;
	const char *anchors;		/* journalctl -o json output, or NULL */
	bool json;
	const char *const *files;	/* borrowed from argv */
	size_t file_count;
};

/*
 * The options, one row each: an option with an argument stores it in
 * *arg, a flag sets *flag.
 */
struct cmd_audit_option {
	const char *name;
	size_t arg_offset;		/* offsetof a const char *, or 0 */
	size_t flag_offset;		/* offsetof a bool, or 0 */
};

static const struct cmd_audit_option cmd_audit_options[] = {
	{ "--key", offsetof(struct cmd_audit_opts, key_path), 0 },
	{ "--json", 0, offsetof(struct cmd_audit_opts, json) },
	{ "--anchors", offsetof(struct cmd_audit_opts, anchors), 0 },
};

static const struct cmd_audit_option *
cmd_audit_option(const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(cmd_audit_options) /
	    sizeof(cmd_audit_options[0]); i++)
		if (strcmp(arg, cmd_audit_options[i].name) == 0)
			return &cmd_audit_options[i];
	return NULL;
}

/* Options first, then at least one file; "--" ends the options. */
static bool
cmd_audit_parse(int argc, char **argv, struct cmd_audit_opts *o)
{
	const struct cmd_audit_option *opt;
	int i = 2;

	memset(o, 0, sizeof(*o));
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if ((opt = cmd_audit_option(argv[i])) == NULL)
			return false;
		if (opt->flag_offset != 0)
			*(bool *)((char *)o + opt->flag_offset) = true;
		else if (i + 1 < argc)
			*(const char **)((char *)o + opt->arg_offset) = argv[++i];
		else
			return false;
	}
	if (i >= argc)
		return false;
	o->files = (const char *const *)&argv[i];
	o->file_count = (size_t)(argc - i);
	return true;
}

static const char *
cmd_audit_hmac_phrase(const struct audit_verify_report *rep)
{
	return rep->hmac_checked ? "HMACs checked" :
	    "HMACs not checked (no --key)";
}

static void
cmd_audit_print_ok(const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep)
{
	printf("ok: %zu file%s, %" PRIu64 " records, %" PRIu64 " sessions, "
	    "last seq %" PRIu64 ", last hash %s, %" PRIu64 " torn tails cut by "
	    "later writers; %s", rep->files, rep->files == 1 ? "" : "s",
	    rep->records, rep->sessions, rep->last_seq, rep->last_hash,
	    rep->repaired, cmd_audit_hmac_phrase(rep));
	if (rep->continues)
		printf("; %s continues from seq %" PRIu64 " (hash %s) of a "
		    "file not given", o->files[rep->continues_file],
		    rep->continues_seq, rep->continues_hash);
	if (rep->torn_tail)
		printf("; torn tail at %s line %zu (%zu bytes)",
		    o->files[rep->torn_file], rep->torn_line, rep->torn_bytes);
	printf("\n");
}

static void
cmd_audit_print_broken(const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep)
{
	char seq[32] = "unknown";

	if (rep->break_has_seq)
		snprintf(seq, sizeof(seq), "%" PRIu64, rep->break_seq);
	printf("broken: %s line %zu (seq %s, expected seq %" PRIu64 "): %s; "
	    "%" PRIu64 " records intact before it; %s\n",
	    o->files[rep->break_file], rep->break_line, seq,
	    rep->expected_seq, audit_break_reason(rep->why), rep->records,
	    cmd_audit_hmac_phrase(rep));
}

static void
cmd_audit_json_link(cJSON *j, const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep)
{
	cJSON *c;

	if (!rep->continues) {
		cJSON_AddNullToObject(j, "continues");
		return;
	}
	if ((c = cJSON_AddObjectToObject(j, "continues")) == NULL)
		return;
	cJSON_AddStringToObject(c, "file", o->files[rep->continues_file]);
	cJSON_AddNumberToObject(c, "seq", (double)rep->continues_seq);
	cJSON_AddStringToObject(c, "hash", rep->continues_hash);
}

static void
cmd_audit_json_break(cJSON *j, const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep, bool broken)
{
	cJSON *b;

	if (!broken) {
		cJSON_AddNullToObject(j, "break");
		return;
	}
	if ((b = cJSON_AddObjectToObject(j, "break")) == NULL)
		return;
	cJSON_AddStringToObject(b, "file", o->files[rep->break_file]);
	cJSON_AddNumberToObject(b, "line", (double)rep->break_line);
	if (rep->break_has_seq)
		cJSON_AddNumberToObject(b, "seq", (double)rep->break_seq);
	else
		cJSON_AddNullToObject(b, "seq");
	cJSON_AddNumberToObject(b, "expected_seq", (double)rep->expected_seq);
	cJSON_AddStringToObject(b, "reason", audit_break_reason(rep->why));
}

static void
cmd_audit_json_torn(cJSON *j, const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep)
{
	cJSON *t;

	if (!rep->torn_tail) {
		cJSON_AddNullToObject(j, "torn_tail");
		return;
	}
	if ((t = cJSON_AddObjectToObject(j, "torn_tail")) == NULL)
		return;
	cJSON_AddStringToObject(t, "file", o->files[rep->torn_file]);
	cJSON_AddNumberToObject(t, "line", (double)rep->torn_line);
	cJSON_AddNumberToObject(t, "bytes", (double)rep->torn_bytes);
}

/* One object: the same facts as the line, for a script. */
static void
cmd_audit_print_json(const struct cmd_audit_opts *o,
    const struct audit_verify_report *rep, const char *verdict)
{
	cJSON *j = cJSON_CreateObject(), *files;
	char *text;
	size_t i;

	if (j == NULL || (files = cJSON_AddArrayToObject(j, "files")) == NULL) {
		cJSON_Delete(j);
		log_error("out of memory");
		return;
	}
	cJSON_AddStringToObject(j, "verdict", verdict);
	for (i = 0; i < o->file_count; i++)
		cJSON_AddItemToArray(files, cJSON_CreateString(o->files[i]));
	cJSON_AddNumberToObject(j, "files_read", (double)rep->files);
	cJSON_AddBoolToObject(j, "hmac_checked", rep->hmac_checked);
	cJSON_AddNumberToObject(j, "records", (double)rep->records);
	cJSON_AddNumberToObject(j, "sessions", (double)rep->sessions);
	cJSON_AddNumberToObject(j, "last_seq", (double)rep->last_seq);
	cJSON_AddStringToObject(j, "last_hash", rep->last_hash);
	cJSON_AddNumberToObject(j, "torn_tails_cut", (double)rep->repaired);
	cmd_audit_json_link(j, o, rep);
	cmd_audit_json_torn(j, o, rep);
	cmd_audit_json_break(j, o, rep, strcmp(verdict, "broken") == 0);
	if ((text = cJSON_PrintUnformatted(j)) != NULL)
		printf("%s\n", text);
	else
		log_error("out of memory");
	cJSON_free(text);
	cJSON_Delete(j);
}

static int
cmd_audit_verify(const struct cmd_audit_opts *o)
{
	struct audit_verify_report rep;
	uint8_t key[AUDIT_KEY_MAX];
	size_t key_len = 0;
	enum audit_verify_status st;
	int status = SP_EXIT_NOINPUT;

	if (o->key_path != NULL && !audit_key_read(o->key_path, key, &key_len))
		return SP_EXIT_NOINPUT;
	st = audit_verify_files(o->files, o->file_count,
	    o->key_path != NULL ? key : NULL, key_len, &rep);
	explicit_bzero(key, sizeof(key));
	if (st == AUDIT_VERIFY_OK)
		status = SP_EXIT_OK;
	else if (st == AUDIT_VERIFY_BROKEN)
		status = SP_EXIT_AUDIT_BROKEN;
	if (o->json)
		cmd_audit_print_json(o, &rep, st == AUDIT_VERIFY_OK ? "ok" :
		    st == AUDIT_VERIFY_BROKEN ? "broken" : "unreadable");
	else if (st == AUDIT_VERIFY_OK)
		cmd_audit_print_ok(o, &rep);
	else if (st == AUDIT_VERIFY_BROKEN)
		cmd_audit_print_broken(o, &rep);
	if (st == AUDIT_VERIFY_OK && rep.torn_tail)
		log_warn("%s: line %zu: torn tail (%zu bytes without newline, an "
		    "interrupted write, not a record)", o->files[rep.torn_file],
		    rep.torn_line, rep.torn_bytes);
	if (fflush(stdout) == EOF)
		log_error("stdout: cannot write the verdict");
	return status;
}

/* The anchors after the chain: a broken chain's status stands. */
static int
cmd_audit_anchors(const struct cmd_audit_opts *o, int status)
{
	switch (audit_anchors_check(o->anchors, (char *const *)o->files,
	    o->file_count)) {
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
	struct cmd_audit_opts o;
	int status;

	if (argc < 2 || strcmp(argv[1], "verify") != 0 ||
	    !cmd_audit_parse(argc, argv, &o)) {
		log_error(CMD_AUDIT_USAGE);
		return SP_EXIT_USAGE;
	}
	status = cmd_audit_verify(&o);
	if (o.anchors != NULL && status != SP_EXIT_NOINPUT)
		status = cmd_audit_anchors(&o, status);
	return status;
}
