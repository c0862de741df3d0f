/*
 * sandbox_confine() as a whole, and its steps.  A process
 * that is confined cannot report on itself (no open, no sendmsg), so the
 * tests that need to look at a confined process fork it and read
 * /proc/PID from the unconfined test worker.  Tests that drop privileges
 * need root (CI runs as root) and are skipped otherwise.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sandbox.h"
#include "tests/unit/sandbox_test.h"

#define NOBODY 65534
#define CONFINE_FAILED 3

static void
require_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to drop privileges");
}

/* A confined child under ASan dies in the runtime's own syscalls. */
static void
require_root_no_asan(void)
{
	require_root();
#ifdef UNDER_ASAN
	cr_skip_test("seccomp tables are tested in the non-sanitizer build");
#endif
}

/* The first line of /proc/PID/status that starts with key, value part. */
static bool
status_value(pid_t pid, const char *key, char *out, size_t outsize)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	cr_assert_not_null(f = fopen(path, "r"));
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, klen) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, outsize, "%s", line + klen);
		found = true;
	}
	fclose(f);
	return found;
}

static void
assert_status(pid_t pid, const char *key, const char *want)
{
	char got[256];

	cr_assert(status_value(pid, key, got, sizeof(got)), "no %s", key);
	cr_assert_str_eq(got, want, "%s is '%s', want '%s'", key, got, want);
}

/*
 * A child that confines itself as spec says and tells the parent through
 * *ready.  Then it waits until the parent closes *hold and exits 0, or,
 * with hold NULL, waits for nobody: it sleeps 5 s on an epoll fd of its
 * own and exits 0 unless something kills it first.  Exits CONFINE_FAILED
 * if it cannot confine itself.
 */
static pid_t
confined_child(const struct sandbox_spec *spec, int *ready, int *hold)
{
	struct sandbox_spec s = *spec;
	struct sandbox_report report;
	struct epoll_event ev;
	int r[2], h[2], ep;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(r), 0);
	cr_assert_eq(pipe(h), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		close(r[0]);
		close(h[1]);
		if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
			_exit(CONFINE_FAILED);
		s.parent = getppid();
		if (!sandbox_confine(&s, &report))
			_exit(CONFINE_FAILED);
		(void)!write(r[1], "y", 1);
		if (hold != NULL)
			(void)!read(h[0], &c, 1);
		else
			(void)epoll_wait(ep, &ev, 1, 5000);
		_exit(0);
	}
	close(r[1]);
	close(h[0]);
	*ready = r[0];
	if (hold != NULL)
		*hold = h[1];
	else
		close(h[1]);
	return pid;
}

static void
assert_exits(pid_t pid, int code)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died of signal %d",
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	cr_assert_eq(WEXITSTATUS(status), code);
}

/* A parent directory only root can write, for empty dirs made in tests. */
static void
make_parent(char *out, size_t size)
{
	snprintf(out, size, "/tmp/sp-confine-XXXXXX");
	cr_assert_not_null(mkdtemp(out));
}

static void
check_confined_child(enum record_role role, bool with_chroot)
{
	struct sandbox_spec spec = { .role = role, .uid = NOBODY,
	    .gid = NOBODY };
	char parent[64], dir[128], link[PATH_MAX], path[64];
	struct stat st;
	int ready, hold;
	ssize_t n;
	pid_t pid;
	char c;

	make_parent(parent, sizeof(parent));
	cr_assert(sandbox_make_empty_dir(parent, dir, sizeof(dir)));
	spec.chroot_dir = with_chroot ? dir : NULL;
	pid = confined_child(&spec, &ready, &hold);
	cr_assert_eq(read(ready, &c, 1), 1, "child did not confine itself");

	assert_status(pid, "NoNewPrivs:", "\t1");
	assert_status(pid, "Seccomp:", "\t2");
	assert_status(pid, "Uid:", "\t65534\t65534\t65534\t65534");
	assert_status(pid, "Gid:", "\t65534\t65534\t65534\t65534");
	assert_status(pid, "Groups:", "\t ");
	assert_status(pid, "CapEff:", "\t0000000000000000");
	/* Not dumpable: its /proc files stay root's though it is nobody. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_uid, 0);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	cr_assert_gt(n = readlink(path, link, sizeof(link) - 1), 0);
	link[n] = '\0';
	cr_assert_str_eq(link, with_chroot ? dir : "/");

	close(hold);
	assert_exits(pid, 0);
	close(ready);
	rmdir(dir);
	rmdir(parent);
}

Test(confine, frontend_child_is_chrooted_dropped_and_filtered,
    .init = require_root_no_asan)
{
	check_confined_child(RECORD_ROLE_FRONTEND, true);
}

Test(confine, executor_child_is_dropped_and_filtered,
    .init = require_root_no_asan)
{
	check_confined_child(RECORD_ROLE_EXECUTOR, false);
}

/*
 * The kernel forgets the parent-death signal on a uid change; confine
 * must ask again after the drop.  Grandchild B is confined with parent A;
 * A exits; B must die (its pipe end closes) instead of lingering.
 */
Test(confine, parent_death_kills_after_privilege_drop,
    .init = require_root_no_asan, .timeout = 10)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_FRONTEND,
	    .uid = NOBODY, .gid = NOBODY };
	struct pollfd pfd;
	int alive[2], ready;
	pid_t a;
	char c;

	cr_assert_eq(pipe(alive), 0);
	cr_assert_geq(a = fork(), 0);
	if (a == 0) {
		close(alive[0]);
		(void)confined_child(&spec, &ready, NULL);
		if (read(ready, &c, 1) != 1)
			_exit(CONFINE_FAILED);
		_exit(0);	/* B keeps alive[1] open until it dies */
	}
	close(alive[1]);
	assert_exits(a, 0);
	pfd.fd = alive[0];
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 3000), 1,
	    "confined child outlived its parent");
	cr_assert_eq(read(alive[0], &c, 1), 0);
	close(alive[0]);
}

