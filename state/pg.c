/*
 * The shared state on PostgreSQL (state/pg.h): the connection, its start
 * checks, bounded calls, and the decisions of state/schema.sql.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "state/pg.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"

#ifdef SP_HAVE_LIBPQ

#include <libpq-fe.h>

#include "policy/startcheck.h"
#include "state/pq_load.h"
#include "state/schema_sql.h"

#define PG_PASSWORD_MAX	1024
#define PG_OWNER_BYTES	16
#define PG_PARAMS_MAX	40	/* conninfo keywords libpq knows, and ours */

/* libpq's functions (state/pq_load.h): set by pg_state_open() and
 * pg_state_init() before anything else here is reached; never reset. */
static const struct pq_table *pq;

struct pg_state {
	PGconn *conn;			/* owned */
	char owner[2 * PG_OWNER_BYTES + 1];	/* this session's entries */
	uint64_t last_try_ms;		/* monotonic, of the last reconnect */
	bool up;			/* the last call was answered */
};

/*
 * requirepeer, wherever it comes from: libpq checks it at every connect,
 * the reconnect inside the broker's filter too, by asking SO_PEERCRED for
 * the server's uid and then the user database (getpwuid_r: stat and open
 * of /etc/nsswitch.conf and /etc/passwd, maybe an NSS module loaded) for
 * its name, which the confined broker may not do: it would be killed
 * (SIGSYS) at the first reconnect, the first connect having worked.
 */
#define PG_REQUIREPEER_WHY \
	"makes libpq look the server's uid up in the user database " \
	"(/etc/passwd, NSS) at every connect, which the confined broker may " \
	"not read; keep other users' sockets out by the socket's directory " \
	"instead (host= a directory only the server's user may write, such " \
	"as /run/postgresql)"

/*
 * Keywords a policy's conninfo may not hold, and why: the password is a
 * credential (password_file, read under a credential's rules), and TLS
 * files, TCP hosts and requirepeer's user lookup are reached at every
 * connect, which the broker's filter does not allow (state/pg.h).
 */
static const char *
pg_keyword_refused(const char *kw, const char *val)
{
	static const char *const tls[] = { "sslcert", "sslkey", "sslpassword",
	    "sslrootcert", "sslcrl", "sslcrldir", NULL };
	static const char tcp[] = "names a TCP host: the confined broker "
	    "reconnects only through a unix socket; give "
	    "host=/path/of/its/directory (a local pooler or tunnel reaches a "
	    "remote database)";
	size_t i;

	if (strcmp(kw, "password") == 0 || strcmp(kw, "passfile") == 0)
		return "holds a password: put it in \"password_file\", a file "
		    "only the service user reads (chmod 600)";
	for (i = 0; tls[i] != NULL; i++)
		if (strcmp(kw, tls[i]) == 0)
			return "names a TLS file, which libpq reads at every "
			    "connect and the confined broker may not open: "
			    "reach a remote database through a local unix "
			    "socket (a pooler such as pgbouncer, or a tunnel)";
	if (strcmp(kw, "hostaddr") == 0 && val[0] != '\0')
		return tcp;
	/* host is a list libpq tries in turn, a TCP one after a socket
	 * that did not answer: each must be a directory (an empty one is
	 * libpq's default socket directory) */
	if (strcmp(kw, "host") == 0)
		for (; *val != '\0'; val += strcspn(val, ","),
		    val += *val == ',')
			if (*val != '/' && *val != ',')
				return tcp;
	if (strcmp(kw, "requirepeer") == 0)
		return PG_REQUIREPEER_WHY;
	return NULL;
}

/* The first line of libpq's message, which names no secret. */
static void
pg_why(char *why, size_t why_size, const char *what, const char *msg)
{
	size_t n = strcspn(msg != NULL ? msg : "", "\n");

	snprintf(why, why_size, "%s: %.*s", what, (int)n,
	    msg != NULL ? msg : "");
}

/* The password file's first line, judged as a credential file; false
 * with why.  pw is PG_PASSWORD_MAX + 1 bytes. */
