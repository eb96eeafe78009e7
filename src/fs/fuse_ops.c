/*
 * fuse_ops.c - each FUSE operation, short, over the node table.
 *
 * A path is either a tree entry or a tensor (a name inside a tensor
 * directory). Generated files are rendered at open into the open file's
 * own buffer and served with direct_io and st_size 0, as procfs does; a
 * read at offset 0 on a reused handle renders again, as sysfs does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fuse_ops.h"
#include <fuse_lowlevel.h>
#include "nodes.h"

struct target {
	const struct entry *e;  /* the entry, or the tensor's directory */
	const char *tensor;     /* the tensor's name, or NULL */
	bool allocator;         /* allocators/NAME.deviceN: */
	unsigned alloc_id;      /*   which allocator (sw_list's id) */
	int alloc_device;       /*   and which device */
};

struct fh {
	struct target t;
	char tensor[TS_NAME_MAX + 1];
	pthread_mutex_t lock;   /* two threads may read one handle */
	struct sbuf out;
	bool fresh;             /* rendered by open, not yet read */
	struct trace_pipe *pipe; /* trace/deviceN: a stream, not a rendering */
	LIST_ENTRY(fh) link;    /* in nmfs.open_files */
};

static struct nmfs *daemon_ctx(void)
{
	return fuse_get_context()->private_data;
}

/* "NAME.deviceN" of an allocator the switch holds now. */
static int resolve_allocator(struct nmfs *d, const char *name, struct target *t)
{
	const char *dot = strrchr(name, '.');
	struct sw_info *all;
	size_t n;
	char *end;

	if (!dot || strncmp(dot, ".device", 7) || dot[7] < '0' || dot[7] > '9')
		return -ENOENT;
	long device = strtol(dot + 7, &end, 10);
	if (*end || device >= d->device_count)
		return -ENOENT;
	if (sw_list(d->sw, &all, &n))
		return -ENOMEM;
	int rc = -ENOENT;
	for (size_t i = 0; i < n && rc; i++) {
		if (strlen(all[i].name) == (size_t)(dot - name) &&
		    !strncmp(all[i].name, name, (size_t)(dot - name))) {
			t->allocator = true;
			t->alloc_id = all[i].id;
			t->alloc_device = (int)device;
			rc = 0;
		}
	}
	free(all);
	return rc;
}

static int resolve(struct nmfs *d, const char *path, struct target *t)
{
	char parent[sizeof(((struct entry *)0)->path)];
	const char *slash = strrchr(path, '/');

	memset(t, 0, sizeof(*t));
	t->e = tree_find(&d->tree, path);
	if (t->e)
		return 0;
	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return -ENOENT;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	t->e = tree_find(&d->tree, parent);
	if (t->e && t->e->node->kind == NODE_ALLOCATORS_DIR)
		return resolve_allocator(d, slash + 1, t);
	if (!t->e || t->e->node->kind != NODE_TENSOR_DIR)
		return -ENOENT;
	t->tensor = slash + 1;
	return 0;
}

static struct fh *fh_of(struct fuse_file_info *fi)
{
	return (struct fh *)(uintptr_t)fi->fh;
}

/* An open file knows its target even after unlink (hard_remove). */
static int resolve_fi(struct nmfs *d, const char *path,
		      struct fuse_file_info *fi, struct target *t)
{
	if (fi && fi->fh) {
		*t = fh_of(fi)->t;
		return 0;
	}
	return path ? resolve(d, path, t) : -ENOENT;
}

static struct tensor_store *store_of(struct nmfs *d, const struct target *t)
{
	return d->tensors[t->e->device];
}

static bool is_dir(const struct target *t)
{
	return !t->tensor && !t->allocator && t->e->node->kind != NODE_FILE;
}

/* The target at `path`, refused unless it is a directory exactly when `dir`. */
static int resolve_kind(struct nmfs *d, const char *path, bool dir,
			struct target *t)
{
	int rc = resolve(d, path, t);

	if (rc)
		return rc;
	if (is_dir(t) != dir)
		return dir ? -ENOTDIR : -EISDIR;
	return 0;
}

