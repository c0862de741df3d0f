#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit_log.h"
#include "common/clock.h"
#include "audit/audit_verify.h"
#include "common/audit_chain.h"
#include "tests/unit/audit_fixture.h"

#define WRITERS 8
#define PER_WRITER 100

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

TestSuite(audit_log, .init = setup, .fini = teardown);

/* Parses every complete line of the file; caller frees with cJSON_Delete
 * each item of the returned array (an array of n records). */
static cJSON *
read_records(size_t *n)
{
	cJSON *all = cJSON_CreateArray(), *rec;
	size_t len, off = 0;
	char *data, *nl;

	data = fixture_read_file(path, &len);
	while ((nl = memchr(data + off, '\n', len - off)) != NULL) {
		*nl = '\0';
		rec = cJSON_Parse(data + off);
		cr_assert_not_null(rec, "line at %zu", off);
		cJSON_AddItemToArray(all, rec);
		off = (size_t)(nl - data) + 1;
	}
	free(data);
	*n = (size_t)cJSON_GetArraySize(all);
	return all;
}

static double
number_of(const cJSON *rec, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(rec, name);

	cr_assert(cJSON_IsNumber(item), "no number %s", name);
	return item->valuedouble;
}

static const char *
string_of(const cJSON *rec, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(rec, name);

	cr_assert(cJSON_IsString(item), "no string %s", name);
	return item->valuestring;
}

static bool
append_numbered(struct audit_log *log, int writer, int i, size_t pad)
{
	cJSON *m = cJSON_CreateObject();
	char *fill = malloc(pad + 1);
	bool ok;

	memset(fill, 'p', pad);
	fill[pad] = '\0';
	cJSON_AddNumberToObject(m, "writer", writer);
	cJSON_AddNumberToObject(m, "i", i);
	cJSON_AddStringToObject(m, "pad", fill);
	ok = audit_log_append(log, "execution", m, false);
	cJSON_Delete(m);
	free(fill);
	return ok;
}

Test(audit_log, file_is_created_0600_whatever_the_umask)
{
	struct audit_log *log;
	struct stat st;
	mode_t old = umask(0);

	log = audit_log_open(path, NULL, 0, "s1");
	umask(old);
	cr_assert_not_null(log);
	cr_assert(audit_log_append(log, "session-start", NULL, true));
	cr_assert(audit_log_close(log));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
}

Test(audit_log, symlink_is_refused)
{
	char target[160];
	struct stat st;

	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	cr_assert_eq(symlink(target, path), 0);
	cr_assert_null(audit_log_open(path, NULL, 0, "s1"));
	cr_assert_eq(stat(target, &st), -1, "the link target was created");
}

Test(audit_log, records_carry_header_members_in_order)
{
	struct audit_log *log;
	cJSON *all, *rec, *m = cJSON_CreateObject();
	char zeros[HASH_SHA256_HEX_LEN + 1];
	const char *ts;
	size_t n;

	cJSON_AddStringToObject(m, "tool", "deploy \"prod\"\n$(id)");
	log = audit_log_open(path, NULL, 0, "sess-\xc3\xa9");
	cr_assert_null(log, "a session id must be printable ASCII");
	log = audit_log_open(path, NULL, 0, "sess-1");
	audit_chain_genesis(zeros);
	cr_assert_str_eq(audit_log_last_hash(log), zeros);
	cr_assert(audit_log_append(log, "intent", m, true));
	all = read_records(&n);
	cr_assert_eq(n, 1);
	rec = cJSON_GetArrayItem(all, 0);
	cr_assert_str_eq(rec->child->string, "seq");
	cr_assert_str_eq(rec->child->next->string, "ts");
	cr_assert_eq(number_of(rec, "seq"), 1);
	cr_assert_str_eq(string_of(rec, "session"), "sess-1");
	cr_assert_str_eq(string_of(rec, "kind"), "intent");
	cr_assert_str_eq(string_of(rec, "prev"), zeros);
	cr_assert_str_eq(string_of(rec, "tool"), "deploy \"prod\"\n$(id)");
	cr_assert_str_eq(string_of(rec, "hash"), audit_log_last_hash(log));
	ts = string_of(rec, "ts");
	cr_assert_eq(strlen(ts), 24, "%s", ts);
	cr_assert_eq(ts[10], 'T');
	cr_assert_eq(ts[19], '.');
	cr_assert_eq(ts[23], 'Z');
	cJSON_Delete(all);
	cJSON_Delete(m);
	cr_assert(audit_log_close(log));
}