static bool
pg_password_read(const char *path, char *pw, char *why, size_t why_size)
{
	char w[POLICY_WHY_MAX];
	size_t size = 0;
	bool loose = false;
	ssize_t n;
	int fd;

	/* loose is refused whatever strict_credentials says, as libpq
	 * refuses its own password file open to others */
	if ((fd = policy_file_open(path, POLICY_FILE_SECRET, false, &size,
	    &loose, w, sizeof(w))) == -1 || loose) {
		if (fd != -1)
			(void)close(fd);
		snprintf(why, why_size, "password_file %s %s", path, w);
		return false;
	}
	n = size > PG_PASSWORD_MAX ? -1 : read(fd, pw, size);
	(void)close(fd);
	if (n < 0 || (size_t)n != size) {
		snprintf(why, why_size, "password_file %s could not be read "
		    "whole (at most %d bytes)", path, PG_PASSWORD_MAX);
		return false;
	}
	pw[n] = '\0';
	pw[strcspn(pw, "\r\n")] = '\0';
	if (pw[0] == '\0') {
		snprintf(why, why_size, "password_file %s holds no password "
		    "on its first line", path);
		return false;
	}
	return true;
}

/* The conninfo's keywords and values, with password and defaults added;
 * kw/val hold PG_PARAMS_MAX + 1.  false with why. */
static bool
pg_params(PQconninfoOption *opts, const char *password, const char **kw,
    const char **val, char *why, size_t why_size)
{
	PQconninfoOption *o;
	const char *refused;
	bool timeout = false;
	size_t n = 0;

	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		if ((refused = pg_keyword_refused(o->keyword, o->val)) != NULL) {
			snprintf(why, why_size, "\"postgres\" %s %s", o->keyword,
			    refused);
			return false;
		}
		if (n == PG_PARAMS_MAX - 3)
			break;
		timeout |= strcmp(o->keyword, "connect_timeout") == 0;
		kw[n] = o->keyword;
		val[n++] = o->val;
	}
	if (password != NULL) {
		kw[n] = "password";
		val[n++] = password;
	}
	if (!timeout) {		/* libpq waits forever by default */
		kw[n] = "connect_timeout";
		val[n++] = "5";
	}
	kw[n] = "fallback_application_name";
	val[n++] = "sallyport";
	kw[n] = val[n] = NULL;
	return true;
}

/* The server's notices (a NOTICE of sp state init, a WARNING) as one
 * line of ours, not libpq's own lines on stderr. */
static void
pg_notice(void *arg, const char *message)
{
	(void)arg;
	log_debug("the shared state's database says: %.*s",
	    (int)strcspn(message, "\n"), message);
}

/*
 * The hosts and requirepeer libpq used, wherever it read them: a service
 * file or the environment (PGHOST, PGHOSTADDR, PGREQUIREPEER) may name
 * what the conninfo does not.  PQhost is not enough: it names host= even
 * when a hostaddr= beside it is what libpq connected to, and only the
 * host it reached of a list.  false with why.
 */
static bool
pg_conn_checked(PGconn *conn, char *why, size_t why_size)
{
	PQconninfoOption *opts = pq->PQconninfo(conn), *o;
	const char *refused = NULL;

	if (opts == NULL) {
		snprintf(why, why_size, "out of memory");
		return false;
	}
	for (o = opts; o->keyword != NULL && refused == NULL; o++)
		if (o->val != NULL && o->val[0] != '\0' &&
		    (strcmp(o->keyword, "host") == 0 ||
		    strcmp(o->keyword, "hostaddr") == 0 ||
		    strcmp(o->keyword, "requirepeer") == 0) &&
		    (refused = pg_keyword_refused(o->keyword, o->val)) != NULL)
			snprintf(why, why_size, "\"postgres\" (with its service "
			    "file or the environment, PGHOST, PGHOSTADDR or "
			    "PGREQUIREPEER) %s %s", o->keyword, refused);
	pq->PQconninfoFree(opts);
	return refused == NULL;
}

