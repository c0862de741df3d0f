/*
 * state/state_dir.h: lines across reads of 64 KiB, a line too long,
 * a torn tail left unread, and what was appended by another writer.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/state_dir.h"

struct seen {
	size_t lines, resets, bytes;
	char last[STATE_LINE_MAX + 1];
};

static void
seen_reset(void *arg)
{
	struct seen *s = arg;

	s->resets++;
	s->lines = s->bytes = 0;
}

static void
seen_line(void *arg, const char *line, size_t len)
{
	struct seen *s = arg;

	cr_assert_eq(strlen(line), len);
	s->lines++;
	s->bytes += len;
	memcpy(s->last, line, len + 1);
}

static char *
state_tmpdir(void)
{
	static char dir[] = "/tmp/sp-state-test-XXXXXX";

	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static void
write_raw(const char *dir, const char *data, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/t.jsonl", dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

Test(state_dir, lines_across_reads_a_long_one_and_a_torn_tail)
{
	char *dir = state_tmpdir(), line[64], path[256], big[3000];
	struct seen s = { 0 };
	const struct state_reader r = { seen_reset, seen_line, &s };
	struct state_file *sf;
	struct stat st;
	size_t i, n = 0;

	/* 5000 lines of 17 bytes: 85 000 bytes, more than one read */
	for (i = 0; i < 5000; i++) {
		snprintf(line, sizeof(line), "{\"n\":%09zu}\n", i);
		write_raw(dir, line, strlen(line));
		n += strlen(line) - 1;
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\n';
	write_raw(dir, big, sizeof(big));	/* skipped: too long */
	write_raw(dir, "{\"n\":\"last\"}\n{\"torn", 19);
	sf = state_file_open(dir, "t.jsonl");
	cr_assert_not_null(sf);
	cr_assert(state_file_lock(sf, &r));
	cr_assert_eq(s.lines, 5001);
	cr_assert_eq(s.bytes, n + 12);
	cr_assert_str_eq(s.last, "{\"n\":\"last\"}");
	state_file_unlock(sf);
	cr_assert(state_file_lock(sf, &r));
	cr_assert_eq(s.lines, 5001, "nothing new: nothing read twice");
	/* the torn tail ends before the next line, which starts its own */
	cr_assert(state_file_append(sf, "{\"mine\":1}", 10));
	state_file_unlock(sf);
	snprintf(path, sizeof(path), "%s/t.jsonl", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	write_raw(dir, "{\"other\":2}\n", 12);
	cr_assert(state_file_lock(sf, &r));
	cr_assert_eq(s.lines, 5002, "only the other writer's line is new");
	cr_assert_str_eq(s.last, "{\"other\":2}");
	state_file_unlock(sf);
	cr_assert_eq(s.resets, 0);
	/* shorter than what was read: truncated, read again from the start */
	cr_assert_eq(truncate(path, 0), 0);
	write_raw(dir, "{\"a\":1}\n", 8);
	cr_assert(state_file_lock(sf, &r));
	cr_assert_eq(s.resets, 1);
	cr_assert_eq(s.lines, 1);
	state_file_unlock(sf);
	state_file_free(sf);
	unlink(path);
	rmdir(dir);
}

Test(state_dir, a_symbolic_link_is_refused)
{
	char *dir = state_tmpdir(), path[256];

	snprintf(path, sizeof(path), "%s/t.jsonl", dir);
	cr_assert_eq(symlink("/etc/passwd", path), 0);
	cr_assert_null(state_file_open(dir, "t.jsonl"));
	unlink(path);
	rmdir(dir);
}
