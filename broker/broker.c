/*
 * The broker of sp mcp (docs/design.md
 * section 1).  In order: fd 1 saved for the frontend and pointed at
 * stderr; the policy read once and validated; the profile fixed; the
 * audit log opened; both children started with the same policy bytes;
 * session-start held, to be written when the frontend says the session
 * is in use (docs/design.md section 6); the broker confined; then
 * supervision (the only reader of intents) until the session ends.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/approvals.h"
#include "audit/audit_journal.h"
#include "audit/audit_log.h"
#include "child/child.h"
#include "broker/children.h"
#include "broker/broker.h"
#include "common/exit.h"
#include "broker/peer.h"
#include "state/journal.h"
#include "state/limits.h"
#include "state/pg.h"
#include "state/state_dir.h"
#include "broker/start_refusal.h"
#include "broker/supervise.h"
#include "child/test_hook.h"
#include "common/log.h"
#include "common/sandbox.h"
#include "policy/catalog.h"
#include "policy/load.h"
#include "policy/source.h"
#include "policy/startcheck.h"

/* Used when no policy file exists at all: a gateway with no tools. */
static const char broker_default_policy[] =
    "{ \"sallyport\": 1, \"profiles\": { \"default\": { \"scopes\": [] } } }";

#define BROKER_SESSION_BYTES 8

/* Everything the session holds; released by broker_session_free(). */
struct broker_session {
	char *bytes;			/* policy text, owned */
	size_t len;
	struct policy *policy;
	const struct policy_profile *profile;
	const char *profile_from;	/* how the profile was chosen */
	char peer[64];			/* "uid 1001 gid 1001", or none */
	bool has_peer_ids;		/* peer_uid and peer_gid are known */
	uid_t peer_uid;
	gid_t peer_gid;
	pid_t peer_pid;			/* 0: not known */
	uint8_t fingerprint[HASH_SHA256_LEN];
	struct record_limits limits;
	char id[BROKER_SESSION_BYTES * 2 + 1];
	struct audit_log *log;
	struct state_file *state;	/* state_dir's limits file, or NULL */
	struct state_file *journal_file;	/* its journal, or NULL */
	struct pg_state *pg;		/* the fleet's state, or NULL */
	char who[80];			/* whose per_day counts: state/limits.h */
	struct approvals *approvals;	/* via operator's socket, or NULL */
	struct audit_journal *journal;	/* NULL: audit.journal false */
	struct event_base *base;
	struct supervisor *sv;
	struct child kids[CHILD_COUNT];
	struct child_programs programs;	/* opened first of all */
	char refusal[POLICY_WHY_MAX * 2];	/* why it cannot start, for the
						 * client (broker/start_refusal.h) */
};

/* The policy text by the lookup order of docs/design.md section 3. */
static bool
broker_read_policy(const char *option, struct broker_session *s)
{
	const char *path = policy_config_path(option);
	char why[256];

	if (strcmp(path, POLICY_SYSTEM_PATH) == 0 &&
	    access(path, F_OK) == -1 && errno == ENOENT) {
		log_warn("no policy at %s: using the embedded default, which "
		    "declares no tools", path);
		s->len = sizeof(broker_default_policy) - 1;
		s->bytes = strdup(broker_default_policy);
		return s->bytes != NULL;
	}
	if (!policy_read_file(path, &s->bytes, &s->len, why, sizeof(why))) {
		log_error("%s: %s", path, why);
		(void)snprintf(s->refusal, sizeof(s->refusal), "its policy "
		    "file cannot be read");
		return false;
	}
	return true;
}

/* Prints every diagnostic; true when none is an error. */
static bool
broker_report(struct policy_diags *diags)
{
	size_t i;
	bool ok = diags->errors == 0;

	for (i = 0; i < diags->count; i++)
		if (diags->items[i].severity == POLICY_DIAG_ERROR)
			log_error("%s", diags->items[i].text);
		else
			log_warn("%s", diags->items[i].text);
	return ok;
}

/* The loader's errors, for the client: how many, and where the first is. */
static void
broker_refusal_from_diags(const struct policy_diags *diags, struct broker_session *s)
{
	size_t i;

	for (i = 0; i < diags->count; i++)
		if (diags->items[i].severity == POLICY_DIAG_ERROR)
			break;
	(void)snprintf(s->refusal, sizeof(s->refusal), "its policy has %zu "
	    "error%s, the first at line %u, column %u (sp check lists them)",
	    diags->errors, diags->errors == 1 ? "" : "s",
	    i < diags->count ? diags->items[i].line : 1,
	    i < diags->count ? diags->items[i].col : 1);
}