/*
 * A filter of the test's own that makes kernel facilities fail with
 * ENOSYS, so a step of sandbox_confine() fails for real.  Everything else
 * is allowed.  SECCOMP_BROKEN: both ways of loading a filter.
 */
struct breakage {
	int nr;
	unsigned int n_args;
	struct scmp_arg_cmp arg;
};

#define SECCOMP_BROKEN \
	{ SCMP_SYS(seccomp), 0, { 0, 0, 0, 0 } }, \
	{ SCMP_SYS(prctl), 1, { 0, SCMP_CMP_EQ, PR_SET_SECCOMP, 0 } }

static void
break_syscalls(const struct breakage *b, size_t n)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	size_t i;

	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(ENOSYS),
		    b[i].nr, b[i].n_args, &b[i].arg), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
}

static void
break_seccomp(void)
{
	static const struct breakage b[] = { SECCOMP_BROKEN };

	break_syscalls(b, 2);
}

Test(confine, best_effort_goes_on_and_names_what_is_missing,
    .init = require_root)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_EXECUTOR,
	    .mode = SANDBOX_BEST_EFFORT, .uid = NOBODY, .gid = NOBODY };
	struct sandbox_report report;

	break_seccomp();
	cr_assert(sandbox_confine(&spec, &report));
	cr_assert_eq(report.n_missing, 1);
	cr_assert_str_eq(report.text,
	    "seccomp filter: Function not implemented");
	/* The steps before it did happen; only the test's filter is on. */
	assert_status(getpid(), "Uid:", "\t65534\t65534\t65534\t65534");
	assert_status(getpid(), "NoNewPrivs:", "\t1");
	assert_status(getpid(), "Seccomp_filters:", "\t1");
}

Test(confine, required_mode_refuses_without_seccomp, .init = require_root)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_FRONTEND,
	    .uid = NOBODY, .gid = NOBODY };
	struct sandbox_report report;

	break_seccomp();
	cr_assert_not(sandbox_confine(&spec, &report));
	cr_assert_eq(report.n_missing, 1);
	cr_assert_str_eq(report.text,
	    "seccomp filter: Function not implemented");
}

/* Failing closed: a failed drop stops confinement before the filter. */
Test(confine, required_mode_stops_at_failed_privilege_drop,
    .init = require_root)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_EXECUTOR,
	    .uid = NOBODY, .gid = NOBODY };
	struct sandbox_report report;

	static const struct breakage b[] = {
		{ SCMP_SYS(setresuid), 0, { 0, 0, 0, 0 } },
	};

	break_syscalls(b, 1);
	cr_assert_not(sandbox_confine(&spec, &report));
	cr_assert_eq(report.n_missing, 1);
	cr_assert_str_eq(report.text,
	    "privilege drop: Function not implemented");
	assert_status(getpid(), "Seccomp_filters:", "\t1");
	assert_status(getpid(), "Uid:", "\t0\t0\t0\t0");
}

