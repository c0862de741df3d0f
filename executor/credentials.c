/*
 * The executor's credential store (executor/credentials.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base64.h"
#include "common/log.h"
#include "executor/credentials.h"
#include "policy/startcheck.h"

/*
 * Every file is opened and checked by policy_file_open(), the function
 * sp check and the broker ran on the same paths moments before: a
 * symlink or another file swapped in since must not redirect the read,
 * and the descriptor's fstat sees the file actually opened.
 */
static int
credential_open(const char *path, enum policy_file_kind kind, bool strict,
    size_t *size)
{
	char why[POLICY_WHY_MAX];
	bool loose;
	int fd;

	fd = policy_file_open(path, kind, strict, size, &loose, why,
	    sizeof(why));
	if (fd == -1)
		log_error("%s %s", path, why);
	else if (loose)
		log_warn("%s %s", path, why);
	return fd;
}

/* Reads exactly len bytes; a file that changed size meanwhile fails. */
static bool
credential_read_all(int fd, const char *path, unsigned char *dst, size_t len)
{
	size_t got = 0;
	ssize_t n;
	char extra;

	while (got < len) {
		n = read(fd, dst + got, len - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_error("%s: %s", path,
			    n == 0 ? "shorter than its size" : strerror(errno));
			return false;
		}
		got += (size_t)n;
	}
	if (read(fd, &extra, 1) != 0) {
		log_error("%s: changed while read", path);
		return false;
	}
	return true;
}

/* A secret file into secret memory, NUL-terminated. */
static bool
credential_read_secret(const char *path, bool strict, bool trim_newline,
    struct secret *s, size_t *len)
{
	size_t size;
	bool ok;
	int fd;

	if ((fd = credential_open(path, POLICY_FILE_SECRET, strict, &size)) ==
	    -1)
		return false;
	if (!secret_alloc(s, size + 1)) {
		log_error("%s: %s", path,
		    strerror(errno));
		(void)close(fd);
		return false;
	}
	ok = credential_read_all(fd, path, s->ptr, size);
	(void)close(fd);
	if (!ok) {
		secret_free(s);
		return false;
	}
	if (trim_newline && size > 0 && s->ptr[size - 1] == '\n')
		s->ptr[--size] = '\0';
	*len = size;
	return true;
}

/* A public file (key, CA bundle, known_hosts) into heap memory, its
 * content checked as sp check checks it. */
static bool
credential_read_public(const char *path, enum policy_file_kind kind,
    char **out, size_t *len)
{
	char why[POLICY_WHY_MAX];
	size_t size;
	char *buf;
	bool ok;
	int fd;

	if ((fd = credential_open(path, kind, false, &size)) == -1)
		return false;
	if ((buf = calloc(1, size + 1)) == NULL) {
		log_error("%s: out of memory", path);
		(void)close(fd);
		return false;
	}
	ok = credential_read_all(fd, path, (unsigned char *)buf, size);
	(void)close(fd);
	if (ok && !(ok = policy_file_content_ok(kind, buf, size, why,
	    sizeof(why))))
		log_error("%s %s", path, why);
	if (!ok) {
		free(buf);
		return false;
	}
	*out = buf;
	*len = size;
	return true;
}

/* What a basic credential goes out as, in secret memory too. */
static bool
credential_encode_basic(const struct policy_credential *c,
    struct credential_bytes *b)
{
	size_t size = base64_encode_size(b->secret_len);

	if (size == 0 || !secret_alloc(&b->encoded, size)) {
		log_error("%s: cannot encode: %s", c->file, strerror(errno));
		return false;
	}
	if (!base64_encode(b->secret.ptr, b->secret_len, (char *)b->encoded.ptr,
	    size)) {
		log_error("%s: cannot encode", c->file);
		return false;
	}
	b->encoded_len = size - 1;
	return true;
}

static bool
credential_load_one(const struct policy_credential *c, bool strict,
    struct credential_bytes *b)
{
	if (c->type == CREDENTIAL_BASIC)
		return credential_read_secret(c->file, strict, true,
		    &b->secret, &b->secret_len) &&
		    credential_encode_basic(c, b);
	if (c->type != CREDENTIAL_SSH_KEY)
		return credential_read_secret(c->file, strict, true,
		    &b->secret, &b->secret_len);
	if (!credential_read_secret(c->private_key, strict, false,
	    &b->secret, &b->secret_len))
		return false;
	if (c->public_key != NULL && !credential_read_public(c->public_key,
	    POLICY_FILE_PUBLIC_KEY, &b->public_key, &b->public_key_len))
		return false;
	if (c->passphrase_file != NULL && !credential_read_secret(
	    c->passphrase_file, strict, true, &b->passphrase,
	    &b->passphrase_len))
		return false;
	return true;
}

static bool
credential_load_target(const struct policy_target *t, struct target_files *f)
{
	if (t->ca_file != NULL && !credential_read_public(t->ca_file,
	    POLICY_FILE_CA, &f->ca, &f->ca_len))
		return false;
	if (t->known_hosts != NULL && !credential_read_public(t->known_hosts,
	    POLICY_FILE_KNOWN_HOSTS, &f->known_hosts, &f->known_hosts_len))
		return false;
	return true;
}