static int nmfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	uint64_t size = 0;
	int rc = resolve_fi(d, path, fi, &t);

	if (rc)
		return rc;
	if (t.tensor && (rc = ts_size(store_of(d, &t), t.tensor, &size)))
		return rc;
	memset(st, 0, sizeof(*st));
	st->st_uid = d->uid;
	st->st_gid = d->gid;
	st->st_mode = t.tensor ? S_IFREG | 0600
		    : t.allocator ? S_IFREG | 0444
		    : (is_dir(&t) ? S_IFDIR : S_IFREG) | t.e->node->mode;
	st->st_nlink = is_dir(&t) ? 2 : 1;
	st->st_size = (off_t)size;
	bool moving = !is_dir(&t) && (t.allocator || !t.e->node->constant);
	st->st_mtime = moving ? time(NULL) : d->started;
	st->st_atime = st->st_ctime = st->st_mtime;
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_entry(void *arg, const struct entry *e)
{
	struct fill_ctx *c = arg;

	return c->filler(c->buf, e->name, NULL, 0, 0) ? -ENOMEM : 0;
}

static int fill_tensor(void *arg, const char *name, uint64_t size)
{
	struct fill_ctx *c = arg;

	(void)size;
	return c->filler(c->buf, name, NULL, 0, 0) ? -ENOMEM : 0;
}

static int fill_allocators(struct nmfs *d, struct fill_ctx *c)
{
	struct sw_info *all = NULL;
	size_t n = 0;
	int rc = sw_list(d->sw, &all, &n);

	for (size_t i = 0; i < n && !rc; i++) {
		for (int dev = 0; dev < d->device_count && !rc; dev++) {
			char name[sizeof(all[i].name) + 24];
			snprintf(name, sizeof(name), "%s.device%d", all[i].name, dev);
			rc = c->filler(c->buf, name, NULL, 0, 0) ? -ENOMEM : 0;
		}
	}
	free(all);
	return rc;
}

/* A directory handle is its entry: readdir then needs no path. */
static int nmfs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct target t;
	int rc = resolve_kind(daemon_ctx(), path, true, &t);

	if (rc)
		return rc;
	fi->fh = (uintptr_t)t.e;
	return 0;
}

static int nmfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
			off_t off, struct fuse_file_info *fi,
			enum fuse_readdir_flags flags)
{
	struct nmfs *d = daemon_ctx();
	struct fill_ctx c = { buf, filler };
	struct target t = { .e = (const struct entry *)(uintptr_t)fi->fh };

	(void)path, (void)off, (void)flags;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	if (t.e->node->kind == NODE_TENSOR_DIR)
		return ts_foreach(store_of(d, &t), fill_tensor, &c);
	if (t.e->node->kind == NODE_ALLOCATORS_DIR)
		return fill_allocators(d, &c);
	return tree_children(&d->tree, t.e->path, fill_entry, &c);
}

static int render(struct nmfs *d, struct fh *fh)
{
	sbuf_reset(&fh->out);
	int rc = fh->t.allocator
			 ? show_allocator_stats(d, fh->t.alloc_id, fh->t.alloc_device,
						&fh->out)
			 : fh->t.e->node->show(d, fh->t.e, &fh->out);
	return rc ? rc : fh->out.error;
}

static struct fh *fh_new(struct nmfs *d, const struct target *t)
{
	struct fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	pthread_mutex_lock(&d->open_files_lock);
	LIST_INSERT_HEAD(&d->open_files, fh, link);
	pthread_mutex_unlock(&d->open_files_lock);
	fh->t = *t;
	if (t->tensor) {
		snprintf(fh->tensor, sizeof(fh->tensor), "%s", t->tensor);
		fh->t.tensor = fh->tensor;
	}
	pthread_mutex_init(&fh->lock, NULL);
	sbuf_init(&fh->out);
	return fh;
}

static void fh_free(struct nmfs *d, struct fh *fh)
{
	pthread_mutex_lock(&d->open_files_lock);
	LIST_REMOVE(fh, link);
	pthread_mutex_unlock(&d->open_files_lock);
	sbuf_release(&fh->out);
	if (fh->pipe)
		trace_pipe_release(fh->pipe);
	free(fh->pipe);
	pthread_mutex_destroy(&fh->lock);
	free(fh);
}

