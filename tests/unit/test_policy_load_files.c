/*
 * policy_check_start() on secret files: missing, a symlink, not regular,
 * over 4 MiB or owned by another user (not root) is an error; too open a
 * warning, an error under "strict_credentials".  policy_file_content_ok()
 * on what known_hosts, public key, CA and audit key files hold.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/load.h"
#include "policy/startcheck.h"

struct fixture {
	char dir[64];
	char token[128];
	char key[128];
	char text[2048];
};

static void
make_secret(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "s3cret-$(id)\n", 13), 13);
	close(fd);
	cr_assert_eq(chmod(path, mode), 0);
}

/* A bearer token on line 2 and an ssh key on line 3 of the policy. */
static void
fixture_init(struct fixture *f, const char *extra)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/sp-credfiles-XXXXXX");
	cr_assert_not_null(mkdtemp(f->dir));
	snprintf(f->token, sizeof(f->token), "%s/api.token", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/id_ed25519", f->dir);
	snprintf(f->text, sizeof(f->text), "{\"sallyport\": 1,%s \"credentials\": {\n"
	    "\"api\": {\"type\": \"bearer\", \"file\": \"%s\"},\n"
	    "\"ops\": {\"type\": \"ssh-key\", \"private_key\": \"%s\"}}}",
	    extra, f->token, f->key);
}

static void
fixture_fini(struct fixture *f)
{
	unlink(f->token);
	unlink(f->key);
	rmdir(f->dir);
}

/* Loads f->text, runs the check, returns it; diags filled. */
static bool
check(struct fixture *f, struct policy_diags *d)
{
	struct policy *p = policy_load("p.json", f->text, strlen(f->text), d);
	bool ok;

	cr_assert_not_null(p, "%s", d->count ? d->items[0].text : "");
	cr_assert_eq(p->file_count, 2);
	ok = policy_check_start(p, "p.json", d, NULL, 0);
	policy_free(p);
	return ok;
}

Test(credfiles, private_files_pass)
{
	struct fixture f;
	struct policy_diags d = { 0 };

	fixture_init(&f, "");
	make_secret(f.token, 0600);
	make_secret(f.key, 0400);
	cr_assert(check(&f, &d));
	cr_assert_eq(d.count, 0);
	policy_diags_free(&d);
	fixture_fini(&f);
}

/* A token file too small to hold POLICY_SECRET_MIN bytes, judged by
 * its size (the bytes are the executor's): named, never quoted. */
Test(credfiles, a_token_too_short_is_an_error)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	int fd;

	fixture_init(&f, "");
	make_secret(f.key, 0400);
	fd = open(f.token, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "q\"$(x\n", 6), 6);
	close(fd);
	cr_assert_not(check(&f, &d));
	cr_assert_eq(d.count, 1);
	cr_assert_str_eq(d.items[0].text, "p.json:2:35: credential api: its "
	    "secret is shorter than 8 bytes: too short to be withheld from "
	    "results safely");
	policy_diags_free(&d);
	fixture_fini(&f);
}

Test(credfiles, missing_file_is_an_error_at_its_path)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	char want[512];

	fixture_init(&f, "");
	make_secret(f.token, 0600);
	cr_assert_not(check(&f, &d));
	cr_assert_eq(d.count, 1);
	snprintf(want, sizeof(want), "p.json:3:43: secret file %s cannot be "
	    "opened: No such file or directory", f.key);
	cr_assert_str_eq(d.items[0].text, want);
	policy_diags_free(&d);
	fixture_fini(&f);
}

Test(credfiles, open_modes_warn_or_fail_when_strict)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	char want[512];

	fixture_init(&f, "");
	make_secret(f.token, 0640);
	make_secret(f.key, 0604);
	cr_assert(check(&f, &d));
	cr_assert_eq(d.count, 2);
	cr_assert_eq(d.errors, 0);
	snprintf(want, sizeof(want), "p.json:2:35: warning: secret file %s is "
	    "open to group or others (mode 0640); chmod 600 it", f.token);
	cr_assert_str_eq(d.items[0].text, want);
	cr_assert_eq(d.items[1].severity, POLICY_DIAG_WARNING);
	policy_diags_free(&d);
	fixture_fini(&f);

	fixture_init(&f, " \"strict_credentials\": true,");
	make_secret(f.token, 0600);
	make_secret(f.key, 0660);
	cr_assert_not(check(&f, &d));
	cr_assert_eq(d.errors, 1);
	snprintf(want, sizeof(want), "p.json:3:43: secret file %s is open to "
	    "group or others (mode 0660); chmod 600 it (strict_credentials)",
	    f.key);
	cr_assert_str_eq(d.items[0].text, want);
	policy_diags_free(&d);
	fixture_fini(&f);
}

/* The executor refuses such a file at start: so does the check. */
Test(credfiles, other_owner_is_an_error)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	uid_t other = 65534;

	fixture_init(&f, "");
	make_secret(f.token, 0600);
	make_secret(f.key, 0600);
	if (geteuid() != 0)
		cr_skip_test("chown to another user needs root");
	cr_assert_eq(chown(f.token, other, (gid_t)-1), 0);
	cr_assert_not(check(&f, &d));
	cr_assert_eq(d.count, 1);
	cr_assert(strstr(d.items[0].text, "p.json:2:35: secret file ")
	    == d.items[0].text, "%s", d.items[0].text);
	cr_assert(strstr(d.items[0].text, "is owned by uid 65534, neither the "
	    "running user (uid 0) nor root") != NULL, "%s", d.items[0].text);
	policy_diags_free(&d);
	fixture_fini(&f);
}