/*
 * Read, validate, then the start-up checks sp check runs too
 * (policy/startcheck.h, and state_dir's owners: state/state_dir.h):
 * else exit 78.
 */
static bool
broker_load_policy(const char *option, struct broker_session *s)
{
	const char *name = policy_config_path(option);
	struct policy_diags diags = { 0 };
	bool ok;

	if (!broker_read_policy(option, s))
		return false;
	s->policy = policy_load(name, s->bytes, s->len, &diags);
	if (s->policy == NULL)
		broker_refusal_from_diags(&diags, s);
	else {
		(void)policy_check_start(s->policy, name, &diags, s->refusal,
		    sizeof(s->refusal));
		(void)state_dir_check_start(s->policy, name, &diags,
		    s->refusal, sizeof(s->refusal));
	}
	ok = broker_report(&diags) && s->policy != NULL;
	policy_diags_free(&diags);
	if (!ok)
		return false;
	child_record_limits(s->policy, &s->limits);
	return policy_catalog_fingerprint(s->policy, s->fingerprint);
}

static bool
broker_session_id(struct broker_session *s)
{
	uint8_t raw[BROKER_SESSION_BYTES];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		log_error("getrandom: %s", strerror(errno));
		return false;
	}
	hash_hex(raw, sizeof(raw), s->id);
	return true;
}

static bool
broker_open_audit(struct broker_session *s)
{
	uint8_t key[AUDIT_KEY_MAX];
	size_t key_len = 0;

	if (s->policy->audit_path == NULL) {
		log_warn("the policy names no audit path: nothing is audited");
		return true;
	}
	if (s->policy->audit_key_file != NULL &&
	    !audit_key_read(s->policy->audit_key_file, key, &key_len))
		return false;
	s->log = audit_log_open(s->policy->audit_path,
	    key_len > 0 ? key : NULL, key_len, s->id);
	explicit_bzero(key, sizeof(key));
	if (s->log == NULL)
		return false;
	/* Opened now, while the broker may still make a socket
	 * (audit_journal.h). */
	s->journal = audit_journal_open(s->policy->audit_journal,
	    s->policy->audit_path, s->profile != NULL ? s->profile->name : NULL,
	    s->id);
	if (s->journal == NULL && s->policy->audit_journal != POLICY_JOURNAL_OFF)
		return false;
	audit_journal_attach(s->journal, s->log);
	return true;
}

/*
 * The two digests a reviewer compares, each under its own name:
 * policy_sha256 is what sha256sum prints for the policy file (the bytes
 * read, the embedded default's when there is none), catalog_sha256 the
 * catalog fingerprint of docs/design.md section 4 (what "sp catalog"
 * prints and a pin holds).
 */
static bool
broker_audit_add_digests(cJSON *m, const struct broker_session *s)
{
	char hex[HASH_SHA256_HEX_LEN + 1];
	uint8_t d[HASH_SHA256_LEN];

	hash_sha256(s->bytes, s->len, d);
	hash_hex(d, sizeof(d), hex);
	if (cJSON_AddStringToObject(m, "policy_sha256", hex) == NULL)
		return false;
	hash_hex(s->fingerprint, sizeof(s->fingerprint), hex);
	return cJSON_AddStringToObject(m, "catalog_sha256", hex) != NULL;
}

/* Who is on the other end of stdin, as numbers a query can compare. */
static bool
broker_audit_add_peer(cJSON *m, const struct broker_session *s)
{
	if (cJSON_AddStringToObject(m, "peer", s->peer) == NULL)
		return false;
	if (s->has_peer_ids &&
	    (cJSON_AddNumberToObject(m, "peer_uid", s->peer_uid) == NULL ||
	    cJSON_AddNumberToObject(m, "peer_gid", s->peer_gid) == NULL))
		return false;
	return s->peer_pid <= 0 ||
	    cJSON_AddNumberToObject(m, "peer_pid", s->peer_pid) != NULL;
}

static bool
broker_audit_start(struct broker_session *s)
{
	cJSON *m;
	bool ok;

	if (s->log == NULL)
		return true;
	if ((m = cJSON_CreateObject()) == NULL)
		return false;
	ok = cJSON_AddStringToObject(m, "profile", s->profile != NULL ?
	    s->profile->name : "") != NULL &&
	    cJSON_AddStringToObject(m, "profile_from", s->profile_from) !=
	    NULL && broker_audit_add_peer(m, s) && broker_audit_add_digests(m, s) &&
	    cJSON_AddStringToObject(m, "version", PACKAGE_VERSION) != NULL &&
	    audit_log_hold_start(s->log, m);
	cJSON_Delete(m);
	return ok;
}

