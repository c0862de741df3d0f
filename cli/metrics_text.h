/*
 * Metric series and their text for sp metrics (cli/cmd_metrics.c): the
 * Prometheus text exposition format, version 0.0.4.  Each family is
 * written once, "# HELP", "# TYPE", then its samples sorted by their
 * labels, one line each, "name{label=\"value\",...} value"; a family
 * without samples still has its HELP and TYPE.
 *
 * Label values are text read from files (audit records, state_dir
 * lines), never argument values: each is cut to METRICS_LABEL_VALUE_MAX
 * bytes at a character boundary, "..." added when cut; a byte that is not
 * UTF-8 and a control character other than the line feed become U+FFFD;
 * backslash, double quote and line feed are escaped as \\, \" and \n.
 *
 * Bounded: at most METRICS_SERIES_MAX series; past that a new series is
 * not kept, and the last family written, sallyport_metrics_truncated, is
 * 1 (else 0), so the loss can be alerted on.
 */
#ifndef SP_CLI_METRICS_TEXT_H
#define SP_CLI_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define METRICS_SERIES_MAX 1000
#define METRICS_LABEL_VALUE_MAX 128	/* bytes kept of a label value */
#define METRICS_LABELS_MAX 3

/* One family; the table of them is static and borrowed. */
struct metrics_family {
	const char *name;	/* [a-zA-Z_:][a-zA-Z0-9_:]* */
	const char *type;	/* "counter" or "gauge" */
	const char *help;	/* one line, no backslash */
	const char *labels[METRICS_LABELS_MAX + 1];	/* NULL-terminated */
};

struct metrics;		/* opaque; its owner frees it */

#define METRICS_FAMILIES_MAX 32

/* NULL when out of memory (logged). */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/*
 * Families are written in the order they are declared: by this, so that
 * one without samples is still described, or at their first sample.  f
 * is borrowed (static); false past METRICS_FAMILIES_MAX (logged).
 */
bool metrics_declare(struct metrics *m, const struct metrics_family *f);

/*
 * Adds delta to the series of f whose label values are
 * values (one per label of f, borrowed), made at 0 when new: delta 0
 * makes a series appear.  false when it is not kept (truncated, or out
 * of memory: logged).
 */
bool metrics_add(struct metrics *m, const struct metrics_family *f,
    const char *const *values, uint64_t delta);

/* Sets the series of f (a gauge) to value, as metrics_add() makes it. */
bool metrics_set(struct metrics *m, const struct metrics_family *f,
    const char *const *values, uint64_t value);

/* Counts left out elsewhere: sallyport_metrics_truncated is 1. */
void metrics_mark_truncated(struct metrics *m);

/* Writes every family to fp; false when out of memory (logged). */
bool metrics_write(const struct metrics *m, FILE *fp);

/*
 * Writes v as a label value's text (escaped and cut as above, without
 * its quotes) into out, NUL-terminated; out_size must be at least
 * METRICS_LABEL_TEXT_MAX.
 */
#define METRICS_LABEL_TEXT_MAX (METRICS_LABEL_VALUE_MAX * 3 + 4)
void metrics_label_text(const char *v, char *out, size_t out_size);

#endif
