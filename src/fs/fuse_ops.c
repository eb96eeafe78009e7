/*
 * fuse_ops.c - each FUSE operation, short, over the rows of the tree.
 *
 * A path is matched to a target (tree.h): a row and its indexes. Text
 * files are rendered at open into the open file's own buffer and served
 * with direct_io; a read at offset 0 on a reused handle renders again, as
 * sysfs does. Their size is the size of the text the caller reads: a stat
 * by a process that has the file open says its open's size, any other
 * stat renders the text and keeps it for that process's next open
 * (kept_text.h), so tar, sendfile and cmp see sizes that match the bytes.
 * Data files (tensors) have their bytes and size; log grows like a file
 * appended to. An open file keeps its target, so it needs no path
 * after open and outlives an unlink (hard_remove).
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/caching_allocator.h"

#include "daemon.h"
#include "fuse_ops.h"
#include <fuse_lowlevel.h>
#include "nodes.h"

struct fh {
	struct target t;
	pid_t pid;               /* the process that opened it */
	pthread_mutex_t lock;    /* two threads may read one handle */
	struct sbuf out;
	struct timespec made;    /* when out was rendered: the file's mtime */
	bool readable;
	bool fresh;              /* rendered by open, not yet read */
	uint64_t log_start;      /* log: the offset its byte 0 stands for */
	bool judged;             /* a write was accepted or refused: one per open */
	struct trace_pipe *pipe; /* trace/deviceN: a stream, not a rendering */
	LIST_ENTRY(fh) link;     /* in nmfs.open_files */
	bool listed;             /* in it: once opened whole (hand_out) */
};

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
	return t->node->kind == NODE_DIR;
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
static int resolve_kind(struct nmfs *d, const char *path, bool dir,
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

/* What a stat reports of a file that is read: its size and time. */
struct seen {
	uint64_t size;
	struct timespec mtime;
};

static void seen_fh(struct fh *fh, struct seen *s)
{
	uint64_t first, end;

	pthread_mutex_lock(&fh->lock);
	s->size = fh->out.len;
	s->mtime = fh->made;
	pthread_mutex_unlock(&fh->lock);
	if (fh->t.node->kind == NODE_LOG) {
		dlog_extent(&daemon_ctx()->log, &first, &end);
		s->size = end - fh->log_start;
		clock_gettime(CLOCK_REALTIME, &s->mtime);
	}
}

/* The newest handle of `t` that process `pid` opened for reading: an
 * fstat (which the kernel sends by path) speaks of it. */
static bool seen_by_opener(struct nmfs *d, const struct target *t, pid_t pid,
			   struct seen *s)
{
	struct fh *fh;
	bool found = false;

	pthread_mutex_lock(&d->open_files_lock);
	LIST_FOREACH(fh, &d->open_files, link) {
		if (fh->pid == pid && fh->readable && same_target(&fh->t, t)) {
			seen_fh(fh, s);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&d->open_files_lock);
	return found;
}

/*
 * The allocator calls an operation on a file makes come from that file:
 * the memory history keeps the file's path in the mount and the operation
 * as their frame, so memory_viz names the tensor or control file behind
 * each block. A frame of its own per call: worker threads serve many files.
 */
struct file_origin {
	char path[PATH_MAX];
	struct npa_frame frame;
	const struct npa_frame *saved;
};

static void origin_enter(struct nmfs *d, const struct target *t, const char *op,
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

static void origin_leave(const struct file_origin *o)
{
	npa_set_origin(o->saved);
}

static int render_into(struct nmfs *d, const struct target *t, struct sbuf *out,
		       struct timespec *made)
{
	struct file_origin o;

	clock_gettime(CLOCK_REALTIME, made);
	sbuf_reset(out);
	origin_enter(d, t, "read", &o);
	int rc = t->node->show(d, t, out);
	origin_leave(&o);
	return rc ? rc : out->error;
}

/* A stat from a process without the file open: the text kept for it, or
 * a new one, kept for that process's open. */
static int seen_by_stat(struct nmfs *d, const struct target *t, pid_t pid,
			struct seen *s)
{
	struct sbuf text;
	char path[PATH_MAX];
	uint64_t first, end;
	size_t size;

	if (t->node->kind == NODE_LOG) {
		dlog_extent(&d->log, &first, &end);
		s->size = end - first;
		clock_gettime(CLOCK_REALTIME, &s->mtime);
		return 0;
	}
	tree_path(t, path, sizeof(path));
	if (kept_text_peek(&d->kept, path, pid, &size, &s->mtime) == 0) {
		s->size = size;
		return 0;
	}
	sbuf_init(&text);
	int rc = render_into(d, t, &text, &s->mtime);
	s->size = text.len;
	if (rc == 0)
		kept_text_put(&d->kept, path, pid, &text, &s->mtime);
	sbuf_release(&text);
	return rc;
}

static int seen_of(struct nmfs *d, const struct target *t, struct fuse_file_info *fi,
		   struct seen *s)
{
	pid_t pid = fuse_get_context()->pid;

	memset(s, 0, sizeof(*s));
	if (t->node->data)
		return t->node->data->size(d, t, &s->size);
	if (t->node->kind == NODE_PIPE || t->node->kind == NODE_DIR)
		return 0;
	if (fi && fi->fh) {
		seen_fh(fh_of(fi), s);
		return 0;
	}
	if (seen_by_opener(d, t, pid, s))
		return 0;
	return seen_by_stat(d, t, pid, s);
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
	st->st_mode = (is_dir(&t) ? S_IFDIR : S_IFREG) | t.node->mode;
	st->st_nlink = is_dir(&t) ? 2 : 1;
	st->st_size = (off_t)seen.size;
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
	int rc = t ? resolve_kind(daemon_ctx(), path, true, t) : -ENOMEM;

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

static int render(struct nmfs *d, struct fh *fh)
{
	return render_into(d, &fh->t, &fh->out, &fh->made);
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
	pthread_mutex_unlock(&d->open_files_lock);
	sbuf_release(&fh->out);
	if (fh->pipe)
		trace_pipe_release(fh->pipe);
	free(fh->pipe);
	pthread_mutex_destroy(&fh->lock);
	free(fh);
}

static int open_pipe(struct fh *fh)
{
	fh->pipe = malloc(sizeof(*fh->pipe));
	if (!fh->pipe)
		return -ENOMEM;
	trace_pipe_init(fh->pipe, fh->t.device);
	return 0;
}

/* The text a stat by this process just rendered, or a new one. */
static int open_text(struct nmfs *d, struct fh *fh, int acc)
{
	char path[PATH_MAX];

	if (acc == O_WRONLY)
		return 0;
	tree_path(&fh->t, path, sizeof(path));
	int rc = 0;
	if (kept_text_take(&d->kept, path, fh->pid, &fh->out, &fh->made))
		rc = render(d, fh);
	fh->fresh = rc == 0;
	fh->readable = rc == 0;
	return rc;
}

static int open_log(struct nmfs *d, struct fh *fh)
{
	uint64_t end;

	dlog_extent(&d->log, &fh->log_start, &end);
	fh->readable = true;
	return 0;
}

static int open_data(struct nmfs *d, struct fh *fh, int flags)
{
	struct file_origin o;

	if (!(flags & O_TRUNC))
		return 0;
	origin_enter(d, &fh->t, "open", &o);
	int rc = fh->t.node->data->resize(d, &fh->t, 0);
	origin_leave(&o);
	return rc;
}

/* root passes the kernel's mode check; the row still says no. */
static bool may_write(const struct node *n)
{
	return n->store || n->data;
}

/*
 * access(2), asked only of a mount without default_permissions, whose
 * only user is its owner (or root): the owner's bits of the mode, which
 * may_write keeps true for root as well.
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

static int open_node(struct nmfs *d, struct fh *fh, int flags)
{
	int acc = flags & O_ACCMODE;

	if (acc != O_RDONLY && !may_write(fh->t.node))
		return -EACCES;
	switch (fh->t.node->kind) {
	case NODE_PIPE:
		return open_pipe(fh);
	case NODE_DATA:
		return open_data(d, fh, flags);
	case NODE_TEXT:
		return open_text(d, fh, acc);
	case NODE_LOG:
		return open_log(d, fh);
	case NODE_DIR:
		break;
	}
	return -EISDIR;
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
	int rc = resolve_kind(d, path, false, &t);

	if (rc)
		return rc;
	struct fh *fh = fh_new(&t);
	if (!fh)
		return -ENOMEM;
	rc = open_node(d, fh, fi->flags);
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
	if (!t.node->data)
		return -EEXIST;
	if (has_control_char(t.name)) {
		dlog_printf(&d->log, "refused a new file whose name has a control character");
		return -EINVAL;
	}
	struct file_origin o;
	origin_enter(d, &t, "create", &o);
	rc = t.node->data->create(d, &t);
	origin_leave(&o);
	if (rc)
		return rc;
	struct fh *fh = fh_new(&t);
	if (!fh) {
		t.node->data->unlink(d, &t);
		return -ENOMEM;
	}
	return hand_out(d, fi, fh);
}

static int read_text(struct nmfs *d, struct fh *fh, char *buf, size_t size,
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
static int read_pipe(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		     int flags)
{
	const struct trace_pipe_wait w = { request_interrupted, session_ending, NULL };

	if (pthread_mutex_trylock(&fh->lock))
		return -EBUSY;
	ssize_t n = trace_pipe_read(fh->pipe, d->alloc, &d->trace_waiters,
				    fuse_get_context()->uid, &w, flags & O_NONBLOCK,
				    (uint64_t)off, buf, size);
	pthread_mutex_unlock(&fh->lock);
	return (int)n;
}

/* A line that fell off the ring moves this handle's offsets up with it,
 * so the reader goes on from the oldest line held. */
static int read_log(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off)
{
	pthread_mutex_lock(&fh->lock);
	uint64_t at = fh->log_start + (uint64_t)off;
	size_t n = dlog_read(&d->log, &at, buf, size);
	if (n && at - n > fh->log_start + (uint64_t)off)
		fh->log_start = at - n - (uint64_t)off;
	pthread_mutex_unlock(&fh->lock);
	return (int)n;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);

	(void)path;
	if (off < 0)
		return -EINVAL;
	if (fh->t.node->data)
		return (int)fh->t.node->data->read(d, &fh->t, buf, size, (uint64_t)off);
	if (fh->pipe)
		return read_pipe(d, fh, buf, size, off, fi->flags);
	if (fh->t.node->kind == NODE_LOG)
		return read_log(d, fh, buf, size, off);
	if (!fh->t.node->show)
		return -EACCES;
	return read_text(d, fh, buf, size, off);
}

static int refuse(struct nmfs *d, const struct target *t, int rc, const char *why)
{
	char path[PATH_MAX];

	tree_path(t, path, sizeof(path));
	tree_set_error(&d->errors, t, why);
	dlog_printf(&d->log, "%s: %s", path + 1, why);
	return rc;
}

/*
 * One open, one command. A refused write leaves the file offset at 0, so
 * without this the next write of the same printf ("garbage\n1\n" in two
 * writes) would be carried out after the shell was told the first failed.
 */
static bool judge_once(struct fh *fh)
{
	pthread_mutex_lock(&fh->lock);
	bool first = !fh->judged;
	fh->judged = true;
	pthread_mutex_unlock(&fh->lock);
	return first;
}

/* A full 4096-byte chunk with no newline is the front of a longer value. */
static bool too_long(const char *buf, size_t size)
{
	return size > NMFS_WRITE_MAX || (size == NMFS_WRITE_MAX && buf[size - 1] != '\n');
}

/* sysfs store: the whole value in one write at offset 0. */
static int write_text(struct nmfs *d, struct fh *fh, const char *buf,
		      size_t size, off_t off)
{
	const struct target *t = &fh->t;
	char value[NMFS_WRITE_MAX + 1], err[NMFS_ERRLEN] = "";

	if (!judge_once(fh))
		return refuse(d, t, -EINVAL,
			      "one command per open: this handle was written already, open the file again");
	if (off != 0)
		return refuse(d, t, -EINVAL, "writes must start at offset 0");
	if (too_long(buf, size))
		return refuse(d, t, -EFBIG, "value of 4096 bytes or more");
	if (memchr(buf, '\0', size))
		return refuse(d, t, -EINVAL, "value contains a NUL byte");
	memcpy(value, buf, size);
	value[size] = '\0';
	if (size && value[size - 1] == '\n')
		value[size - 1] = '\0';
	/* One command a write: a spec split over lines is not read as one. */
	if (strchr(value, '\n'))
		return refuse(d, t, -EINVAL, "value has more than one line");
	struct file_origin o;
	origin_enter(d, t, "write", &o);
	int rc = t->node->store(d, t, value, fuse_get_context()->uid, err,
				sizeof(err));
	origin_leave(&o);
	if (rc)
		return refuse(d, t, rc, err[0] ? err : strerror(-rc));
	/* last_error speaks of the last write: a success clears it. */
	tree_set_error(&d->errors, t, "");
	pthread_mutex_lock(&fh->lock);
	fh->fresh = false;
	pthread_mutex_unlock(&fh->lock);
	return (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct fh *fh = fh_of(fi);

	(void)path;
	if (off < 0)
		return -EINVAL;
	if (fh->t.node->data) {
		struct file_origin o;
		origin_enter(d, &fh->t, "write", &o);
		ssize_t n = fh->t.node->data->write(d, &fh->t, buf, size, (uint64_t)off);
		origin_leave(&o);
		return (int)n;
	}
	if (!fh->t.node->store)
		return -EACCES;
	return write_text(d, fh, buf, size, off);
}

/* echo opens a ctl file with O_TRUNC: a truncate of a writable text file
 * does nothing; a data file takes the new size. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_fi(d, path, fi, &t);

	if (rc)
		return rc;
	if (is_dir(&t))
		return -EISDIR;
	if (!t.node->data)
		return t.node->store ? 0 : -EACCES;
	if (size < 0)
		return -EINVAL;
	struct file_origin o;
	origin_enter(d, &t, "truncate", &o);
	rc = t.node->data->resize(d, &t, (uint64_t)size);
	origin_leave(&o);
	return rc;
}

static int fs_unlink(const char *path)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = tree_resolve(d, path, false, &t);

	if (rc)
		return rc;
	if (!t.node->data)
		return -EACCES;
	struct file_origin o;
	origin_enter(d, &t, "unlink", &o);
	rc = t.node->data->unlink(d, &t);
	origin_leave(&o);
	return rc;
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

/* touch on a data file is harmless; everything else keeps its times. */
static int fs_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	struct nmfs *d = daemon_ctx();
	struct target t;
	int rc = resolve_fi(d, path, fi, &t);

	(void)tv;
	return rc ? rc : (t.node->data ? 0 : -EACCES);
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

/*
 * Every file is ready as a regular file is; the trace pipe's read waits as
 * before. The handle for a later notification is destroyed here: libfuse
 * (3.14) frees it only if the file system does, and event loops such as
 * Go's (node_exporter) poll every file they read.
 */
static int fs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
		   unsigned *reventsp)
{
	(void)path, (void)fi;
	if (ph)
		fuse_pollhandle_destroy(ph);
	*reventsp = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
	return 0;
}

const struct fuse_operations nmfs_ops = {
	.init = fs_init,
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