/* A new connection as policy says (its schema not yet checked): *how
 * says whether it is up; NULL (REFUSED) with why, or down with why. */
static PGconn *
pg_connect(const struct policy *policy, enum pg_open *how, char *why,
    size_t why_size)
{
	const char *kw[PG_PARAMS_MAX + 1], *val[PG_PARAMS_MAX + 1];
	char pw[PG_PASSWORD_MAX + 1], *err = NULL;
	PQconninfoOption *opts;
	PGconn *conn = NULL;

	*how = PG_OPEN_REFUSED;
	opts = pq->PQconninfoParse(policy->state_postgres, &err);
	if (opts == NULL) {
		pg_why(why, why_size, "\"postgres\" is not a connection string",
		    err != NULL ? err : "out of memory");
		pq->PQfreemem(err);
		return NULL;
	}
	if ((policy->state_password_file == NULL ||
	    pg_password_read(policy->state_password_file, pw, why, why_size)) &&
	    pg_params(opts, policy->state_password_file != NULL ? pw : NULL,
	    kw, val, why, why_size)) {
		conn = pq->PQconnectdbParams(kw, val, 0);
		*how = PG_OPEN_DOWN;
	}
	explicit_bzero(pw, sizeof(pw));
	pq->PQconninfoFree(opts);
	if (conn != NULL)
		(void)pq->PQsetNoticeProcessor(conn, pg_notice, NULL);
	if (conn == NULL) {
		if (*how == PG_OPEN_DOWN)
			snprintf(why, why_size, "out of memory");
		*how = PG_OPEN_REFUSED;
		return NULL;
	}
	if (!pg_conn_checked(conn, why, why_size)) {
		*how = PG_OPEN_REFUSED;
		pq->PQfinish(conn);
		return NULL;
	}
	/* down: kept, for libpq's reset to try again with what it read */
	if (pq->PQstatus(conn) != CONNECTION_OK) {
		pg_why(why, why_size, "the shared state's database is not "
		    "reachable", pq->PQerrorMessage(conn));
		return conn;
	}
	*how = PG_OPEN_UP;
	return conn;
}

/* One statement, waited for at most PG_CALL_TIMEOUT_MS: the result of
 * a statement that succeeded (caller clears), or NULL after logging. */
static PGresult *pg_exec(struct pg_state *pg, const char *sql, int n,
    const char *const *vals);

/* SQLSTATE of a failed result, "" when there is none. */
static const char *
pg_sqlstate(const PGresult *r)
{
	const char *s = r != NULL ?
	    pq->PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	return s != NULL ? s : "";
}

/* The fix for a role that may not use the schema. */
static void
pg_grant_why(PGconn *conn, char *why, size_t why_size, const char *what)
{
	snprintf(why, why_size, "%s: the role %s may not use the shared "
	    "state; as the schema's owner run: sp state init --grant %s",
	    what, pq->PQuser(conn), pq->PQuser(conn));
}

