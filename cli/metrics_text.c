/*
 * Metric series and the exposition text (cli/metrics_text.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/metrics_text.h"
#include "common/log.h"
#include "common/utf8.h"

/* open addressing over the series, at most half full */
#define METRICS_SLOTS (2 * METRICS_SERIES_MAX)
/* a series' name and labels: the name, and each label's name="text", */
#define METRICS_KEY_MAX (128 + METRICS_LABELS_MAX * \
	(64 + METRICS_LABEL_TEXT_MAX + 4) + 2)

struct metrics_series {
	const struct metrics_family *f;
	char *key;			/* owned: name{labels}, as written */
	uint64_t value;
};

struct metrics {
	const struct metrics_family *families[METRICS_FAMILIES_MAX];
	size_t family_count;
	struct metrics_series series[METRICS_SERIES_MAX];
	size_t n;
	size_t slots[METRICS_SLOTS];	/* index + 1 into series; 0 free */
	bool truncated;
};

static const char metrics_replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

struct metrics *
metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m == NULL)
		log_error("metrics: out of memory");
	return m;
}

bool
metrics_declare(struct metrics *m, const struct metrics_family *f)
{
	size_t i;

	for (i = 0; i < m->family_count; i++)
		if (m->families[i] == f)
			return true;
	if (m->family_count == METRICS_FAMILIES_MAX) {
		log_error("metrics: %s: too many families", f->name);
		return false;
	}
	m->families[m->family_count++] = f;
	return true;
}

void
metrics_free(struct metrics *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->series[i].key);
	free(m);
}

/*
 * How the character at s (avail > 0 bytes) is written: NULL for as it
 * is, else the text standing for it; its bytes in *n.
 */
static const char *
metrics_char_text(const char *s, size_t avail, size_t *n)
{
	uint32_t cp;

	if (utf8_decode((const uint8_t *)s, avail, &cp, n) != UTF8_OK) {
		*n = 1;
		return metrics_replacement;
	}
	if (cp == '\\')
		return "\\\\";
	if (cp == '"')
		return "\\\"";
	if (cp == '\n')
		return "\\n";
	if (cp < 0x20 || cp == 0x7f)
		return metrics_replacement;
	return NULL;
}

void
metrics_label_text(const char *v, char *out, size_t out_size)
{
	size_t in = 0, used = 0, total = strlen(v), n, w;
	const char *text;

	if (out_size < METRICS_LABEL_TEXT_MAX) {
		out[0] = '\0';
		return;
	}
	while (in < total) {
		text = metrics_char_text(v + in, total - in, &n);
		if (in + n > METRICS_LABEL_VALUE_MAX)
			break;
		w = text != NULL ? strlen(text) : n;
		memcpy(out + used, text != NULL ? text : v + in, w);
		used += w;
		in += n;
	}
	if (in < total) {
		memcpy(out + used, "...", 3);
		used += 3;
	}
	out[used] = '\0';
}

/* name{label="text",...} of f's series with values; false when too long. */
static bool
metrics_key(const struct metrics_family *f, const char *const *values,
    char *key, size_t size)
{
	char text[METRICS_LABEL_TEXT_MAX];
	size_t used, i;
	int w;

	used = (size_t)snprintf(key, size, "%s", f->name);
	for (i = 0; f->labels[i] != NULL && used < size; i++) {
		metrics_label_text(values[i], text, sizeof(text));
		w = snprintf(key + used, size - used, "%s%s=\"%s\"",
		    i == 0 ? "{" : ",", f->labels[i], text);
		used += w < 0 ? size : (size_t)w;
	}
	if (i > 0 && used < size)
		used += (size_t)snprintf(key + used, size - used, "}");
	return used < size;
}

static size_t
metrics_hash(const char *key)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (; *key != '\0'; key++)
		h = (h ^ (uint8_t)*key) * 1099511628211ull;
	return (size_t)(h % METRICS_SLOTS);
}

/* f's series with values, made at 0 when new; NULL when not kept. */
static struct metrics_series *
metrics_series(struct metrics *m, const struct metrics_family *f,
    const char *const *values)
{
	char key[METRICS_KEY_MAX];
	struct metrics_series *s;
	size_t slot;

	if (!metrics_declare(m, f))
		return NULL;
	if (!metrics_key(f, values, key, sizeof(key))) {
		log_error("metrics: %s: series name too long", f->name);
		return NULL;
	}
	for (slot = metrics_hash(key); m->slots[slot] != 0;
	    slot = (slot + 1) % METRICS_SLOTS)
		if (strcmp(m->series[m->slots[slot] - 1].key, key) == 0)
			return &m->series[m->slots[slot] - 1];
	if (m->n == METRICS_SERIES_MAX) {
		m->truncated = true;
		return NULL;
	}
	s = &m->series[m->n];
	if ((s->key = strdup(key)) == NULL) {
		log_error("metrics: out of memory");
		return NULL;
	}
	s->f = f;
	s->value = 0;
	m->slots[slot] = ++m->n;
	return s;
}

bool
metrics_add(struct metrics *m, const struct metrics_family *f,
    const char *const *values, uint64_t delta)
{
	struct metrics_series *s = metrics_series(m, f, values);

	/* a counter read from crafted records stops at the top, never
	 * wraps to a small number */
	if (s != NULL)
		s->value = delta > UINT64_MAX - s->value ? UINT64_MAX :
		    s->value + delta;
	return s != NULL;
}

bool
metrics_set(struct metrics *m, const struct metrics_family *f,
    const char *const *values, uint64_t value)
{
	struct metrics_series *s = metrics_series(m, f, values);

	if (s != NULL)
		s->value = value;
	return s != NULL;
}

void
metrics_mark_truncated(struct metrics *m)
{
	m->truncated = true;
}

static int
metrics_series_cmp(const void *a, const void *b)
{
	const struct metrics_series *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

static void
metrics_write_head(const char *name, const char *type, const char *help,
    FILE *fp)
{
	fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

bool
metrics_write(const struct metrics *m, FILE *fp)
{
	const struct metrics_series **sorted;
	size_t i, j;

	if ((sorted = calloc(m->n + 1, sizeof(*sorted))) == NULL) {
		log_error("metrics: out of memory");
		return false;
	}
	for (i = 0; i < m->n; i++)
		sorted[i] = &m->series[i];
	qsort(sorted, m->n, sizeof(*sorted), metrics_series_cmp);
	for (i = 0; i < m->family_count; i++) {
		metrics_write_head(m->families[i]->name, m->families[i]->type,
		    m->families[i]->help, fp);
		for (j = 0; j < m->n; j++)
			if (sorted[j]->f == m->families[i])
				fprintf(fp, "%s %" PRIu64 "\n", sorted[j]->key,
				    sorted[j]->value);
	}
	metrics_write_head("sallyport_metrics_truncated", "gauge",
	    "1 when series were left out past the most sp metrics writes "
	    "(sp(1)).", fp);
	fprintf(fp, "sallyport_metrics_truncated %d\n", m->truncated ? 1 : 0);
	free(sorted);
	return true;
}
