/*
 * What the shared state holds now, for sp metrics (cli/cmd_metrics.c):
 * each per_day tool's calls today (UTC) by whose count they are, and the
 * idempotency journal's entries by tool and state, as a session deciding
 * now would take them (state/journal.h, journal_state_now()).  Read-only:
 * nothing is appended, and a file that is not there yet is read as empty
 * (never created).
 *
 * Backends: none (no state_dir: every count lives in its session and
 * ends with it, so there is nothing to read); state_dir (limits.jsonl
 * and journal.jsonl, read under their locks with state/state_dir.h's
 * reader, which trusts only files of the user running sp metrics); or
 * the fleet's PostgreSQL database when the policy names "state" (read
 * through state/pg.h's own functions, as the role the policy connects
 * as: what every host sharing it counts).
 *
 * Bounded: at most STATE_SUMMARY_SPEND_MAX (tool, who) counts and
 * STATE_SUMMARY_KEYS_MAX journal keys; past either, truncated is set and
 * later ones are not counted.
 */
#ifndef SP_STATE_STATE_SUMMARY_H
#define SP_STATE_STATE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "state/journal.h"

#define STATE_SUMMARY_SPEND_MAX 1024
#define STATE_SUMMARY_KEYS_MAX 65536

enum state_summary_backend {
	STATE_SUMMARY_NONE,		/* no shared state */
	STATE_SUMMARY_DIR,		/* state_dir's files */
	STATE_SUMMARY_PG,		/* the policy's "state" database */
};

/* Its name, as sallyport_state_up's label says it. */
const char *state_summary_backend_name(enum state_summary_backend b);

/* One tool's calls today counted for one who ("uid:1001", "profile:x"). */
struct state_spend {
	size_t tool;			/* index into policy's tools */
	char *who;			/* owned; as the line says it */
	uint64_t spent;
};

struct state_summary {
	enum state_summary_backend backend;
	uint64_t day;			/* the UTC day counted, since the epoch */
	struct state_spend *spend;	/* owned, spend_count of them */
	size_t spend_count;
	/* owned, one row per policy tool: entries by state */
	uint64_t (*journal)[JOURNAL_STATES];
	bool truncated;
};

/* The backend policy p keeps its shared state in. */
enum state_summary_backend state_summary_backend_of(const struct policy *p);

/*
 * Fills *out (which state_summary_free() releases, whatever the answer)
 * from p's backend at this moment; p is borrowed and must outlive out.
 * false with why (one line) when the state could not be read.
 */
bool state_summary_read(const struct policy *p, struct state_summary *out,
    char *why, size_t why_size);

void state_summary_free(struct state_summary *s);

#endif