/* The schema's version and the role's rights; false with why. */
static bool
pg_check_schema(PGconn *conn, char *why, size_t why_size)
{
	PGresult *r = pq->PQexec(conn, "SELECT sallyport.schema_version()");
	const char *state = pg_sqlstate(r);
	bool ok = false;
	long v;

	if (pq->PQresultStatus(r) != PGRES_TUPLES_OK) {
		if (strcmp(state, "42501") == 0)
			pg_grant_why(conn, why, why_size, "permission denied");
		else if (strcmp(state, "3F000") == 0 ||
		    strcmp(state, "42883") == 0)
			snprintf(why, why_size, "the database has no Sallyport "
			    "schema: run sp state init (as a role that may "
			    "create it), then grant this role with --grant");
		else
			pg_why(why, why_size, "the schema version could not be "
			    "read", pq->PQresultErrorMessage(r));
		goto out;
	}
	v = pq->PQntuples(r) == 1 ?
	    strtol(pq->PQgetvalue(r, 0, 0), NULL, 10) : 0;
	/* a newer schema is not this sp's to make: sp state init refuses
	 * to take it back (pg_state_init), so the fix is a newer sp */
	if (v > PG_SCHEMA_VERSION) {
		snprintf(why, why_size, "the shared state's schema is version "
		    "%ld, newer than this sp's %d: upgrade sp", v,
		    PG_SCHEMA_VERSION);
		goto out;
	}
	if (v != PG_SCHEMA_VERSION) {
		snprintf(why, why_size, "the shared state's schema is version "
		    "%ld, and this sp needs %d: run sp state init", v,
		    PG_SCHEMA_VERSION);
		goto out;
	}
	pq->PQclear(r);
	r = pq->PQexec(conn, "SELECT p.proname FROM pg_catalog.pg_proc p JOIN "
	    "pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE "
	    "n.nspname = 'sallyport' AND NOT "
	    "pg_catalog.has_function_privilege(p.oid, 'EXECUTE') LIMIT 1");
	if (pq->PQresultStatus(r) != PGRES_TUPLES_OK)
		pg_why(why, why_size, "the role's rights could not be read",
		    pq->PQresultErrorMessage(r));
	else if (pq->PQntuples(r) != 0)
		pg_grant_why(conn, why, why_size, pq->PQgetvalue(r, 0, 0));
	else
		ok = true;
out:
	pq->PQclear(r);
	return ok;
}

struct pg_state *
pg_state_open(const struct policy *policy, enum pg_open *how, char *why,
    size_t why_size)
{
	uint8_t id[PG_OWNER_BYTES];
	struct pg_state *pg;

	/* the first use of libpq in this process: loaded now (before the
	 * broker's confinement), not at every sp's start */
	if ((pq = pq_load(why, why_size)) == NULL) {
		*how = PG_OPEN_REFUSED;
		return NULL;
	}
	if ((pg = calloc(1, sizeof(*pg))) == NULL ||
	    getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
		free(pg);
		*how = PG_OPEN_REFUSED;
		snprintf(why, why_size, "out of memory or randomness");
		return NULL;
	}
	hash_hex(id, sizeof(id), pg->owner);
	pg->conn = pg_connect(policy, how, why, why_size);
	if (*how == PG_OPEN_UP && !pg_check_schema(pg->conn, why, why_size))
		*how = PG_OPEN_REFUSED;
	if (*how == PG_OPEN_REFUSED) {
		pg_state_free(pg);
		return NULL;
	}
	/* down at start: a session that starts while its database restarts
	 * runs its ungoverned calls, and refuses the rest until it is back */
	pg->up = *how == PG_OPEN_UP;
	pg->last_try_ms = clock_monotonic_ms();
	if (pg->conn != NULL && pq->PQsetnonblocking(pg->conn, 1) != 0)
		pg->up = false;
	return pg;
}

void
pg_state_free(struct pg_state *pg)
{
	if (pg == NULL)
		return;
	pq->PQfinish(pg->conn);
	free(pg);
}

bool
pg_state_up(const struct pg_state *pg)
{
	return pg != NULL && pg->up;
}

/* Waits until fd is ready for events or deadline (monotonic ms). */
static bool
pg_wait(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = clock_monotonic_ms();
		if (fd < 0 || now >= deadline)
			return false;
		n = poll(&p, 1, (int)(deadline - now));
		if (n > 0)
			return true;
		if (n == 0 || errno != EINTR)
			return false;
	}
}

/*
 * The connection again, through libpq's reset, which reuses what was
 * parsed and read at start (no file is opened): at most once per
 * PG_RETRY_MS, so a database that is down costs a call no wait.
 */
