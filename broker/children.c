/*
 * Starting the children of a session (broker/children.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child/child.h"
#include "broker/child_stderr.h"
#include "broker/children.h"
#include "common/log.h"
#include "common/record.h"
#include "common/spawn.h"

#ifndef SP_PKGLIBEXECDIR
#error "SP_PKGLIBEXECDIR names where make install puts the children"
#endif

/* Fds the broker holds while starting the children. */
struct start_fds {
	int policy;
	int action[2];
	int control[CHILD_COUNT][2];
	int err[CHILD_COUNT][2];	/* each child's stderr pipe */
	int devnull;
};

static void
start_fds_close(struct start_fds *f)
{
	int *all[] = { &f->policy, &f->action[0], &f->action[1],
	    &f->control[0][1], &f->control[1][1], &f->err[0][1],
	    &f->err[1][1], &f->devnull };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] >= 0) {
			(void)close(*all[i]);
			*all[i] = -1;
		}
}

/* The same bytes for both children, and neither can change them. */
static int
policy_memfd(const char *policy, size_t len)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	if ((fd = memfd_create("sp-policy", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1) {
		log_error("cannot create the policy memfd: %s", strerror(errno));
		return -1;
	}
	while (off < len) {
		if ((n = write(fd, policy + off, len - off)) <= 0) {
			log_error("write: %s", strerror(errno));
			(void)close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1) {
		log_error("F_ADD_SEALS: %s", strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* One buffer direction; the kernel stores twice what is asked. */
static bool
channel_buffer_set(int fd, int opt, const char *name)
{
	int want = CHANNEL_BUFFER_BYTES, got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want)) == -1 ||
	    getsockopt(fd, SOL_SOCKET, opt, &got, &len) == -1) {
		log_error("setsockopt %s: %s", name, strerror(errno));
		return false;
	}
	if (got < 2 * want) {
		log_error("%s is %d bytes, below the %d a "
		    "whole record needs (raise net.core.%s)", name, got / 2,
		    want, opt == SO_SNDBUF ? "wmem_max" : "rmem_max");
		return false;
	}
	return true;
}

bool
channel_buffers_set(int fd)
{
	return channel_buffer_set(fd, SO_SNDBUF, "SO_SNDBUF") &&
	    channel_buffer_set(fd, SO_RCVBUF, "SO_RCVBUF");
}

static bool
channel_pair_open(int pair[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    pair) == -1) {
		log_error("socketpair: %s", strerror(errno));
		return false;
	}
	return channel_buffers_set(pair[0]) && channel_buffers_set(pair[1]);
}

/*
 * A child's stderr: the broker keeps the read end and writes each line
 * with the child's role itself (broker/child_stderr.h).  Only the read
 * end is made non-blocking, later: a child's write waits for room, its
 * diagnostic is not dropped.
 */
static bool
stderr_pipe_open(int pair[2])
{
	if (pipe2(pair, O_CLOEXEC) == -1) {
		log_error("pipe2: %s", strerror(errno));
		return false;
	}
	return true;
}

static bool
start_fds_open(struct start_fds *f, const char *policy, size_t len)
{
	if ((f->policy = policy_memfd(policy, len)) == -1)
		return false;
	if (!channel_pair_open(f->action) ||
	    !channel_pair_open(f->control[CHILD_FRONTEND]) ||
	    !channel_pair_open(f->control[CHILD_EXECUTOR]) ||
	    !stderr_pipe_open(f->err[CHILD_FRONTEND]) ||
	    !stderr_pipe_open(f->err[CHILD_EXECUTOR]))
		return false;
	if ((f->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		log_error("open /dev/null: %s", strerror(errno));
		return false;
	}
	return true;
}

/* The frontend's chroot must exist before it starts (root only). */
static bool
empty_dir_ready(void)
{
	if (geteuid() != 0)
		return true;
	if (mkdir(CHILD_EMPTY_DIR, 0755) == -1 && errno != EEXIST) {
		log_error("mkdir %s: %s", CHILD_EMPTY_DIR, strerror(errno));
		return false;
	}
	return true;
}

/* The running sp's directory (O_PATH) into where, or -1. */
static int
programs_dir_beside_self(char *where, size_t size)
{
	char *slash;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", where, size - 1)) <= 0)
		return -1;
	where[n] = '\0';
	if ((slash = strrchr(where, '/')) == NULL)
		return -1;
	slash[slash == where] = '\0';	/* "/sp": "/" */
	return open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* One program in dir (named where), checked to be one. */
static int
program_open(int dir, const char *where, enum record_role role)
{
	const char *name = record_role_program(role);
	struct stat st;
	int fd;

	if ((fd = openat(dir, name, O_PATH | O_CLOEXEC)) == -1) {
		log_error("cannot open the %s's program %s/%s: %s",
		    record_role_name(role), where, name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & S_IXUSR) == 0) {
		log_error("the %s's program %s/%s is not an executable file",
		    record_role_name(role), where, name);
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Beside the running sp when the frontend's program is there. */
static int
programs_dir(char *where, size_t size)
{
	int dir;

	if ((dir = programs_dir_beside_self(where, size)) >= 0) {
		if (faccessat(dir, record_role_program(RECORD_ROLE_FRONTEND),
		    F_OK, 0) == 0)
			return dir;
		(void)close(dir);
	}
	(void)snprintf(where, size, "%s", SP_PKGLIBEXECDIR);
	if ((dir = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		log_error("cannot open %s, where sp-frontend and sp-executor "
		    "are installed: %s", where, strerror(errno));
	return dir;
}

void
children_programs_close(struct child_programs *p)
{
	int i;

	for (i = 0; i < CHILD_COUNT; i++) {
		if (p->exe[i] >= 0)
			(void)close(p->exe[i]);
		p->exe[i] = -1;
	}
}

bool
children_programs_open(struct child_programs *p)
{
	char where[PATH_MAX];
	int dir;

	p->exe[CHILD_FRONTEND] = p->exe[CHILD_EXECUTOR] = -1;
	if ((dir = programs_dir(where, sizeof(where))) == -1)
		return false;
	p->exe[CHILD_FRONTEND] = program_open(dir, where,
	    RECORD_ROLE_FRONTEND);
	p->exe[CHILD_EXECUTOR] = program_open(dir, where,
	    RECORD_ROLE_EXECUTOR);
	(void)close(dir);
	if (p->exe[CHILD_FRONTEND] == -1 || p->exe[CHILD_EXECUTOR] == -1) {
		children_programs_close(p);
		return false;
	}
	log_debug("the children run sp-frontend and sp-executor from %s",
	    where);
	return true;
}

/* `sp-frontend LEVEL PROFILE` (child/child.h), from exe. */
static pid_t
start_one(int exe, enum record_role role, const char *profile,
    const struct spawn_fd *map, size_t n)
{
	const char *name = record_role_program(role);
	char *const argv[] = { (char *)name,
	    (char *)log_level_name(log_level_max()), (char *)profile, NULL };

	return spawn_child_exe(exe, name, argv, map, n);
}

static bool
start_both(const struct child_programs *progs, struct start_fds *f,
    const char *profile, int client_out, struct child kids[CHILD_COUNT])
{
	const struct spawn_fd fe_map[] = {
		{ client_out, STDOUT_FILENO },
		{ f->err[CHILD_FRONTEND][1], STDERR_FILENO },
		{ f->policy, CHILD_FD_POLICY },
		{ f->action[0], CHILD_FD_ACTION },
		{ f->control[CHILD_FRONTEND][1], CHILD_FD_CONTROL },
	};
	const struct spawn_fd ex_map[] = {
		{ f->devnull, STDIN_FILENO },
		{ f->err[CHILD_EXECUTOR][1], STDOUT_FILENO },
		{ f->err[CHILD_EXECUTOR][1], STDERR_FILENO },
		{ f->policy, CHILD_FD_POLICY },
		{ f->action[1], CHILD_FD_ACTION },
		{ f->control[CHILD_EXECUTOR][1], CHILD_FD_CONTROL },
	};

	kids[CHILD_EXECUTOR].pid = start_one(progs->exe[CHILD_EXECUTOR],
	    RECORD_ROLE_EXECUTOR, profile, ex_map,
	    sizeof(ex_map) / sizeof(ex_map[0]));
	if (kids[CHILD_EXECUTOR].pid == -1)
		return false;
	kids[CHILD_FRONTEND].pid = start_one(progs->exe[CHILD_FRONTEND],
	    RECORD_ROLE_FRONTEND, profile, fe_map,
	    sizeof(fe_map) / sizeof(fe_map[0]));
	return kids[CHILD_FRONTEND].pid != -1;
}

void
children_kill(struct child kids[CHILD_COUNT])
{
	struct child_stderr cs;
	int i;

	for (i = 0; i < CHILD_COUNT; i++) {
		if (kids[i].pid > 0) {
			(void)kill(kids[i].pid, SIGKILL);
			(void)waitpid(kids[i].pid, NULL, 0);
			kids[i].pid = 0;
		}
		if (kids[i].control >= 0)
			(void)close(kids[i].control);
		kids[i].control = -1;
		/* What it said before it was killed is still said. */
		child_stderr_init(&cs, record_role_name(kids[i].role),
		    kids[i].err, STDERR_FILENO);
		child_stderr_drain(&cs);
		kids[i].err = -1;
	}
}

bool
children_start(const struct child_programs *progs, const char *policy,
    size_t len, const char *profile, int client_out,
    struct child kids[CHILD_COUNT])
{
	struct start_fds f;
	bool ok;
	int i;

	memset(kids, 0, sizeof(*kids) * CHILD_COUNT);
	memset(&f, -1, sizeof(f));
	/* A child's stderr is a pipe to the broker, never the journal: it
	 * writes the level word, which the relay turns into the broker's
	 * form (broker/child_stderr.h). */
	(void)unsetenv("JOURNAL_STREAM");
	kids[CHILD_FRONTEND].role = RECORD_ROLE_FRONTEND;
	kids[CHILD_EXECUTOR].role = RECORD_ROLE_EXECUTOR;
	ok = empty_dir_ready() && start_fds_open(&f, policy, len) &&
	    start_both(progs, &f, profile, client_out, kids);
	for (i = 0; i < CHILD_COUNT; i++) {
		kids[i].control = f.control[i][0];
		kids[i].err = f.err[i][0];
	}
	/* The client is the frontend's now. */
	if (ok && (dup2(f.devnull, STDIN_FILENO) == -1 ||
	    close(client_out) == -1)) {
		log_error("dup2: %s", strerror(errno));
		ok = false;
	}
	start_fds_close(&f);
	if (!ok)
		children_kill(kids);
	return ok;
}