static int open_node(struct nmfs *d, struct fh *fh, int flags)
{
	int acc = flags & O_ACCMODE;

	/* root passes the kernel's mode check; the node still says no. */
	if (acc != O_RDONLY && (fh->t.allocator || !fh->t.e->node->store))
		return -EACCES;
	if (acc == O_WRONLY)
		return 0;
	if (fh->t.e->node->pipe) {
		fh->pipe = malloc(sizeof(*fh->pipe));
		if (!fh->pipe)
			return -ENOMEM;
		trace_pipe_init(fh->pipe, fh->t.e->device);
		return 0;
	}
	int rc = render(d, fh);
	fh->fresh = rc == 0;
	return rc;
}

static int open_tensor(struct nmfs *d, struct fh *fh, int flags)
{
	uint64_t size;
	int rc = ts_size(store_of(d, &fh->t), fh->tensor, &size);

	if (rc == 0 && (flags & O_TRUNC))
		rc = ts_resize(store_of(d, &fh->t), fh->tensor, 0, NULL, 0);
	return rc;
}

/* Every file reads and writes around the page cache: its text moves. */
static int hand_out(struct fuse_file_info *fi, struct fh *fh)
{
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	fi->nonseekable = fh->pipe != NULL;
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_kind(d, path, false, &t);

	if (rc)
		return rc;
	struct fh *fh = fh_new(d, &t);
	if (!fh)
		return -ENOMEM;
	rc = t.tensor ? open_tensor(d, fh, fi->flags) : open_node(d, fh, fi->flags);
	if (rc) {
		fh_free(d, fh);
		return rc;
	}
	return hand_out(fi, fh);
}

static int nmfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve(d, path, &t);

	(void)mode;
	if (rc || !t.tensor)
		return rc ? -EACCES : -EEXIST;
	rc = ts_create(store_of(d, &t), t.tensor);
	if (rc)
		return rc;
	struct fh *fh = fh_new(d, &t);
	if (!fh) {
		ts_unlink(store_of(d, &t), t.tensor);
		return -ENOMEM;
	}
	return hand_out(fi, fh);
}

static int read_node(struct nmfs *d, struct fh *fh, char *buf, size_t size,
		     off_t off)
{
	int rc = 0;

	pthread_mutex_lock(&fh->lock);
	if (off == 0 && !fh->fresh)
		rc = render(d, fh);
	fh->fresh = false;
	size_t n = 0;
	if (rc == 0 && (size_t)off < fh->out.len) {
		n = fh->out.len - (size_t)off;
		n = n < size ? n : size;
		memcpy(buf, fh->out.data + off, n);
	}
	pthread_mutex_unlock(&fh->lock);
	return rc ? rc : (int)n;
}

static bool request_interrupted(void *arg)
{
	(void)arg;
	return fuse_interrupted();
}

static bool session_ending(void *arg)
{
	(void)arg;
	return fuse_session_exited(fuse_get_session(fuse_get_context()->fuse));
}

/* One reader of a handle at a time: a second one would wait outside the
 * limit on waiting reads, holding a worker thread. */
static int read_pipe(struct nmfs *d, struct fh *fh, char *buf, size_t size, int flags)
{
	const struct trace_pipe_wait w = { request_interrupted, session_ending, NULL };

	if (pthread_mutex_trylock(&fh->lock))
		return -EBUSY;
	ssize_t n = trace_pipe_read(fh->pipe, d->alloc, &d->trace_waiters, &w,
				    flags & O_NONBLOCK, buf, size);
	pthread_mutex_unlock(&fh->lock);
	return (int)n;
}

static int nmfs_read(const char *path, char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);

	(void)path;
	if (off < 0)
		return -EINVAL;
	if (fh->t.tensor)
		return (int)ts_read(store_of(d, &fh->t), fh->tensor, buf, size,
				    (uint64_t)off);
	if (fh->pipe)
		return read_pipe(d, fh, buf, size, fi->flags);
	if (!fh->t.allocator && !fh->t.e->node->show)
		return -EACCES;
	return read_node(d, fh, buf, size, off);
}

static int write_tensor(struct nmfs *d, struct fh *fh, const char *buf,
			size_t size, off_t off)
{
	char err[NPA_ERRLEN] = "";
	ssize_t rc = ts_write(store_of(d, &fh->t), fh->tensor, buf, size,
			      (uint64_t)off, err, sizeof(err));

	/* An allocator's refusal (a plug-in's too) explains itself in err. */
	if (rc < 0 && err[0])
		dlog_printf(&d->log, "tensors/device%d/%s: %s", fh->t.e->device,
			    fh->tensor, err);
	return (int)rc;
}