static bool
pg_reconnect(struct pg_state *pg)
{
	uint64_t now = clock_monotonic_ms(), deadline;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	if (pg->conn == NULL || now - pg->last_try_ms < PG_RETRY_MS)
		return false;
	pg->last_try_ms = now;
	deadline = now + PG_CALL_TIMEOUT_MS;
	if (!pq->PQresetStart(pg->conn))
		return false;
	while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED)
		if (!pg_wait(pq->PQsocket(pg->conn),
		    st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline))
			return false;
		else
			st = pq->PQresetPoll(pg->conn);
	if (st != PGRES_POLLING_OK || pq->PQsetnonblocking(pg->conn, 1) != 0)
		return false;
	log_info("the shared state's database is reachable again");
	return true;
}

static bool
pg_usable(struct pg_state *pg)
{
	if (pg->conn != NULL && pq->PQstatus(pg->conn) == CONNECTION_OK)
		return true;
	return pg_reconnect(pg);
}

/* Sends what is queued and reads until a result is whole. */
static bool
pg_await(PGconn *conn, uint64_t deadline)
{
	int f;

	while ((f = pq->PQflush(conn)) == 1)
		if (!pg_wait(pq->PQsocket(conn), POLLOUT, deadline))
			return false;
	if (f != 0)
		return false;
	while (pq->PQisBusy(conn))
		if (!pg_wait(pq->PQsocket(conn), POLLIN, deadline) ||
		    !pq->PQconsumeInput(conn))
			return false;
	return true;
}

/* Losing the connection is said once, not at every refused call. */
static void
pg_lost(struct pg_state *pg, const char *msg)
{
	size_t n = strcspn(msg, "\n");

	if (pg->up)
		log_error("the shared state's database is unavailable (%.*s): "
		    "calls its limits or journal govern are refused until it "
		    "is back", (int)n, msg);
	pg->up = false;
}

static PGresult *
pg_exec(struct pg_state *pg, const char *sql, int n, const char *const *vals)
{
	uint64_t deadline = clock_monotonic_ms() + PG_CALL_TIMEOUT_MS;
	PGresult *r, *first = NULL;

	if (!pg_usable(pg)) {
		pg_lost(pg, "no connection");
		return NULL;
	}
	if (!pq->PQsendQueryParams(pg->conn, sql, n, NULL, vals, NULL, NULL, 0))
		goto lost;
	for (;;) {
		if (!pg_await(pg->conn, deadline))
			goto lost;
		if ((r = pq->PQgetResult(pg->conn)) == NULL)
			break;
		if (first == NULL)
			first = r;
		else
			pq->PQclear(r);
	}
	if (pq->PQresultStatus(first) == PGRES_TUPLES_OK) {
		if (!pg->up)
			log_info("the shared state's database answers again");
		pg->up = true;
		return first;
	}
	log_error("the shared state's database refused a call (SQLSTATE %s)",
	    pg_sqlstate(first));
	pq->PQclear(first);
	return NULL;
lost:
	pq->PQclear(first);
	pg_lost(pg, pq->PQstatus(pg->conn) == CONNECTION_OK ?
	    "no answer in time" : pq->PQerrorMessage(pg->conn));
	/* a late answer must never be read as the next call's: the socket
	 * goes now (libpq closes it as it starts anew; pg_reconnect()
	 * starts again when it is time) */
	if (pq->PQstatus(pg->conn) == CONNECTION_OK)
		(void)pq->PQresetStart(pg->conn);
	return NULL;
}

/* A decimal text of v into buf (24 bytes), for a statement's values. */
static const char *
pg_u64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

static uint64_t
pg_value_u64(const PGresult *r, int row, int col)
{
	return strtoull(pq->PQgetvalue(r, row, col), NULL, 10);
}

/* A one-row, one-column answer of "t" or "f" into *out. */
static bool
pg_exec_bool(struct pg_state *pg, const char *sql, int n,
    const char *const *vals, bool *out)
{
	PGresult *r = pg_exec(pg, sql, n, vals);
	bool ok = r != NULL && pq->PQntuples(r) == 1 && pq->PQnfields(r) == 1;

	if (ok)
		*out = strcmp(pq->PQgetvalue(r, 0, 0), "t") == 0;
	pq->PQclear(r);
	return ok;
}

