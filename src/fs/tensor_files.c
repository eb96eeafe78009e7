/*
 * tensor_files.c - tensors/deviceN/NAME: an allocation as a file, its
 * bytes in device memory (tensor_store.h).
 */
#include <errno.h>

#include "daemon.h"
#include "nodes.h"

static struct tensor_store *store_of(struct nmfs *d, const struct target *t)
{
	return d->tensors[t->device];
}

/* An allocator's refusal (a plug-in's too) explains itself in err. */
static void log_refusal(struct nmfs *d, const struct target *t, const char *err)
{
	if (err[0])
		dlog_printf(&d->log, "tensors/device%d/%s: %s", t->device, t->name,
			    err);
}

static int tensor_size(struct nmfs *d, const struct target *t, uint64_t *size)
{
	return ts_size(store_of(d, t), t->name, size);
}

static int tensor_create(struct nmfs *d, const struct target *t)
{
	return ts_create(store_of(d, t), t->name);
}

static int tensor_unlink(struct nmfs *d, const struct target *t)
{
	return ts_unlink(store_of(d, t), t->name);
}

static int tensor_resize(struct nmfs *d, const struct target *t, uint64_t size)
{
	char err[NPA_ERRLEN] = "";
	int rc = ts_resize(store_of(d, t), t->name, size, err, sizeof(err));

	if (rc < 0)
		log_refusal(d, t, err);
	return rc;
}

static ssize_t tensor_read(struct nmfs *d, const struct target *t, char *buf,
			   size_t size, uint64_t off)
{
	return ts_read(store_of(d, t), t->name, buf, size, off);
}

static ssize_t tensor_write(struct nmfs *d, const struct target *t,
			    const char *buf, size_t size, uint64_t off)
{
	char err[NPA_ERRLEN] = "";
	ssize_t rc = ts_write(store_of(d, t), t->name, buf, size, off, err,
			      sizeof(err));

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
