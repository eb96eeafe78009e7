/*
 * pipe_file.c - trace_pipe/deviceN as a file: each open reads the memory
 * history as a stream that waits for more (trace_pipe.h). It has no size.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>

#include "daemon.h"
#include "fuse_ops.h"
#include <fuse_lowlevel.h>
#include "open_file.h"

static int pipe_open(struct nmfs *d, struct fh *fh, int flags)
{
	(void)d;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fh->pipe = malloc(sizeof(*fh->pipe));
	if (!fh->pipe)
		return -ENOMEM;
	trace_pipe_init(fh->pipe, fh->t.device);
	return 0;
}

static void pipe_release(struct fh *fh)
{
	if (fh->pipe)
		trace_pipe_release(fh->pipe);
	free(fh->pipe);
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

/* Once per reader: a program that retries must not fill the log. */
static void tell_off(struct nmfs *d, struct fh *fh)
{
	char path[PATH_MAX];

	if (fh->pipe->told_off)
		return;
	fh->pipe->told_off = true;
	tree_path(&fh->t, path, sizeof(path));
	dlog_printf(&d->log,
		    "%s: memory history is off, so no entry can come: "
		    "echo all > ctl/record_memory_history, then read again",
		    path + 1);
}

/* One reader of a handle at a time: a second one would wait outside the
 * limit on waiting reads, holding a worker thread. */
static int pipe_read(struct nmfs *d, struct fh *fh, char *buf, size_t size, off_t off,
		     int flags)
{
	const struct trace_pipe_wait w = { request_interrupted, session_ending, NULL };

	if (pthread_mutex_trylock(&fh->lock))
		return -EBUSY;
	ssize_t n = trace_pipe_read(fh->pipe, sw_caching(d->sw), &d->trace_waiters,
				    fuse_get_context()->uid, &w, flags & O_NONBLOCK,
				    (uint64_t)off, buf, size);
	if (n == -ENODATA)
		tell_off(d, fh);
	pthread_mutex_unlock(&fh->lock);
	return (int)n;
}

/* A read in progress holds the lock: this handle has no more to give yet. */
static bool pipe_ready(struct nmfs *d, struct fh *fh)
{
	if (pthread_mutex_trylock(&fh->lock))
		return false;
	bool ready = trace_pipe_ready(fh->pipe, sw_caching(d->sw));
	pthread_mutex_unlock(&fh->lock);
	return ready;
}

static int pipe_stat(struct nmfs *d, const struct target *t, struct fh *fh, struct seen *s)
{
	(void)d, (void)t, (void)fh, (void)s;
	return 0;
}

const struct file_ops pipe_file = {
	.open = pipe_open,
	.release = pipe_release,
	.read = pipe_read,
	.stat = pipe_stat,
	.ready = pipe_ready,
};