bool
pg_take_limits(struct pg_state *pg, const char *who, const char *tool,
    const char *key_hex, uint64_t now_ms, uint32_t per_day,
    uint32_t min_interval_ms, struct pg_limits_answer *a)
{
	char now[24], pd[24], mi[24];
	const char *v[] = { who, tool, key_hex, pg_u64(now, now_ms),
	    pg_u64(pd, per_day), pg_u64(mi, min_interval_ms) };
	PGresult *r = pg_exec(pg, "SELECT verdict, spent, last_start FROM "
	    "sallyport.take_limits($1, $2, $3, $4, $5, $6)", 6, v);
	const char *verdict;
	bool ok = r != NULL && pq->PQntuples(r) == 1 && pq->PQnfields(r) == 3;

	if (ok) {
		verdict = pq->PQgetvalue(r, 0, 0);
		a->verdict = strcmp(verdict, "pass") == 0 ? PG_LIMITS_PASS :
		    strcmp(verdict, "per_day") == 0 ? PG_LIMITS_PER_DAY :
		    PG_LIMITS_INTERVAL;
		a->spent = pg_value_u64(r, 0, 1);
		a->last_start = pg_value_u64(r, 0, 2);
	}
	pq->PQclear(r);
	return ok;
}

/* Row i of a journal answer (key, state, ts_ms, tool, summary[, owner]). */
static void
pg_journal_row_of(const struct pg_state *pg, const PGresult *r, int i,
    struct pg_journal_row *row)
{
	snprintf(row->key, sizeof(row->key), "%s", pq->PQgetvalue(r, i, 0));
	snprintf(row->state, sizeof(row->state), "%s", pq->PQgetvalue(r, i, 1));
	row->ts_ms = pg_value_u64(r, i, 2);
	snprintf(row->tool, sizeof(row->tool), "%s", pq->PQgetvalue(r, i, 3));
	snprintf(row->summary, sizeof(row->summary), "%s",
	    pq->PQgetvalue(r, i, 4));
	row->ours = pq->PQnfields(r) == 6 &&
	    strcmp(row->state, "pending") == 0 &&
	    strcmp(pq->PQgetvalue(r, i, 5), pg->owner) == 0;
}

bool
pg_journal_peek(struct pg_state *pg, const char *key,
    struct pg_journal_row *row, bool *found)
{
	const char *v[] = { key };
	PGresult *r = pg_exec(pg, "SELECT $1::text, state, ts_ms, tool, "
	    "summary, owner FROM sallyport.journal_peek($1)", 1, v);

	if (r == NULL || pq->PQnfields(r) != 6)
		goto fail;
	if ((*found = pq->PQntuples(r) == 1))
		pg_journal_row_of(pg, r, 0, row);
	pq->PQclear(r);
	return true;
fail:
	pq->PQclear(r);
	return false;
}

bool
pg_journal_take(struct pg_state *pg, const char *key, const char *tool,
    uint64_t call_id, uint64_t now_ms, uint64_t window_ms, bool *taken)
{
	char call[24], now[24], window[24];
	const char *v[] = { key, tool, pg->owner, pg_u64(call, call_id),
	    pg_u64(now, now_ms), pg_u64(window, window_ms) };

	return pg_exec_bool(pg, "SELECT sallyport.journal_take($1, $2, $3, "
	    "$4, $5, $6)", 6, v, taken);
}

bool
pg_journal_end(struct pg_state *pg, const char *key, const char *state,
    uint64_t now_ms, const char *summary)
{
	char now[24];
	const char *v[] = { key, pg->owner, state, pg_u64(now, now_ms),
	    summary };
	bool ended = false;

	return pg_exec_bool(pg, "SELECT sallyport.journal_end($1, $2, $3, $4, "
	    "$5)", 5, v, &ended) && ended;
}

