/*
 * Start-up shared by the frontend and executor roles (child/child.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child/child.h"
#include "common/exit.h"
#include "common/log.h"
#include "policy/authz.h"
#include "policy/catalog.h"
#include "policy/load.h"

/* The frontend's user when root (the executor's is server.run_as). */
#define CHILD_FRONTEND_USER "nobody"
#define CHILD_COUNT_ROLES 2

const char *
child_args(int argc, char **argv, enum record_role role)
{
	enum log_level level = LOG_LEVEL_INFO;
	bool ok;

	/* Started by fexecve, a process is named after the fd number ("6")
	 * by older kernels; ps and the kernel's seccomp records then could
	 * not tell the two children apart. */
	(void)prctl(PR_SET_NAME, record_role_program(role));
	ok = argc == 3 && log_level_by_name(argv[1], &level);
	log_init(record_role_name(role), level);
	if (!ok)
		fatal(SP_EXIT_USAGE, "%s is started by sp mcp, not by hand "
		    "(sp(1))", record_role_program(role));
	return argv[2];
}

/* pread, so neither child moves the offset the other reads from. */
static char *
child_read_policy(size_t *len)
{
	struct stat st;
	char *bytes;
	size_t off = 0;
	ssize_t n;

	if (fstat(CHILD_FD_POLICY, &st) == -1 || st.st_size < 0 ||
	    (uint64_t)st.st_size > POLICY_TEXT_MAX) {
		log_error("fstat policy fd: %s", strerror(errno));
		return NULL;
	}
	if ((bytes = malloc((size_t)st.st_size + 1)) == NULL)
		return NULL;
	while (off < (size_t)st.st_size) {
		n = pread(CHILD_FD_POLICY, bytes + off, (size_t)st.st_size - off,
		    (off_t)off);
		if (n <= 0) {
			log_error("pread policy fd: %s",
			    n == 0 ? "short" : strerror(errno));
			free(bytes);
			return NULL;
		}
		off += (size_t)n;
	}
	bytes[off] = '\0';
	*len = off;
	return bytes;
}

void
child_context_load(struct child_context *ctx, enum record_role role,
    const char *profile_name)
{
	struct policy_diags diags = { 0 };
	char *bytes;
	size_t len;

	memset(ctx, 0, sizeof(*ctx));
	ctx->role = role;
	if ((bytes = child_read_policy(&len)) == NULL)
		exit(SP_EXIT_INTERNAL);
	(void)close(CHILD_FD_POLICY);
	ctx->policy = policy_load("policy", bytes, len, &diags);
	policy_diags_free(&diags);
	free(bytes);
	if (ctx->policy == NULL)
		fatal(SP_EXIT_INTERNAL, "the policy handed over does not load");
	if (profile_name[0] != '\0' && (ctx->profile =
	    policy_profile_by_name(ctx->policy, profile_name)) == NULL)
		fatal(SP_EXIT_INTERNAL, "no profile named '%s'", profile_name);
	if (!policy_catalog_fingerprint(ctx->policy, ctx->fingerprint))
		fatal(SP_EXIT_INTERNAL, "cannot compute the catalog fingerprint");
	child_record_limits(ctx->policy, &ctx->limits);
}

/*
 * The user to become when root: nobody for the frontend, run_as for the
 * executor (NULL without one: the broker refuses to start then).
 */
static const char *
child_drop_user(enum record_role role, const struct policy *policy)
{
	if (role == RECORD_ROLE_EXECUTOR)
		return policy->run_as;
	return CHILD_FRONTEND_USER;
}