static void
broker_audit_end(struct broker_session *s, const struct supervise_summary *sum)
{
	cJSON *m;

	if (s->log == NULL)
		return;
	/*
	 * A session that never said it was in use (it answered nothing but
	 * server/discover and ping: the v2 SDK's probe) and ended cleanly
	 * leaves nothing; one that ended otherwise, or whose records could
	 * not all be written, is recorded, start and end.
	 */
	if (audit_log_start_held(s->log) && sum->status == SP_EXIT_OK &&
	    sum->audit_failures == 0) {
		/* in the anchor's place, so every session says how it ended */
		log_info("audit: session %s ended unused (no request but "
		    "server/discover or ping): nothing recorded", s->id);
		return;
	}
	if (!audit_log_begin(s->log))
		log_error("session-start could not be audited");
	if ((m = cJSON_CreateObject()) != NULL) {
		cJSON_AddStringToObject(m, "why", sum->why);
		cJSON_AddNumberToObject(m, "status", sum->status);
		cJSON_AddNumberToObject(m, "rejections", (double)sum->rejections);
		cJSON_AddNumberToObject(m, "violations", (double)sum->violations);
		cJSON_AddNumberToObject(m, "intents", (double)sum->intents);
		cJSON_AddNumberToObject(m, "executions", (double)sum->executions);
		cJSON_AddNumberToObject(m, "cancellations",
		    (double)sum->cancellations);
		cJSON_AddNumberToObject(m, "audit_failures",
		    (double)sum->audit_failures);
		cJSON_AddNumberToObject(m, "audit_dropped",
		    (double)sum->audit_dropped);
		if (!audit_log_append(s->log, "session-end", m, true))
			log_error("session-end could not be audited");
	}
	cJSON_Delete(m);
	/* The anchor kept outside the file (docs/design.md section 6). */
	log_info("audit: session %s ended, last hash %s", s->id,
	    audit_log_last_hash(s->log));
}

/*
 * state_dir's file, opened before confinement as the audit log is; the
 * per_day counts are kept per peer uid, per profile when it is unknown
 * (docs/design.md section 9).
 */
static bool
broker_open_state(struct broker_session *s)
{
	if (s->has_peer_ids)
		(void)snprintf(s->who, sizeof(s->who), "uid:%u",
		    (unsigned)s->peer_uid);
	else
		(void)snprintf(s->who, sizeof(s->who), "profile:%s",
		    s->profile != NULL ? s->profile->name : "");
	if (s->policy->state_dir == NULL)
		return true;
	return (s->state = state_file_open(s->policy->state_dir,
	    LIMITS_STATE_FILE)) != NULL &&
	    (s->journal_file = state_file_open_beside(s->state,
	    JOURNAL_STATE_FILE)) != NULL;
}

/*
 * The approval socket, made before confinement (broker/approvals.h).  The
 * requester is the peer on stdin, else whoever runs sp mcp.
 */
static bool
broker_open_approvals(struct broker_session *s)
{
	if (!approvals_needed(s->policy))
		return true;
	return (s->approvals = approvals_open(s->policy, s->id,
	    s->has_peer_ids ? s->peer_uid : getuid(),
	    s->policy->limits.max_inflight)) != NULL;
}

/* The broker's own filter: no exec, no open, no new sockets. */
static bool
broker_confine(struct broker_session *s)
{
	pid_t pids[CHILD_COUNT];
	const char *missing = NULL;
	int i;

	for (i = 0; i < CHILD_COUNT; i++)
		pids[i] = s->kids[i].pid;
	/* glibc's gmtime_r() opens the zone file at its first call, which
	 * a limit's "resets at" may be, in a session with no audit log to
	 * have made it (audit_log.c): made now, while open is allowed. */
	tzset();
	if (!sandbox_no_new_privs())
		missing = "no-new-privs";
	else if (!sandbox_load_broker_filter(pids, CHILD_COUNT,
	    s->log != NULL ? audit_log_dir_fd(s->log) : -1,
	    s->state != NULL ? state_file_dir_fd(s->state) : -1,
	    approvals_dir_fd(s->approvals), approvals_listen_fd(s->approvals),
	    s->pg != NULL))
		missing = "seccomp filter";
	if (missing == NULL)
		return true;
	if (s->policy->sandbox != POLICY_SANDBOX_BEST_EFFORT) {
		log_error("sandbox could not be installed: %s: %s", missing,
		    strerror(errno));
		return false;
	}
	log_warn("sandbox best-effort: broker running without %s: %s",
	    missing, strerror(errno));
	return true;
}