static int refuse(struct nmfs *d, const struct entry *e, int rc, const char *why)
{
	tree_set_error(&d->tree, e, why);
	dlog_printf(&d->log, "%s: %s", e->path + 1, why);
	return rc;
}

/* sysfs store: the whole value in one write at offset 0. */
static int write_node(struct nmfs *d, struct fh *fh, const char *buf,
		      size_t size, off_t off)
{
	const struct entry *e = fh->t.e;
	char value[NMFS_WRITE_MAX + 1], err[NMFS_ERRLEN] = "";

	if (off != 0)
		return refuse(d, e, -EINVAL, "writes must start at offset 0");
	if (size > NMFS_WRITE_MAX)
		return refuse(d, e, -EFBIG, "value longer than 4096 bytes");
	if (memchr(buf, '\0', size))
		return refuse(d, e, -EINVAL, "value contains a NUL byte");
	memcpy(value, buf, size);
	value[size] = '\0';
	if (size && value[size - 1] == '\n')
		value[size - 1] = '\0';
	int rc = e->node->store(d, e, value, err, sizeof(err));
	if (rc)
		return refuse(d, e, rc, err[0] ? err : strerror(-rc));
	pthread_mutex_lock(&fh->lock);
	fh->fresh = false;
	pthread_mutex_unlock(&fh->lock);
	return (int)size;
}

static int nmfs_write(const char *path, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);

	(void)path;
	if (off < 0)
		return -EINVAL;
	if (fh->t.tensor)
		return write_tensor(d, fh, buf, size, off);
	if (fh->t.allocator || !fh->t.e->node->store)
		return -EACCES;
	return write_node(d, fh, buf, size, off);
}

static int nmfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	char err[NPA_ERRLEN] = "";
	struct target t;
	int rc = resolve_fi(d, path, fi, &t);

	if (rc)
		return rc;
	if (t.allocator)
		return -EACCES;
	if (!t.tensor)
		return t.e->node->store ? 0 : (is_dir(&t) ? -EISDIR : -EACCES);
	if (size < 0)
		return -EINVAL;
	rc = ts_resize(store_of(d, &t), t.tensor, (uint64_t)size, err, sizeof(err));
	if (rc < 0 && err[0])
		dlog_printf(&d->log, "tensors/device%d/%s: %s", t.e->device,
			    t.tensor, err);
	return rc;
}

static int nmfs_unlink(const char *path)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve(d, path, &t);

	if (rc)
		return rc;
	return t.tensor ? ts_unlink(store_of(d, &t), t.tensor) : -EACCES;
}

static int nmfs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	fh_free(daemon_ctx(), fh_of(fi));
	return 0;
}

void nmfs_release_open_files(struct nmfs *d)
{
	while (!LIST_EMPTY(&d->open_files))
		fh_free(d, LIST_FIRST(&d->open_files));
}

/* touch on a tensor is harmless; everything else keeps its times. */
static int nmfs_utimens(const char *path, const struct timespec tv[2],
			struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve(d, path, &t);

	(void)tv, (void)fi;
	return rc ? rc : (t.tensor ? 0 : -EACCES);
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

static void *nmfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 0;
	/* An open file carries its target in fh, so it needs no path, and a
	 * removed tensor is freed at once rather than renamed to .fuse_hidden. */
	cfg->nullpath_ok = 1;
	cfg->hard_remove = 1;
	return daemon_ctx();
}

const struct fuse_operations nmfs_ops = {
	.init = nmfs_init,
	.getattr = nmfs_getattr,
	.opendir = nmfs_opendir,
	.readdir = nmfs_readdir,
	.open = fs_open,
	.create = nmfs_create,
	.read = nmfs_read,
	.write = nmfs_write,
	.truncate = nmfs_truncate,
	.unlink = nmfs_unlink,
	.release = nmfs_release,
	.utimens = nmfs_utimens,
	.mkdir = refuse_mkdir,
	.rmdir = refuse_path,
	.rename = refuse_rename,
	.link = refuse_link,
	.symlink = refuse_link,
	.chmod = refuse_chmod,
	.chown = refuse_chown,
	.mknod = refuse_mknod,
};
