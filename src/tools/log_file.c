/*
 * log_file.c - the file a background daemon's messages go to (log_file.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_file.h"

/* systemd's unit name escaping: what stays as it is. */
static int plain(char c, int first)
{
	return isalnum((unsigned char)c) || c == ':' || c == '_' || (c == '.' && !first);
}

int log_file_escape(const char *path, char *buf, size_t len)
{
	size_t n = 0;

	while (*path == '/')
		path++;
	size_t end = strlen(path);
	while (end > 0 && path[end - 1] == '/')
		end--;
	if (end == 0)
		return snprintf(buf, len, "-") < (int)len ? 0 : -ENAMETOOLONG;
	for (size_t i = 0; i < end; i++) {
		char piece[5];
		char c = path[i];

		if (c == '/')
			snprintf(piece, sizeof(piece), "-");
		else if (plain(c, i == 0))
			snprintf(piece, sizeof(piece), "%c", c);
		else
			snprintf(piece, sizeof(piece), "\\x%02x", (unsigned char)c);
		size_t k = strlen(piece);
		if (n + k >= len)
			return -ENAMETOOLONG;
		memcpy(buf + n, piece, k);
		n += k;
	}
	buf[n] = '\0';
	return 0;
}

int log_file_default(const char *mnt, const char *state_home, const char *home, char *buf,
		     size_t len)
{
	char name[4096];
	int rc = log_file_escape(mnt, name, sizeof(name));
	int n;

	if (rc)
		return rc;
	/* The XDG rules ignore a relative $XDG_STATE_HOME. */
	if (state_home && state_home[0] == '/')
		n = snprintf(buf, len, "%s/npumemfs/%s.log", state_home, name);
	else if (home && home[0])
		n = snprintf(buf, len, "%s/.local/state/npumemfs/%s.log", home, name);
	else
		return -ENOENT;
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* mkdir -p of the folders above `path`, each new one 0700. */
static int make_parents(const char *path, char *err, size_t errlen)
{
	char dir[4096];

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	for (char *p = strchr(dir + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			int rc = -errno;
			snprintf(err, errlen, "%s: cannot make the folder: %s", dir, strerror(-rc));
			return rc;
		}
		*p = '/';
	}
	return 0;
}

int log_file_open(const char *path, int make_dirs, char *err, size_t errlen)
{
	int rc = make_dirs ? make_parents(path, err, errlen) : 0;

	if (rc)
		return rc;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	return fd;
}
