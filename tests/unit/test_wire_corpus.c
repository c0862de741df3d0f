/*
 * Every file of JSONTestSuite's test_parsing directory against the strict
 * JSON layer: n_ refused, y_ accepted, i_ as decided in the table below.
 * The corpus ships in the repository, under tests/data/jsontestsuite/
 * (unmodified upstream files; its README says which); it is read from
 * $SP_SRCDIR, the source tree make check names, so a plain clone and a
 * dist tarball both find it.  A missing corpus is a failure, never a skip.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/json.h"
#include "tests/unit/wire_pipeline.h"

#define CORPUS_REL "/tests/data/jsontestsuite/test_parsing"
#define CORPUS_FILE_MAX (1024 * 1024)
#define CORPUS_MIN_Y 90		/* the suite has 95 y_ and 188 n_ files */
#define CORPUS_MIN_N 180
#define PIPE_EVENTS 64

/*
 * The i_ decisions (json.h says why): numbers that overflow a double are
 * refused, underflow and integers too big to be exact are accepted; every
 * lone or broken surrogate, invalid UTF-8, UTF-16 text and BOM is refused;
 * 500 nested arrays exceed the depth bound of 64.
 */
static const struct {
	const char *name;
	bool accepted;
} corpus_i_decisions[] = {
	{ "i_number_double_huge_neg_exp.json", true },
	{ "i_number_huge_exp.json", false },
	{ "i_number_neg_int_huge_exp.json", false },
	{ "i_number_pos_double_huge_exp.json", false },
	{ "i_number_real_neg_overflow.json", false },
	{ "i_number_real_pos_overflow.json", false },
	{ "i_number_real_underflow.json", true },
	{ "i_number_too_big_neg_int.json", true },
	{ "i_number_too_big_pos_int.json", true },
	{ "i_number_very_big_negative_int.json", true },
	{ "i_object_key_lone_2nd_surrogate.json", false },
	{ "i_string_1st_surrogate_but_2nd_missing.json", false },
	{ "i_string_1st_valid_surrogate_2nd_invalid.json", false },
	{ "i_string_UTF-16LE_with_BOM.json", false },
	{ "i_string_UTF-8_invalid_sequence.json", false },
	{ "i_string_UTF8_surrogate_U+D800.json", false },
	{ "i_string_incomplete_surrogate_and_escape_valid.json", false },
	{ "i_string_incomplete_surrogate_pair.json", false },
	{ "i_string_incomplete_surrogates_escape_valid.json", false },
	{ "i_string_invalid_lonely_surrogate.json", false },
	{ "i_string_invalid_surrogate.json", false },
	{ "i_string_invalid_utf-8.json", false },
	{ "i_string_inverted_surrogates_U+1D11E.json", false },
	{ "i_string_iso_latin_1.json", false },
	{ "i_string_lone_second_surrogate.json", false },
	{ "i_string_lone_utf8_continuation_byte.json", false },
	{ "i_string_not_in_unicode_range.json", false },
	{ "i_string_overlong_sequence_2_bytes.json", false },
	{ "i_string_overlong_sequence_6_bytes.json", false },
	{ "i_string_overlong_sequence_6_bytes_null.json", false },
	{ "i_string_truncated-utf-8.json", false },
	{ "i_string_utf16BE_no_BOM.json", false },
	{ "i_string_utf16LE_no_BOM.json", false },
	{ "i_structure_500_nested_arrays.json", false },
	{ "i_structure_UTF-8_BOM_empty_object.json", false },
};
#define CORPUS_I_COUNT \
	(sizeof(corpus_i_decisions) / sizeof(corpus_i_decisions[0]))

/*
 * y_ files valid per RFC 8259 that the wire refuses on purpose (json.h):
 * cJSON cuts strings at \u0000, and two peers reading a duplicate key
 * differently is an ambiguity an attacker can use.  Each must be refused
 * for exactly this reason.
 */