int
child_drop_users_check(const struct policy *policy, char *why,
    size_t why_size)
{
	static const enum record_role roles[CHILD_COUNT_ROLES] = {
		RECORD_ROLE_FRONTEND, RECORD_ROLE_EXECUTOR,
	};
	const char *user;
	uid_t uid[CHILD_COUNT_ROLES];
	gid_t gid;
	size_t i;

	why[0] = '\0';
	if (geteuid() != 0) {
		if (policy->run_as != NULL)
			snprintf(why, why_size, "server.run_as '%s' is not "
			    "used: sp mcp was not started as root, so every "
			    "process keeps uid %u", policy->run_as,
			    (unsigned)geteuid());
		return SP_EXIT_OK;
	}
	if (policy->run_as == NULL) {
		snprintf(why, why_size, "started as root, sp mcp drops the "
		    "frontend to '%s' and the executor to server.run_as, which "
		    "the policy does not set: set server.run_as to a user of "
		    "the executor's own (the two children must not share a "
		    "uid)", CHILD_FRONTEND_USER);
		return SP_EXIT_CONFIG;
	}
	for (i = 0; i < CHILD_COUNT_ROLES; i++) {
		user = child_drop_user(roles[i], policy);
		if (!sandbox_user_ids(user, &uid[i], &gid)) {
			snprintf(why, why_size, "the %s cannot drop to user "
			    "'%s': %s", record_role_name(roles[i]), user,
			    errno == ENOENT ? "no such user" :
			    errno == EINVAL ? "its uid or gid is 0" :
			    strerror(errno));
			return SP_EXIT_SANDBOX;
		}
	}
	if (uid[0] == uid[1]) {
		snprintf(why, why_size, "server.run_as '%s' has uid %u, the "
		    "frontend's ('%s'): set server.run_as to a user of the "
		    "executor's own (the two children must not share a uid)",
		    policy->run_as, (unsigned)uid[1], CHILD_FRONTEND_USER);
		return SP_EXIT_CONFIG;
	}
	return SP_EXIT_OK;
}

static void
child_drop_target(const struct child_context *ctx, struct sandbox_spec *spec)
{
	const char *user = child_drop_user(ctx->role, ctx->policy);

	if (geteuid() != 0)
		return;
	if (user == NULL)	/* the broker checked: cannot happen */
		fatal(SP_EXIT_SANDBOX, "no user to drop to: server.run_as "
		    "is not set");
	if (!sandbox_user_ids(user, &spec->uid, &spec->gid))
		fatal(SP_EXIT_SANDBOX, "cannot drop to user '%s': %s", user,
		    strerror(errno));
	if (ctx->role == RECORD_ROLE_FRONTEND)
		spec->chroot_dir = CHILD_EMPTY_DIR;
}

void
child_confine(const struct child_context *ctx)
{
	struct sandbox_spec spec;
	struct sandbox_report report;

	memset(&spec, 0, sizeof(spec));
	spec.role = ctx->role;
	spec.mode = ctx->policy->sandbox == POLICY_SANDBOX_BEST_EFFORT ?
	    SANDBOX_BEST_EFFORT : SANDBOX_REQUIRED;
	spec.parent = getppid();
	child_drop_target(ctx, &spec);
	if (!sandbox_confine(&spec, &report))
		fatal(SP_EXIT_SANDBOX, "sandbox could not be installed: %s",
		    report.text);
	if (report.n_missing > 0)
		log_warn("sandbox best-effort: running without %s", report.text);
}

void
child_context_free(struct child_context *ctx)
{
	policy_free(ctx->policy);
	memset(ctx, 0, sizeof(*ctx));
}

void
child_record_limits(const struct policy *policy, struct record_limits *limits)
{
	size_t i, j, max_args = 0, max_len = 0;
	const struct policy_tool *t;

	for (i = 0; i < policy->tool_count; i++) {
		t = &policy->tools[i];
		if (t->param_count > max_args)
			max_args = t->param_count;
		for (j = 0; j < t->param_count; j++)
			if (t->params[j].type == PARAM_STRING &&
			    t->params[j].max_length > max_len)
				max_len = t->params[j].max_length;
	}
	record_limits_default(limits);
	if (max_args < limits->max_args)
		limits->max_args = max_args;
	/* A code point is at most 4 bytes of UTF-8. */
	if (max_len < limits->max_arg_bytes / 4)
		limits->max_arg_bytes = max_len * 4;
	if (policy->limits.result_max_chars < limits->max_payload_bytes / 4)
		limits->max_payload_bytes = policy->limits.result_max_chars * 4;
}
