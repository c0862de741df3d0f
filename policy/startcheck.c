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
#include <unistd.h>

#include "common/base64.h"
#include "policy/authz.h"
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

/* Reads what policy_file_open() opened, then the content rules. */
static bool
file_read_check(int fd, size_t size, enum policy_file_kind kind, char *why,
    size_t why_size)
{
	char *buf;
	size_t got = 0;
	ssize_t r;
	bool ok;

	if ((buf = malloc(size + 1)) == NULL) {
		snprintf(why, why_size, "cannot be read: out of memory");
		return false;
	}
	while (got < size && ((r = read(fd, buf + got, size - got)) > 0 ||
	    (r == -1 && errno == EINTR)))
		got += r > 0 ? (size_t)r : 0;
	ok = got == size;
	if (!ok)
		snprintf(why, why_size, "cannot be read whole");
	else
		ok = policy_file_content_ok(kind, buf, size, why, why_size);
	explicit_bzero(buf, size);
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
	char message[POLICY_WHY_MAX + PATH_MAX];
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
	if (sentence != NULL && sentence[0] == '\0')
		snprintf(sentence, sentence_size, "the state_dir named at line "
		    "%u of its policy: %s", policy->state_dir_line, why);
	snprintf(message, sizeof(message), "state_dir %s: %s",
	    policy->state_dir, why);
	policy_diags_add(diags, POLICY_DIAG_ERROR, display_name,
	    policy->state_dir_line, policy->state_dir_col, message);
	return false;
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