static void
broker_session_free(struct broker_session *s)
{
	supervise_free(s->sv);
	approvals_free(s->approvals);	/* its events are on base */
	state_file_free(s->journal_file);
	state_file_free(s->state);
	pg_state_free(s->pg);
	if (s->base != NULL)
		event_base_free(s->base);
	if (s->log != NULL && !audit_log_close(s->log))
		log_error("the audit log could not be synced");
	audit_journal_free(s->journal);
	policy_free(s->policy);
	free(s->bytes);
	children_programs_close(&s->programs);	/* set by broker_prepare() */
}

/* Everything before the children: exit statuses 78 and 70. */
/* As root the children need users of their own (docs/design.md 1.3). */
static int
broker_check_users(struct broker_session *s)
{
	char why[POLICY_WHY_MAX * 2];
	int status;

	if ((status = child_drop_users_check(s->policy, why, sizeof(why))) ==
	    SP_EXIT_OK) {
		if (why[0] != '\0')
			log_warn("%s", why);
		return SP_EXIT_OK;
	}
	log_error("%s", why);
	if (s->policy->run_as == NULL)
		(void)snprintf(s->refusal, sizeof(s->refusal), "it runs as "
		    "root and its policy sets no server.run_as for the "
		    "executor");
	else
		(void)snprintf(s->refusal, sizeof(s->refusal), "the user its "
		    "policy's server.run_as names (line %u) cannot be used",
		    s->policy->run_as_line);
	return status;
}

/*
 * Says whom no profile matched, with the ids peer_pick_profile() compared,
 * so an operator sees which match entry is missing.
 */
static void
broker_warn_no_profile(const struct broker_session *s)
{
	if (s->has_peer_ids)
		log_warn("no profile matches this client (socket peer uid %u "
		    "gid %u): no tools", (unsigned)s->peer_uid,
		    (unsigned)s->peer_gid);
	else if (strcmp(s->profile_from, "unknown peer") == 0)
		log_warn("no profile matches this client (a socket peer "
		    "without credentials): no tools");
	else
		log_warn("no profile matches this client (the running user, "
		    "uid %u gid %u): no tools", (unsigned)getuid(),
		    (unsigned)getgid());
}

/* The client on fd 0: its profile, and who it is when the kernel says. */
static int
broker_identify_client(const struct broker_options *o, struct broker_session *s)
{
	uid_t uid;
	gid_t gid;

	s->profile = peer_pick_profile(s->policy, o->profile, STDIN_FILENO,
	    &s->profile_from);
	if (o->profile != NULL && s->profile == NULL) {
		/* A refusal was logged by peer_pick_profile, with why. */
		if (strcmp(s->profile_from, "unknown") == 0)
			log_error("no profile named '%s' in the policy",
			    o->profile);
		(void)snprintf(s->refusal, sizeof(s->refusal), "the profile "
		    "its command line names cannot be used");
		return SP_EXIT_USAGE;
	}
	if (peer_credentials(STDIN_FILENO, &uid, &gid, &s->peer_pid)) {
		(void)snprintf(s->peer, sizeof(s->peer), "uid %u gid %u",
		    (unsigned)uid, (unsigned)gid);
		s->has_peer_ids = true;
		s->peer_uid = uid;
		s->peer_gid = gid;
	} else
		(void)snprintf(s->peer, sizeof(s->peer), "no peer credentials");
	if (s->profile == NULL)
		broker_warn_no_profile(s);
	return SP_EXIT_OK;
}

/* What the broker opens before its confinement, each refusal said. */
/*
 * The fleet's shared state (state/pg.h), connected before confinement.
 * A policy or database that cannot work is a refusal (78); a database
 * that is down now is not: the session starts, and refuses the calls
 * the shared state governs until it is back.
 */
static int
broker_open_shared_state(struct broker_session *s)
{
	char why[PG_WHY_MAX];
	enum pg_open how;

	if (s->policy->state_postgres == NULL)
		return SP_EXIT_OK;
	s->pg = pg_state_open(s->policy, &how, why, sizeof(why));
	if (how == PG_OPEN_DOWN)
		log_warn("%s; calls its limits or journal govern are refused "
		    "until it answers", why);
	if (how != PG_OPEN_REFUSED)
		return s->pg != NULL ? SP_EXIT_OK : SP_EXIT_INTERNAL;
	log_error("state at line %u: %s", s->policy->state_line, why);
	(void)snprintf(s->refusal, sizeof(s->refusal), "the shared state "
	    "named at line %u of its policy cannot be used (the server's log "
	    "says why)", s->policy->state_line);
	return SP_EXIT_CONFIG;
}

