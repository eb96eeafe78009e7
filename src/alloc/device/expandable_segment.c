/*
 * expandable_segment.c - the device side of an expandable segment
 * (upstream ExpandableSegment): one virtual range reserved up front,
 * physical pages mapped into it and unmapped from it whole.
 */
#include <errno.h>
#include <stdlib.h>

#include "device.h"

/* Large pages (npu: large_segment_size_mb if set, else the deprecated
 * segment_size_mb, else 20 MiB; page_size:1g wins over both). */
size_t npa_expandable_page(const struct npa_device *dev, const struct npa_pool *pool)
{
	const struct npa_conf *c = dev->conf;

	if (pool->is_small)
		return NPA_SMALL_BUFFER;
	if (c->page_size_1g)
		return (size_t)1 << 30;
	if (c->segment_size != 0 && c->large_segment_size == ((size_t)20 << 20))
		return c->segment_size;
	return c->large_segment_size;
}

/* Room for 1 1/8 of the device, as upstream reserves. */
int npa_expandable_create(struct npa_device *dev, size_t page, char **va,
			  struct npa_expandable **out)
{
	size_t dev_free, total;
	int32_t saved;
	void *p = NULL;
	int rc = npa_device_mem_info(dev->id, &dev_free, &total);

	if (rc < 0)
		return rc;
	size_t npages = (total + total / 8 + page - 1) / page;
	struct npa_expandable *e = malloc(sizeof(*e));
	aclrtDrvMemHandle *h = calloc(npages, sizeof(*h));
	if (e == NULL || h == NULL) {
		free(e);
		free(h);
		return -ENOMEM;
	}
	if (npa_device_enter(dev->id, &saved) != 0 ||
	    aclrtReserveMemAddress(&p, npages * page, 0, NULL, 0) != ACL_SUCCESS)
		rc = -ENOMEM;
	npa_device_leave(saved);
	if (rc < 0) {
		free(e);
		free(h);
		return rc;
	}
	*e = (struct npa_expandable){ .page = page, .npages = npages, .handles = h };
	*va = p;
	*out = e;
	return 0;
}

static aclrtDrvMemHandle take_handle(struct npa_device *dev, struct npa_pool *pool,
				     size_t page)
{
	struct npa_handle_cache *c = &pool->spare;
	aclrtDrvMemHandle h = NULL;

	if (c->n > 0 && c->page == page)
		return c->h[--c->n];
	aclrtPhysicalMemProp prop = {
		.handleType = ACL_MEM_HANDLE_TYPE_NONE,
		.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
		.memAttr = ACL_HBM_MEM_HUGE,
		.location = { .id = (uint32_t)dev->id, .type = ACL_MEM_LOCATION_TYPE_DEVICE },
	};
	if (aclrtMallocPhysical(&h, page, &prop, 0) != ACL_SUCCESS)
		return NULL;
	return h;
}

/* Keep a handle for the next map; a cache of another page size is dropped. */
static void keep_handle(struct npa_pool *pool, aclrtDrvMemHandle h, size_t page)
{
	struct npa_handle_cache *c = &pool->spare;

	if (c->page != page)
		npa_handle_cache_drain(pool);
	c->page = page;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		aclrtDrvMemHandle *nh = realloc(c->h, cap * sizeof(*nh));

		if (nh == NULL) {
			aclrtFreePhysical(h);
			return;
		}
		c->h = nh;
		c->cap = cap;
	}
	c->h[c->n++] = h;
}

/* Caller has entered the device. */
void npa_handle_cache_drain(struct npa_pool *pool)
{
	struct npa_handle_cache *c = &pool->spare;

	while (c->n > 0)
		aclrtFreePhysical(c->h[--c->n]);
}

void npa_handle_cache_fini(struct npa_pool *pool)
{
	npa_handle_cache_drain(pool);
	free(pool->spare.h);
	pool->spare = (struct npa_handle_cache){ 0 };
}

static void unmap_page(struct npa_segment *seg, size_t i)
{
	aclrtUnmapMem(seg->ptr + i * seg->exp->page);
}

/*
 * Map the pages covering [ptr, ptr + size); ptr is a page boundary. Returns
 * the bytes mapped, 0 if the device is out of memory (nothing changed).
 */
size_t npa_expandable_map(struct npa_device *dev, struct npa_segment *seg, char *ptr,
			  size_t size)
{
	struct npa_expandable *e = seg->exp;
	size_t begin = (size_t)(ptr - seg->ptr) / e->page;
	size_t end = ((size_t)(ptr - seg->ptr) + size + e->page - 1) / e->page;
	size_t i;
	int32_t saved;

	if (npa_device_enter(dev->id, &saved) != 0)
		return 0;
	for (i = begin; i < end; i++) {
		e->handles[i] = take_handle(dev, seg->pool, e->page);
		if (e->handles[i] == NULL ||
		    aclrtMapMem(seg->ptr + i * e->page, e->page, 0, e->handles[i], 0) != ACL_SUCCESS)
			break;
	}
	bool failed = i < end;
	if (failed) {
		/* Roll back: a request either gets all its pages or none. */
		if (e->handles[i] != NULL)
			aclrtFreePhysical(e->handles[i]);
		e->handles[i] = NULL;
		while (i-- > begin) {
			unmap_page(seg, i);
			aclrtFreePhysical(e->handles[i]);
			e->handles[i] = NULL;
		}
	}
	npa_device_leave(saved);
	return failed ? 0 : (end - begin) * e->page;
}

/*
 * Unmap the whole pages strictly inside [ptr, ptr + size); their handles are
 * freed, or kept in the pool's cache with `keep`. Returns the unmapped range
 * in *start and its size (0: no whole page inside).
 */
size_t npa_expandable_unmap(struct npa_device *dev, struct npa_segment *seg, char *ptr,
			    size_t size, bool keep, char **start)
{
	struct npa_expandable *e = seg->exp;
	size_t off = (size_t)(ptr - seg->ptr);
	size_t begin = (off + e->page - 1) / e->page;
	size_t end = (off + size) / e->page;
	int32_t saved;

	if (begin >= end)
		return 0;
	if (npa_device_enter(dev->id, &saved) != 0)
		return 0;
	/* The pages may still be in use by queued work (npu syncs the device). */
	if (dev->flavor->release_syncs_device)
		aclrtSynchronizeDevice();
	else
		aclrtSynchronizeStream(seg->stream);
	for (size_t i = begin; i < end; i++) {
		unmap_page(seg, i);
		if (keep)
			keep_handle(seg->pool, e->handles[i], e->page);
		else
			aclrtFreePhysical(e->handles[i]);
		e->handles[i] = NULL;
	}
	npa_device_leave(saved);
	*start = seg->ptr + begin * e->page;
	return (end - begin) * e->page;
}

/* Unmap what is left and give the range back; caller has entered the device. */
void npa_expandable_destroy(struct npa_segment *seg)
{
	struct npa_expandable *e = seg->exp;

	for (size_t i = 0; i < e->npages; i++) {
		if (e->handles[i] != NULL) {
			unmap_page(seg, i);
			aclrtFreePhysical(e->handles[i]);
		}
	}
	aclrtReleaseMemAddress(seg->ptr);
	free(e->handles);
	free(e);
	seg->exp = NULL;
}
