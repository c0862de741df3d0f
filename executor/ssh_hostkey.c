/*
 * Host key verification, done after key exchange and before any request
 * is sent.  Only an exact known_hosts match and/or an equal pinned
 * SHA-256 pass; unknown, changed or unreadable all deny.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/log.h"
#include "executor/ssh_int.h"

#define HOST_NAME_SIZE 300

void
ssh_fingerprint_format(const uint8_t digest[HASH_SHA256_LEN],
    char out[SSH_FINGERPRINT_SIZE])
{
	char b64[BASE64_ENCODE_SIZE(HASH_SHA256_LEN)];
	size_t n = 0;

	if (base64_encode(digest, HASH_SHA256_LEN, b64, sizeof(b64)))
		n = strlen(b64);
	while (n > 0 && b64[n - 1] == '=')	/* OpenSSH prints it unpadded */
		n--;
	snprintf(out, SSH_FINGERPRINT_SIZE, "SHA256:%.*s", (int)n, b64);
}

/* Fingerprint of a base64 key blob as known_hosts stores it. */
static bool
fingerprint_of_base64(const char *b64, char out[SSH_FINGERPRINT_SIZE])
{
	size_t len = strlen(b64), n;
	uint8_t *blob;
	uint8_t digest[HASH_SHA256_LEN];

	if (len == 0 || len % 4 != 0 || len > 64 * 1024)
		return false;
	if ((blob = malloc(len / 4 * 3)) == NULL)
		return false;
	if (!base64_decode(b64, len, blob, len / 4 * 3, &n)) {
		free(blob);
		return false;
	}
	hash_sha256(blob, n, digest);
	free(blob);
	ssh_fingerprint_format(digest, out);
	return true;
}

/* The libssh2 known_hosts key type matching a session host key type. */
static int
knownhost_key_type(int hostkey_type)
{
	switch (hostkey_type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		return 0;
	}
}

/*
 * libssh2 1.10 takes the last byte of a line for its newline, so a line
 * without comment loses a key character unless it is handed over with one.
 */
static int
known_hosts_readline(LIBSSH2_KNOWNHOSTS *kh, const char *line, size_t n)
{
	char *copy;
	int rc;

	if ((copy = malloc(n + 1)) == NULL)
		return LIBSSH2_ERROR_ALLOC;
	memcpy(copy, line, n);
	copy[n] = '\n';
	rc = libssh2_knownhost_readline(kh, copy, n + 1,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH);
	free(copy);
	return rc;
}

static bool
is_marker_line(const char *line, size_t n)
{
	size_t i = 0;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	return i < n && line[i] == '@';
}

/*
 * Feeds every line to libssh2.  A line it cannot parse fails the whole
 * load, and so does a marker line (@revoked, @cert-authority), which
 * libssh2 would misread as a host name: an ignored revocation must not
 * let a key through.
 */
static bool
known_hosts_load(LIBSSH2_KNOWNHOSTS *kh, const char *bytes, size_t len,
    char *message, size_t size)
{
	size_t off = 0, lineno = 0;

	while (off < len) {
		const char *line = bytes + off, *nl;
		size_t n;

		nl = memchr(line, '\n', len - off);
		n = nl != NULL ? (size_t)(nl - line) : len - off;
		off += n + (nl != NULL);
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		if (is_marker_line(line, n)) {
			snprintf(message, size, "known_hosts line %zu: markers "
			    "such as @revoked are not supported", lineno);
			return false;
		}
		if (known_hosts_readline(kh, line, n) != 0) {
			snprintf(message, size,
			    "known_hosts line %zu not understood", lineno);
			return false;
		}
	}
	return true;
}

/* OpenSSH's name for host:port in known_hosts. */
static void
known_hosts_name(const char *host, uint16_t port, char out[HOST_NAME_SIZE])
{
	if (port == 22)
		snprintf(out, HOST_NAME_SIZE, "%s", host);
	else
		snprintf(out, HOST_NAME_SIZE, "[%s]:%u", host, (unsigned)port);
}

/* One name's verdict on the offered key; found is kh's, when set. */
static int
known_hosts_lookup(LIBSSH2_KNOWNHOSTS *kh, const char *name,
    const char *key, size_t key_len, int key_type,
    struct libssh2_knownhost **found)
{
	/* port -1: the name already carries it, and no plain-host fallback */
	return libssh2_knownhost_checkp(kh, name, -1, key, key_len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
	    knownhost_key_type(key_type), found);
}