Test(audit_log, writer_members_cannot_be_overridden)
{
	static const char *const names[] = { "seq", "prev", "hash", "hmac",
	    "torn_tail", "session" };
	struct audit_log *log = audit_log_open(path, NULL, 0, "s1");
	struct stat st;
	cJSON *m;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, names[i], "forged");
		cr_assert_not(audit_log_append(log, "execution", m, false),
		    "%s accepted", names[i]);
		cJSON_Delete(m);
	}
	cr_assert_not(audit_log_append(log, "Bad Kind", NULL, false));
	cr_assert_not(audit_log_append(log, "", NULL, false));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 0);
	audit_log_close(log);
}

/* Two handles in one process: each must re-read the tail, not trust what
 * it wrote last. */
Test(audit_log, interleaved_handles_share_one_seq_and_chain)
{
	struct audit_log *a = audit_log_open(path, NULL, 0, "sess-a");
	struct audit_log *b = audit_log_open(path, NULL, 0, "sess-b");
	struct audit_verify_report rep;
	cJSON *all;
	size_t n, i;

	for (i = 0; i < 5; i++) {
		cr_assert(append_numbered(a, 1, (int)i, i));
		cr_assert(append_numbered(b, 2, (int)i, 3));
		cr_assert(append_numbered(b, 2, (int)i, 0));
	}
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, 15);
	cr_assert_eq(rep.sessions, 2);
	cr_assert_str_eq(rep.last_hash, audit_log_last_hash(b));
	all = read_records(&n);
	for (i = 0; i < n; i++)
		cr_assert_eq(number_of(cJSON_GetArrayItem(all, (int)i), "seq"),
		    (double)(i + 1));
	cJSON_Delete(all);
	audit_log_close(a);
	audit_log_close(b);
}

Test(audit_log, next_writer_cuts_a_torn_tail_and_attests_it)
{
	const char torn[] = "{\"seq\":4,\"ts\":\"2026-11-30T\xe2\x82";
	char want[HASH_SHA256_HEX_LEN + 1];
	struct audit_verify_report rep;
	struct audit_log *log;
	cJSON *all, *rec, *t;
	size_t len, n;
	char *data;
	FILE *f;

	fixture_write_records(path, "sess-A", 3, NULL, 0);
	f = fopen(path, "ab");
	fputs(torn, f);
	fclose(f);
	log = audit_log_open(path, NULL, 0, "sess-B");
	cr_assert(append_numbered(log, 9, 0, 5));
	audit_log_close(log);
	data = fixture_read_file(path, &len);
	cr_assert_null(memmem(data, len, torn, sizeof(torn) - 1));
	free(data);
	all = read_records(&n);
	cr_assert_eq(n, 4);
	rec = cJSON_GetArrayItem(all, 3);
	cr_assert_eq(number_of(rec, "seq"), 4);
	t = cJSON_GetObjectItemCaseSensitive(rec, "torn_tail");
	cr_assert_not_null(t);
	cr_assert_eq(number_of(t, "bytes"), sizeof(torn) - 1);
	audit_chain_line_digest(torn, sizeof(torn) - 1, want);
	cr_assert_str_eq(string_of(t, "sha256"), want);
	cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(all,
	    2), "torn_tail"));
	cJSON_Delete(all);
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_not(rep.torn_tail);
	cr_assert_eq(rep.repaired, 1);
}

Test(audit_log, torn_fragment_alone_leaves_a_fresh_chain)
{
	struct audit_verify_report rep;
	struct audit_log *log;

	fixture_write_file(path, "{\"seq\":1,", 9);
	log = audit_log_open(path, NULL, 0, "s1");
	cr_assert(append_numbered(log, 1, 0, 0));
	cr_assert(append_numbered(log, 1, 1, 0));
	audit_log_close(log);
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, 2);
	cr_assert_eq(rep.repaired, 1);
}