/*
 * What a result must never show of one credential (executor/redact.h):
 * an HTTP secret and a basic credential's password with their variants;
 * an SSH key and its passphrase, which no target receives, as they are.
 * A short HTTP secret was refused before (credential_long_enough); a
 * passphrase under POLICY_SECRET_MIN is not searched for: no target
 * receives it, and matching so short a needle withholds ordinary text.
 */
static size_t
credential_subjects(const struct policy_credential *c,
    const struct credential_bytes *b, const unsigned char **ptr,
    size_t *len, bool *variants)
{
	const unsigned char *colon = NULL;
	size_t n = 0;

	if (c->type == CREDENTIAL_BASIC)
		colon = memchr(b->secret.ptr, ':', b->secret_len);
	*variants = c->type != CREDENTIAL_SSH_KEY;
	ptr[n] = b->secret.ptr, len[n++] = b->secret_len;
	if (colon != NULL)
		ptr[n] = colon + 1, len[n++] = b->secret_len -
		    (size_t)(colon + 1 - b->secret.ptr);
	if (b->passphrase_len >= POLICY_SECRET_MIN)
		ptr[n] = b->passphrase.ptr, len[n++] = b->passphrase_len;
	return n;
}

#define CREDENTIAL_SUBJECTS 3	/* secret, password or passphrase */

static bool
credential_withhold_all(struct credential_store *store,
    const struct policy *policy)
{
	const unsigned char *ptr[CREDENTIAL_SUBJECTS];
	size_t len[CREDENTIAL_SUBJECTS], pool = 0, i, j, n;
	bool variants;

	for (i = 0; i < store->cred_count; i++) {
		n = credential_subjects(&policy->credentials[i],
		    &store->creds[i], ptr, len, &variants);
		for (j = 0; j < n; j++)
			pool += redact_pool_size(len[j], variants);
	}
	if (!redact_set_init(&store->withhold, store->cred_count *
	    CREDENTIAL_SUBJECTS * REDACT_VARIANTS, pool))
		return false;
	for (i = 0; i < store->cred_count; i++) {
		n = credential_subjects(&policy->credentials[i],
		    &store->creds[i], ptr, len, &variants);
		for (j = 0; j < n; j++)
			if (len[j] > REDACT_NEEDLE_MAX)
				log_warn("credential %s: longer than %u bytes, "
				    "not searched for in results",
				    policy->credentials[i].name,
				    REDACT_NEEDLE_MAX);
			else if (!redact_set_add(&store->withhold, ptr[j],
			    len[j], variants)) {
				log_error("credential %s: no room for its "
				    "variants", policy->credentials[i].name);
				return false;
			}
	}
	return true;
}

/* A secret too short to withhold safely is refused at start. */
static bool
credential_long_enough(const struct policy_credential *c,
    const struct credential_bytes *b)
{
	char why[POLICY_WHY_MAX];

	if (policy_credential_length_ok(c, b->secret.ptr, b->secret_len, why,
	    sizeof(why)))
		return true;
	log_error("credential %s: %s", c->name, why);
	return false;
}

bool
credential_store_load(struct credential_store *store,
    const struct policy *policy)
{
	size_t i;

	memset(store, 0, sizeof(*store));
	store->creds = calloc(policy->credential_count + 1,
	    sizeof(*store->creds));
	store->targets = calloc(policy->target_count + 1,
	    sizeof(*store->targets));
	if (store->creds == NULL || store->targets == NULL) {
		log_error("out of memory");
		credential_store_free(store);
		return false;
	}
	store->cred_count = policy->credential_count;
	store->target_count = policy->target_count;
	for (i = 0; i < policy->credential_count; i++)
		if (!credential_load_one(&policy->credentials[i],
		    policy->strict_credentials, &store->creds[i]) ||
		    !credential_long_enough(&policy->credentials[i],
		    &store->creds[i]))
			goto fail;
	for (i = 0; i < policy->target_count; i++)
		if (!credential_load_target(&policy->targets[i],
		    &store->targets[i]))
			goto fail;
	if (!credential_withhold_all(store, policy))
		goto fail;
	return true;
fail:
	credential_store_free(store);
	return false;
}

void
credential_store_free(struct credential_store *store)
{
	size_t i;

	for (i = 0; store->creds != NULL && i < store->cred_count; i++) {
		secret_free(&store->creds[i].secret);
		secret_free(&store->creds[i].passphrase);
		secret_free(&store->creds[i].encoded);
		free(store->creds[i].public_key);
	}
	for (i = 0; store->targets != NULL && i < store->target_count; i++) {
		free(store->targets[i].ca);
		free(store->targets[i].known_hosts);
	}
	free(store->creds);
	free(store->targets);
	redact_set_free(&store->withhold);
	memset(store, 0, sizeof(*store));
}
