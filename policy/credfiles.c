/*
 * policy_check_credential_files(): the loader only stats secret files; the
 * executor reads them later, before its sandbox closes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/load.h"

#define CREDFILE_MESSAGE_MAX 512

static void
credfile_report(const struct policy *p, const struct policy_secret_file *f,
    const char *display_name, struct policy_diags *diags, bool loose,
    const char *what)
{
	char message[CREDFILE_MESSAGE_MAX];
	enum policy_diag_severity sev = POLICY_DIAG_ERROR;

	if (loose && !p->strict_credentials)
		sev = POLICY_DIAG_WARNING;
	snprintf(message, sizeof(message), "secret file %s %s%s", f->path, what,
	    loose && p->strict_credentials ? " (strict_credentials)" : "");
	policy_diags_add(diags, sev, display_name, f->line, f->col, message);
}

static void
credfile_check(const struct policy *p, const struct policy_secret_file *f,
    const char *display_name, struct policy_diags *diags)
{
	char what[128];
	struct stat st;

	if (stat(f->path, &st) == -1) {
		snprintf(what, sizeof(what), "cannot be used: %s",
		    strerror(errno));
		credfile_report(p, f, display_name, diags, false, what);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		credfile_report(p, f, display_name, diags, false,
		    "is not a regular file");
		return;
	}
	if (st.st_uid != geteuid()) {
		snprintf(what, sizeof(what), "is owned by uid %lu, not by the "
		    "running user (uid %lu)", (unsigned long)st.st_uid,
		    (unsigned long)geteuid());
		credfile_report(p, f, display_name, diags, true, what);
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(what, sizeof(what), "is open to group or others (mode "
		    "%04o); chmod 600 it", (unsigned)(st.st_mode & 07777));
		credfile_report(p, f, display_name, diags, true, what);
	}
}

bool
policy_check_credential_files(const struct policy *policy,
    const char *display_name, struct policy_diags *diags)
{
	size_t before = diags->errors, i;

	for (i = 0; i < policy->secret_file_count; i++)
		credfile_check(policy, &policy->secret_files[i], display_name,
		    diags);
	return diags->errors == before;
}

bool
policy_check_state_dir(const struct policy *policy, const char *display_name,
    struct policy_diags *diags)
{
	char message[CREDFILE_MESSAGE_MAX];
	struct stat st;
	const char *why = NULL;

	if (policy->state_dir == NULL)
		return true;
	if (stat(policy->state_dir, &st) == -1)
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	else if (access(policy->state_dir, W_OK | X_OK) == -1)
		why = "the running user cannot create files in it";
	if (why == NULL)
		return true;
	snprintf(message, sizeof(message), "state_dir %s: %s",
	    policy->state_dir, why);
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name,
	    policy->state_dir_line, policy->state_dir_col, message);
	return false;
}