Test(audit_log, writer_refuses_to_chain_onto_an_edited_record)
{
	struct audit_log *log;
	size_t len, len2;
	char *data, *p, *after;

	fixture_write_records(path, "sess-A", 3, NULL, 0);
	data = fixture_read_file(path, &len);
	p = strstr(data + fixture_line_offset(data, len, 3), "\"i\":2");
	cr_assert_not_null(p);
	p[4] = '5';
	fixture_write_file(path, data, len);
	log = audit_log_open(path, NULL, 0, "sess-B");
	cr_assert_not(append_numbered(log, 1, 0, 0));
	audit_log_close(log);
	after = fixture_read_file(path, &len2);
	cr_assert_eq(len2, len);
	free(after);
	free(data);
}

static void
writer_child(int writer, int start_fd, int count)
{
	struct audit_log *log;
	char session[32], go;
	int i;

	snprintf(session, sizeof(session), "writer-%d", writer);
	if (read(start_fd, &go, 1) != 0)
		_exit(3);
	if ((log = audit_log_open(path, NULL, 0, session)) == NULL)
		_exit(2);
	for (i = 0; i < count; i++)
		if (!append_numbered(log, writer, i, (size_t)(i * 7 % 300)))
			_exit(1);
	_exit(audit_log_close(log) ? 0 : 1);
}

/* Forks writers that wait on a pipe, so they all start at once. */
static void
spawn_writers(pid_t *pids, int n, int count)
{
	int gate[2], k;

	cr_assert_eq(pipe(gate), 0);
	for (k = 0; k < n; k++) {
		pids[k] = fork();
		cr_assert_neq(pids[k], -1);
		if (pids[k] == 0) {
			close(gate[1]);
			writer_child(k, gate[0], count);
		}
	}
	close(gate[0]);
	close(gate[1]);	/* EOF: go */
}

Test(audit_log, eight_concurrent_writers_lose_and_reorder_nothing)
{
	pid_t pids[WRITERS];
	int next[WRITERS] = { 0 }, status, k;
	struct audit_verify_report rep;
	cJSON *all, *rec;
	size_t n, i;

	spawn_writers(pids, WRITERS, PER_WRITER);
	for (k = 0; k < WRITERS; k++) {
		cr_assert_eq(waitpid(pids[k], &status, 0), pids[k]);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "writer %d status %d", k, status);
	}
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, WRITERS * PER_WRITER);
	cr_assert_eq(rep.sessions, WRITERS);
	cr_assert_not(rep.torn_tail);
	all = read_records(&n);
	cr_assert_eq(n, WRITERS * PER_WRITER);
	for (i = 0; i < n; i++) {
		rec = cJSON_GetArrayItem(all, (int)i);
		cr_assert_eq(number_of(rec, "seq"), (double)(i + 1));
		k = (int)number_of(rec, "writer");
		cr_assert(k >= 0 && k < WRITERS);
		/* each writer's records appear in the order it wrote them */
		cr_assert_eq(number_of(rec, "i"), next[k]);
		next[k]++;
	}
	for (k = 0; k < WRITERS; k++)
		cr_assert_eq(next[k], PER_WRITER, "writer %d", k);
	cJSON_Delete(all);
}

/* A writer that reports each record it was told is written, then loops. */
static void
killable_child(int writer, int report_fd)
{
	struct audit_log *log;
	char session[32];
	int i;

	int ack[2];

	snprintf(session, sizeof(session), "victim-%d", writer);
	if ((log = audit_log_open(path, NULL, 0, session)) == NULL)
		_exit(2);
	srand((unsigned)getpid());
	for (i = 0; i < 400; i++) {
		if (!append_numbered(log, writer, i, (size_t)(rand() % 20000)))
			_exit(1);
		ack[0] = writer;
		ack[1] = i;
		if (write(report_fd, ack, sizeof(ack)) != sizeof(ack))
			_exit(1);
	}
	_exit(0);
}

