/*
 * tensor_store.c - named allocations on one device.
 *
 * A uthash table of name -> (block, size) behind one mutex. Every byte
 * goes through aclrtMemcpy (aclrtMemcpyAsync while the stream captures),
 * so what a test reads back really came out of simulated device memory.
 *
 * The allocator is called without the mutex held: a plug-in may take up
 * to its timeout to answer, and a listing, a stat or another tensor must
 * not wait for it. The tensor whose block is being replaced is marked
 * busy meanwhile; whatever else wants that tensor waits for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include <acl/acl_rt.h>
#include <npumemfs/npusim.h>

#include "base/extent_set.h"
#include "tensor_store.h"

struct tensor {
	char name[TS_NAME_MAX + 1];
	void *ptr;      /* NULL while size is 0 */
	uint64_t size;
	/* What was ever written: a resize copies only these bytes, so a
	 * tensor grown by a write far past its end stays sparse. */
	struct extent_set written;
	struct timespec changed; /* when its bytes or size last changed: its mtime */
	bool busy;      /* its block is being replaced, outside the lock */
	UT_hash_handle hh;
};

/* Host bytes of a captured copy: each replay of the graph reads them,
 * until the runtime destroys the model that recorded the copy. */
struct staged {
	struct staged *next;
	aclmdlRI model;
	size_t n;
	char bytes[];
};

struct tensor_store {
	struct allocator a;     /* the daemon's allocator switch, or a test's allocator */
	int device;
	aclrtStream stream;
	pthread_mutex_t lock;
	pthread_cond_t idle;    /* a tensor stopped being busy */
	struct tensor *table;
	struct staged *staged;  /* newest first */
	size_t staged_bytes;
};

int ts_new(struct allocator a, int device, aclrtStream stream, struct tensor_store **out)
{
	struct tensor_store *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return -ENOMEM;
	ts->a = a;
	ts->device = device;
	ts->stream = stream != NULL ? stream : npusim_default_stream(device);
	pthread_mutex_init(&ts->lock, NULL);
	pthread_cond_init(&ts->idle, NULL);
	*out = ts;
	return 0;
}

aclrtStream ts_stream(const struct tensor_store *ts)
{
	return ts->stream;
}

static int block_alloc(struct tensor_store *ts, size_t size, void **ptr,
		       char *err, size_t errlen)
{
	return ts->a.ops->malloc(ts->a.self, ts->device, size, ts->stream, ptr, err, errlen);
}

static void block_free(struct tensor_store *ts, void *ptr)
{
	ts->a.ops->free(ts->a.self, ptr, NULL, 0);
}

void ts_free(struct tensor_store *ts)
{
	if (!ts)
		return;
	ts_release_all(ts, NULL);
	while (ts->staged) {
		struct staged *next = ts->staged->next;
		free(ts->staged);
		ts->staged = next;
	}
	pthread_cond_destroy(&ts->idle);
	pthread_mutex_destroy(&ts->lock);
	free(ts);
}

static void stamp(struct tensor *t)
{
	clock_gettime(CLOCK_REALTIME, &t->changed);
}

static struct tensor *find(struct tensor_store *ts, const char *name)
{
	struct tensor *t;

	HASH_FIND_STR(ts->table, name, t);
	return t;
}

/* Lock held. The tensor, once no one is replacing its block. */
static struct tensor *find_idle(struct tensor_store *ts, const char *name)
{
	struct tensor *t;

	while ((t = find(ts, name)) && t->busy)
		pthread_cond_wait(&ts->idle, &ts->lock);
	return t;
}

static bool capturing(const struct tensor_store *ts)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;

	return aclmdlRICaptureGetInfo(ts->stream, &status, NULL) == ACL_SUCCESS &&
	       status != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

static int copy_failed(aclError e, const char *call, char *err, size_t errlen)
{
	bool refused = e == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT;

	if (err && errlen)
		snprintf(err, errlen, "%s %s (error %d)", call,
			 refused ? "refused while a graph captures on this device"
				 : "failed",
			 (int)e);
	return refused ? -EBUSY : -EIO;
}

static bool model_destroyed(aclmdlRI model)
{
	uint32_t id;

	return aclmdlRIGetId(model, &id) != ACL_SUCCESS;
}

