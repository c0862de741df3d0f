/*
 * Privilege drop: an empty root-owned directory to chroot into, and a uid
 * and gid change that is verified to be permanent (after OpenSSH's
 * permanently_set_uid and privsep_child_demote).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sandbox.h"

#define EMPTY_DIR_TEMPLATE "sp-empty.XXXXXX"

/* Only root may write to it, and nothing is in it. */
static bool
dir_is_safe_and_empty(const char *dir)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	bool empty = true;

	if (lstat(dir, &st) == -1)
		return false;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		errno = EPERM;
		return false;
	}
	if ((d = opendir(dir)) == NULL)
		return false;
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0;
	closedir(d);
	if (!empty)
		errno = ENOTEMPTY;
	return empty;
}

bool
sandbox_make_empty_dir(const char *parent, char *out, size_t outsize)
{
	int n;

	n = snprintf(out, outsize, "%s/%s", parent, EMPTY_DIR_TEMPLATE);
	if (n < 0 || (size_t)n >= outsize) {
		errno = ENAMETOOLONG;
		return false;
	}
	/* mkdtemp creates it 0700 and refuses to reuse an existing name. */
	if (mkdtemp(out) == NULL)
		return false;
	if (chmod(out, 0755) == -1 || !dir_is_safe_and_empty(out)) {
		int saved = errno;

		(void)rmdir(out);
		errno = saved;
		return false;
	}
	return true;
}

bool
sandbox_chroot(const char *dir)
{
	if (!dir_is_safe_and_empty(dir))
		return false;
	if (chroot(dir) == -1 || chdir("/") == -1)
		return false;
	return true;
}

/* Bounds the passwd entry; a real one is a few hundred bytes. */
#define PASSWD_BUF_SIZE 4096

bool
sandbox_user_ids(const char *name, uid_t *uid, gid_t *gid)
{
	char buf[PASSWD_BUF_SIZE];
	struct passwd pw, *found = NULL;
	int rc;

	if ((rc = getpwnam_r(name, &pw, buf, sizeof(buf), &found)) != 0) {
		errno = rc;
		return false;
	}
	if (found == NULL) {
		errno = ENOENT;
		return false;
	}
	if (pw.pw_uid == 0 || pw.pw_gid == 0) {
		errno = EINVAL;
		return false;
	}
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	return true;
}

/* True when every one of the three ids is want. */
static bool
ids_are(uid_t want_uid, gid_t want_gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return false;
	return ru == want_uid && eu == want_uid && su == want_uid &&
	    rg == want_gid && eg == want_gid && sg == want_gid;
}

/* A permanent drop leaves no way back to root; try the ways. */
static bool
root_is_unreachable(void)
{
	if (setuid(0) != -1 || seteuid(0) != -1)
		return false;
	if (setgid(0) != -1 || setegid(0) != -1)
		return false;
	return getgroups(0, NULL) == 0;
}

bool
sandbox_drop_privileges(uid_t uid, gid_t gid)
{
	if (uid == 0 || gid == 0) {
		errno = EINVAL;
		return false;
	}
	/* Groups first: after the uid change we may no longer drop them. */
	if (setgroups(0, NULL) == -1)
		return false;
	if (setresgid(gid, gid, gid) == -1)
		return false;
	if (setresuid(uid, uid, uid) == -1)
		return false;
	if (!ids_are(uid, gid) || !root_is_unreachable()) {
		errno = EPERM;
		return false;
	}
	return true;
}