Test(audit_log, kill_9_mid_stream_leaves_at_most_a_torn_tail)
{
	enum { ROUNDS = 3, VICTIMS = 4 };
	struct audit_verify_report rep;
	int reported[ROUNDS * VICTIMS], fds[2], ack[2], k, r, w;
	int next[ROUNDS * VICTIMS] = { 0 };
	struct audit_log *log;
	pid_t pids[VICTIMS];
	cJSON *all, *rec;
	size_t n, j;

	srand((unsigned)time(NULL));
	for (r = 0; r < ROUNDS; r++) {
		cr_assert_eq(pipe(fds), 0);
		for (k = 0; k < VICTIMS; k++) {
			w = r * VICTIMS + k;
			reported[w] = 0;
			if ((pids[k] = fork()) == 0) {
				close(fds[0]);
				killable_child(w, fds[1]);
			}
		}
		close(fds[1]);
		for (k = 0; k < VICTIMS; k++) {
			usleep((useconds_t)(rand() % 15000));
			kill(pids[k], SIGKILL);
		}
		for (k = 0; k < VICTIMS; k++)
			waitpid(pids[k], NULL, 0);
		/* Each victim acknowledged every append that returned true. */
		while (read(fds[0], ack, sizeof(ack)) == sizeof(ack))
			reported[ack[0]] = ack[1] + 1;
		close(fds[0]);
		cr_assert_neq(audit_verify_file(path, NULL, 0, &rep),
		    AUDIT_VERIFY_BROKEN, "round %d: line %zu: %s", r,
		    rep.break_line, audit_break_reason(rep.why));
	}
	log = audit_log_open(path, NULL, 0, "survivor");
	cr_assert(append_numbered(log, 99, 0, 1));
	audit_log_close(log);
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_not(rep.torn_tail);
	fprintf(stderr, "# kill -9: %ju records, %ju torn tails cut\n",
	    (uintmax_t)rep.records, (uintmax_t)rep.repaired);
	all = read_records(&n);
	for (j = 0; j < n; j++) {
		rec = cJSON_GetArrayItem(all, (int)j);
		cr_assert_eq(number_of(rec, "seq"), (double)(j + 1));
		w = (int)number_of(rec, "writer");
		if (w == 99)
			continue;
		cr_assert_eq(number_of(rec, "i"), next[w]);
		next[w]++;
	}
	/* Every acknowledged record is there; at most one more, written
	 * just before the kill landed. */
	for (w = 0; w < ROUNDS * VICTIMS; w++)
		cr_assert(next[w] >= reported[w] && next[w] <= reported[w] + 1,
		    "victim %d: %d acknowledged, %d in the log", w,
		    reported[w], next[w]);
	cJSON_Delete(all);
}

/* Appends for at most budget_ms or max records; returns appends/second. */
static double
bench(bool durable, int max, uint64_t budget_ms)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "bench");
	uint64_t start = clock_monotonic_ms(), now = start;
	cJSON *m = cJSON_CreateObject();
	int n;

	cJSON_AddStringToObject(m, "tool", "get_item");
	cJSON_AddStringToObject(m, "args", "string(36)");
	for (n = 0; n < max && now - start < budget_ms; n++) {
		cr_assert(audit_log_append(log, "execution", m, durable));
		now = clock_monotonic_ms();
	}
	cr_assert(audit_log_close(log));
	cJSON_Delete(m);
	return n / ((double)(now - start + 1) / 1000.0);
}

/* Printed for the record, not asserted: timing depends on the disk. */
Test(audit_log, benchmark_durable_vs_grouped_appends)
{
	double durable = bench(true, 300, 400);
	double grouped = bench(false, 5000, 400);
	struct audit_verify_report rep;

	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	fprintf(stderr, "# audit appends/s: durable %.0f, grouped %.0f "
	    "(x%.1f)\n", durable, grouped, grouped / (durable > 0 ? durable : 1));
}

/* Starts the file with one sealed record of the given seq. */
static void
seed_record(uint64_t seq)
{
	char body[400], hash[HASH_SHA256_HEX_LEN + 1], *line;
	size_t len;

	snprintf(body, sizeof(body), "{\"seq\":%ju,\"ts\":\"2026-11-30T00:00:"
	    "00.000Z\",\"session\":\"old\",\"kind\":\"session-end\",\"prev\":"
	    "\"%064d\"}", (uintmax_t)seq, 0);
	line = audit_chain_seal(body, strlen(body), NULL, 0, &len, hash);
	cr_assert_not_null(line);
	fixture_write_file(path, line, len);
	free(line);
}

