/*
 * credential_store_load() checks each secret file on the open descriptor
 * (executor/credentials.h): a symlink swapped in after the broker's check,
 * or a file open to others under strict_credentials, is refused.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/credentials.h"
#include "policy/policy.h"

/* A token "it's \"$(id)\"\n" in dir/name with mode; path into out. */
static void
write_token(const char *dir, const char *name, mode_t mode, char *out,
    size_t size)
{
	static const char token[] = "it's \"$(id)\" \xc3\xa9\n";
	int fd;

	snprintf(out, size, "%s/%s", dir, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd != -1, "open %s: %s", out, strerror(errno));
	cr_assert(write(fd, token, sizeof(token) - 1) ==
	    (ssize_t)(sizeof(token) - 1));
	cr_assert(fchmod(fd, mode) == 0);
	close(fd);
}

static bool
load_one(char *file, bool strict, size_t *len)
{
	struct policy_credential cred;
	struct policy p;
	struct credential_store store;
	bool ok;

	memset(&cred, 0, sizeof(cred));
	memset(&p, 0, sizeof(p));
	cred.type = CREDENTIAL_BEARER;
	cred.file = file;
	p.credentials = &cred;
	p.credential_count = 1;
	p.strict_credentials = strict;
	ok = credential_store_load(&store, &p);
	*len = ok ? store.creds[0].secret_len : 0;
	credential_store_free(&store);
	return ok;
}

static char dir[64];

static void
make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sp-cred-XXXXXX");
	cr_assert(mkdtemp(dir) != NULL);
}

static void
remove_dir(void)
{
	struct dirent *e;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	(void)rmdir(dir);
}

TestSuite(exec_credentials, .init = make_dir, .fini = remove_dir);

Test(exec_credentials, private_file_is_read_trimmed)
{
	char path[128];
	size_t len;

	write_token(dir, "api.token", 0600, path, sizeof(path));
	cr_assert(load_one(path, true, &len));
	cr_assert_eq(len, strlen("it's \"$(id)\" \xc3\xa9"));
}

Test(exec_credentials, symlink_to_a_private_file_is_refused)
{
	char real[128], link[128];
	size_t len;

	write_token(dir, "real.token", 0600, real, sizeof(real));
	snprintf(link, sizeof(link), "%s/api.token", dir);
	cr_assert(symlink(real, link) == 0);
	cr_assert_not(load_one(link, false, &len));
	cr_assert_not(load_one(link, true, &len));
}

Test(exec_credentials, readable_by_others_refused_only_when_strict)
{
	char path[128];
	size_t len;

	write_token(dir, "api.token", 0644, path, sizeof(path));
	cr_assert_not(load_one(path, true, &len));
	cr_assert(load_one(path, false, &len), "a warning, not an error");
	write_token(dir, "group.token", 0640, path, sizeof(path));
	cr_assert_not(load_one(path, true, &len));
}
