/*
 * libpq, loaded at run time (docs/design.md section 9.2): sp is not
 * linked with -lpq, so a policy without "state" never maps libpq nor
 * what it pulls in (libssl, libcrypto, libgssapi, libldap, ...), which
 * cost every sp mcp 10 ms of cold start and 5 MB of broker RSS.
 *
 * Who calls it: state/pg.c only, at the top of pg_state_open() and
 * pg_state_init(), that is when a policy's "state" is used -- the broker
 * before its confinement (it connects there too: broker/broker.c), and
 * sp check, sp journal and sp state init.  Nothing else may name a PQ*
 * function: without -lpq such a reference does not link.
 *
 * libpq.so.5 is opened once per process, by soname, RTLD_NOW (every
 * symbol bound at once, so nothing is looked up or mapped later, under
 * the broker's filter) and RTLD_LOCAL, and never closed; the answer,
 * table or failure, is kept for the process's life.  Not thread-safe:
 * every caller is single-threaded.
 *
 * Types and constants still come from <libpq-fe.h> (libpq-dev at build
 * time): each pointer of the table has the header's own prototype.
 * Include config.h first, as every .c does: without SP_HAVE_LIBPQ this
 * header declares nothing.
 */
#ifndef SP_STATE_PQ_LOAD_H
#define SP_STATE_PQ_LOAD_H

#include <stddef.h>

#ifdef SP_HAVE_LIBPQ

#include <libpq-fe.h>

#define PQ_LOAD_SONAME	"libpq.so.5"
#define PQ_LOAD_PACKAGE	"libpq5"	/* Debian's, named when it is not */

/* Every libpq function state/pg.c calls. */
#define PQ_LOAD_FUNCTIONS(X) \
	X(PQclear) X(PQconnectdbParams) X(PQconninfo) X(PQconninfoFree) \
	X(PQconninfoParse) X(PQconsumeInput) X(PQerrorMessage) \
	X(PQescapeIdentifier) X(PQexec) X(PQfinish) X(PQflush) \
	X(PQfreemem) X(PQgetResult) X(PQgetisnull) X(PQgetvalue) \
	X(PQhost) X(PQisBusy) X(PQnfields) X(PQntuples) X(PQresetPoll) \
	X(PQresetStart) X(PQresultErrorField) X(PQresultErrorMessage) \
	X(PQresultStatus) X(PQsendQueryParams) X(PQsetNoticeProcessor) \
	X(PQsetnonblocking) X(PQsocket) X(PQstatus) X(PQuser)

/* One pointer per function, named as it is, typed by the header
 * (__typeof__ evaluates nothing: no reference to the symbol). */
struct pq_table {
#define PQ_LOAD_MEMBER(f) __typeof__(&f) f;
	PQ_LOAD_FUNCTIONS(PQ_LOAD_MEMBER)
#undef PQ_LOAD_MEMBER
};

/*
 * The table, libpq.so.5 loaded at the first call; NULL when it cannot
 * be (not installed, or a symbol missing), with why: one line that names
 * the package to install.  Later calls give the same answer, loading
 * nothing.
 */
const struct pq_table *pq_load(char *why, size_t why_size);

#endif	/* SP_HAVE_LIBPQ */

#endif