static void
mismatch_message(const char *name, const struct libssh2_knownhost *found,
    const char *offered, char *message, size_t size)
{
	char expected[SSH_FINGERPRINT_SIZE];

	if (found != NULL && fingerprint_of_base64(found->key, expected))
		snprintf(message, size, "host key mismatch for %s: expected %s "
		    "(known_hosts), offered %s", name, expected, offered);
	else
		snprintf(message, size, "host key mismatch for %s: offered %s",
		    name, offered);
}

/*
 * The key must match under the host's name or its address, and differ
 * under neither: a changed key for either name refuses, as OpenSSH's
 * CheckHostIP does under strict checking.
 */
static bool
known_hosts_check(const struct ssh_target_conf *t, LIBSSH2_KNOWNHOSTS *kh,
    const char *key, size_t key_len, int key_type, const char *offered,
    char *message, size_t size)
{
	const char *names[2] = { t->host_name, t->address };
	struct libssh2_knownhost *found;
	char name[HOST_NAME_SIZE];
	bool matched = false;
	size_t i;
	int rc;

	for (i = 0; i < 2; i++) {
		if (names[i] == NULL)
			continue;
		known_hosts_name(names[i], t->port, name);
		found = NULL;
		rc = known_hosts_lookup(kh, name, key, key_len, key_type,
		    &found);
		if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
			mismatch_message(name, found, offered, message, size);
			return false;
		}
		if (rc == LIBSSH2_KNOWNHOST_CHECK_FAILURE) {
			snprintf(message, size, "host key not verified for %s: "
			    "known_hosts check failed, offered %s", name,
			    offered);
			return false;
		}
		matched = matched || rc == LIBSSH2_KNOWNHOST_CHECK_MATCH;
	}
	if (matched)
		return true;
	known_hosts_name(names[0] != NULL ? names[0] : names[1], t->port, name);
	snprintf(message, size, "host key not verified for %s: no known_hosts "
	    "entry of its type, offered %s", name, offered);
	return false;
}

/* known_hosts parsed into libssh2's form; NULL (message set) if it fails. */
static LIBSSH2_KNOWNHOSTS *
known_hosts_open(LIBSSH2_SESSION *session, const struct ssh_target_conf *t,
    char *message, size_t size)
{
	LIBSSH2_KNOWNHOSTS *kh;

	if ((kh = libssh2_knownhost_init(session)) == NULL) {
		snprintf(message, size, "cannot hold known_hosts");
		return NULL;
	}
	if (!known_hosts_load(kh, t->known_hosts, t->known_hosts_len,
	    message, size)) {
		libssh2_knownhost_free(kh);
		return NULL;
	}
	return kh;
}

static bool
verify_known_hosts(LIBSSH2_SESSION *session, const struct ssh_target_conf *t,
    const char *key, size_t key_len, int key_type, const char *offered,
    char *message, size_t size)
{
	LIBSSH2_KNOWNHOSTS *kh;
	bool ok;

	if ((kh = known_hosts_open(session, t, message, size)) == NULL) {
		size_t used = strnlen(message, size);

		snprintf(message + used, size - used, "; offered %s", offered);
		return false;
	}
	ok = known_hosts_check(t, kh, key, key_len, key_type, offered,
	    message, size);
	libssh2_knownhost_free(kh);
	return ok;
}

/* Host key algorithms for each known_hosts key type, in OpenSSH's order. */
static const struct {
	int key_type;
	const char *algorithms;
} hostkey_algorithms[] = {
	{ LIBSSH2_KNOWNHOST_KEY_ED25519, "ssh-ed25519" },
	{ LIBSSH2_KNOWNHOST_KEY_ECDSA_256, "ecdsa-sha2-nistp256" },
	{ LIBSSH2_KNOWNHOST_KEY_ECDSA_384, "ecdsa-sha2-nistp384" },
	{ LIBSSH2_KNOWNHOST_KEY_ECDSA_521, "ecdsa-sha2-nistp521" },
	{ LIBSSH2_KNOWNHOST_KEY_SSHRSA, "rsa-sha2-512,rsa-sha2-256,ssh-rsa" },
	{ LIBSSH2_KNOWNHOST_KEY_SSHDSS, "ssh-dss" },
};

/*
 * Whether known_hosts holds a key of this type for the target: a key no
 * entry can equal then compares as a mismatch rather than as not found
 * (hashed names included).
 */
