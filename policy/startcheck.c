/*
 * The start-up checks (policy/startcheck.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <arpa/inet.h>

#include "common/base64.h"
#include "policy/authz.h"
#include "policy/ssh_private_key.h"
#include "policy/startcheck.h"

/* A key blob in known_hosts or a .pub file; far above any real one. */
#define KEY_BLOB_MAX 16384

static bool
kind_is_secret(enum policy_file_kind kind)
{
	return kind == POLICY_FILE_SECRET || kind == POLICY_FILE_AUDIT_KEY;
}

/* The owner and mode rules on a secret's open descriptor. */
static bool
secret_stat_ok(const struct stat *st, bool strict, bool *loose, char *why,
    size_t why_size)
{
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		snprintf(why, why_size, "is owned by uid %lu, neither the "
		    "running user (uid %lu) nor root", (unsigned long)st->st_uid,
		    (unsigned long)geteuid());
		return false;
	}
	if ((st->st_mode & 077) == 0)
		return true;
	snprintf(why, why_size, "is open to group or others (mode %04o); "
	    "chmod 600 it%s", (unsigned)(st->st_mode & 07777),
	    strict ? " (strict_credentials)" : "");
	*loose = true;
	return !strict;
}

/*
 * A file of the kernel's own filesystems (/proc/self/environ, sysfs)
 * is S_ISREG with a size of 0 whatever it holds: what the executor then
 * reads is not what was judged, and its read fails at start.
 */
