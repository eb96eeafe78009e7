/*
 * text_file.c - a file whose text its row's show makes (stats, summaries,
 * ctl files), and whose write goes to its row's store.
 *
 * The text is rendered at open into the open file's own buffer and served
 * with direct_io; a read at offset 0 on a reused handle renders again, as
 * sysfs does. Its size is the size of the text the caller reads: a stat
 * by a process that has the file open says its open's size, any other
 * stat renders the text and keeps it for that process's next open
 * (kept_text.h), so tar, sendfile and cmp see sizes that match the bytes.
 * Its mtime is when its text last changed (text_times.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fuse_ops.h"
#include "open_file.h"

/* The text, and when it last changed (text_times.h): its mtime. */
static int render_into(struct nmfs *d, const struct target *t, struct sbuf *out,
		       struct timespec *made)
{
	struct file_origin o;

	sbuf_reset(out);
	origin_enter(d, t, "read", &o);
	int rc = t->node->show(d, t, out);
	origin_leave(&o);
	rc = rc ? rc : out->error;
	if (rc == 0)
		text_time(&d->times, o.path, out->data, out->len, made);
	return rc;
}

static int render(struct nmfs *d, struct fh *fh)
{
	return render_into(d, &fh->t, &fh->out, &fh->made);
}

/* The text a stat by this process just rendered, or a new one. */
static int text_open(struct nmfs *d, struct fh *fh, int flags)
{
	int acc = flags & O_ACCMODE;
	char path[PATH_MAX];

	/* root passes the kernel's mode check; the row still says no. */
	if (acc != O_RDONLY && !fh->t.node->store)
		return -EACCES;
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

static int text_read(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		     int flags)
{
	int rc = 0;

	(void)flags;
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

static int store(struct nmfs *d, const struct target *t, const char *value)
{
	char err[NMFS_ERRLEN] = "";
	struct file_origin o;

	origin_enter(d, t, "write", &o);
	int rc = t->node->store(d, t, value, fuse_get_context()->uid, err, sizeof(err));
	origin_leave(&o);
	return rc ? refuse(d, t, rc, err[0] ? err : strerror(-rc)) : 0;
}

/* sysfs store: the whole value in one write at offset 0. */
static int judge_write(struct nmfs *d, struct fh *fh, const char *buf, size_t size, off_t off)
{
	const struct target *t = &fh->t;
	char value[NMFS_WRITE_MAX + 1];

	if (!t->node->store)
		return -EACCES;
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
	int rc = store(d, t, value);
	if (rc)
		return rc;
	/* last_error speaks of the last write: a success clears it. */
	tree_set_error(&d->errors, t, "");
	pthread_mutex_lock(&fh->lock);
	fh->fresh = false;
	pthread_mutex_unlock(&fh->lock);
	return (int)size;
}

/*
 * A write changes the file's text (its value or last_error). The lookup
 * of the writer's own open kept a text from before it, which the same
 * shell's next `read v < FILE` would otherwise be given.
 */
static int text_write(struct nmfs *d, struct fh *fh, const char *buf, size_t size, off_t off)
{
	char path[PATH_MAX];
	int rc = judge_write(d, fh, buf, size, off);

	tree_path(&fh->t, path, sizeof(path));
	kept_text_drop(&d->kept, path);
	return rc;
}

static void seen_text(struct nmfs *d, struct fh *fh, struct seen *s)
{
	(void)d;
	pthread_mutex_lock(&fh->lock);
	s->size = fh->out.len;
	s->mtime = fh->made;
	pthread_mutex_unlock(&fh->lock);
}

/* A stat from a process without the file open: the text kept for it, or
 * a new one, kept for that process's open. */
static int seen_by_stat(struct nmfs *d, const struct target *t, pid_t pid, struct seen *s)
{
	struct sbuf text;
	char path[PATH_MAX];
	size_t size;

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

static int text_stat(struct nmfs *d, const struct target *t, struct fh *fh, struct seen *s)
{
	pid_t pid = fuse_get_context()->pid;

	if (fh) {
		seen_text(d, fh, s);
		return 0;
	}
	if (fh_of_opener(d, t, pid, seen_text, s))
		return 0;
	return seen_by_stat(d, t, pid, s);
}

/* echo opens a ctl file with O_TRUNC: a truncate of a writable text file
 * does nothing. */
static int text_truncate(struct nmfs *d, const struct target *t, off_t size)
{
	(void)d, (void)size;
	return t->node->store ? 0 : -EACCES;
}

const struct file_ops text_file = {
	.open = text_open,
	.read = text_read,
	.write = text_write,
	.stat = text_stat,
	.truncate = text_truncate,
};