/* Under ts->lock: the staging of models no replay can run again. */
static void drop_stale_staging(struct tensor_store *ts)
{
	struct staged **pp = &ts->staged;

	while (*pp) {
		struct staged *s = *pp;

		if (model_destroyed(s->model)) {
			*pp = s->next;
			ts->staged_bytes -= s->n;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

size_t ts_release_staging(struct tensor_store *ts)
{
	pthread_mutex_lock(&ts->lock);
	drop_stale_staging(ts);
	size_t kept = ts->staged_bytes;
	pthread_mutex_unlock(&ts->lock);
	return kept;
}

/* The runtime knows every device address; a plug-in that hands out host
 * memory (malloc, posix_memalign) makes tensors nobody can copy. */
static int not_device_memory(const void *dev, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen,
			 "aclrtMemcpy refused %p: not device memory; the allocator that made "
			 "this tensor returned a pointer that did not come from aclrtMalloc "
			 "(a plug-in must take device memory through the ACL API)", dev);
	return -EIO;
}

/*
 * A copy a capture records reads `src` again at every replay: host bytes
 * are kept in a staging buffer of the store's while the model lives.
 */
static int stage(struct tensor_store *ts, const void **src, size_t n,
		 aclrtMemcpyKind kind)
{
	aclmdlRICaptureStatus status;
	aclmdlRI model = NULL;

	if (kind != ACL_MEMCPY_HOST_TO_DEVICE)
		return 0;
	drop_stale_staging(ts);
	if (aclmdlRICaptureGetInfo(ts->stream, &status, &model) != ACL_SUCCESS)
		return -EIO;
	struct staged *s = malloc(sizeof(*s) + n);
	if (!s)
		return -ENOMEM;
	memcpy(s->bytes, *src, n);
	s->model = model;
	s->n = n;
	ts->staged_bytes += n;
	s->next = ts->staged;
	ts->staged = s;
	*src = s->bytes;
	return 0;
}

static int copy_captured(struct tensor_store *ts, void *dst, const void *src,
			 size_t n, aclrtMemcpyKind kind, char *err, size_t errlen)
{
	int rc = stage(ts, &src, n, kind);

	if (rc)
		return rc;
	aclError e = aclrtMemcpyAsync(dst, n, src, n, kind, ts->stream);
	return e == ACL_SUCCESS ? 0 : copy_failed(e, "aclrtMemcpyAsync", err, errlen);
}

/* Copies run on the caller's thread, whose current device may differ.
 * Reads copy at once even on a capturing stream (x.cpu() in a capture),
 * so the capture's mode decides whether they are allowed. */
static int copy(struct tensor_store *ts, void *dst, const void *src, size_t n,
		aclrtMemcpyKind kind, char *err, size_t errlen)
{
	aclError e;

	if (n == 0)
		return 0;
	if ((e = aclrtSetDevice(ts->device)) != ACL_SUCCESS)
		return copy_failed(e, "aclrtSetDevice", err, errlen);
	if (kind != ACL_MEMCPY_DEVICE_TO_HOST && capturing(ts))
		return copy_captured(ts, dst, src, n, kind, err, errlen);
	e = aclrtMemcpy(dst, n, src, n, kind);
	if (e == ACL_ERROR_INVALID_PARAM)
		return not_device_memory(kind == ACL_MEMCPY_DEVICE_TO_HOST ? src : dst, err, errlen);
	return e == ACL_SUCCESS ? 0 : copy_failed(e, "aclrtMemcpy", err, errlen);
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
		stamp(t);
		HASH_ADD_STR(ts->table, name, t);
	}
	pthread_mutex_unlock(&ts->lock);
	return t ? 0 : -ENOMEM;
}

int ts_unlink(struct tensor_store *ts, const char *name)
{
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find_idle(ts, name);
	if (t)
		HASH_DEL(ts->table, t);
	pthread_mutex_unlock(&ts->lock);
	if (t && t->ptr)
		block_free(ts, t->ptr);
	free(t);
	return t ? 0 : -ENOENT;
}

int ts_size(struct tensor_store *ts, const char *name, uint64_t *size,
	    struct timespec *changed)
{
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find(ts, name);
	if (t)
		*size = t->size;
	if (t && changed)
		*changed = t->changed;
	pthread_mutex_unlock(&ts->lock);
	return t ? 0 : -ENOENT;
}

/* The written extents below `size` of t's block, into `to`. */
static int copy_written(struct tensor_store *ts, struct tensor *t, void *to, uint64_t size,
			char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; i < t->written.n && rc == 0; i++) {
		const struct extent *e = &t->written.e[i];
		uint64_t hi = e->hi < size ? e->hi : size;

		if (e->lo < hi)
			rc = copy(ts, (char *)to + e->lo, (char *)t->ptr + e->lo,
				  (size_t)(hi - e->lo), ACL_MEMCPY_DEVICE_TO_DEVICE, err, errlen);
	}
	return rc;
}

/*
 * Lock held, t idle; the lock is let go around the allocator's calls,
 * with t busy. The old block is freed only once the new one holds the
 * bytes.
 */