Test(audit_log, seq_beyond_32_bits_continues_exactly)
{
	struct audit_log *log;
	cJSON *all;
	size_t n;
	char *data;

	seed_record(5000000000ULL);
	log = audit_log_open(path, NULL, 0, "s1");
	cr_assert(append_numbered(log, 1, 0, 0));
	audit_log_close(log);
	data = fixture_read_file(path, &n);
	cr_assert_not_null(strstr(data, "{\"seq\":5000000001,"));
	free(data);
	all = read_records(&n);
	cr_assert_eq(n, 2);
	cJSON_Delete(all);
}

Test(audit_log, exhausted_seq_is_refused_not_wrapped)
{
	struct audit_log *log;
	struct stat before, after;

	seed_record(AUDIT_SEQ_MAX - 1);
	cr_assert_eq(stat(path, &before), 0);
	log = audit_log_open(path, NULL, 0, "s1");
	cr_assert_not(append_numbered(log, 1, 0, 0));
	audit_log_close(log);
	cr_assert_eq(stat(path, &after), 0);
	cr_assert_eq(after.st_size, before.st_size);
}

/*
 * A writer does not read back its own last line while the file still
 * ends there (audit/audit_log.c, audit_log_find_tail): an edit of that
 * line in place, same size, is then not refused at the next append but
 * chained over with what was really written, and verify names the
 * edited record.  A writer that re-read its tail every time would refuse.
 */
/*
 * This writer's own last line, edited in place to the same size: the
 * writer refuses to chain onto it, as it refuses another writer's edited
 * record, and the edit is what `sp audit verify` names.
 */
Test(audit_log, own_tail_edited_in_place_is_refused_and_named)
{
	struct audit_verify_report rep;
	struct audit_log *log;
	size_t len, len2;
	char *data, *p;

	log = audit_log_open(path, NULL, 0, "own-tail");
	cr_assert(append_numbered(log, 1, 0, 5));
	cr_assert(append_numbered(log, 1, 7, 5));
	data = fixture_read_file(path, &len);
	p = strstr(data + fixture_line_offset(data, len, 2), "\"i\":7");
	cr_assert_not_null(p);
	p[4] = '8';
	fixture_write_file(path, data, len);
	cr_assert_not(append_numbered(log, 1, 2, 5));
	audit_log_close(log);
	free(fixture_read_file(path, &len2));
	cr_assert_eq(len2, len);
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep),
	    AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.break_line, 2);
	cr_assert_eq(rep.records, 1);
	free(data);
}

/*
 * The file cut back and refilled by another session to the very size this
 * writer left it at (a copy-truncate rotation, then a busy neighbour):
 * the size alone says "still ours", yet the last line is the other
 * session's, and chaining to our own would break the file.
 */
Test(audit_log, same_size_after_another_writer_is_read_back)
{
	struct audit_verify_report rep;
	struct audit_log *a, *b;
	struct stat st;
	size_t len;
	off_t ours;
	char *data;

	a = audit_log_open(path, NULL, 0, "sess-A");
	cr_assert(append_numbered(a, 1, 0, 5));
	cr_assert(append_numbered(a, 1, 1, 5));
	cr_assert_eq(stat(path, &st), 0);
	ours = st.st_size;
	data = fixture_read_file(path, &len);
	cr_assert_eq(truncate(path, (off_t)fixture_line_offset(data, len, 2)),
	    0);
	b = audit_log_open(path, NULL, 0, "sess-B");
	cr_assert(append_numbered(b, 2, 1, 5));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, ours, "the neighbour's line has our length");
	cr_assert(append_numbered(a, 1, 2, 5));
	cr_assert(audit_log_close(a));
	cr_assert(audit_log_close(b));
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert_eq(rep.records, 3);
	free(data);
}

/*
 * Two writers on one log, renamed under them twice: every record lands
 * in the file the path named at its append, the first record of each
 * new file links to the last of the file before, and the three verify
 * as one chain (docs/design.md section 6).
 */