/* Every missing step is listed, in order, in best-effort mode. */
Test(confine, best_effort_lists_every_missing_step, .init = require_root)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_BROKER,
	    .mode = SANDBOX_BEST_EFFORT, .uid = NOBODY, .gid = NOBODY,
	    .chroot_dir = "/nonexistent/sp \"$(id)\"", .parent = getppid() };
	struct sandbox_report report;
	int sig = 0;

	static const struct breakage b[] = {
		{ SCMP_SYS(setresgid), 0, { 0, 0, 0, 0 } }, SECCOMP_BROKEN,
	};

	break_syscalls(b, 3);
	cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	cr_assert(sandbox_confine(&spec, &report));
	cr_assert_eq(report.n_missing, 3);
	cr_assert_str_eq(report.text,
	    "chroot: No such file or directory; "
	    "privilege drop: Function not implemented; "
	    "seccomp filter: Function not implemented");
	/*
	 * The steps between did happen.  No uid changed, so the kernel did
	 * not reset dumpable on its own: confine did.
	 */
	assert_status(getpid(), "Uid:", "\t0\t0\t0\t0");
	cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	cr_assert_eq(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0), 0);
	cr_assert_eq(sig, SIGKILL);
	assert_status(getpid(), "NoNewPrivs:", "\t1");
}

Test(confine, bad_target_uid_is_refused, .init = require_root)
{
	struct sandbox_spec spec = { .role = RECORD_ROLE_EXECUTOR,
	    .uid = 0, .gid = NOBODY };
	struct sandbox_report report;

	cr_assert_not(sandbox_confine(&spec, &report));
	cr_assert_str_eq(report.text, "privilege drop: Invalid argument");
	assert_status(getpid(), "Seccomp:", "\t0");
}

/* ---- steps ---- */

Test(privdrop, drop_to_nobody_cannot_be_regained, .init = require_root)
{
	gid_t extra[3] = { 0, 4, 27 };
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	/* Supplementary groups, root's among them, must go too. */
	cr_assert_eq(setgroups(3, extra), 0);
	cr_assert(sandbox_drop_privileges(NOBODY, NOBODY));
	cr_assert_eq(getresuid(&ru, &eu, &su), 0);
	cr_assert_eq(getresgid(&rg, &eg, &sg), 0);
	cr_assert(ru == NOBODY && eu == NOBODY && su == NOBODY);
	cr_assert(rg == NOBODY && eg == NOBODY && sg == NOBODY);
	cr_assert_eq(getgroups(0, NULL), 0);
	cr_assert_eq(setuid(0), -1);
	cr_assert_eq(errno, EPERM);
	cr_assert_eq(setgid(0), -1);
	cr_assert_eq(open("/etc/shadow", O_RDONLY), -1);
	cr_assert_eq(errno, EACCES);
}

/*
 * The drop is verified, not assumed: a setresuid that claims success but
 * changed nothing (a filter answers 0 for it) must be caught.
 */
Test(privdrop, a_drop_that_did_not_happen_is_caught, .init = require_root)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1), 0);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0),
	    SCMP_SYS(setresuid), 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	cr_assert_not(sandbox_drop_privileges(NOBODY, NOBODY));
	cr_assert_eq(errno, EPERM);
	cr_assert_eq(geteuid(), 0);
}

Test(privdrop, user_lookup_finds_nobody_and_refuses_root)
{
	uid_t uid = 1;
	gid_t gid = 1;

	cr_assert(sandbox_user_ids("nobody", &uid, &gid));
	cr_assert_eq(uid, NOBODY);
	cr_assert_eq(gid, NOBODY);
	cr_assert_not(sandbox_user_ids("root", &uid, &gid));
	cr_assert_eq(errno, EINVAL);
	cr_assert_not(sandbox_user_ids("no such \"$(user)\"\n\xc3\xa9", &uid,
	    &gid));
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(uid, NOBODY, "a failed lookup changed the output");
}

