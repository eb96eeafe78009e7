/*
 * pinned_store.c - pinned host tensors by name (pinned_store.h). A
 * tensor's bytes live in its pinned block; a resize is what a framework's
 * does: a new block, the bytes that fit, the old block freed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "alloc/host/host_allocator.h"
#include "pinned_store.h"

#define PS_NAME_MAX 255

struct pinned {
	char name[PS_NAME_MAX + 1];
	void *ptr;
	uint64_t size;
	struct timespec changed; /* when its bytes or size last changed: its mtime */
	UT_hash_handle hh;
};

struct pinned_store {
	pthread_mutex_t lock;
	struct npa_host *host;
	struct pinned *by_name;
};

int ps_new(struct npa_host *host, struct pinned_store **out)
{
	struct pinned_store *ps = calloc(1, sizeof(*ps));

	*out = ps;
	if (ps == NULL)
		return -ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	ps->host = host;
	return 0;
}

void ps_free(struct pinned_store *ps)
{
	struct pinned *p, *tmp;

	if (ps == NULL)
		return;
	HASH_ITER(hh, ps->by_name, p, tmp) {
		HASH_DEL(ps->by_name, p);
		npa_host_free(ps->host, p->ptr, NULL, 0);
		free(p);
	}
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

static void stamp(struct pinned *p)
{
	clock_gettime(CLOCK_REALTIME, &p->changed);
}

static struct pinned *find(struct pinned_store *ps, const char *name)
{
	struct pinned *p = NULL;

	HASH_FIND_STR(ps->by_name, name, p);
	return p;
}

int ps_create(struct pinned_store *ps, const char *name)
{
	struct pinned *p;
	int rc = 0;

	if (strlen(name) > PS_NAME_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&ps->lock);
	if (find(ps, name) != NULL) {
		rc = -EEXIST;
	} else if ((p = calloc(1, sizeof(*p))) == NULL) {
		rc = -ENOMEM;
	} else {
		strcpy(p->name, name);
		stamp(p);
		HASH_ADD_STR(ps->by_name, name, p);
	}
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

int ps_unlink(struct pinned_store *ps, const char *name)
{
	struct pinned *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, name);
	if (p != NULL) {
		HASH_DEL(ps->by_name, p);
		npa_host_free(ps->host, p->ptr, NULL, 0);
	}
	pthread_mutex_unlock(&ps->lock);
	free(p);
	return p != NULL ? 0 : -ENOENT;
}

int ps_size(struct pinned_store *ps, const char *name, uint64_t *size,
	    struct timespec *changed)
{
	struct pinned *p;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, name);
	if (p != NULL)
		*size = p->size;
	if (p != NULL && changed != NULL)
		*changed = p->changed;
	pthread_mutex_unlock(&ps->lock);
	return p != NULL ? 0 : -ENOENT;
}

static int resize_locked(struct pinned_store *ps, struct pinned *p, uint64_t size,
			 aclrtStream stream, char *err, size_t errlen)
{
	void *ptr = NULL;
	int rc;

	if (size == p->size)
		return 0;
	if (size > SIZE_MAX)
		return -EFBIG;
	rc = npa_host_malloc(ps->host, (size_t)size, stream, &ptr, err, errlen);
	if (rc < 0)
		return rc;
	if (ptr != NULL && p->ptr != NULL)
		memcpy(ptr, p->ptr, size < p->size ? size : p->size);
	if (ptr != NULL && size > p->size)
		memset((char *)ptr + p->size, 0, size - p->size);
	npa_host_free(ps->host, p->ptr, NULL, 0);
	p->ptr = ptr;
	p->size = size;
	stamp(p);
	return 0;
}

int ps_resize(struct pinned_store *ps, const char *name, uint64_t size, aclrtStream stream,
	      char *err, size_t errlen)
{
	struct pinned *p;
	int rc;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, name);
	rc = p != NULL ? resize_locked(ps, p, size, stream, err, errlen) : -ENOENT;
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

/* The bytes of [off, off + size) inside the tensor; copy_out picks the way. */
static ssize_t transfer(struct pinned_store *ps, const char *name, char *buf, size_t size,
			uint64_t off, bool copy_out)
{
	struct pinned *p;
	ssize_t n = -ENOENT;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, name);
	if (p != NULL) {
		uint64_t room = off < p->size ? p->size - off : 0;

		n = (ssize_t)(size < room ? size : room);
		if (copy_out && n > 0)
			memcpy(buf, (char *)p->ptr + off, (size_t)n);
		else if (n > 0) {
			memcpy((char *)p->ptr + off, buf, (size_t)n);
			stamp(p);
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return n;
}

ssize_t ps_read(struct pinned_store *ps, const char *name, char *buf, size_t size,
		uint64_t off)
{
	return transfer(ps, name, buf, size, off, true);
}

/* Writes stay inside the tensor: a file grows with truncate, as tensors do. */
ssize_t ps_write(struct pinned_store *ps, const char *name, const char *buf, size_t size,
		 uint64_t off)
{
	ssize_t n = transfer(ps, name, (char *)buf, size, off, false);

	return n == 0 && size > 0 ? -EFBIG : n;
}

int ps_use(struct pinned_store *ps, const char *name, ps_use_fn fn, void *arg)
{
	struct pinned *p;
	int rc = -ENOENT;

	pthread_mutex_lock(&ps->lock);
	p = find(ps, name);
	if (p != NULL)
		rc = fn(arg, ps->host, p->ptr, p->size);
	/* A copy from the device lands in its bytes: any use may change them. */
	if (p != NULL && rc == 0)
		stamp(p);
	pthread_mutex_unlock(&ps->lock);
	return rc;
}

int ps_list(struct pinned_store *ps, int (*fn)(void *arg, const char *name), void *arg)
{
	struct pinned *p, *tmp;
	int rc = 0;

	pthread_mutex_lock(&ps->lock);
	HASH_ITER(hh, ps->by_name, p, tmp)
		if ((rc = fn(arg, p->name)) != 0)
			break;
	pthread_mutex_unlock(&ps->lock);
	return rc;
}
