/*
 * fuse_static.c - the baseline for a read of stats/device0: the least a
 * libfuse daemon does to serve a file, here one read-only file of SIZE
 * bytes whose text never changes.
 *
 *   fuse_static [--fresh] SIZE MOUNTPOINT [fuse options]   serves MOUNTPOINT/file
 *
 * It is libfuse's example/hello.c with the size as an argument and
 * without hello's kernel_cache: with kernel_cache a read after the first
 * never reaches the daemon, which is no baseline for a daemon that makes
 * its text per open. Everything else is libfuse's default: the high-level
 * API, one-second entry and attribute timeouts, the multi-threaded loop,
 * pages cached for as long as a file is open.
 *
 * --fresh serves it the way a file whose text moves must be served, as
 * npumemfs serves its text: direct_io (every read reaches the daemon, so
 * the end of the text costs a read of its own) and attributes never
 * cached (a size is never older than the stat asking for it).
 */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char file_path[] = "/file";
static char *text;
static size_t text_len;
static bool fresh;

static int static_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, file_path) != 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = (off_t)text_len;
	return 0;
}

static int static_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
			  struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	filler(buf, file_path + 1, NULL, 0, 0);
	return 0;
}

static int static_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, file_path) != 0)
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	return 0;
}

static int static_read(const char *path, char *buf, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	if ((size_t)off >= text_len)
		return 0;
	size_t n = text_len - (size_t)off < size ? text_len - (size_t)off : size;
	memcpy(buf, text + off, n);
	return (int)n;
}

static void *static_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	if (fresh) {
		cfg->direct_io = 1;
		cfg->attr_timeout = 0;
	}
	return NULL;
}

static const struct fuse_operations static_ops = {
	.init = static_init,
	.getattr = static_getattr,
	.readdir = static_readdir,
	.open = static_open,
	.read = static_read,
};

/* Lines of the length of a stats line, so the text is text. */
static char *make_text(size_t len)
{
	char *t = malloc(len ? len : 1);

	for (size_t i = 0; t && i < len; i++)
		t[i] = i % 40 == 39 ? '\n' : 'a' + (char)(i % 26);
	return t;
}

int main(int argc, char **argv)
{
	char *end;

	if (argc > 1 && strcmp(argv[1], "--fresh") == 0) {
		fresh = true;
		argv[1] = argv[0];
		argc--, argv++;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: fuse_static [--fresh] SIZE MOUNTPOINT [fuse options]\n");
		return 2;
	}
	text_len = strtoul(argv[1], &end, 10);
	if (*end || !(text = make_text(text_len))) {
		fprintf(stderr, "fuse_static: bad size %s\n", argv[1]);
		return 2;
	}
	argv[1] = argv[0];
	int rc = fuse_main(argc - 1, argv + 1, &static_ops, NULL);
	free(text);
	return rc;
}