bool
pg_journal_list(struct pg_state *pg,
    void (*each)(void *arg, const struct pg_journal_row *row), void *arg)
{
	PGresult *r = pg_exec(pg, "SELECT key, state, ts_ms, tool, summary "
	    "FROM sallyport.journal_list()", 0, NULL);
	struct pg_journal_row row;
	int i;

	if (r == NULL || pq->PQnfields(r) != 5) {
		pq->PQclear(r);
		return false;
	}
	for (i = 0; i < pq->PQntuples(r); i++) {
		pg_journal_row_of(pg, r, i, &row);
		each(arg, &row);
	}
	pq->PQclear(r);
	return true;
}

bool
pg_journal_resolve(struct pg_state *pg, const char *key, const char *state,
    uint64_t now_ms, const char *summary, bool *found, char *was)
{
	char now[24];
	const char *v[] = { key, state, pg_u64(now, now_ms), summary };
	PGresult *r = pg_exec(pg, "SELECT sallyport.journal_resolve($1, $2, "
	    "$3, $4)", 4, v);
	bool ok = r != NULL && pq->PQntuples(r) == 1 && pq->PQnfields(r) == 1;

	if (ok && (*found = !pq->PQgetisnull(r, 0, 0)))
		snprintf(was, 16, "%s", pq->PQgetvalue(r, 0, 0));
	pq->PQclear(r);
	return ok;
}

bool
pg_day_spent(struct pg_state *pg, uint64_t day,
    void (*each)(void *arg, const char *who, const char *tool,
    uint64_t spent), void *arg)
{
	char d[24];
	const char *v[] = { pg_u64(d, day) };
	PGresult *r = pg_exec(pg, "SELECT who, tool, spent FROM "
	    "sallyport.day_spent($1)", 1, v);
	int i;

	if (r == NULL || pq->PQnfields(r) != 3) {
		pq->PQclear(r);
		return false;
	}
	for (i = 0; i < pq->PQntuples(r); i++)
		each(arg, pq->PQgetvalue(r, i, 0), pq->PQgetvalue(r, i, 1),
		    pg_value_u64(r, i, 2));
	pq->PQclear(r);
	return true;
}

/* One statement of sp state init; false with why. */
static bool
pg_init_step(PGconn *conn, const char *sql, const char *what, char *why,
    size_t why_size)
{
	PGresult *r = pq->PQexec(conn, sql);
	ExecStatusType st = pq->PQresultStatus(r);
	bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;

	if (!ok)
		pg_why(why, why_size, what, pq->PQresultErrorMessage(r));
	pq->PQclear(r);
	return ok;
}

/* The version the database has now: 0 without a schema. */
static int
pg_init_version(PGconn *conn)
{
	PGresult *r;
	int v = 0;

	/* a failed statement would end the transaction: asked first */
	r = pq->PQexec(conn, "SELECT pg_catalog.to_regclass('sallyport.meta') "
	    "IS NOT NULL");
	if (pq->PQresultStatus(r) != PGRES_TUPLES_OK || pq->PQntuples(r) != 1 ||
	    strcmp(pq->PQgetvalue(r, 0, 0), "t") != 0) {
		pq->PQclear(r);
		return 0;
	}
	pq->PQclear(r);
	r = pq->PQexec(conn, "SELECT version FROM sallyport.meta");
	if (pq->PQresultStatus(r) == PGRES_TUPLES_OK && pq->PQntuples(r) == 1)
		v = (int)strtol(pq->PQgetvalue(r, 0, 0), NULL, 10);
	pq->PQclear(r);
	return v;
}

static bool
pg_init_grant(PGconn *conn, const char *role, char *why, size_t why_size)
{
	char *id = pq->PQescapeIdentifier(conn, role, strlen(role));
	char *sql = NULL;
	bool ok = false;

	if (id != NULL && asprintf(&sql, "GRANT USAGE ON SCHEMA sallyport TO "
	    "%s; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA sallyport TO %s",
	    id, id) != -1)
		ok = pg_init_step(conn, sql, "the grant failed", why, why_size);
	else
		snprintf(why, why_size, "out of memory");
	free(sql);
	pq->PQfreemem(id);
	return ok;
}

