/*
 * plugin_trust.c - the rules a plug-in file must pass before it is loaded.
 *
 * Loading a plug-in runs its code inside the daemon, so a path written to
 * ctl/allocator is trusted only if nobody but root or the daemon's user
 * could have put that file there: the file and every folder above it are
 * owned by one of them and writable by nobody else (OpenSSH's safe_path
 * rule). A world-writable folder is accepted only with the sticky bit set
 * (/tmp): others can add entries there but not replace ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_trust.h"

/* Is canonical `path` inside canonical folder `dir`? */
static bool is_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool is_allowed(const char *canon, const char *allowed_dirs)
{
	const char *s = allowed_dirs;

	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char dir[PATH_MAX], real[PATH_MAX];

		while (len && (*s == ' ' || *s == '\t'))
			s++, len--;
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len && len < sizeof(dir) && s[0] == '/') {
			memcpy(dir, s, len);
			dir[len] = '\0';
			if (realpath(dir, real) && is_beneath(canon, real))
				return true;
		}
		s = end ? end + 1 : NULL;
	}
	return false;
}

static bool safe_owner(uid_t uid, uid_t owner)
{
	return uid == 0 || uid == owner;
}

static int check_file(int fd, const char *canon, uid_t owner, char *err,
		      size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot stat %s: %s", canon, strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a folder, not a shared object", canon);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", canon);
		return -ENOTSUP;
	}
	if (!safe_owner(st.st_uid, owner)) {
		snprintf(err, errlen, "%s is owned by uid %u, not by root or uid %u",
			 canon, (unsigned)st.st_uid, (unsigned)owner);
		return -EACCES;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s is group- or world-writable (mode %04o)",
			 canon, (unsigned)(st.st_mode & 07777));
		return -EACCES;
	}
	return 0;
}

static int check_dir(const char *dir, uid_t owner, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot stat folder %s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s changed while being checked", dir);
		return -EACCES;
	}
	if (!safe_owner(st.st_uid, owner)) {
		snprintf(err, errlen,
			 "folder %s is owned by uid %u, not by root or uid %u", dir,
			 (unsigned)st.st_uid, (unsigned)owner);
		return -EACCES;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen,
			 "folder %s is group- or world-writable (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EACCES;
	}
	return 0;
}

/* Every folder from the file's own up to "/". */
static int check_parents(const char *canon, uid_t owner, char *err,
			 size_t errlen)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", canon);
	while ((slash = strrchr(dir, '/'))) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		int rc = check_dir(dir, owner, err, errlen);
		if (rc || slash == dir)
			return rc;
	}
	return 0;
}

static int check_name(const char *path, char *canon, const char *allowed_dirs,
		      char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !realpath(path, canon)) {
		int e = errno;
		snprintf(err, errlen, "cannot load plug-in %s: %s", path,
			 strerror(e));
		return -e;
	}
	/* A link would let whoever owns it retarget the plug-in later. */
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s is a symbolic link: name the file itself (%s)", path,
			 canon);
		return -EACCES;
	}
	if (!allowed_dirs || !is_allowed(canon, allowed_dirs)) {
		snprintf(err, errlen,
			 "%s is not in a folder allowed for plug-ins "
			 "([allocator] plugin_dirs = %s)",
			 canon, allowed_dirs && *allowed_dirs ? allowed_dirs : "none");
		return -EACCES;
	}
	return 0;
}

int plugin_trust_open(const char *path, const char *allowed_dirs, uid_t owner,
		      char *canon, char *err, size_t errlen)
{
	int rc = check_name(path, canon, allowed_dirs, err, errlen);
	if (rc)
		return rc;

	/* O_NONBLOCK: a FIFO named x.so must not hold ctl/allocator (and a
	 * FUSE thread) until someone writes to it; fstat then refuses it. */
	int fd = open(canon, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno == ELOOP ? EACCES : errno;
		snprintf(err, errlen, "cannot open plug-in %s: %s", canon,
			 strerror(errno));
		return -e;
	}
	rc = check_file(fd, canon, owner, err, errlen);
	if (!rc)
		rc = check_parents(canon, owner, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}
