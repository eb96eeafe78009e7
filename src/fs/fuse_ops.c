/*
 * fuse_ops.c - each FUSE operation, short, over the rows of the tree.
 *
 * A path is matched to a target (tree.h): a row and its indexes. What a
 * file does under an operation is its row's file_ops (open_file.h); a
 * folder is a row whose mode says S_IFDIR. Every file is served with
 * direct_io. An open file keeps its target, so it needs no path after
 * open and outlives an unlink (hard_remove).
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "daemon.h"
#include "fuse_ops.h"
#include "open_file.h"

static struct nmfs *daemon_ctx(void)
{
	return fuse_get_context()->private_data;
}

static struct fh *fh_of(struct fuse_file_info *fi)
{
	return (struct fh *)(uintptr_t)fi->fh;
}

static bool is_dir(const struct target *t)
{
	return S_ISDIR(t->node->mode);
}

/* The target of an open file, or of `path`. */
static int resolve_fi(struct nmfs *d, const char *path,
		      struct fuse_file_info *fi, struct target *t)
{
	if (fi && fi->fh) {
		*t = fh_of(fi)->t;
		return 0;
	}
	return path ? tree_resolve(d, path, false, t) : -ENOENT;
}

/* The target at `path`, refused unless it is a folder exactly when `dir`. */
static int resolve_type(struct nmfs *d, const char *path, bool dir,
			struct target *t)
{
	int rc = tree_resolve(d, path, false, t);

	if (rc)
		return rc;
	if (is_dir(t) != dir)
		return dir ? -ENOTDIR : -EISDIR;
	return 0;
}

static bool same_target(const struct target *a, const struct target *b)
{
	return a->node == b->node && a->device == b->device && a->stream == b->stream &&
	       strcmp(a->name, b->name) == 0;
}