Test(audit_log, writers_follow_a_rename_and_link_the_files)
{
	char p1[160], p2[160];
	const char *files[3] = { p2, p1, path };
	struct audit_verify_report rep;
	struct audit_log *a, *b;
	int i;

	snprintf(p1, sizeof(p1), "%s.1", path);
	snprintf(p2, sizeof(p2), "%s.2", path);
	a = audit_log_open(path, NULL, 0, "writer-a");
	b = audit_log_open(path, NULL, 0, "writer-b");
	cr_assert(a != NULL && b != NULL);
	for (i = 0; i < 3; i++) {
		cr_assert(audit_log_append(a, "execution", NULL, false));
		cr_assert(audit_log_append(b, "execution", NULL, false));
		if (i == 2)
			break;
		/* logrotate's create mode: rename, nothing at the path */
		if (i == 0)
			cr_assert_eq(rename(path, p1), 0);
		else {
			cr_assert_eq(rename(p1, p2), 0);
			cr_assert_eq(rename(path, p1), 0);
		}
	}
	cr_assert(audit_log_close(a));
	cr_assert(audit_log_close(b));
	cr_assert_eq(audit_verify_files(files, 3, NULL, 0, &rep),
	    AUDIT_VERIFY_OK, "why %d file %zu line %zu", rep.why,
	    rep.break_file, rep.break_line);
	cr_assert_eq(rep.records, 6);
	cr_assert_eq(rep.last_seq, 6);
	/* each file holds exactly its two records, a's then b's */
	cr_assert_eq(audit_verify_file(path, NULL, 0, &rep), AUDIT_VERIFY_OK);
	cr_assert(rep.continues && rep.continues_seq == 4 && rep.records == 2);
	/* without the middle file the gap is named at the last file */
	files[1] = path;
	cr_assert_eq(audit_verify_files(files, 2, NULL, 0, &rep),
	    AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_FILE_MISSING);
	cr_assert_eq(rep.break_file, 1);
	cr_assert_eq(rep.break_line, 1);
}

/* A file put back at the path after a rename is still followed. */
Test(audit_log, a_removed_log_is_recreated_and_linked)
{
	struct audit_log *a;
	size_t n;
	cJSON *recs, *first, *from;

	a = audit_log_open(path, NULL, 0, "writer-a");
	cr_assert_not_null(a);
	cr_assert(audit_log_append(a, "execution", NULL, false));
	cr_assert_eq(unlink(path), 0);
	cr_assert(audit_log_append(a, "execution", NULL, true));
	cr_assert(audit_log_close(a));
	recs = read_records(&n);
	cr_assert_eq(n, 1);
	first = cJSON_GetArrayItem(recs, 0);
	cr_assert_eq(cJSON_GetObjectItem(first, "seq")->valuedouble, 2);
	from = cJSON_GetObjectItem(first, "rotated_from");
	cr_assert_not_null(from);
	cr_assert_eq(cJSON_GetObjectItem(from, "seq")->valuedouble, 1);
	cJSON_Delete(recs);
}

/* A session of n records appended to the log at at, then closed. */
static void
one_session(const char *at, const char *session, int n)
{
	struct audit_log *a = audit_log_open(at, NULL, 0, session);
	int i;

	cr_assert_not_null(a);
	for (i = 0; i < n; i++)
		cr_assert(audit_log_append(a, "execution", NULL, i % 2 == 0));
	cr_assert(audit_log_close(a));
}

/*
 * Rotated while no session ran: the next session finds no log, and its
 * first record links to <path>.1's last (docs/sp-audit.5, ROTATION);
 * the two verify oldest first and never the other way round.
 */
Test(audit_log, a_log_started_after_a_rotation_links_to_the_rotated_file)
{
	char p1[160];
	const char *files[2] = { p1, path };
	struct audit_verify_report rep;

	snprintf(p1, sizeof(p1), "%s.1", path);
	one_session(path, "before", 3);
	cr_assert_eq(rename(path, p1), 0);
	one_session(path, "after", 2);
	cr_assert_eq(audit_verify_files(files, 2, NULL, 0, &rep),
	    AUDIT_VERIFY_OK, "why %d", rep.why);
	cr_assert_eq(rep.last_seq, 5);
	files[0] = path;
	files[1] = p1;
	cr_assert_eq(audit_verify_files(files, 2, NULL, 0, &rep),
	    AUDIT_VERIFY_BROKEN);
	cr_assert_eq(rep.why, AUDIT_BREAK_FILE_ORDER);
	cr_assert_eq(rep.break_file, 1);
}