Test(privdrop, root_targets_are_refused, .init = require_root)
{
	cr_assert_not(sandbox_drop_privileges(0, NOBODY));
	cr_assert_eq(errno, EINVAL);
	cr_assert_not(sandbox_drop_privileges(NOBODY, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(geteuid(), 0);
}

Test(privdrop, empty_dir_is_fresh_root_owned_0755, .init = require_root)
{
	char parent[64], a[128], b[128];
	struct stat st;

	make_parent(parent, sizeof(parent));
	cr_assert(sandbox_make_empty_dir(parent, a, sizeof(a)));
	cr_assert(sandbox_make_empty_dir(parent, b, sizeof(b)));
	cr_assert_str_neq(a, b);
	cr_assert_eq(strncmp(a, parent, strlen(parent)), 0);
	cr_assert_eq(lstat(a, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0755);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_nlink, 2, "a fresh dir has no subdirs");
	cr_assert_eq(rmdir(a), 0, "must be empty");
	cr_assert_eq(rmdir(b), 0);
	cr_assert_eq(rmdir(parent), 0);
}

/* The missing parent is one this test knows is missing: a fixed name
 * such as /nonexistent may exist (a home made for nobody), or be
 * unreadable to the user running the test. */
Test(privdrop, empty_dir_refuses_long_or_missing_parent)
{
	char small[24], parent[64], missing[96], out[128];

	cr_assert_not(sandbox_make_empty_dir("/tmp/abc", small, sizeof(small)));
	cr_assert_eq(errno, ENAMETOOLONG);
	make_parent(parent, sizeof(parent));
	snprintf(missing, sizeof(missing), "%s/gone \"$(id)\" \xc3\xa9",
	    parent);
	cr_assert_not(sandbox_make_empty_dir(missing, out, sizeof(out)));
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(rmdir(parent), 0, "nothing made in it");
}

Test(privdrop, chroot_hides_the_filesystem, .init = require_root)
{
	char parent[64], dir[128], cwd[64];
	pid_t pid;

	make_parent(parent, sizeof(parent));
	cr_assert(sandbox_make_empty_dir(parent, dir, sizeof(dir)));
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		if (!sandbox_chroot(dir))
			_exit(1);
		if (open("/etc/passwd", O_RDONLY) != -1 || errno != ENOENT)
			_exit(2);
		if (getcwd(cwd, sizeof(cwd)) == NULL || strcmp(cwd, "/") != 0)
			_exit(3);
		_exit(0);
	}
	assert_exits(pid, 0);
	rmdir(dir);
	rmdir(parent);
}

Test(privdrop, chroot_refuses_unsafe_dirs, .init = require_root)
{
	char parent[64], dir[128], file[160], link[160];
	int fd;

	make_parent(parent, sizeof(parent));
	cr_assert(sandbox_make_empty_dir(parent, dir, sizeof(dir)));
	snprintf(file, sizeof(file), "%s/x", dir);
	cr_assert_geq(fd = open(file, O_CREAT | O_WRONLY, 0600), 0);
	close(fd);
	cr_assert_not(sandbox_chroot(dir));
	cr_assert_eq(errno, ENOTEMPTY);
	unlink(file);

	cr_assert_eq(chmod(dir, 0777), 0);
	cr_assert_not(sandbox_chroot(dir));
	cr_assert_eq(errno, EPERM);
	cr_assert_eq(chmod(dir, 0755), 0);

	snprintf(link, sizeof(link), "%s/link", parent);
	cr_assert_eq(symlink(dir, link), 0);
	cr_assert_not(sandbox_chroot(link));
	cr_assert_eq(errno, EPERM);
	/* Nothing above changed this process's root. */
	cr_assert_eq(access("/etc/passwd", F_OK), 0);
	unlink(link);
	rmdir(dir);
	rmdir(parent);
}

Test(steps, stdout_goes_to_stderr)
{
	int out[2], err[2];
	char buf[64];
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(out), 0);
	cr_assert_eq(pipe(err), 0);
	cr_assert_geq(pid = fork(), 0);
	if (pid == 0) {
		if (dup2(out[1], 1) != 1 || dup2(err[1], 2) != 2)
			_exit(1);
		close(out[0]); close(out[1]); close(err[0]); close(err[1]);
		if (!sandbox_stdout_to_stderr())
			_exit(2);
		printf("stray \"$(id)\"\n");
		fflush(stdout);
		_exit(0);
	}
	close(out[1]);
	close(err[1]);
	assert_exits(pid, 0);
	cr_assert_eq(read(out[0], buf, sizeof(buf)), 0, "stdout got bytes");
	cr_assert_eq(n = read(err[0], buf, sizeof(buf) - 1), 14);
	buf[n] = '\0';
	cr_assert_str_eq(buf, "stray \"$(id)\"\n");
}

Test(steps, parent_death_check_refuses_wrong_parent)
{
	cr_assert(sandbox_parent_death_kill(getppid()));
	cr_assert_not(sandbox_parent_death_kill(getppid() + 1));
	cr_assert_eq(errno, ESRCH);
}

Test(steps, nondumpable_and_no_new_privs_stick)
{
	cr_assert(sandbox_set_nondumpable());
	cr_assert_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	cr_assert(sandbox_no_new_privs());
	assert_status(getpid(), "NoNewPrivs:", "\t1");
}
