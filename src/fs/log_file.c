/*
 * log_file.c - the daemon's log as a file: it grows at the end and is
 * read in place (daemon_log.h), like a file appended to, so tail -f
 * follows it. Lines that fall off the ring move the file's start.
 */
#include <errno.h>
#include <fcntl.h>

#include "daemon.h"
#include "fuse_ops.h"
#include "open_file.h"

static int log_open(struct nmfs *d, struct fh *fh, int flags)
{
	uint64_t end;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	dlog_extent(&d->log, &fh->log_start, &end, NULL);
	fh->readable = true;
	return 0;
}

/* A line that fell off the ring moves this handle's offsets up with it,
 * so the reader goes on from the oldest line held. */
static int log_read(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		    int flags)
{
	(void)flags;
	pthread_mutex_lock(&fh->lock);
	uint64_t at = fh->log_start + (uint64_t)off;
	size_t n = dlog_read(&d->log, &at, buf, size);
	if (n && at - n > fh->log_start + (uint64_t)off)
		fh->log_start = at - n - (uint64_t)off;
	pthread_mutex_unlock(&fh->lock);
	return (int)n;
}

static void seen_log(struct nmfs *d, struct fh *fh, struct seen *s)
{
	uint64_t first, end;

	dlog_extent(&d->log, &first, &end, &s->mtime);
	s->size = end - fh->log_start;
}

static int log_stat(struct nmfs *d, const struct target *t, struct fh *fh, struct seen *s)
{
	uint64_t first, end;

	if (fh) {
		seen_log(d, fh, s);
		return 0;
	}
	if (fh_of_opener(d, t, fuse_get_context()->pid, seen_log, s))
		return 0;
	dlog_extent(&d->log, &first, &end, &s->mtime);
	s->size = end - first;
	return 0;
}

const struct file_ops log_file = {
	.open = log_open,
	.read = log_read,
	.stat = log_stat,
};
