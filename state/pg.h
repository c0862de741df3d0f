/*
 * The shared state of a fleet on PostgreSQL (docs/design.md section 9.2):
 * with the policy's "state": {"postgres": ...}, per_day, min_interval_ms
 * and the idempotency journal are decided in the database, each decision
 * one call of a function of state/schema.sql (one transaction, its rows
 * locked there), so every host sharing the database sees one count and
 * one journal.  What it is sent is what state_dir's files hold: tool
 * names, who, day numbers and SHA-256 keys in hex.
 *
 * The connection is made by the process that decides (the broker, sp
 * journal, sp metrics, sp check) at its start, before confinement,
 * through a unix socket only: libpq reads TLS certificate files at every
 * connect, which the broker's filter does not allow, so a remote database
 * is reached through a local pooler or tunnel (sp-policy(5) "state").
 * A lost connection is retried at most once per PG_RETRY_MS, within the
 * broker's filter (docs/internals/seccomp.md); until it is back every
 * call these functions answer false for is refused by its caller.
 * Every call is bounded by PG_CALL_TIMEOUT_MS.
 *
 * libpq itself is loaded by pg_state_open() and pg_state_init(), the
 * first time a process uses "state" (state/pq_load.h): sp is not linked
 * with it; a host without libpq.so.5 makes both refuse, naming libpq5.
 * Without libpq at build time (configure found none) the policy refuses
 * "state", and nothing here is reached; pg_state_open() then refuses too.
 */
#ifndef SP_STATE_PG_H
#define SP_STATE_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define PG_SCHEMA_VERSION	1	/* state/schema.sql's */
#define PG_CALL_TIMEOUT_MS	5000
#define PG_RETRY_MS		1000
#define PG_WHY_MAX		512

enum pg_open {
	PG_OPEN_UP,		/* connected, schema and rights checked */
	PG_OPEN_DOWN,		/* unreachable now: retried, calls refused */
	PG_OPEN_REFUSED,	/* the policy or the database is wrong: why */
};

struct pg_state;	/* opaque; its opener frees it */

/*
 * policy's connection: the conninfo judged (no password, TLS file,
 * TCP host or requirepeer in it, nor requirepeer from a service file or
 * PGREQUIREPEER once connected), the password read from password_file under the rules
 * of a credential file (always strict, as libpq's own .pgpass), then
 * connected, and the schema version and the role's rights checked.  NULL
 * only when REFUSED or out of memory; *how and why say which.
 */
struct pg_state *pg_state_open(const struct policy *policy, enum pg_open *how,
    char *why, size_t why_size);
void pg_state_free(struct pg_state *pg);

/* Whether the last call reached the database (for sp metrics). */
bool pg_state_up(const struct pg_state *pg);

/*
 * sp state init: creates or upgrades the schema (state/schema.sql) in one
 * transaction, then, when grant_role is not NULL, grants that role what
 * the sessions need.  A new connection as policy says, unchecked.  false
 * with why.
 */
bool pg_state_init(const struct policy *policy, const char *grant_role,
    int *version_was, char *why, size_t why_size);

/* What one per_day / min_interval_ms decision said. */
enum pg_limits_verdict {
	PG_LIMITS_PASS,		/* counted: spent includes this call */
	PG_LIMITS_PER_DAY,	/* spent calls today, none taken */
	PG_LIMITS_INTERVAL,	/* an identical call started at last_start */
};

struct pg_limits_answer {
	enum pg_limits_verdict verdict;
	uint64_t spent;
	uint64_t last_start;	/* wall ms */
};

/* false: the database did not answer (nothing was counted, or it cannot
 * be known: the call must not be sent). */
bool pg_take_limits(struct pg_state *pg, const char *who, const char *tool,
    const char *key_hex, uint64_t now_ms, uint32_t per_day,
    uint32_t min_interval_ms, struct pg_limits_answer *a);

/* A journal entry as the database holds it. */
struct pg_journal_row {
	char key[65];
	char state[16];		/* pending, done, failed, unknown */
	uint64_t ts_ms;
	char tool[64];
	char summary[96];
	bool ours;		/* pending for a call of this session */
};

/* key's entry: *found false when there is none.  false: no answer. */
bool pg_journal_peek(struct pg_state *pg, const char *key,
    struct pg_journal_row *row, bool *found);

/*
 * The pending entry for call_id, taken only when no entry answers key
 * (none, failed, or past window_ms): *taken.  false: no answer, and the
 * call must not be sent.
 */
bool pg_journal_take(struct pg_state *pg, const char *key, const char *tool,
    uint64_t call_id, uint64_t now_ms, uint64_t window_ms, bool *taken);

/* The outcome of the pending entry this session took: false when it is
 * not recorded (no answer, or the entry is no longer ours). */
bool pg_journal_end(struct pg_state *pg, const char *key, const char *state,
    uint64_t now_ms, const char *summary);

/* Each entry, oldest first, to each(arg, row).  false: no answer. */
bool pg_journal_list(struct pg_state *pg,
    void (*each)(void *arg, const struct pg_journal_row *row), void *arg);

/* sp journal resolve: *found, and the state it had in was (16 bytes). */
bool pg_journal_resolve(struct pg_state *pg, const char *key,
    const char *state, uint64_t now_ms, const char *summary, bool *found,
    char *was);

/* per_day spent on UTC day (wall ms / 86400000), each (who, tool). */
bool pg_day_spent(struct pg_state *pg, uint64_t day,
    void (*each)(void *arg, const char *who, const char *tool,
    uint64_t spent), void *arg);

#endif