bool fh_of_opener(struct nmfs *d, const struct target *t, pid_t pid,
		  void (*fn)(struct nmfs *d, struct fh *fh, struct seen *s), struct seen *s)
{
	struct fh *fh;
	bool found = false;

	pthread_mutex_lock(&d->open_files_lock);
	LIST_FOREACH(fh, &d->open_files, link) {
		if (fh->pid == pid && fh->readable && same_target(&fh->t, t)) {
			fn(d, fh, s);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&d->open_files_lock);
	return found;
}

void origin_enter(struct nmfs *d, const struct target *t, const char *op,
		  struct file_origin *o)
{
	const char *mnt = d->mountpoint ? d->mountpoint : "";
	size_t n = strlen(mnt) < sizeof(o->path) ? strlen(mnt) : sizeof(o->path) - 1;

	memcpy(o->path, mnt, n);
	tree_path(t, o->path + n, sizeof(o->path) - n);
	o->frame = (struct npa_frame){ .filename = o->path, .name = op };
	o->saved = npa_origin();
	npa_set_origin(&o->frame);
}

void origin_leave(const struct file_origin *o)
{
	npa_set_origin(o->saved);
}

static int seen_of(struct nmfs *d, const struct target *t, struct fuse_file_info *fi,
		   struct seen *s)
{
	memset(s, 0, sizeof(*s));
	if (is_dir(t))
		return 0;
	return t->node->file->stat(d, t, fi && fi->fh ? fh_of(fi) : NULL, s);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	struct seen seen;
	int rc = resolve_fi(d, path, fi, &t);

	if (rc == 0)
		rc = seen_of(d, &t, fi, &seen);
	if (rc)
		return rc;
	memset(st, 0, sizeof(*st));
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_mode = t.node->mode;
	st->st_nlink = is_dir(&t) ? 2 : 1;
	st->st_size = (off_t)seen.size;
	/* du counts blocks: a file holds its size, as on any file system. */
	st->st_blocks = (blkcnt_t)((seen.size + 511) / 512);
	bool moving = !is_dir(&t) && !t.node->constant;
	if (moving && seen.mtime.tv_sec)
		st->st_mtim = seen.mtime;
	else
		st->st_mtim.tv_sec = moving ? time(NULL) : d->started;
	st->st_atim = st->st_ctim = st->st_mtim;
	return 0;
}

/* A folder's handle holds its target: readdir then needs no path. */
static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct target *t = malloc(sizeof(*t));
	int rc = t ? resolve_type(daemon_ctx(), path, true, t) : -ENOMEM;

	if (rc) {
		free(t);
		return rc;
	}
	fi->fh = (uintptr_t)t;
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_name(void *arg, const char *name)
{
	struct fill_ctx *c = arg;

	return c->filler(c->buf, name, NULL, 0, 0) ? -ENOMEM : 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct fill_ctx c = { buf, filler };
	const struct target *t = (const struct target *)(uintptr_t)fi->fh;

	(void)path, (void)off, (void)flags;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	return tree_list(daemon_ctx(), t, fill_name, &c);
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	free((struct target *)(uintptr_t)fi->fh);
	return 0;
}

static struct fh *fh_new(const struct target *t)
{
	struct fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->t = *t;
	fh->pid = fuse_get_context()->pid;
	pthread_mutex_init(&fh->lock, NULL);
	sbuf_init(&fh->out);
	return fh;
}

static void fh_free(struct nmfs *d, struct fh *fh)
{
	pthread_mutex_lock(&d->open_files_lock);
	if (fh->listed)
		LIST_REMOVE(fh, link);
	if (fh->ph)
		fuse_pollhandle_destroy(fh->ph);
	pthread_mutex_unlock(&d->open_files_lock);
	sbuf_release(&fh->out);
	if (fh->t.node->file->release)
		fh->t.node->file->release(fh);
	pthread_mutex_destroy(&fh->lock);
	free(fh);
}

/*
 * access(2), asked only of a mount without default_permissions, whose
 * only user is its owner (or root): the owner's bits of the mode, which
 * a row's open keeps true for root as well.
 */
static int fs_access(const char *path, int mask)
{
	struct target t;
	int rc = tree_resolve(daemon_ctx(), path, false, &t);

	if (rc)
		return rc;
	int owner = (int)(t.node->mode >> 6) & (R_OK | W_OK | X_OK);
	return (mask & ~owner) ? -EACCES : 0;
}

/* Every file reads and writes around the page cache: its text moves.
 * The trace pipe stays seekable so that head can give back what it read
 * past its last line (trace_pipe.h). */
static int hand_out(struct nmfs *d, struct fuse_file_info *fi, struct fh *fh)
{
	/* Listed only now: a stat by another thread reads a listed handle's
	 * fields, which open_node has finished writing. */
	pthread_mutex_lock(&d->open_files_lock);
	LIST_INSERT_HEAD(&d->open_files, fh, link);
	fh->listed = true;
	pthread_mutex_unlock(&d->open_files_lock);
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_type(d, path, false, &t);

	if (rc)
		return rc;
	struct fh *fh = fh_new(&t);
	if (!fh)
		return -ENOMEM;
	rc = t.node->file->open(d, fh, fi->flags);
	if (rc) {
		fh_free(d, fh);
		return rc;
	}
	return hand_out(d, fi, fh);
}

/* A name a listing, a log line or a terminal would show garbled. */
static bool has_control_char(const char *name)
{
	for (; *name; name++)
		if ((unsigned char)*name < 0x20 || *name == 0x7f)
			return true;
	return false;
}

/* Only a data row with a {NAME} takes new files (tensors). */
static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = tree_resolve(d, path, true, &t);

	(void)mode;
	if (rc)
		return -EACCES;
	if (is_dir(&t) || !t.node->file->create)
		return -EEXIST;
	if (has_control_char(t.name)) {
		dlog_printf(&d->log, "refused a new file whose name has a control character");
		return -EINVAL;
	}
	rc = t.node->file->create(d, &t);
	if (rc)
		return rc;
	struct fh *fh = fh_new(&t);
	if (!fh) {
		t.node->file->unlink(d, &t);
		return -ENOMEM;
	}
	return hand_out(d, fi, fh);
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);

	(void)path;
	if (off < 0)
		return -EINVAL;
	return fh->t.node->file->read(d, fh, buf, size, off, fi->flags);
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fh *fh = fh_of(fi);
	const struct file_ops *file = fh->t.node->file;

	(void)path;
	if (off < 0)
		return -EINVAL;
	return file->write ? file->write(daemon_ctx(), fh, buf, size, off) : -EACCES;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_fi(d, path, fi, &t);

	if (rc)
		return rc;
	if (is_dir(&t))
		return -EISDIR;
	if (!t.node->file->truncate)
		return -EACCES;
	return t.node->file->truncate(d, &t, size);
}