static int resize_locked(struct tensor_store *ts, struct tensor *t, uint64_t size,
			 char *err, size_t errlen)
{
	void *ptr = NULL, *old = NULL;
	int rc;

	if (size == t->size)
		return 0;
	if (size > SIZE_MAX)
		return -EFBIG;
	t->busy = true;
	pthread_mutex_unlock(&ts->lock);
	rc = block_alloc(ts, (size_t)size, &ptr, err, errlen);
	if (!rc) {
		rc = copy_written(ts, t, ptr, size, err, errlen);
		old = rc ? ptr : t->ptr;
	}
	if (old)
		block_free(ts, old);
	pthread_mutex_lock(&ts->lock);
	if (!rc) {
		t->ptr = ptr;
		t->size = size;
		extent_set_clip(&t->written, size);
		stamp(t);
	}
	t->busy = false;
	pthread_cond_broadcast(&ts->idle);
	return rc;
}

int ts_resize(struct tensor_store *ts, const char *name, uint64_t size,
	      char *err, size_t errlen)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find_idle(ts, name);
	if (t)
		rc = resize_locked(ts, t, size, err, errlen);
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

ssize_t ts_read(struct tensor_store *ts, const char *name, void *buf,
		size_t len, uint64_t off, char *err, size_t errlen)
{
	ssize_t rc = -ENOENT;

	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find_idle(ts, name);
	if (t) {
		size_t n = off >= t->size ? 0 : (size_t)(t->size - off);
		if (n > len)
			n = len;
		rc = n ? copy(ts, buf, (char *)t->ptr + off, n,
			      ACL_MEMCPY_DEVICE_TO_HOST, err, errlen)
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
	struct tensor *t = find_idle(ts, name);
	if (t) {
		rc = 0;
		if (off + len > t->size)
			rc = resize_locked(ts, t, off + len, err, errlen);
		if (rc == 0 && len)
			rc = copy(ts, (char *)t->ptr + off, buf, len,
				  ACL_MEMCPY_HOST_TO_DEVICE, err, errlen);
		if (rc == 0 && len) {
			extent_set_add(&t->written, off, off + len);
			stamp(t);
		}
		if (rc == 0)
			rc = (ssize_t)len;
	}
	pthread_mutex_unlock(&ts->lock);
	return rc;
}

static int copy_async_locked(struct tensor_store *ts, struct tensor *t, void *host,
			     uint64_t size, aclrtMemcpyKind kind, aclrtStream on, char *err,
			     size_t errlen)
{
	bool to_device = kind == ACL_MEMCPY_HOST_TO_DEVICE;
	aclError e;

	if (size != t->size) {
		snprintf(err, errlen, "the pinned tensor has %llu bytes and tensor %s %llu: "
			 "copy_ needs equal sizes", (unsigned long long)size, t->name,
			 (unsigned long long)t->size);
		return -EINVAL;
	}
	if (size == 0)
		return 0;
	if ((e = aclrtSetDevice(ts->device)) != ACL_SUCCESS)
		return copy_failed(e, "aclrtSetDevice", err, errlen);
	e = to_device ? aclrtMemcpyAsync(t->ptr, size, host, size, kind, on)
		      : aclrtMemcpyAsync(host, size, t->ptr, size, kind, on);
	if (e == ACL_ERROR_INVALID_PARAM)
		return not_device_memory(t->ptr, err, errlen);
	if (e != ACL_SUCCESS)
		return copy_failed(e, "aclrtMemcpyAsync", err, errlen);
	if (to_device) {
		extent_set_add(&t->written, 0, size);
		stamp(t);
	}
	return 0;
}

int ts_copy_async(struct tensor_store *ts, const char *name, void *host, uint64_t size,
		  aclrtMemcpyKind kind, aclrtStream *stream, char *err, size_t errlen)
{
	int rc = -ENOENT;

	if (*stream == NULL)
		*stream = ts->stream;
	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find_idle(ts, name);
	if (t)
		rc = copy_async_locked(ts, t, host, size, kind, *stream, err, errlen);
	pthread_mutex_unlock(&ts->lock);
	if (rc == -ENOENT)
		snprintf(err, errlen, "no tensor %s", name);
	return rc;
}

int ts_with_block(struct tensor_store *ts, const char *name, ts_block_fn fn, void *arg,
		  char *err, size_t errlen)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ts->lock);
	struct tensor *t = find_idle(ts, name);
	void *ptr = t ? t->ptr : NULL;
	if (ptr)
		rc = fn(arg, ptr);
	pthread_mutex_unlock(&ts->lock);
	if (!ptr && t)
		snprintf(err, errlen, "tensor %s is empty: it has no block to use on a stream",
			 name);
	else if (!t)
		snprintf(err, errlen, "no tensor %s", name);
	return ptr ? rc : t ? -EINVAL : -ENOENT;
}

void ts_touch_all(struct tensor_store *ts)
{
	struct tensor *t, *tmp;

	pthread_mutex_lock(&ts->lock);
	HASH_ITER(hh, ts->table, t, tmp)
		stamp(t);
	pthread_mutex_unlock(&ts->lock);
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
