/*
 * plugin_tmpdir.c - see plugin_tmpdir.h.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_tmpdir.h"

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0) {
		int e = errno;
		close(in);
		return -e;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -EIO;
			break;
		}
	if (n < 0)
		rc = -errno;
	close(in);
	close(out);
	return rc;
}

int plugin_tmpdir_make(struct plugin_tmpdir *t, const char *source,
		       const char *name)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/npumemfs-plugin-XXXXXX");
	if (!mkdtemp(t->dir))
		return -errno;
	plugin_tmpdir_path(t, name, t->so);
	return copy_file(source, t->so);
}

void plugin_tmpdir_path(const struct plugin_tmpdir *t, const char *name,
			char *out)
{
	snprintf(out, PATH_MAX, "%s/%s", t->dir, name);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP)
		chmod(path, 0700);
	return remove(path);
}

void plugin_tmpdir_remove(struct plugin_tmpdir *t)
{
	nftw(t->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
