/*
 * policy_check_credential_files(): secret files are only stat'ed; missing
 * is an error, too open or owned by another user a warning, an error under
 * "strict_credentials".
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
	cr_assert_eq(write(fd, "s3cret\n", 7), 7);
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
	cr_assert_eq(p->secret_file_count, 2);
	ok = policy_check_credential_files(p, "p.json", d);
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
	    "used: No such file or directory", f.key);
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

Test(credfiles, other_owner_warns)
{
	struct fixture f;
	struct policy_diags d = { 0 };
	uid_t other = geteuid() == 0 ? 65534 : 0;

	fixture_init(&f, "");
	make_secret(f.token, 0600);
	make_secret(f.key, 0600);
	if (geteuid() != 0)
		cr_skip_test("chown to another user needs root");
	cr_assert_eq(chown(f.token, other, (gid_t)-1), 0);
	cr_assert(check(&f, &d));
	cr_assert_eq(d.count, 1);
	cr_assert(strstr(d.items[0].text, "p.json:2:35: warning: secret file ")
	    == d.items[0].text, "%s", d.items[0].text);
	cr_assert(strstr(d.items[0].text, "is owned by uid 65534, not by the "
	    "running user (uid 0)") != NULL, "%s", d.items[0].text);
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