static int
broker_open_files(struct broker_session *s)
{
	const char *what = NULL;

	if (!broker_session_id(s) || !broker_open_audit(s))
		what = "its audit log cannot be opened";
	else if (!broker_open_state(s))
		what = "its state_dir cannot be opened";
	else if (!broker_open_approvals(s))
		what = "its operator approval socket cannot be made";
	if (what == NULL)
		return broker_open_shared_state(s);
	(void)snprintf(s->refusal, sizeof(s->refusal), "%s", what);
	return SP_EXIT_INTERNAL;
}

static int
broker_prepare(const struct broker_options *o, struct broker_session *s)
{
	struct supervise_scope scope;
	int status;

	if (!children_programs_open(&s->programs)) {
		(void)snprintf(s->refusal, sizeof(s->refusal), "its programs "
		    "sp-frontend and sp-executor cannot be found");
		return SP_EXIT_INTERNAL;
	}
	if (!broker_load_policy(o->config, s))
		return SP_EXIT_CONFIG;
	if ((status = broker_check_users(s)) != SP_EXIT_OK ||
	    (status = broker_identify_client(o, s)) != SP_EXIT_OK ||
	    (status = broker_open_files(s)) != SP_EXIT_OK)
		return status;
	limits_say_scope(s->policy);
	scope.limits = s->state;
	scope.journal = s->journal_file;
	scope.pg = s->pg;
	scope.who = s->who;
	scope.profile = s->profile != NULL ? s->profile->name : "";
	scope.approvals = s->approvals;
	if ((s->base = event_base_new()) == NULL ||
	    (s->sv = supervise_new(s->base, s->log, s->policy,
	    &s->limits, s->fingerprint,
	    s->policy->limits.call_timeout_ms, &scope)) == NULL)
		return SP_EXIT_INTERNAL;
	return SP_EXIT_OK;
}

static int
broker_run(struct broker_session *s, int client_out)
{
	struct supervise_summary sum;
	bool ok;

	ok = children_start(&s->programs, s->bytes, s->len,
	    s->profile != NULL ? s->profile->name : "", client_out, s->kids);
	children_programs_close(&s->programs);
	if (!ok)
		return SP_EXIT_INTERNAL;
	/*
	 * session-start is held, not written: the frontend's OPENED event
	 * (its first request other than server/discover or ping) or the
	 * session's first record writes it, so its fdatasync() stays off the
	 * cold start and a probe leaves nothing.  It still precedes any
	 * action: the audit log writes it before any other record.
	 */
	if (!broker_audit_start(s)) {
		log_error("session-start could not be prepared: ending the "
		    "session");
		children_kill(s->kids);
		return SP_EXIT_INTERNAL;
	}
	if (!broker_confine(s)) {
		children_kill(s->kids);
		return SP_EXIT_SANDBOX;
	}
	test_hook_run("broker");
	if (!supervise_run(s->sv, s->kids, &sum))
		return SP_EXIT_INTERNAL;
	broker_audit_end(s, &sum);
	return sum.status;
}

int
broker_set_stdout_aside(void)
{
	int client_out;

	/* Nothing is written to fd 2 before this: a terminal is left
	 * alone, since a person, not a parser, reads it. */
	if (!log_keep_off_stdout())
		_exit(SP_EXIT_INTERNAL);	/* no silent place to say so */
	/* docs/design.md section 4: files created under umask 077, whatever the
	 * caller's; the children inherit it across exec. */
	(void)umask(077);
	/* Before anything else: fd 1 is the frontend's alone. */
	if ((client_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    !sandbox_stdout_to_stderr())
		fatal(SP_EXIT_INTERNAL, "cannot set fd 1 aside: %s",
		    strerror(errno));
	return client_out;
}

int
broker_main(const struct broker_options *o, int client_out)
{
	struct broker_session s;
	int status;

	memset(&s, 0, sizeof(s));
	if ((status = broker_prepare(o, &s)) == SP_EXIT_OK)
		status = broker_run(&s, client_out);
	else {
		if (s.refusal[0] != '\0')
			start_refusal_answer(STDIN_FILENO, client_out,
			    s.refusal);
		(void)close(client_out);
	}
	broker_session_free(&s);
	test_hook_heap_report("broker");
	return status;
}