/* Two chains that nothing links: not one chain, in either order. */
Test(audit_log, files_not_linked_do_not_verify_as_one)
{
	char p1[160];
	const char *files[2] = { p1, path };
	struct audit_verify_report rep;
	int k;

	snprintf(p1, sizeof(p1), "%s.1", path);
	/* the log first: written after it, .1 would be linked to */
	one_session(path, "one", 2);
	one_session(p1, "one", 3);
	for (k = 0; k < 2; k++) {
		files[0] = k == 0 ? p1 : path;
		files[1] = k == 0 ? path : p1;
		cr_assert_eq(audit_verify_files(files, 2, NULL, 0, &rep),
		    AUDIT_VERIFY_BROKEN);
		cr_assert_eq(rep.why, AUDIT_BREAK_FILE_UNLINKED);
		cr_assert_eq(rep.break_file, 1);
		cr_assert_eq(rep.break_line, 1);
		cr_assert_eq(rep.records, k == 0 ? 3 : 2);
	}
}

/* A file with no record before the first one links nothing: not a break. */
Test(audit_log, an_empty_file_before_the_first_record_is_no_link)
{
	char p1[160];
	const char *files[2] = { p1, path };
	struct audit_verify_report rep;
	FILE *f;

	snprintf(p1, sizeof(p1), "%s.1", path);
	cr_assert_not_null(f = fopen(p1, "w"));
	fclose(f);
	one_session(path, "only", 2);
	cr_assert_eq(audit_verify_files(files, 2, NULL, 0, &rep),
	    AUDIT_VERIFY_OK, "why %d", rep.why);
	cr_assert_eq(rep.records, 2);
}

/* What the observer was told, in order (audit/audit_journal.h's view). */
struct told {
	size_t n;
	char kind[4][AUDIT_KIND_MAX + 1];
	uint64_t seq[4];
	char prev[4][HASH_SHA256_HEX_LEN + 1];
	char hash[4][HASH_SHA256_HEX_LEN + 1];
};

static void
observe(void *arg, const struct audit_log_note *note)
{
	struct told *t = arg;

	cr_assert_lt(t->n, 4);
	cr_assert_str_eq(note->session, "sess-obs");
	snprintf(t->kind[t->n], sizeof(t->kind[0]), "%s", note->kind);
	t->seq[t->n] = note->seq;
	snprintf(t->prev[t->n], sizeof(t->prev[0]), "%s", note->prev);
	snprintf(t->hash[t->n], sizeof(t->hash[0]), "%s", note->hash);
	t->n++;
}

/*
 * A held session-start written in the same locked turn as the first
 * record: the observer is told of both, in order, with each one's own
 * seq, prev and hash as the file holds them.
 */
Test(audit_log, observer_is_told_of_a_held_start_and_the_record_after)
{
	struct audit_log *log = audit_log_open(path, NULL, 0, "sess-obs");
	cJSON *start = cJSON_CreateObject(), *m = cJSON_CreateObject();
	cJSON *all, *rec;
	struct told t = { 0 };
	size_t n, i;

	cJSON_AddStringToObject(start, "profile", "ops");
	cJSON_AddStringToObject(m, "reason", "parse-error");
	audit_log_observe(log, observe, &t);
	cr_assert(audit_log_hold_start(log, start));
	cr_assert_eq(t.n, 0, "a held start is not in the file yet");
	cr_assert(audit_log_append(log, "rejection", m, false));
	cr_assert(audit_log_append(log, "rejection", m, true));
	all = read_records(&n);
	cr_assert_eq(n, 3);
	cr_assert_eq(t.n, 3, "told %zu of 3 records", t.n);
	for (i = 0; i < n; i++) {
		rec = cJSON_GetArrayItem(all, (int)i);
		cr_assert_str_eq(t.kind[i], string_of(rec, "kind"));
		cr_assert_eq(t.seq[i], (uint64_t)number_of(rec, "seq"));
		cr_assert_str_eq(t.prev[i], string_of(rec, "prev"));
		cr_assert_str_eq(t.hash[i], string_of(rec, "hash"));
	}
	cr_assert_str_eq(t.kind[0], "session-start");
	cJSON_Delete(all);
	cJSON_Delete(start);
	cJSON_Delete(m);
	cr_assert(audit_log_close(log));
}
