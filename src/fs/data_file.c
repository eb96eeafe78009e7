/*
 * data_file.c - a file whose bytes stay (a tensor, a pinned tensor): its
 * row's data_ops, each call made the origin of what it allocates.
 */
#include <errno.h>
#include <fcntl.h>

#include "daemon.h"
#include "open_file.h"

static int data_open(struct nmfs *d, struct fh *fh, int flags)
{
	struct file_origin o;

	if (!(flags & O_TRUNC))
		return 0;
	origin_enter(d, &fh->t, "open", &o);
	int rc = fh->t.node->data->resize(d, &fh->t, 0);
	origin_leave(&o);
	return rc;
}

static int data_read(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		     int flags)
{
	(void)flags;
	return (int)fh->t.node->data->read(d, &fh->t, buf, size, (uint64_t)off);
}

static int data_write(struct nmfs *d, struct fh *fh, const char *buf, size_t size, off_t off)
{
	struct file_origin o;

	origin_enter(d, &fh->t, "write", &o);
	ssize_t n = fh->t.node->data->write(d, &fh->t, buf, size, (uint64_t)off);
	origin_leave(&o);
	return (int)n;
}

static int data_stat(struct nmfs *d, const struct target *t, struct fh *fh, struct seen *s)
{
	(void)fh;
	return t->node->data->size(d, t, &s->size, &s->mtime);
}

static int data_truncate(struct nmfs *d, const struct target *t, off_t size)
{
	struct file_origin o;

	if (size < 0)
		return -EINVAL;
	origin_enter(d, t, "truncate", &o);
	int rc = t->node->data->resize(d, t, (uint64_t)size);
	origin_leave(&o);
	return rc;
}

/* A call that may allocate or free, with the file as its origin. */
static int with_origin(struct nmfs *d, const struct target *t, const char *op,
		       int (*fn)(struct nmfs *d, const struct target *t))
{
	struct file_origin o;

	origin_enter(d, t, op, &o);
	int rc = fn(d, t);
	origin_leave(&o);
	return rc;
}

static int data_create(struct nmfs *d, const struct target *t)
{
	return with_origin(d, t, "create", t->node->data->create);
}

static int data_unlink(struct nmfs *d, const struct target *t)
{
	return with_origin(d, t, "unlink", t->node->data->unlink);
}

/* touch on a data file is harmless. */
static int data_touch(struct nmfs *d, const struct target *t)
{
	(void)d, (void)t;
	return 0;
}

const struct file_ops data_file = {
	.open = data_open,
	.read = data_read,
	.write = data_write,
	.stat = data_stat,
	.truncate = data_truncate,
	.create = data_create,
	.unlink = data_unlink,
	.touch = data_touch,
};