bool
pg_state_init(const struct policy *policy, const char *grant_role,
    int *version_was, char *why, size_t why_size)
{
	enum pg_open how;
	PGconn *conn = NULL;
	bool ok = false;

	if ((pq = pq_load(why, why_size)) == NULL)
		return false;
	conn = pg_connect(policy, &how, why, why_size);
	if (how != PG_OPEN_UP)
		goto out;
	if (!pg_init_step(conn, "BEGIN", "no transaction", why, why_size) ||
	    !pg_init_step(conn, "SELECT pg_advisory_xact_lock(1936614764)",
	    "no lock", why, why_size))
		goto out;
	if ((*version_was = pg_init_version(conn)) > PG_SCHEMA_VERSION) {
		snprintf(why, why_size, "the database's schema is version %d, "
		    "newer than this sp's %d: upgrade sp", *version_was,
		    PG_SCHEMA_VERSION);
		goto out;
	}
	ok = pg_init_step(conn, pg_schema_sql, "the schema was not made", why,
	    why_size) && (grant_role == NULL ||
	    pg_init_grant(conn, grant_role, why, why_size)) &&
	    pg_init_step(conn, "COMMIT", "not committed", why, why_size);
out:
	pq->PQfinish(conn);		/* without COMMIT: rolled back */
	return ok;
}

#else	/* !SP_HAVE_LIBPQ: policy/load.c refuses "state"; unreachable */

struct pg_state *
pg_state_open(const struct policy *policy, enum pg_open *how, char *why,
    size_t why_size)
{
	(void)policy;
	*how = PG_OPEN_REFUSED;
	snprintf(why, why_size, "this sp was built without libpq");
	return NULL;
}

void pg_state_free(struct pg_state *pg) { (void)pg; }
bool pg_state_up(const struct pg_state *pg) { (void)pg; return false; }

bool
pg_state_init(const struct policy *policy, const char *grant_role,
    int *version_was, char *why, size_t why_size)
{
	(void)policy, (void)grant_role;
	*version_was = 0;
	snprintf(why, why_size, "this sp was built without libpq");
	return false;
}

bool
pg_take_limits(struct pg_state *pg, const char *who, const char *tool,
    const char *key_hex, uint64_t now_ms, uint32_t per_day,
    uint32_t min_interval_ms, struct pg_limits_answer *a)
{
	(void)pg, (void)who, (void)tool, (void)key_hex, (void)now_ms;
	(void)per_day, (void)min_interval_ms, (void)a;
	return false;
}

bool
pg_journal_peek(struct pg_state *pg, const char *key,
    struct pg_journal_row *row, bool *found)
{
	(void)pg, (void)key, (void)row, (void)found;
	return false;
}

bool
pg_journal_take(struct pg_state *pg, const char *key, const char *tool,
    uint64_t call_id, uint64_t now_ms, uint64_t window_ms, bool *taken)
{
	(void)pg, (void)key, (void)tool, (void)call_id, (void)now_ms;
	(void)window_ms, (void)taken;
	return false;
}

bool
pg_journal_end(struct pg_state *pg, const char *key, const char *state,
    uint64_t now_ms, const char *summary)
{
	(void)pg, (void)key, (void)state, (void)now_ms, (void)summary;
	return false;
}

bool
pg_journal_list(struct pg_state *pg,
    void (*each)(void *arg, const struct pg_journal_row *row), void *arg)
{
	(void)pg, (void)each, (void)arg;
	return false;
}

bool
pg_journal_resolve(struct pg_state *pg, const char *key, const char *state,
    uint64_t now_ms, const char *summary, bool *found, char *was)
{
	(void)pg, (void)key, (void)state, (void)now_ms, (void)summary;
	(void)found, (void)was;
	return false;
}

bool
pg_day_spent(struct pg_state *pg, uint64_t day,
    void (*each)(void *arg, const char *who, const char *tool,
    uint64_t spent), void *arg)
{
	(void)pg, (void)day, (void)each, (void)arg;
	return false;
}

#endif