Test(credfiles, directory_is_not_a_secret_file)
{
	struct fixture f;
	struct policy_diags d = { 0 };

	fixture_init(&f, "");
	make_secret(f.key, 0600);
	cr_assert_eq(mkdir(f.token, 0700), 0);
	cr_assert_not(check(&f, &d));
	cr_assert(strstr(d.items[0].text, "is not a regular file") != NULL);
	policy_diags_free(&d);
	rmdir(f.token);
	fixture_fini(&f);
}

Test(credfiles, symlink_is_an_error)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	char real[160];

	fixture_init(&f, "");
	snprintf(real, sizeof(real), "%s/real", f.dir);
	make_secret(real, 0600);
	make_secret(f.key, 0600);
	cr_assert_eq(symlink(real, f.token), 0);
	cr_assert_not(check(&f, &d));
	cr_assert_eq(d.errors, 1);
	cr_assert(strstr(d.items[0].text, "is a symbolic link") != NULL, "%s",
	    d.items[0].text);
	policy_diags_free(&d);
	unlink(real);
	fixture_fini(&f);
}

Test(credfiles, over_four_mib_is_an_error)
{
	struct fixture f;
	struct policy_diags d = { 0 };

	fixture_init(&f, "");
	make_secret(f.token, 0600);
	make_secret(f.key, 0600);
	cr_assert_eq(truncate(f.key, POLICY_FILE_MAX), 0);
	cr_assert(check(&f, &d), "%s", d.count ? d.items[0].text : "");
	policy_diags_free(&d);
	cr_assert_eq(truncate(f.key, POLICY_FILE_MAX + 1), 0);
	cr_assert_not(check(&f, &d));
	cr_assert(strstr(d.items[0].text, "is larger than 4194304 bytes") !=
	    NULL, "%s", d.items[0].text);
	policy_diags_free(&d);
	fixture_fini(&f);
}

static bool
content(enum policy_file_kind kind, const char *text, char *why, size_t size)
{
	why[0] = '\0';
	return policy_file_content_ok(kind, text, strlen(text), why, size);
}

#define ED25519_LINE "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"

Test(content, known_hosts)
{
	char why[POLICY_WHY_MAX];

	cr_assert(content(POLICY_FILE_KNOWN_HOSTS, "# comment\n\n"
	    "[127.0.0.1]:2222 " ED25519_LINE "\r\n", why, sizeof(why)), "%s",
	    why);
	cr_assert(content(POLICY_FILE_KNOWN_HOSTS, "|1|c2FsdA==|aGFzaA== "
	    ED25519_LINE " a comment", why, sizeof(why)), "%s", why);
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "", why, sizeof(why)));
	cr_assert(strstr(why, "holds no host key") != NULL, "%s", why);
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "# only\n", why,
	    sizeof(why)));
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "h " ED25519_LINE "\n"
	    "@revoked * " ED25519_LINE "\n", why, sizeof(why)));
	cr_assert_str_eq(why, "fails at its line 2: markers such as @revoked "
	    "are not supported");
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "h ssh-rsa "
	    "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
	    why, sizeof(why)), "a blob of another type");
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "h ssh-ed25519 $(id)",
	    why, sizeof(why)));
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "h ssh-ed25519", why,
	    sizeof(why)));
	cr_assert_not(content(POLICY_FILE_KNOWN_HOSTS, "not a known hosts "
	    "line\n", why, sizeof(why)));
	cr_assert_str_eq(why, "fails at its line 1, which is not \"HOSTS "
	    "KEYTYPE BASE64-KEY\" with a key type libssh2 reads");
}

Test(content, public_key_ca_and_audit_key)
{
	char why[POLICY_WHY_MAX], key[POLICY_AUDIT_KEY_MAX + 2];

	cr_assert(content(POLICY_FILE_PUBLIC_KEY, ED25519_LINE " me@host\n",
	    why, sizeof(why)));
	cr_assert_not(content(POLICY_FILE_PUBLIC_KEY, "-----BEGIN OPENSSH "
	    "PRIVATE KEY-----\n", why, sizeof(why)));
	cr_assert(content(POLICY_FILE_CA, "x\n-----BEGIN CERTIFICATE-----\n",
	    why, sizeof(why)));
	cr_assert_not(content(POLICY_FILE_CA, "-----BEGIN PRIVATE KEY-----",
	    why, sizeof(why)));
	memset(key, 'k', sizeof(key));
	key[31] = '\0';
	cr_assert_not(content(POLICY_FILE_AUDIT_KEY, key, why, sizeof(why)));
	cr_assert(strstr(why, "holds 31 bytes") != NULL, "%s", why);
	key[31] = 'k';
	key[32] = '\0';
	cr_assert(content(POLICY_FILE_AUDIT_KEY, key, why, sizeof(why)));
	key[32] = 'k';
	key[POLICY_AUDIT_KEY_MAX] = '\0';
	cr_assert(content(POLICY_FILE_AUDIT_KEY, key, why, sizeof(why)));
	key[POLICY_AUDIT_KEY_MAX] = 'k';
	key[POLICY_AUDIT_KEY_MAX + 1] = '\0';
	cr_assert_not(content(POLICY_FILE_AUDIT_KEY, key, why, sizeof(why)));
	cr_assert_not(content(POLICY_FILE_AUDIT_KEY, "", why, sizeof(why)));
}