static bool
synthetic_file(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) == -1)
		return true;
	switch (sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

int
policy_file_open(const char *path, enum policy_file_kind kind, bool strict,
    size_t *size, bool *loose, char *why, size_t why_size)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat st;
	int fd;

	*loose = false;
	why[0] = '\0';
	if (kind_is_secret(kind))
		flags |= O_NOFOLLOW;
	if ((fd = open(path, flags)) == -1) {
		if (errno == ELOOP && kind_is_secret(kind))
			snprintf(why, why_size, "is a symbolic link");
		else
			snprintf(why, why_size, "cannot be opened: %s",
			    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		snprintf(why, why_size, "is not a regular file");
	else if (synthetic_file(fd))
		snprintf(why, why_size, "is not a regular file (a procfs or "
		    "sysfs file, whose size says nothing of what it holds)");
	else if ((uintmax_t)st.st_size > POLICY_FILE_MAX)
		snprintf(why, why_size, "is larger than %u bytes",
		    POLICY_FILE_MAX);
	else if (!kind_is_secret(kind) ||
	    secret_stat_ok(&st, strict, loose, why, why_size)) {
		*size = (size_t)st.st_size;
		return fd;
	}
	(void)close(fd);
	return -1;
}

/* The next line of bytes[*off..len), without its "\n" or "\r\n". */
static bool
next_line(const char *bytes, size_t len, size_t *off, const char **line,
    size_t *n)
{
	const char *nl;

	if (*off >= len)
		return false;
	*line = bytes + *off;
	nl = memchr(*line, '\n', len - *off);
	*n = nl != NULL ? (size_t)(nl - *line) : len - *off;
	*off += *n + (nl != NULL);
	if (*n > 0 && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

/* The next blank-separated field of line[*at..n). */
static bool
next_field(const char *line, size_t n, size_t *at, const char **f,
    size_t *flen)
{
	while (*at < n && (line[*at] == ' ' || line[*at] == '\t'))
		(*at)++;
	if (*at >= n)
		return false;
	*f = line + *at;
	while (*at < n && line[*at] != ' ' && line[*at] != '\t')
		(*at)++;
	*flen = (size_t)(line + *at - *f);
	return true;
}

/* The key types libssh2 1.10's known_hosts reader takes. */
static bool
key_type_known(const char *t, size_t n)
{
	static const char *const types[] = { "ssh-ed25519", "ssh-rsa",
	    "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
	    "ecdsa-sha2-nistp521", "ssh-dss", NULL };
	size_t i;

	for (i = 0; types[i] != NULL; i++)
		if (strlen(types[i]) == n && memcmp(types[i], t, n) == 0)
			return true;
	return false;
}

/* "TYPE BASE64": a known type and a blob that names the same type. */
static bool
key_fields_ok(const char *type, size_t tlen, const char *b64, size_t blen)
{
	unsigned char blob[KEY_BLOB_MAX];
	size_t got;
	uint32_t name_len;

	if (!key_type_known(type, tlen) || blen > KEY_BLOB_MAX / 3 * 4 ||
	    !base64_decode(b64, blen, blob, sizeof(blob), &got) || got < 4)
		return false;
	name_len = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
	    (uint32_t)blob[2] << 8 | blob[3];
	return name_len == tlen && got - 4 >= tlen &&
	    memcmp(blob + 4, type, tlen) == 0;
}

static bool
known_hosts_ok(const char *bytes, size_t len, char *why, size_t why_size)
{
	const char *line, *hosts, *type, *key;
	size_t off = 0, lineno = 0, keys = 0, n, at, hl, tl, kl;

	while (next_line(bytes, len, &off, &line, &n)) {
		lineno++;
		at = 0;
		if (!next_field(line, n, &at, &hosts, &hl) || hosts[0] == '#')
			continue;
		if (hosts[0] == '@') {
			snprintf(why, why_size, "fails at its line %zu: markers "
			    "such as @revoked are not supported", lineno);
			return false;
		}
		if (!next_field(line, n, &at, &type, &tl) ||
		    !next_field(line, n, &at, &key, &kl) ||
		    !key_fields_ok(type, tl, key, kl)) {
			snprintf(why, why_size, "fails at its line %zu, which "
			    "is not \"HOSTS KEYTYPE BASE64-KEY\" with a key "
			    "type libssh2 reads", lineno);
			return false;
		}
		keys++;
	}
	if (keys == 0)
		snprintf(why, why_size, "holds no host key: every call to "
		    "its target would fail");
	return keys > 0;
}

static bool
public_key_ok(const char *bytes, size_t len, char *why, size_t why_size)
{
	const char *line, *type, *key;
	size_t off = 0, n, at = 0, tl, kl;

	if (!next_line(bytes, len, &off, &line, &n) ||
	    !next_field(line, n, &at, &type, &tl) ||
	    !next_field(line, n, &at, &key, &kl) ||
	    !key_fields_ok(type, tl, key, kl)) {
		snprintf(why, why_size, "is not an OpenSSH public key "
		    "(\"KEYTYPE BASE64-KEY\")");
		return false;
	}
	return true;
}

static bool
contains(const char *bytes, size_t len, const char *needle)
{
	return memmem(bytes, len, needle, strlen(needle)) != NULL;
}

bool
policy_file_content_ok(enum policy_file_kind kind, const char *bytes,
    size_t len, char *why, size_t why_size)
{
	switch (kind) {
	case POLICY_FILE_KNOWN_HOSTS:
		return known_hosts_ok(bytes, len, why, why_size);
	case POLICY_FILE_PUBLIC_KEY:
		return public_key_ok(bytes, len, why, why_size);
	case POLICY_FILE_CA:
		if (contains(bytes, len, "-----BEGIN CERTIFICATE-----"))
			return true;
		snprintf(why, why_size, "holds no PEM certificate "
		    "(-----BEGIN CERTIFICATE-----)");
		return false;
	case POLICY_FILE_AUDIT_KEY:
		if (len >= POLICY_AUDIT_KEY_MIN && len <= POLICY_AUDIT_KEY_MAX)
			return true;
		snprintf(why, why_size, "holds %zu bytes: an audit key has "
		    "%u to %u (head -c 32 /dev/urandom makes one)", len,
		    POLICY_AUDIT_KEY_MIN, POLICY_AUDIT_KEY_MAX);
		return false;
	default:
		return true;
	}
}

/* The size bytes of what policy_file_open() opened, NUL-terminated
 * (caller frees), or NULL with why filled.  Never a secret's. */
static char *
file_read_all(int fd, size_t size, char *why, size_t why_size)
{
	char *buf;
	size_t got = 0;
	ssize_t r;

	if ((buf = malloc(size + 1)) == NULL) {
		snprintf(why, why_size, "cannot be read: out of memory");
		return NULL;
	}
	while (got < size && ((r = read(fd, buf + got, size - got)) > 0 ||
	    (r == -1 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	if (got != size) {
		snprintf(why, why_size, "cannot be read whole");
		free(buf);
		return NULL;
	}
	buf[size] = '\0';
	return buf;
}

/* Reads what policy_file_open() opened, then the content rules. */
static bool
file_read_check(int fd, size_t size, enum policy_file_kind kind, char *why,
    size_t why_size)
{
	char *buf;
	bool ok;

	if ((buf = file_read_all(fd, size, why, why_size)) == NULL)
		return false;
	ok = policy_file_content_ok(kind, buf, size, why, why_size);
	explicit_bzero(buf, size);	/* an audit key is a secret */
	free(buf);
	return ok;
}

/* audit.path: an existing regular file the user may append to, or a new
 * one in a directory the user may write (docs/design.md section 6). */
static bool
audit_log_ok(const char *path, char *why, size_t why_size)
{
	char dir[PATH_MAX];
	const char *parent;
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			snprintf(why, why_size, "is a symbolic link, refused");
		else if (!S_ISREG(st.st_mode))
			snprintf(why, why_size, "is not a regular file");
		else if (access(path, W_OK) == -1)
			snprintf(why, why_size, "cannot be appended to by uid "
			    "%lu: %s", (unsigned long)geteuid(),
			    strerror(errno));
		return why[0] == '\0';
	}
	if (errno != ENOENT) {
		snprintf(why, why_size, "%s", strerror(errno));
		return false;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	parent = dirname(dir);
	if (stat(parent, &st) == -1 || !S_ISDIR(st.st_mode))
		snprintf(why, why_size, "cannot be created: its directory "
		    "does not exist");
	else if (access(parent, W_OK | X_OK) == -1)
		snprintf(why, why_size, "cannot be created: its directory is "
		    "not writable by uid %lu", (unsigned long)geteuid());
	return why[0] == '\0';
}

static const char *
kind_name(enum policy_file_kind kind)
{
	switch (kind) {
	case POLICY_FILE_SECRET:
		return "secret file";
	case POLICY_FILE_AUDIT_KEY:
		return "audit key file";
	case POLICY_FILE_PUBLIC_KEY:
		return "public key file";
	case POLICY_FILE_CA:
		return "CA file";
	case POLICY_FILE_KNOWN_HOSTS:
		return "known_hosts file";
	default:
		return "audit log";
	}
}

static void
file_check(const struct policy *p, const struct policy_file *f,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size)
{
	char why[POLICY_WHY_MAX], message[POLICY_WHY_MAX + PATH_MAX];
	size_t size = 0;
	bool loose = false, ok;
	int fd;

	why[0] = '\0';
	if (f->kind == POLICY_FILE_AUDIT_LOG)
		ok = audit_log_ok(f->path, why, sizeof(why));
	else if ((fd = policy_file_open(f->path, f->kind,
	    p->strict_credentials, &size, &loose, why, sizeof(why))) == -1)
		ok = false;
	else {
		/* a loose mode's warning is kept apart from what follows */
		if (loose) {
			snprintf(message, sizeof(message), "%s %s %s",
			    kind_name(f->kind), f->path, why);
			policy_diags_add(diags, POLICY_DIAG_WARNING,
			    display_name, f->line, f->col, message);
		}
		/* a credential's bytes are the executor's alone: opened and
		 * judged here, never read (no content rule needs them) */
		ok = f->kind == POLICY_FILE_SECRET ||
		    file_read_check(fd, size, f->kind, why, sizeof(why));
		(void)close(fd);
	}
	if (ok)
		return;
	if (sentence != NULL && sentence[0] == '\0')
		snprintf(sentence, sentence_size, "the %s named at line %u of "
		    "its policy %s", kind_name(f->kind), f->line, why);
	snprintf(message, sizeof(message), "%s %s %s", kind_name(f->kind),
	    f->path, why);
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name, f->line,
	    f->col, message);
}

const char *
policy_approvals_dir_why(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "a symlink or not a directory";
	if (st->st_uid != geteuid())
		return "owned by another user";
	if ((st->st_mode & 022) != 0)
		return "writable by its group or others";
	return NULL;
}

const char *
policy_state_dir_shared_why(const struct stat *st)
{
	if ((st->st_mode & S_IWOTH) != 0 && (st->st_mode & S_ISVTX) == 0)
		return "writable by others without the sticky bit (chmod +t "
		    "it): another user could replace approvals/";
	return NULL;
}

/* Whether an approver can traverse a state_dir of st to its sockets. */
static bool
approver_reaches(const struct stat *st, const struct policy_confirm *c)
{
	size_t i;

	if ((st->st_mode & S_IXOTH) != 0)
		return true;
	for (i = 0; i < c->approver_uid_count; i++)
		if (c->approver_uids[i] != 0 && !(c->approver_uids[i] ==
		    st->st_uid && (st->st_mode & S_IXUSR) != 0))
			return false;
	for (i = 0; i < c->approver_gid_count; i++)
		if (!(c->approver_gids[i] == st->st_gid &&
		    (st->st_mode & S_IXGRP) != 0))
			return false;
	return true;
}

/* Why the state_dir cannot serve operator approval as it is, or NULL:
 * approvers who cannot reach the sockets, an approvals/ that is not the
 * running user's own, a state_dir another user may replace it in. */
static const char *
approvals_why(const struct policy *policy, const struct stat *st,
    char *buf, size_t size)
{
	struct stat ast;
	const char *why;
	size_t i;

	for (i = 0; i < policy->tool_count; i++)
		if (policy->tools[i].confirm &&
		    policy->tools[i].confirm_spec.via_operator &&
		    !approver_reaches(st, &policy->tools[i].confirm_spec)) {
			snprintf(buf, size, "the approvers of %s cannot traverse "
			    "it to the approval sockets (mode %04o): chmod 0711 "
			    "it", policy->tools[i].name,
			    (unsigned)(st->st_mode & 07777));
			return buf;
		}
	for (i = 0; i < policy->tool_count; i++)
		if (policy->tools[i].confirm &&
		    policy->tools[i].confirm_spec.via_operator)
			break;
	if (i == policy->tool_count)
		return NULL;
	if ((why = policy_state_dir_shared_why(st)) != NULL)
		return why;
	snprintf(buf, size, "%s/approvals", policy->state_dir);
	if (lstat(buf, &ast) == -1 || (why = policy_approvals_dir_why(&ast)) ==
	    NULL)
		return NULL;
	snprintf(buf, size, "approvals/ in it is %s: not sp's own approvals "
	    "directory; remove it and let sp make it", why);
	return buf;
}

bool
policy_credential_length_ok(const struct policy_credential *c,
    const unsigned char *bytes, size_t len, char *why, size_t why_size)
{
	const unsigned char *colon = NULL;

	if (c->type == CREDENTIAL_SSH_KEY)
		return true;
	if (c->type == CREDENTIAL_BASIC &&
	    (colon = memchr(bytes, ':', len)) != NULL)
		len -= (size_t)(colon + 1 - bytes);
	if (len >= POLICY_SECRET_MIN)
		return true;
	snprintf(why, why_size, "its %s is shorter than %u bytes: too short "
	    "to be withheld from results safely", colon != NULL ? "password" :
	    "secret", POLICY_SECRET_MIN);
	return false;
}

/* Where the policy names c's file, for a diagnostic. */
static const struct policy_file *
credential_file(const struct policy *p, const struct policy_credential *c)
{
	size_t i;

	for (i = 0; i < p->file_count; i++)
		if (strcmp(p->files[i].path, c->file) == 0)
			return &p->files[i];
	return NULL;
}

static void
credential_length_error(const struct policy *p,
    const struct policy_credential *c, const char *why,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size)
{
	const struct policy_file *f = credential_file(p, c);
	char message[POLICY_WHY_MAX + 64];

	snprintf(message, sizeof(message), "credential %s: %s", c->name, why);
	if (sentence != NULL && sentence[0] == '\0')
		snprintf(sentence, sentence_size, "%s", message);
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name,
	    f != NULL ? f->line : 1, f != NULL ? f->col : 1, message);
}

/* Bytes a file of c's type must hold at least: a basic one a user name
 * and ':' besides.  A newline the executor drops is not counted: the
 * file may have none. */
static size_t
credential_size_min(const struct policy_credential *c)
{
	return POLICY_SECRET_MIN + (c->type == CREDENTIAL_BASIC ? 2 : 0);
}

/*
 * The length rule as far as the file's size tells it: the start-up
 * checks never read a credential's bytes, which are the executor's
 * alone; the executor applies policy_credential_length_ok() to the bytes
 * when it reads them at start.
 */
static void
credential_size_check(const struct policy *p, const struct policy_credential *c,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size)
{
	char why[POLICY_WHY_MAX];
	struct stat st;

	if (c->type == CREDENTIAL_SSH_KEY || stat(c->file, &st) == -1 ||
	    (uintmax_t)st.st_size >= credential_size_min(c))
		return;
	snprintf(why, sizeof(why), "its secret is shorter than %u bytes: too "
	    "short to be withheld from results safely", POLICY_SECRET_MIN);
	credential_length_error(p, c, why, display_name, diags, sentence,
	    sentence_size);
}

/* state_dir: a directory the running user may create files in, what the
 * broker does there before confinement (docs/design.md section 9). */
static bool
state_dir_ok(const struct policy *policy, const char *display_name,
    struct policy_diags *diags, char *sentence, size_t sentence_size)
{
	char buf[POLICY_WHY_MAX + PATH_MAX];
	char message[sizeof(buf) + PATH_MAX + 16];
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
	else
		why = approvals_why(policy, &st, buf, sizeof(buf));
	if (why == NULL)
		return true;
	if (sentence != NULL && sentence[0] == '\0')
		snprintf(sentence, sentence_size, "the state_dir named at line "
		    "%u of its policy: %s", policy->state_dir_line, why);
	snprintf(message, sizeof(message), "state_dir %s: %s",
	    policy->state_dir, why);
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name,
	    policy->state_dir_line, policy->state_dir_col, message);
	return false;
}

/* A public file's bytes (caller frees), or NULL when it does not open
 * or read: file_check() has said why. */
static char *
public_file_read(const char *path, enum policy_file_kind kind, size_t *size)
{
	char why[POLICY_WHY_MAX], *bytes;
	bool loose;
	int fd;

	if ((fd = policy_file_open(path, kind, false, size, &loose, why,
	    sizeof(why))) == -1)
		return NULL;
	bytes = file_read_all(fd, *size, why, sizeof(why));
	(void)close(fd);
	return bytes;
}

/* Where the policy names path (a pointer into the policy). */
static const struct policy_file *
file_named(const struct policy *p, const char *path)
{
	size_t i;

	for (i = 0; i < p->file_count; i++)
		if (p->files[i].path == path)
			return &p->files[i];
	return NULL;
}

/* One problem of the ssh checks, at the file's place. */
static void
ssh_problem(const struct policy_file *f, enum policy_diag_severity severity,
    const char *display_name, struct policy_diags *diags, const char *message,
    const char *client_why, char *sentence, size_t sentence_size)
{
	if (severity == POLICY_DIAG_ERROR && sentence != NULL &&
	    sentence[0] == '\0')
		snprintf(sentence, sentence_size, "the %s named at line %u of "
		    "its policy %s", kind_name(f->kind), f->line, client_why);
	policy_diags_add(diags, severity, display_name, f->line, f->col,
	    message);
}

static bool
is_address(const char *s, size_t n)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned char addr[sizeof(struct in6_addr)];

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET, buf, addr) == 1 ||
	    inet_pton(AF_INET6, buf, addr) == 1;
}

/*
 * Whether one known_hosts name is the target's as the executor looks it
 * up (executor/ssh_hostkey.c, compared exactly as libssh2 does): "HOST"
 * on port 22, "[HOST]:PORT" on any other.  For a host given by name, an
 * address under the same port may be the one it resolves to at call
 * time, so it counts too.
 */
static bool
known_name_fits(const char *name, size_t n, const struct policy_target *t)
{
	const char *host = name, *close;
	size_t hl = n;
	unsigned long port = 22;
	char *end;

	if (n > 0 && name[0] == '[') {
		if ((close = memchr(name, ']', n)) == NULL ||
		    (size_t)(close - name) + 2 >= n || close[1] != ':')
			return false;
		host = name + 1;
		hl = (size_t)(close - host);
		port = strtoul(close + 2, &end, 10);
		if (end != name + n || port == 22)
			return false;
	}
	if (port != t->port)
		return false;
	if (hl == strlen(t->host) && memcmp(host, t->host, hl) == 0)
		return true;
	return !is_address(t->host, strlen(t->host)) && is_address(host, hl);
}

/* What known_hosts says of the target: an entry, hashed names only (which
 * sp cannot match without SHA-1), or nothing. */
enum known_entry { KNOWN_ENTRY, KNOWN_HASHED, KNOWN_NONE };

static enum known_entry
known_hosts_entry(const char *bytes, size_t len, const struct policy_target *t)
{
	const char *line, *hosts, *name, *comma;
	size_t off = 0, n, at, hl, nl;
	bool hashed = false;

	while (next_line(bytes, len, &off, &line, &n)) {
		at = 0;
		if (!next_field(line, n, &at, &hosts, &hl) || hosts[0] == '#')
			continue;
		for (name = hosts; name < hosts + hl; name += nl + 1) {
			comma = memchr(name, ',', (size_t)(hosts + hl - name));
			nl = comma != NULL ? (size_t)(comma - name) :
			    (size_t)(hosts + hl - name);
			if (nl >= 3 && memcmp(name, "|1|", 3) == 0)
				hashed = true;
			else if (known_name_fits(name, nl, t))
				return KNOWN_ENTRY;
		}
	}
	return hashed ? KNOWN_HASHED : KNOWN_NONE;
}

/* Every call to a target known_hosts has no entry for would fail. */
static void
known_hosts_entry_check(const struct policy *p, const struct policy_target *t,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size)
{
	const struct policy_file *f = file_named(p, t->known_hosts);
	char name[300], port[16] = "", message[POLICY_WHY_MAX + 3 * PATH_MAX];
	size_t size;
	char *bytes;

	if (f == NULL)
		return;
	bytes = public_file_read(f->path, f->kind, &size);
	if (bytes == NULL || known_hosts_entry(bytes, size, t) != KNOWN_NONE) {
		free(bytes);
		return;
	}
	free(bytes);
	if (t->port == 22)
		snprintf(name, sizeof(name), "%s", t->host);
	else {
		snprintf(name, sizeof(name), "[%s]:%u", t->host,
		    (unsigned)t->port);
		snprintf(port, sizeof(port), " -p %u", (unsigned)t->port);
	}
	snprintf(message, sizeof(message), "known_hosts file %s has no entry "
	    "for %s, target %s's host and port: every call to it would fail; "
	    "add one with ssh-keyscan%s %s >> %s, then compare its "
	    "fingerprint (ssh-keygen -lf %s) with the server's", f->path, name,
	    t->name, port, t->host, f->path, f->path);
	ssh_problem(f, POLICY_DIAG_ERROR, display_name, diags, message,
	    "has no entry for its target's host and port", sentence,
	    sentence_size);
}

/* The key blob of an OpenSSH public key file, or 0 bytes. */
static size_t
public_key_blob(const char *path, unsigned char *blob, size_t cap)
{
	const char *line, *type, *key;
	size_t size, off = 0, n, at = 0, tl, kl, got = 0;
	char *bytes = public_file_read(path, POLICY_FILE_PUBLIC_KEY, &size);

	if (bytes != NULL && next_line(bytes, size, &off, &line, &n) &&
	    next_field(line, n, &at, &type, &tl) &&
	    next_field(line, n, &at, &key, &kl) &&
	    !base64_decode(key, kl, blob, cap, &got))
		got = 0;
	free(bytes);
	return got;
}

/* public_key against the public key the private key file holds, which
 * libssh2 would otherwise send and then fail to sign for. */
static void
key_pair_check(const struct policy *p, const struct policy_credential *c,
    const struct ssh_key_head *h, const char *display_name,
    struct policy_diags *diags, char *sentence, size_t sentence_size)
{
	const struct policy_file *f = file_named(p, c->public_key);
	const struct policy_file *priv = file_named(p, c->private_key);
	char message[POLICY_WHY_MAX + 3 * PATH_MAX];
	unsigned char *blob;
	size_t len;

	if (f == NULL || priv == NULL)
		return;
	if (h->format == SSH_KEY_PEM) {
		snprintf(message, sizeof(message), "public key file %s cannot "
		    "be compared with the PEM private key at line %u offline; "
		    "an OpenSSH-format key can (ssh-keygen -p -f KEY rewrites "
		    "it in that format)", f->path, priv->line);
		ssh_problem(f, POLICY_DIAG_WARNING, display_name, diags,
		    message, "", NULL, 0);
		return;
	}
	if (h->format != SSH_KEY_OPENSSH ||
	    (blob = malloc(SSH_KEY_BLOB_MAX)) == NULL)
		return;
	len = public_key_blob(f->path, blob, SSH_KEY_BLOB_MAX);
	if (len > 0 && (len != h->blob_len || memcmp(blob, h->blob, len) != 0)) {
		snprintf(message, sizeof(message), "public key file %s is not "
		    "the public half of the private key at line %u (the server "
		    "would refuse it as \"Username/PublicKey combination "
		    "invalid\"); ssh-keygen -y -f %s > %s writes the one that "
		    "is", f->path, priv->line, priv->path, f->path);
		ssh_problem(f, POLICY_DIAG_ERROR, display_name, diags, message,
		    "is not the public half of its private key", sentence,
		    sentence_size);
	}
	free(blob);
}

/*
 * An encrypted key without a passphrase and a public_key of another
 * pair, found on what the private key file says in the clear
 * (policy/ssh_private_key.h: no byte of its secret is read here).
 */
static void
ssh_key_check(const struct policy *p, const struct policy_credential *c,
    const char *display_name, struct policy_diags *diags, char *sentence,
    size_t sentence_size)
{
	const struct policy_file *f = file_named(p, c->private_key);
	char why[POLICY_WHY_MAX], message[POLICY_WHY_MAX + PATH_MAX];
	struct ssh_key_head *h;
	size_t size;
	bool loose, ok;
	int fd;

	if (f == NULL || (fd = policy_file_open(f->path, f->kind,
	    p->strict_credentials, &size, &loose, why, sizeof(why))) == -1)
		return;		/* file_check() said why */
	if ((h = malloc(sizeof(*h))) == NULL) {
		(void)close(fd);
		return;
	}
	ok = ssh_private_key_head(fd, h, why, sizeof(why));
	(void)close(fd);
	if (!ok) {
		snprintf(message, sizeof(message), "secret file %s %s", f->path,
		    why);
		ssh_problem(f, POLICY_DIAG_ERROR, display_name, diags, message,
		    "is not a whole OpenSSH private key", sentence,
		    sentence_size);
	} else if (h->encrypted && c->passphrase_file == NULL) {
		snprintf(message, sizeof(message), "secret file %s is an "
		    "encrypted private key (%s) and credential %s names no "
		    "passphrase_file: the server would refuse it as "
		    "\"Username/PublicKey combination invalid\"; name one, or "
		    "remove the passphrase (ssh-keygen -p -N '' -f %s)", f->path,
		    h->format == SSH_KEY_PEM ? "PEM" : h->cipher, c->name,
		    f->path);
		ssh_problem(f, POLICY_DIAG_ERROR, display_name, diags, message,
		    "is an encrypted private key and its credential names no "
		    "passphrase_file", sentence,
		    sentence_size);
	} else if (c->public_key != NULL)
		key_pair_check(p, c, h, display_name, diags, sentence,
		    sentence_size);
	explicit_bzero(h, sizeof(*h));
	free(h);
}

/* What an ssh target's files say together (docs/design.md section 4). */
static void
ssh_checks(const struct policy *p, const char *display_name,
    struct policy_diags *diags, char *sentence, size_t sentence_size)
{
	size_t i;

	for (i = 0; i < p->target_count; i++)
		if (p->targets[i].type == TARGET_SSH &&
		    p->targets[i].known_hosts != NULL)
			known_hosts_entry_check(p, &p->targets[i], display_name,
			    diags, sentence, sentence_size);
	for (i = 0; i < p->credential_count; i++)
		if (p->credentials[i].type == CREDENTIAL_SSH_KEY)
			ssh_key_check(p, &p->credentials[i], display_name,
			    diags, sentence, sentence_size);
}

bool
policy_check_start(const struct policy *policy, const char *display_name,
    struct policy_diags *diags, char *sentence, size_t sentence_size)
{
	size_t before = diags->errors, i;

	if (sentence != NULL)
		sentence[0] = '\0';
	for (i = 0; i < policy->file_count; i++)
		file_check(policy, &policy->files[i], display_name, diags,
		    sentence, sentence_size);
	if (diags->errors == before)	/* each file opens and reads */
		ssh_checks(policy, display_name, diags, sentence,
		    sentence_size);
	for (i = 0; i < policy->credential_count; i++)
		credential_size_check(policy, &policy->credentials[i],
		    display_name, diags, sentence, sentence_size);
	if (!policy_check_catalog_pin(policy, display_name, diags) &&
	    sentence != NULL && sentence[0] == '\0')
		snprintf(sentence, sentence_size, "its catalog no longer "
		    "matches the catalog_sha256 pin at line %u of its policy",
		    policy->catalog_pin_line);
	(void)state_dir_ok(policy, display_name, diags, sentence,
	    sentence_size);
	return diags->errors == before;
}

/* Where a profile or tool is written is not kept: the warnings point at
 * the top of the file and name what they mean. */
static void
grants_warn(const char *display_name, struct policy_diags *diags,
    const char *message)
{
	policy_diags_add(diags, POLICY_DIAG_WARNING, display_name, 1, 1,
	    message);
}

static bool
scope_granted(const struct policy *p, const char *scope)
{
	size_t i, j;

	for (i = 0; i < p->profile_count; i++)
		for (j = 0; j < p->profiles[i].scope_count; j++)
			if (strcmp(p->profiles[i].scopes[j], scope) == 0)
				return true;
	return false;
}

static bool
scope_warned_before(const struct policy *p, size_t tool)
{
	size_t i;

	for (i = 0; i < tool; i++)
		if (strcmp(p->tools[i].scope, p->tools[tool].scope) == 0)
			return true;
	return false;
}

void
policy_check_grants(const struct policy *p, const char *display_name,
    struct policy_diags *diags)
{
	char message[POLICY_WHY_MAX];
	size_t i, j;

	for (i = 0; i < p->tool_count; i++) {
		if (scope_granted(p, p->tools[i].scope) ||
		    scope_warned_before(p, i))
			continue;
		snprintf(message, sizeof(message), "scope \"%.64s\" (of tool "
		    "%.64s) is granted by no profile: no client can call it",
		    p->tools[i].scope, p->tools[i].name);
		grants_warn(display_name, diags, message);
	}
	for (i = 0; i < p->profile_count; i++) {
		for (j = 0; j < p->tool_count; j++)
			if (policy_authorize(&p->profiles[i], &p->tools[j],
			    NULL))
				break;
		if (j < p->tool_count)
			continue;
		snprintf(message, sizeof(message), "profile \"%.64s\" grants no "
		    "tool: a client it matches sees an empty catalog",
		    p->profiles[i].name);
		grants_warn(display_name, diags, message);
	}
}
