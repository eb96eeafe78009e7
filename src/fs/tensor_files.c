/*
 * tensor_files.c - tensors/deviceN/NAME and tensors/deviceN/streamS/NAME:
 * an allocation on a stream as a file, its bytes in device memory
 * (tensor_store.h).
 */
#include <errno.h>
#include <limits.h>

#include "daemon.h"
#include "nodes.h"

/* A file is looked up before it is used, so its stream has a store; only
 * creating a file makes the stream. */
static struct tensor_store *store_of(struct nmfs *d, const struct target *t)
{
	return streams_store(&d->streams, t->device, t->stream, false);
}

bool stream_made(struct nmfs *d, const struct target *t)
{
	return store_of(d, t) != NULL;
}

/* An allocator's refusal (a plug-in's too) and a copy the runtime refused
 * explain themselves in err. */
static void log_refusal(struct nmfs *d, const struct target *t, const char *err)
{
	char path[PATH_MAX];

	tree_path(t, path, sizeof(path));
	if (err[0])
		dlog_printf(&d->log, "%s: %s", path + 1, err);
}

static int tensor_size(struct nmfs *d, const struct target *t, uint64_t *size,
		       struct timespec *changed)
{
	struct tensor_store *ts = store_of(d, t);

	return ts ? ts_size(ts, t->name, size, changed) : -ENOENT;
}

static int tensor_create(struct nmfs *d, const struct target *t)
{
	struct tensor_store *ts = streams_store(&d->streams, t->device, t->stream, true);

	return ts ? ts_create(ts, t->name) : -EIO;
}

static int tensor_unlink(struct nmfs *d, const struct target *t)
{
	struct tensor_store *ts = store_of(d, t);

	return ts ? ts_unlink(ts, t->name) : -ENOENT;
}

static int tensor_resize(struct nmfs *d, const struct target *t, uint64_t size)
{
	struct tensor_store *ts = store_of(d, t);
	char err[NPA_ERRLEN] = "";

	if (!ts)
		return -ENOENT;
	int rc = ts_resize(ts, t->name, size, err, sizeof(err));

	if (rc < 0)
		log_refusal(d, t, err);
	return rc;
}

static ssize_t tensor_read(struct nmfs *d, const struct target *t, char *buf,
			   size_t size, uint64_t off)
{
	struct tensor_store *ts = store_of(d, t);
	char err[NPA_ERRLEN] = "";

	if (!ts)
		return -ENOENT;
	ssize_t rc = ts_read(ts, t->name, buf, size, off, err, sizeof(err));
	if (rc < 0)
		log_refusal(d, t, err);
	return rc;
}

static ssize_t tensor_write(struct nmfs *d, const struct target *t,
			    const char *buf, size_t size, uint64_t off)
{
	struct tensor_store *ts = store_of(d, t);
	char err[NPA_ERRLEN] = "";

	if (!ts)
		return -ENOENT;
	ssize_t rc = ts_write(ts, t->name, buf, size, off, err, sizeof(err));

	if (rc < 0)
		log_refusal(d, t, err);
	return rc;
}

const struct data_ops tensor_data = {
	.size = tensor_size,
	.create = tensor_create,
	.unlink = tensor_unlink,
	.resize = tensor_resize,
	.read = tensor_read,
	.write = tensor_write,
};