static const struct {
	const char *name;
	const char *reason;
} corpus_y_refused[] = {
	{ "y_object_duplicated_key.json", "duplicate object key" },
	{ "y_object_duplicated_key_and_value.json", "duplicate object key" },
	{ "y_object_escaped_null_in_key.json", "\\u0000 in string" },
	{ "y_string_null_escape.json", "\\u0000 in string" },
};
#define CORPUS_Y_REFUSED_COUNT \
	(sizeof(corpus_y_refused) / sizeof(corpus_y_refused[0]))

struct corpus_file {
	uint8_t *bytes;		/* owned, freed by corpus_file_free */
	size_t len;
};

struct corpus_counts {
	size_t y, n, i;
	bool i_seen[CORPUS_I_COUNT];
	bool y_refused_seen[CORPUS_Y_REFUSED_COUNT];
};

/* The corpus directory, or a test failure naming where it was looked for. */
static void
corpus_path(char *path, size_t size)
{
	const char *srcdir = getenv("SP_SRCDIR");
	int n;

	cr_assert_not_null(srcdir, "SP_SRCDIR is not set (run through make "
	    "check); the JSONTestSuite corpus cannot be found");
	n = snprintf(path, size, "%s%s", srcdir, CORPUS_REL);
	cr_assert(n > 0 && (size_t)n < size, "corpus path too long");
}

static void
corpus_file_read(const char *dir, const char *name, struct corpus_file *f)
{
	char path[4096];
	FILE *fp;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert(n > 0 && (size_t)n < sizeof(path), "path too long");
	fp = fopen(path, "rb");
	cr_assert_not_null(fp, "cannot open %s: %s", path, strerror(errno));
	f->bytes = malloc(CORPUS_FILE_MAX);
	cr_assert_not_null(f->bytes);
	f->len = fread(f->bytes, 1, CORPUS_FILE_MAX, fp);
	cr_assert(!ferror(fp), "cannot read %s", path);
	cr_assert(feof(fp), "%s is larger than the test reads", path);
	fclose(fp);
}

static void
corpus_file_free(struct corpus_file *f)
{
	free(f->bytes);
	f->bytes = NULL;
}

/* NULL if accepted, else the reason of the refusal. */
static const char *
corpus_json_refusal(const struct corpus_file *f)
{
	struct json_doc doc;
	struct json_error err;

	if (json_parse_frame(f->bytes, f->len, JSON_DEPTH_DEFAULT, &doc,
	    &err)) {
		json_doc_free(&doc);
		return NULL;
	}
	cr_assert_not_null(err.reason);
	return err.reason;
}

/* The y_ file's deliberate refusal reason, or NULL if it is accepted. */
static const char *
corpus_y_refusal(const char *name, struct corpus_counts *counts)
{
	size_t i;

	for (i = 0; i < CORPUS_Y_REFUSED_COUNT; i++) {
		if (strcmp(corpus_y_refused[i].name, name) == 0) {
			counts->y_refused_seen[i] = true;
			return corpus_y_refused[i].reason;
		}
	}
	return NULL;
}

/*
 * The expected outcome of a file, from its prefix and the tables; *reason
 * is set for the y_ files refused on purpose, NULL otherwise.
 */
static bool
corpus_expected(const char *name, struct corpus_counts *counts,
    const char **reason)
{
	size_t i;

	*reason = NULL;
	if (strncmp(name, "y_", 2) == 0) {
		counts->y++;
		*reason = corpus_y_refusal(name, counts);
		return *reason == NULL;
	}
	if (strncmp(name, "n_", 2) == 0) {
		counts->n++;
		return false;
	}
	cr_assert(strncmp(name, "i_", 2) == 0, "unexpected corpus file %s",
	    name);
	for (i = 0; i < CORPUS_I_COUNT; i++) {
		if (strcmp(corpus_i_decisions[i].name, name) == 0) {
			counts->i++;
			counts->i_seen[i] = true;
			return corpus_i_decisions[i].accepted;
		}
	}
	cr_assert_fail("%s has no decision in the i_ table", name);
	return false;
}

/* Calls check on every .json file; fails if the corpus is missing. */
static void
corpus_each(void (*check)(const char *, struct corpus_file *,
    struct corpus_counts *), struct corpus_counts *counts)
{
	struct corpus_file f;
	struct dirent *de;
	char dir[4096];
	DIR *d;