static int fs_unlink(const char *path)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = tree_resolve(d, path, false, &t);

	if (rc)
		return rc;
	if (is_dir(&t) || !t.node->file->unlink)
		return -EACCES;
	return t.node->file->unlink(d, &t);
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	fh_free(daemon_ctx(), fh_of(fi));
	return 0;
}

void fs_release_open_files(struct nmfs *d)
{
	while (!LIST_EMPTY(&d->open_files))
		fh_free(d, LIST_FIRST(&d->open_files));
}

/* A file keeps its times unless its row says a touch is harmless. */
static int fs_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_fi(d, path, fi, &t);

	(void)tv;
	if (rc)
		return rc;
	if (is_dir(&t) || !t.node->file->touch)
		return -EACCES;
	return t.node->file->touch(d, &t);
}

static int refuse_path(const char *path)
{
	(void)path;
	return -EACCES;
}

static int refuse_mkdir(const char *path, mode_t mode)
{
	(void)mode;
	return refuse_path(path);
}

static int refuse_rename(const char *from, const char *to, unsigned int flags)
{
	(void)to, (void)flags;
	return refuse_path(from);
}

static int refuse_link(const char *from, const char *to)
{
	(void)from;
	return refuse_path(to);
}

static int refuse_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path, (void)mode, (void)fi;
	return -EPERM;
}

static int refuse_chown(const char *path, uid_t uid, gid_t gid,
			struct fuse_file_info *fi)
{
	(void)path, (void)uid, (void)gid, (void)fi;
	return -EPERM;
}

static int refuse_mknod(const char *path, mode_t mode, dev_t rdev)
{
	(void)mode, (void)rdev;
	return refuse_path(path);
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 0;
	/* An open file carries its target in fh, so it needs no path, and a
	 * removed tensor is freed at once rather than renamed to .fuse_hidden. */
	cfg->nullpath_ok = 1;
	cfg->hard_remove = 1;
	/* Sizes move with the text: every stat asks (kept_text.h). */
	cfg->attr_timeout = 0;
	return daemon_ctx();
}

#define READY (POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM)

/* Under open_files_lock: the last poll of `fh` waits to be told. */
static void park_poll(struct fh *fh, struct fuse_pollhandle *ph)
{
	if (fh->ph)
		fuse_pollhandle_destroy(fh->ph);
	fh->ph = ph;
}

/*
 * What a read would do: a file that never waits is always ready; one
 * that would wait is not, and its poll handle is kept for
 * fs_notify_polls. Every other handle is destroyed here: libfuse (3.14)
 * frees it only if the file system does, and event loops such as Go's
 * (node_exporter) poll every file they read.
 */
static int fs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
		   unsigned *reventsp)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);
	const struct file_ops *file = fh->t.node->file;

	(void)path;
	*reventsp = READY;
	if (!file->ready || file->ready(d, fh)) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		return 0;
	}
	*reventsp = 0;
	pthread_mutex_lock(&d->open_files_lock);
	park_poll(fh, ph);
	pthread_mutex_unlock(&d->open_files_lock);
	return 0;
}

void fs_notify_polls(void *arg)
{
	struct nmfs *d = arg;
	struct fh *fh;

	pthread_mutex_lock(&d->open_files_lock);
	LIST_FOREACH(fh, &d->open_files, link) {
		if (d->polls_closed || !fh->ph || !fh->t.node->file->ready(d, fh))
			continue;
		fuse_notify_poll(fh->ph);
		park_poll(fh, NULL);
	}
	pthread_mutex_unlock(&d->open_files_lock);
}

/* The session's notifications end before the session does. */
static void fs_destroy(void *private_data)
{
	struct nmfs *d = private_data;

	pthread_mutex_lock(&d->open_files_lock);
	d->polls_closed = true;
	pthread_mutex_unlock(&d->open_files_lock);
}

const struct fuse_operations nmfs_ops = {
	.init = fs_init,
	.destroy = fs_destroy,
	.getattr = fs_getattr,
	.access = fs_access,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.open = fs_open,
	.create = fs_create,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.unlink = fs_unlink,
	.release = fs_release,
	.poll = fs_poll,
	.utimens = fs_utimens,
	.mkdir = refuse_mkdir,
	.rmdir = refuse_path,
	.rename = refuse_rename,
	.link = refuse_link,
	.symlink = refuse_link,
	.chmod = refuse_chmod,
	.chown = refuse_chown,
	.mknod = refuse_mknod,
};
