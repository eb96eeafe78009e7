/*
 * uncached.c - PYTORCH_NO_NPU_MEMORY_CACHING=1. torch_npu's
 * NpuCachingAllocator::allocate then skips its DeviceCachingAllocator:
 * AclrtMallocAlign32(size + 32, HUGE_FIRST) per tensor, and the deleter
 * uncached_delete synchronizes the device before aclrtFree. No block,
 * segment or counter is made, so memory_stats() and the snapshot stay
 * empty. The pointers are kept here only so a free can tell them apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"

/* upstream's alloc_size: the 32 bytes AclrtMallocAlign32 may use to align. */
#define NPA_UNCACHED_PAD 32

static int remember(struct npa_uncached *u, void *ptr, size_t size)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 16;
		struct npa_uncached_ptr *v = realloc(u->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n++] = (struct npa_uncached_ptr){ ptr, size };
	return 0;
}

int npa_uncached_malloc(struct npa_device *dev, size_t size, void **ptr, char *err,
			size_t errlen)
{
	size_t alloc_size = size + NPA_UNCACHED_PAD;
	int32_t saved;
	int rc = npa_device_enter(dev->id, &saved);

	if (rc == 0 && aclrtMallocAlign32(ptr, alloc_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		rc = -ENOMEM;
	if (rc == 0 && remember(&dev->uncached, *ptr, alloc_size) < 0) {
		aclrtFree(*ptr);
		rc = -ENOMEM;
	}
	npa_device_leave(saved);
	if (rc < 0) {
		*ptr = NULL;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "AclrtMallocAlign32 of %zu bytes failed on device %d",
				 alloc_size, dev->id);
	}
	return rc;
}

static struct npa_uncached_ptr *find(struct npa_uncached *u, const void *ptr)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].ptr == ptr)
			return &u->v[i];
	return NULL;
}

int npa_uncached_free(struct npa_device *dev, void *ptr)
{
	struct npa_uncached *u = &dev->uncached;
	struct npa_uncached_ptr *e = find(u, ptr);
	int32_t saved;

	if (e == NULL)
		return -ENOENT;
	*e = u->v[--u->n];
	/* uncached_delete waits for all the device's work before the free. */
	if (npa_device_enter(dev->id, &saved) == 0) {
		aclrtSynchronizeDevice();
		aclrtFree(ptr);
	}
	npa_device_leave(saved);
	return 0;
}

size_t npa_uncached_fini(struct npa_device *dev, uint64_t *bytes)
{
	struct npa_uncached *u = &dev->uncached;
	size_t n = u->n;

	while (u->n > 0) {
		*bytes += u->v[u->n - 1].size;
		npa_uncached_free(dev, u->v[u->n - 1].ptr);
	}
	free(u->v);
	*u = (struct npa_uncached){ 0 };
	return n;
}

size_t npa_uncached_live(const struct npa_device *dev, uint64_t *bytes)
{
	for (size_t i = 0; i < dev->uncached.n; i++)
		*bytes += dev->uncached.v[i].size - NPA_UNCACHED_PAD;
	return dev->uncached.n;
}