	corpus_path(dir, sizeof(dir));
	d = opendir(dir);
	cr_assert_not_null(d, "JSONTestSuite corpus missing at %s: %s", dir,
	    strerror(errno));
	memset(counts, 0, sizeof(*counts));
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		corpus_file_read(dir, de->d_name, &f);
		check(de->d_name, &f, counts);
		corpus_file_free(&f);
	}
	closedir(d);
	cr_assert_geq(counts->y, CORPUS_MIN_Y, "only %zu y_ files", counts->y);
	cr_assert_geq(counts->n, CORPUS_MIN_N, "only %zu n_ files", counts->n);
}

static void
corpus_check_json(const char *name, struct corpus_file *f,
    struct corpus_counts *counts)
{
	const char *want_reason, *got_reason = corpus_json_refusal(f);
	bool want = corpus_expected(name, counts, &want_reason);
	bool got = got_reason == NULL;

	cr_expect_eq(got, want, "%s: %s, want %s", name,
	    got ? "accepted" : got_reason, want ? "accepted" : "refused");
	if (want_reason != NULL && got_reason != NULL)
		cr_expect_str_eq(got_reason, want_reason, "%s: %s, want %s",
		    name, got_reason, want_reason);
}

Test(wire_corpus, json_layer_decides_every_file)
{
	struct corpus_counts counts;
	size_t i;

	corpus_each(corpus_check_json, &counts);
	for (i = 0; i < CORPUS_I_COUNT; i++)
		cr_expect(counts.i_seen[i], "%s is in the table but not in "
		    "the corpus", corpus_i_decisions[i].name);
	for (i = 0; i < CORPUS_Y_REFUSED_COUNT; i++)
		cr_expect(counts.y_refused_seen[i], "%s is in the table but "
		    "not in the corpus", corpus_y_refused[i].name);
	cr_assert_eq(counts.i, CORPUS_I_COUNT);
}

/* True if every frame of the stream was read and parsed as JSON. */
static bool
corpus_pipeline_accepts(const struct corpus_file *f, size_t chunk)
{
	struct wire_event ev[PIPE_EVENTS];
	size_t n, i;
	bool all_ok = true;

	n = wire_run(f->bytes, f->len, chunk, CORPUS_FILE_MAX, ev,
	    PIPE_EVENTS);
	for (i = 0; i < n; i++)
		if (ev[i].frame != FRAME_OK || !ev[i].json_ok)
			all_ok = false;
	wire_events_free(ev, n);
	return n > 0 && all_ok;
}

/*
 * Fed as a stream ending in a newline (one is added when missing, so the
 * last line is a complete frame, not a truncation), an n_ file never
 * passes the reader and JSON layers whole, in one feed or byte by byte.
 * Its own newlines split it into frames: "[1,\n1\n,1" is three frames,
 * and "1" alone is fine, but the others are not.  A y_ file with no
 * newline inside passes whole.
 */
static void
corpus_check_pipeline(const char *name, struct corpus_file *f,
    struct corpus_counts *counts)
{
	const char *reason;
	bool want = corpus_expected(name, counts, &reason);

	if (f->len == 0 || f->bytes[f->len - 1] != '\n')
		f->bytes[f->len++] = '\n';	/* len < CORPUS_FILE_MAX */
	if (strncmp(name, "n_", 2) == 0) {
		cr_expect_not(corpus_pipeline_accepts(f, 0),
		    "%s passed the reader and JSON", name);
		if (f->len <= 4096)
			cr_expect_not(corpus_pipeline_accepts(f, 1),
			    "%s passed byte by byte", name);
	} else if (want && memchr(f->bytes, '\n', f->len - 1) == NULL) {
		cr_expect(corpus_pipeline_accepts(f, 0), "%s refused", name);
		cr_expect(corpus_pipeline_accepts(f, 1),
		    "%s refused byte by byte", name);
	}
}

Test(wire_corpus, reader_and_json_never_accept_an_n_file)
{
	struct corpus_counts counts;

	corpus_each(corpus_check_pipeline, &counts);
}
