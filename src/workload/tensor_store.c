/*
 * tensor_store.c - named allocations on one device.
 *
 * A uthash table of name -> (block, size) behind one mutex. Every byte
 * goes through aclrtMemcpy, so what a test reads back really came out of
 * simulated device memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include <acl/acl_rt.h>
#include "tensor_store.h"

struct tensor {
	char name[TS_NAME_MAX + 1];
	void *ptr;      /* NULL while size is 0 */
	uint64_t size;
	UT_hash_handle hh;
};

struct tensor_store {
	struct npa *a;          /* one of these two */
	struct sw *sw;
	int device;
	pthread_mutex_t lock;
	struct tensor *table;
};

int ts_new(struct npa *a, int device, struct tensor_store **out)
{
	struct tensor_store *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return -ENOMEM;
	ts->a = a;
	ts->device = device;
	pthread_mutex_init(&ts->lock, NULL);
	*out = ts;
	return 0;
}

int ts_new_switch(struct sw *sw, int device, struct tensor_store **out)
{
	int rc = ts_new(NULL, device, out);

	if (rc == 0)
		(*out)->sw = sw;
	return rc;
}

static int block_alloc(struct tensor_store *ts, size_t size, void **ptr,
		       char *err, size_t errlen)
{
	if (ts->sw)
		return sw_malloc(ts->sw, ts->device, size, NULL, ptr, err, errlen);
	return npa_malloc(ts->a, ts->device, size, NULL, ptr, err, errlen);
}

static void block_free(struct tensor_store *ts, void *ptr)
{
	if (ts->sw)
		sw_free(ts->sw, ptr, NULL, 0);
	else
		npa_free(ts->a, ptr, NULL, 0);
}

void ts_free(struct tensor_store *ts)
{
	if (!ts)
		return;
	ts_release_all(ts, NULL);
	pthread_mutex_destroy(&ts->lock);
	free(ts);
}

static struct tensor *find(struct tensor_store *ts, const char *name)
{
	struct tensor *t;

	HASH_FIND_STR(ts->table, name, t);
	return t;
}

/* Copies run on the caller's thread, whose current device may differ. */
static int copy(struct tensor_store *ts, void *dst, const void *src, size_t n,
		aclrtMemcpyKind kind)
{
	if (n == 0)
		return 0;
	if (aclrtSetDevice(ts->device) != ACL_SUCCESS ||
	    aclrtMemcpy(dst, n, src, n, kind) != ACL_SUCCESS)
		return -EIO;
	return 0;
}

int ts_create(struct tensor_store *ts, const char *name)
{
	struct tensor *t;

	if (strlen(name) > TS_NAME_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&ts->lock);
	if (find(ts, name)) {
		pthread_mutex_unlock(&ts->lock);
		return -EEXIST;
	}
	t = calloc(1, sizeof(*t));
	if (t) {
		strcpy(t->name, name);
		HASH_ADD_STR(ts->table, name, t);
	}
	pthread_mutex_unlock(&ts->lock);
	return t ? 0 : -ENOMEM;
}

int ts_unlink(struct tensor_store *ts, const char *name)
{
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t) {
		HASH_DEL(ts->table, t);
		if (t->ptr)
			block_free(ts, t->ptr);
		free(t);
	}
	pthread_mutex_unlock(&ts->lock);
	return t ? 0 : -ENOENT;
}

int ts_size(struct tensor_store *ts, const char *name, uint64_t *size)
{
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t)
		*size = t->size;
	pthread_mutex_unlock(&ts->lock);
	return t ? 0 : -ENOENT;
}

/* The old block is freed only once the new one holds the bytes. */
static int resize_locked(struct tensor_store *ts, struct tensor *t, uint64_t size,
			 char *err, size_t errlen)
{
	void *ptr = NULL;
	int rc;

	if (size == t->size)
		return 0;
	if (size > SIZE_MAX)
		return -EFBIG;
	rc = block_alloc(ts, (size_t)size, &ptr, err, errlen);
	if (rc)
		return rc;
	uint64_t keep = size < t->size ? size : t->size;
	rc = copy(ts, ptr, t->ptr, (size_t)keep, ACL_MEMCPY_DEVICE_TO_DEVICE);
	if (rc) {
		block_free(ts, ptr);
		return rc;
	}
	if (t->ptr)
		block_free(ts, t->ptr);
	t->ptr = ptr;
	t->size = size;
	return 0;
}

int ts_resize(struct tensor_store *ts, const char *name, uint64_t size,
	      char *err, size_t errlen)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t)
		rc = resize_locked(ts, t, size, err, errlen);
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

ssize_t ts_read(struct tensor_store *ts, const char *name, void *buf,
		size_t len, uint64_t off)
{
	ssize_t rc = -ENOENT;

	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t) {
		size_t n = off >= t->size ? 0 : (size_t)(t->size - off);
		if (n > len)
			n = len;
		rc = n ? copy(ts, buf, (char *)t->ptr + off, n,
			      ACL_MEMCPY_DEVICE_TO_HOST)
		       : 0;
		if (rc == 0)
			rc = (ssize_t)n;
	}
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

ssize_t ts_write(struct tensor_store *ts, const char *name, const void *buf,
		 size_t len, uint64_t off, char *err, size_t errlen)
{
	ssize_t rc = -ENOENT;

	if (off + len < off)
		return -EFBIG;
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t) {
		rc = 0;
		if (off + len > t->size)
			rc = resize_locked(ts, t, off + len, err, errlen);
		if (rc == 0 && len)
			rc = copy(ts, (char *)t->ptr + off, buf, len,
				  ACL_MEMCPY_HOST_TO_DEVICE);
		if (rc == 0)
			rc = (ssize_t)len;
	}
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

int ts_foreach(struct tensor_store *ts, ts_visit_fn fn, void *arg)
{
	struct tensor *t, *tmp;
	int rc = 0;

	pthread_mutex_lock(&ts->lock);
	HASH_ITER(hh, ts->table, t, tmp) {
		rc = fn(arg, t->name, t->size);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

size_t ts_release_all(struct tensor_store *ts, uint64_t *bytes)
{
	struct tensor *t, *tmp;
	size_t n = 0;
	uint64_t total = 0;

	pthread_mutex_lock(&ts->lock);
	HASH_ITER(hh, ts->table, t, tmp) {
		HASH_DEL(ts->table, t);
		if (t->ptr)
			block_free(ts, t->ptr);
		total += t->size;
		n++;
		free(t);
	}
	pthread_mutex_unlock(&ts->lock);
	if (bytes)
		*bytes = total;
	return n;
}