static bool
known_hosts_has_type(const struct ssh_target_conf *t, LIBSSH2_KNOWNHOSTS *kh,
    int key_type)
{
	const char *names[2] = { t->host_name, t->address };
	char name[HOST_NAME_SIZE];
	size_t i;

	for (i = 0; i < 2; i++) {
		if (names[i] == NULL)
			continue;
		known_hosts_name(names[i], t->port, name);
		if (libssh2_knownhost_checkp(kh, name, -1, "-", 1,
		    LIBSSH2_KNOWNHOST_TYPE_PLAIN |
		    LIBSSH2_KNOWNHOST_KEYENC_BASE64 | key_type, NULL) ==
		    LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
			return true;
	}
	return false;
}

/* Appends the algorithms of the key types known_hosts holds for t. */
static void
known_hosts_algorithms(const struct ssh_target_conf *t,
    LIBSSH2_KNOWNHOSTS *kh, char *out, size_t size)
{
	size_t i, used;

	for (i = 0; i < sizeof(hostkey_algorithms) /
	    sizeof(hostkey_algorithms[0]); i++) {
		if (!known_hosts_has_type(t, kh, hostkey_algorithms[i].key_type))
			continue;
		used = strnlen(out, size);
		snprintf(out + used, size - used, "%s%s", used > 0 ? "," : "",
		    hostkey_algorithms[i].algorithms);
	}
}

/* Whether the comma-separated list holds name as one of its items. */
static bool
list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* Appends every other algorithm libssh2 supports, in its own order. */
static void
other_algorithms(LIBSSH2_SESSION *session, char *out, size_t size)
{
	const char **algs = NULL;
	size_t used;
	int i, n;

	if ((n = libssh2_session_supported_algs(session,
	    LIBSSH2_METHOD_HOSTKEY, &algs)) <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (list_has(out, algs[i]))
			continue;
		used = strnlen(out, size);
		snprintf(out + used, size - used, ",%s", algs[i]);
	}
	libssh2_free(session, algs);
}

void
ssh_hostkey_prefer(LIBSSH2_SESSION *session, const struct ssh_target_conf *t)
{
	LIBSSH2_KNOWNHOSTS *kh;
	char prefs[512] = "", message[256];

	if (t->known_hosts == NULL ||
	    (kh = known_hosts_open(session, t, message, sizeof(message))) ==
	    NULL)
		return;		/* verification says why, and denies */
	known_hosts_algorithms(t, kh, prefs, sizeof(prefs));
	libssh2_knownhost_free(kh);
	if (prefs[0] == '\0')
		return;
	other_algorithms(session, prefs, sizeof(prefs));
	if (libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY,
	    prefs) != 0)
		log_warn("host key algorithms %s not set", prefs);
}

static bool
verify_pinned(const struct ssh_target_conf *t,
    const uint8_t digest[HASH_SHA256_LEN], const char *offered,
    char *message, size_t size)
{
	char expected[SSH_FINGERPRINT_SIZE];

	if (hash_equal_ct(digest, t->host_key_sha256, HASH_SHA256_LEN))
		return true;
	ssh_fingerprint_format(t->host_key_sha256, expected);
	snprintf(message, size, "host key mismatch for %s port %u: expected "
	    "%s (pinned), offered %s", t->address, (unsigned)t->port,
	    expected, offered);
	return false;
}

/* The key type's name as known_hosts writes it, for messages. */
static const char *
hostkey_type_name(int hostkey_type)
{
	switch (hostkey_type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
	default:
		return "key";
	}
}

bool
ssh_hostkey_verify(LIBSSH2_SESSION *session,
    const struct ssh_target_conf *t, char *message, size_t size)
{
	const char *key;
	size_t key_len = 0;
	int key_type = 0;
	uint8_t digest[HASH_SHA256_LEN];
	char fingerprint[SSH_FINGERPRINT_SIZE], offered[80];

	if ((key = libssh2_session_hostkey(session, &key_len, &key_type)) ==
	    NULL || key_len == 0) {
		snprintf(message, size, "server offered no host key");
		return false;
	}
	hash_sha256(key, key_len, digest);
	ssh_fingerprint_format(digest, fingerprint);
	/* the type too: a pin of another of the server's keys reads plainly */
	snprintf(offered, sizeof(offered), "%s %s", hostkey_type_name(key_type),
	    fingerprint);
	if (t->known_hosts == NULL && !t->has_host_key_sha256) {
		snprintf(message, size, "no known_hosts and no pinned host key "
		    "for %s; offered %s", t->address, offered);
		return false;
	}
	if (t->known_hosts != NULL && !verify_known_hosts(session, t, key,
	    key_len, key_type, offered, message, size))
		return false;
	if (t->has_host_key_sha256 &&
	    !verify_pinned(t, digest, offered, message, size))
		return false;
	return true;
}
