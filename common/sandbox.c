/*
 * The fixed confinement order of docs/design.md invariant 5, and the small
 * process-attribute steps it is made of.  The filter tables live in
 * sandbox_filter.c, the uid/chroot steps in privdrop.c.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/sandbox.h"

bool
sandbox_stdout_to_stderr(void)
{
	return dup2(STDERR_FILENO, STDOUT_FILENO) == STDOUT_FILENO;
}

bool
sandbox_parent_death_kill(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		return false;
	/* The parent may have gone before the request was made. */
	if (getppid() != parent) {
		errno = ESRCH;
		return false;
	}
	return true;
}

/* The kernel said yes; a read-back that disagrees is a failure too. */
static bool
prctl_set_and_check(int set, int get, unsigned long value)
{
	int got;

	if (prctl(set, value, 0, 0, 0) == -1)
		return false;
	if ((got = prctl(get, 0, 0, 0, 0)) == -1)
		return false;
	if ((unsigned long)got != value) {
		errno = EPERM;
		return false;
	}
	return true;
}

bool
sandbox_set_nondumpable(void)
{
	return prctl_set_and_check(PR_SET_DUMPABLE, PR_GET_DUMPABLE, 0);
}

bool
sandbox_no_new_privs(void)
{
	return prctl_set_and_check(PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS,
	    1);
}

/* Appends "step: reason" for the errno of a failed step. */
static void
report_missing(struct sandbox_report *report, const char *step, int err)
{
	size_t used = strlen(report->text);
	int n;

	n = snprintf(report->text + used, sizeof(report->text) - used,
	    "%s%s: %s", report->n_missing > 0 ? "; " : "", step,
	    strerror(err));
	/* A cut item is still reported; the count stays exact. */
	if (n < 0)
		report->text[used] = '\0';
	report->n_missing++;
}

/*
 * One step's outcome.  Returns whether confinement goes on: a failure
 * stops it only in SANDBOX_REQUIRED mode.
 */
static bool
step_done(bool ok, const char *step, const struct sandbox_spec *spec,
    struct sandbox_report *report)
{
	if (ok)
		return true;
	report_missing(report, step, errno);
	return spec->mode == SANDBOX_BEST_EFFORT;
}

/* chroot and uid drop: only a process that is root has anything to drop. */
static bool
confine_identity(const struct sandbox_spec *spec,
    struct sandbox_report *report)
{
	if (geteuid() != 0)
		return true;
	if (spec->chroot_dir != NULL &&
	    !step_done(sandbox_chroot(spec->chroot_dir), "chroot", spec,
	    report))
		return false;
	return step_done(sandbox_drop_privileges(spec->uid, spec->gid),
	    "privilege drop", spec, report);
}

/* Attributes the kernel resets on a uid change come after it. */
static bool
confine_attributes(const struct sandbox_spec *spec,
    struct sandbox_report *report)
{
	if (spec->parent != 0 &&
	    !step_done(sandbox_parent_death_kill(spec->parent),
	    "parent-death signal", spec, report))
		return false;
	if (!step_done(sandbox_set_nondumpable(), "not dumpable", spec,
	    report))
		return false;
	return step_done(sandbox_no_new_privs(), "no-new-privs", spec,
	    report);
}

bool
sandbox_confine(const struct sandbox_spec *spec,
    struct sandbox_report *report)
{
	memset(report, 0, sizeof(*report));
	if (!confine_identity(spec, report))
		return false;
	if (!confine_attributes(spec, report))
		return false;
	if (!step_done(sandbox_load_filter(spec->role, spec->children,
	    spec->n_children), "seccomp filter", spec, report))
		return false;
	return report->n_missing == 0 || spec->mode == SANDBOX_BEST_EFFORT;
}
