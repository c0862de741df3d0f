#include "config.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_log.h"
#include "tests/unit/audit_fixture.h"

void
fixture_tmpdir(char *dir, size_t size)
{
	cr_assert(size >= 64);
	snprintf(dir, size, "/tmp/sp-audit-test.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static const char *const fixture_texts[] = {
	"plain",
	"with \"quotes\" and \\backslash",
	"two\nlines\r\n",
	"$(rm -rf /) `id`",
	"..%2e%2e/%2E%2E/etc/passwd",
	"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x94\x91",
	"{\"nested\":\"json\",\"hash\":\"0000\"}",
};

void
fixture_write_records(const char *path, const char *session, size_t n,
    const uint8_t *key, size_t key_len)
{
	struct audit_log *log;
	cJSON *m;
	size_t i, nt = sizeof(fixture_texts) / sizeof(fixture_texts[0]);

	log = audit_log_open(path, key, key_len, session);
	cr_assert_not_null(log);
	for (i = 0; i < n; i++) {
		m = cJSON_CreateObject();
		cJSON_AddNumberToObject(m, "i", (double)i);
		cJSON_AddStringToObject(m, "note", fixture_texts[i % nt]);
		/* A nested "hash" member must not be taken for the record's. */
		cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "inner"),
		    "hash", "feed");
		cr_assert(audit_log_append(log, "execution", m, i % 3 == 0));
		cJSON_Delete(m);
	}
	cr_assert(audit_log_close(log));
}

char *
fixture_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "open %s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	cr_assert(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

void
fixture_write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

size_t
fixture_line_offset(const char *data, size_t len, size_t lineno)
{
	size_t off = 0, line = 1;

	while (line < lineno) {
		const char *nl = memchr(data + off, '\n', len - off);

		cr_assert_not_null(nl, "no line %zu", lineno);
		off = (size_t)(nl - data) + 1;
		line++;
	}
	return off;
}

static bool
fixture_contains(const char *hay, size_t len, const char *needle)
{
	return memmem(hay, len, needle, strlen(needle)) != NULL;
}

bool
fixture_file_contains_secret(const char *path, const char *secret)
{
	cJSON *s = cJSON_CreateString(secret);
	char *escaped, *data;
	size_t len, elen;
	bool found;

	escaped = cJSON_PrintUnformatted(s);
	cr_assert_not_null(escaped);
	elen = strlen(escaped);
	escaped[elen - 1] = '\0';	/* drop the closing quote */
	data = fixture_read_file(path, &len);
	found = fixture_contains(data, len, secret) ||
	    fixture_contains(data, len, escaped + 1);
	free(data);
	free(escaped);
	cJSON_Delete(s);
	return found;
}
