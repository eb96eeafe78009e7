/*
 * device_memory.c - where the allocator meets the device: segment malloc and
 * free through ACL, the memory-fraction limit and the release paths of the
 * retry ladder (upstream alloc_block, release_block, release_blocks,
 * release_available_cached_blocks, release_cached_blocks,
 * garbage_collect_cached_blocks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"

/* ACL's current device is per thread; the caller's is put back afterwards. */
int npa_device_enter(int device, int32_t *saved)
{
	if (aclrtGetDevice(saved) != ACL_SUCCESS)
		*saved = -1;
	if (*saved == device)
		return 0;
	return aclrtSetDevice(device) == ACL_SUCCESS ? 0 : -ENODEV;
}

void npa_device_leave(int32_t saved)
{
	int32_t now;

	if (saved >= 0 && aclrtGetDevice(&now) == ACL_SUCCESS && now != saved)
		aclrtSetDevice(saved);
}

int npa_device_mem_info(int device, size_t *free, size_t *total)
{
	int32_t saved;
	int rc = npa_device_enter(device, &saved);

	if (rc == 0 && aclrtGetMemInfo(ACL_HBM_MEM, free, total) != ACL_SUCCESS)
		rc = -ENODEV;
	npa_device_leave(saved);
	return rc;
}

int npa_sync_device_if_flavor(struct npa_device *dev)
{
	int32_t saved;
	aclError e = ACL_SUCCESS;

	if (!dev->flavor->release_syncs_device)
		return 0;
	if (npa_device_enter(dev->id, &saved) == 0)
		e = aclrtSynchronizeDevice();
	npa_device_leave(saved);
	/* The runtime refuses while a stream of the device captures. */
	return e == ACL_SUCCESS ? 0 : e == ACL_ERROR_RT_STREAM_CAPTURED ? -EBUSY : -EIO;
}

int npa_device_set_fraction(struct npa_device *dev, double fraction)
{
	size_t free, total;
	int rc = npa_device_mem_info(dev->id, &free, &total);

	if (rc < 0)
		return rc;
	dev->allowed_memory_maximum = (size_t)(fraction * (double)total);
	dev->set_fraction = fraction < 1.0;
	dev->fraction = fraction;
	return 0;
}

/* throw_on_npumalloc_oom: refuse up front what would pass the configured fraction. */
static int preemptive_rejection(struct npa_device *dev, size_t size, char *err,
				size_t errlen)
{
	size_t free, total;
	char fs[32];

	if (npa_device_mem_info(dev->id, &free, &total) < 0)
		return 0;
	size_t limit = (size_t)(dev->conf->per_process_memory_fraction * (double)total);
	if (dev->total_allocated_memory + size <= limit)
		return 0;
	dev->stats.num_oom_rejections += 1;
	npa_format_size(fs, sizeof(fs), size);
	dev->last_oom_why.valid = false; /* refused before any memory was looked at */
	snprintf(dev->last_oom, sizeof(dev->last_oom),
		 "%s out of memory. Allocation was preemptively rejected because it "
		 "would exceed per_process_memory_fraction limit. Requested size: %s",
		 dev->flavor->oom_style == NPA_OOM_CUDA ? "CUDA" : "NPU", fs);
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", dev->last_oom);
	return -ENOMEM;
}

static void *device_malloc(struct npa_device *dev, size_t size)
{
	int32_t saved;
	void *ptr = NULL;

	/* torch_npu allocates segments with AclrtMallocAlign32, HUGE_FIRST. */
	if (npa_device_enter(dev->id, &saved) == 0 &&
	    aclrtMallocAlign32(&ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		ptr = NULL;
	npa_device_leave(saved);
	return ptr;
}

static void device_free(struct npa_device *dev, void *ptr)
{
	int32_t saved;

	if (npa_device_enter(dev->id, &saved) == 0)
		aclrtFree(ptr);
	npa_device_leave(saved);
}

/* The last segment starting before `end`: the only one that can reach `lo`. */
bool npa_device_segments_overlap(struct npa_device *dev, uintptr_t lo, uintptr_t end)
{
	struct npa_segment key = { .ptr = (char *)end };
	struct npa_segment *s = RB_NFIND(npa_segment_tree, &dev->segments, &key);

	s = s != NULL ? RB_PREV(npa_segment_tree, &dev->segments, s)
		      : RB_MAX(npa_segment_tree, &dev->segments);
	return s != NULL && (uintptr_t)s->ptr + s->size > lo;
}

/*
 * A segment from a MemPool's own allocator (raw_alloc). Memory the caching
 * allocator already holds would make two blocks of one address: refused,
 * and not given back, since its free would release our segment.
 */
static int source_malloc(struct npa_device *dev, const struct npa_segment_source *src,
			 size_t size, aclrtStream stream, char **out, char *err,
			 size_t errlen)
{
	void *ptr = NULL;
	int32_t saved;
	int rc = npa_device_enter(dev->id, &saved);

	/* The plug-in may make another device current (the wrapper's malloc does). */
	if (rc == 0)
		rc = src->alloc(src->ctx, dev->id, size, stream, &ptr, err, errlen);
	npa_device_leave(saved);

	if (rc == -ENOMEM || (rc == 0 && ptr == NULL))
		return 0;
	if (rc < 0)
		return rc;
	if (npa_device_segments_overlap(dev, (uintptr_t)ptr, (uintptr_t)ptr + size)) {
		src->forget(src->ctx, ptr);
		if (err != NULL)
			snprintf(err, errlen, "MemPool allocator %s returned %p for %zu bytes, "
				 "inside a segment the caching allocator holds: not given back, "
				 "allocation refused", src->name, ptr, size);
		return -EFAULT;
	}
	*out = ptr;
	return 1;
}

/* 1: a new segment's memory in *out; 0: no memory; <0: give up (err). */
static int segment_malloc(struct npa_device *dev, const struct npa_pool *pool, size_t size,
			  aclrtStream stream, char **out, char *err, size_t errlen)
{
	if (pool->owner != NULL && pool->owner->has_source)
		return source_malloc(dev, &pool->owner->source, size, stream, out, err,
				     errlen);
	*out = device_malloc(dev, size);
	return *out != NULL;
}

static void segment_free(struct npa_device *dev, const struct npa_pool *pool, void *ptr)
{
	if (pool->owner != NULL && pool->owner->has_source)
		pool->owner->source.free(pool->owner->source.ctx, ptr);
	else
		device_free(dev, ptr);
}

static struct npa_block *new_segment(struct npa_device *dev, struct npa_alloc_params *p,
				     char *ptr)
{
	struct npa_segment *seg = malloc(sizeof(*seg));
	struct npa_block *b = npa_block_get(&dev->cache);

	if (seg == NULL || b == NULL || npa_pool_hold(p->pool, p->stream) != 0) {
		free(seg);
		if (b != NULL)
			npa_block_put(&dev->cache, b);
		return NULL;
	}
	*seg = (struct npa_segment){ .ptr = ptr, .size = p->alloc_size, .stream = p->stream,
				     .pool = p->pool, .head = b,
				     .kind = NPA_SEGMENT_DEVICE_MALLOC };
	b->ptr = ptr;
	b->size = p->alloc_size;
	b->stream = p->stream;
	b->pool = p->pool;
	b->seg = seg;
	RB_INSERT(npa_segment_tree, &dev->segments, seg);
	npa_device_note_segment(dev, ptr, p->alloc_size);
	return b;
}

/* 1: p->block is a new segment; 0: no memory (go on down the ladder); <0: give up. */
int npa_alloc_block(struct npa_device *dev, struct npa_alloc_params *p, bool is_retry,
		    char *err, size_t errlen)
{
	size_t size = p->alloc_size;

	if (is_retry)
		dev->stats.num_alloc_retries += 1;
	if (dev->conf->throw_on_npumalloc_oom) {
		int rc = preemptive_rejection(dev, size, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (dev->set_fraction && dev->total_allocated_memory + size > dev->allowed_memory_maximum)
		return 0;
	if (dev->conf->expandable_segments) {
		int rc = npa_alloc_expandable(dev, p);

		if (rc == 1 && p->pool->owner != NULL) {
			p->pool->owner->malloc_count++;
			p->pool->owner->mapped_pages = true;
		}
		return rc;
	}
	char *ptr = NULL;
	int rc = segment_malloc(dev, p->pool, size, p->stream, &ptr, err, errlen);
	if (rc <= 0)
		return rc;
	p->block = new_segment(dev, p, ptr);
	if (p->block == NULL) {
		segment_free(dev, p->pool, ptr);
		if (err != NULL)
			snprintf(err, errlen, "out of host memory for allocator bookkeeping");
		return -ENOMEM;
	}
	if (p->pool->owner != NULL)
		p->pool->owner->malloc_count++;
	dev->total_allocated_memory += size;
	npa_stat_update(dev->stats.segment, p->pool, 1);
	npa_stat_update(dev->stats.reserved_bytes, p->pool, (int64_t)size);
	if (size >= dev->conf->max_split_size)
		npa_stat_single_update(&dev->stats.oversize_segments, 1);
	dev->stats.num_device_alloc += 1;
	if (npa_recording(dev))
		p->block->seg->frame = npa_history_add(dev, NPA_TRACE_SEGMENT_ALLOC,
						       (uintptr_t)ptr, size, p->stream,
						       npa_pool_owner_id(p->pool), NULL);
	return 1;
}

/* Give a whole free segment (a pool block with no neighbours) back to the device. */
void npa_release_block(struct npa_device *dev, struct npa_block *b)
{
	struct npa_segment *seg = b->seg;
	size_t size = b->size;

	segment_free(dev, b->pool, b->ptr);
	dev->total_allocated_memory -= size;
	if (b->pool->owner != NULL)
		b->pool->owner->malloc_count--;
	npa_stat_update(dev->stats.segment, b->pool, -1);
	npa_stat_update(dev->stats.reserved_bytes, b->pool, -(int64_t)size);
	if (size >= dev->conf->max_split_size)
		npa_stat_single_update(&dev->stats.oversize_segments, -1);
	dev->stats.num_device_free += 1;
	npa_trace(dev, NPA_TRACE_SEGMENT_FREE, b->ptr, size, b->stream, b->pool, &seg->frame);
	npa_pool_remove(b->pool, b);
	npa_pool_drop(b->pool, b->stream);
	RB_REMOVE(npa_segment_tree, &dev->segments, seg);
	free(seg);
	npa_block_put(&dev->cache, b);
}

/*
 * Whole free segments go back to the device; free expandable blocks give
 * back their whole pages. Those are gathered first: unmapping re-inserts
 * the partial pages around them into the pool being walked.
 */
static void release_blocks(struct npa_device *dev, struct npa_pool *pool, bool keep_handles)
{
	struct npa_block *b, *next, *to_unmap = NULL;

	for (b = npa_pool_first(pool); b != NULL; b = next) {
		next = npa_pool_next(pool, b);
		if (npa_block_is_expandable(b)) {
			b->link = to_unmap;
			to_unmap = b;
		} else if (!npa_block_is_split(b)) {
			npa_release_block(dev, b);
		}
	}
	for (b = to_unmap; b != NULL; b = next) {
		next = b->link;
		npa_unmap_block(dev, b, keep_handles);
		npa_release_expandable_segment(dev, b);
	}
}

static void drain_handles(struct npa_device *dev, struct npa_pool *a, struct npa_pool *b)
{
	int32_t saved;

	if (npa_device_enter(dev->id, &saved) != 0)
		return;
	npa_handle_cache_drain(a);
	npa_handle_cache_drain(b);
	npa_device_leave(saved);
}

static bool pool_holds_blocks(const struct npa_pool *pool)
{
	return !npa_pool_empty(pool) || !RB_EMPTY(&pool->unmapped);
}

/* Expandable segments with no page mapped: one whose first map failed
 * (an OOM) holds nothing but its address range. */
static void release_unmapped_segments(struct npa_device *dev, struct npa_pool *pool)
{
	struct npa_block *b, *next, *gone = NULL;

	RB_FOREACH(b, npa_unmapped_tree, &pool->unmapped) {
		if (b->prev == NULL && b->next == NULL) {
			b->link = gone;
			gone = b;
		}
	}
	for (b = gone; b != NULL; b = next) {
		next = b->link;
		npa_release_expandable_segment(dev, b);
	}
}

/*
 * A freeable pool's unused segments go; the pool itself goes once it has
 * no device malloc left, as upstream erases it when its count reaches 0,
 * with the expandable segments that never mapped a page (upstream leaves
 * those pointing at the erased pool). A pool whose count says none but
 * that still holds blocks (expandable pages mapped and unmapped in other
 * runs), or that a scope still routes to (released more often than
 * taken), is kept: they point at it.
 */
static void release_private_pool(struct npa_device *dev, struct npa_private_pool *pp,
				 bool keep_handles)
{
	release_blocks(dev, &pp->small, keep_handles);
	release_blocks(dev, &pp->large, keep_handles);
	if (pp->malloc_count == 0) {
		release_unmapped_segments(dev, &pp->small);
		release_unmapped_segments(dev, &pp->large);
	}
	if (!keep_handles)
		drain_handles(dev, &pp->small, &pp->large);
	if (pp->malloc_count != 0 || pool_holds_blocks(&pp->small) ||
	    pool_holds_blocks(&pp->large) || pool_registry_routed(&dev->pools, &pp->base))
		return;
	drain_handles(dev, &pp->small, &pp->large);
	npa_private_pool_delete(&dev->pools, pp);
}

int npa_release_pool_blocks(struct npa_device *dev, struct npa_pool_id id,
			    bool keep_handles)
{
	bool all = npa_pool_id_is_default(id);
	struct npa_private_pool *pp, *next;
	int rc = npa_sync_device_if_flavor(dev);

	if (rc)
		return rc;
	if (all && !npa_capture_underway(dev, NULL)) {
		npa_synchronize_and_free_events(dev, NULL);
		release_blocks(dev, &dev->large, keep_handles);
		release_blocks(dev, &dev->small, keep_handles);
		if (!keep_handles)
			drain_handles(dev, &dev->large, &dev->small);
	}
	for (pp = npa_private_pool_first(&dev->pools); pp != NULL; pp = next) {
		next = npa_private_pool_next(pp);
		if (!pp->base.freeable || (!all && !npa_pool_id_eq(pp->base.id, id)))
			continue;
		if (!all)
			npa_synchronize_and_free_events(dev, pp);
		release_private_pool(dev, pp, keep_handles);
	}
	return 0;
}

int npa_release_cached_blocks(struct npa_device *dev, bool keep_handles)
{
	return npa_release_pool_blocks(dev, (struct npa_pool_id){ 0, 0 }, keep_handles);
}

/*
 * Only with max_split_size set: free one cached oversize block big enough,
 * or the largest oversize blocks of the stream until enough is freed.
 */
bool npa_release_available_cached_blocks(struct npa_device *dev,
					 const struct npa_alloc_params *p)
{
	size_t max_split = dev->conf->max_split_size;

	if (max_split == SIZE_MAX)
		return false;
	size_t key = p->size < max_split ? max_split : p->size;
	struct npa_block *it = npa_pool_nfind(p->pool, p->stream, key);

	(void)npa_sync_device_if_flavor(dev); /* see npa_device_malloc */
	/*
	 * An oversize block is a whole segment unless max_split_size was
	 * lowered at run time; upstream would then free an interior pointer.
	 * Such a block is left alone here.
	 */
	if (it != NULL) {
		if (npa_block_is_split(it) || npa_block_is_expandable(it))
			return false;
		npa_release_block(dev, it);
		return true;
	}
	it = npa_pool_last_below(p->pool, p->stream, key);
	size_t released = 0;
	while (it != NULL && released < key && it->size >= max_split &&
	       !npa_block_is_split(it) && !npa_block_is_expandable(it)) {
		struct npa_block *cur = it;

		it = npa_pool_prev_in_stream(p->pool, cur);
		released += cur->size;
		npa_release_block(dev, cur);
	}
	return released >= key;
}

static uint64_t gc_age(const struct npa_pool *pool, const struct npa_block *b)
{
	return pool->gc_calls - b->gc_base;
}

/*
 * Free unsplit cached large blocks, oldest first (age >= the average),
 * until reserved memory drops under threshold * allowed.
 */
void npa_garbage_collect(struct npa_device *dev)
{
	struct npa_pool *pool = &dev->large;
	size_t threshold = (size_t)(dev->conf->garbage_collection_threshold *
				    (double)dev->allowed_memory_maximum);
	struct npa_block *b, *next;

	if (dev->total_allocated_memory <= threshold)
		return;
	size_t target = dev->total_allocated_memory - threshold;
	double total_age = 0.0;
	long count = 0;
	for (b = npa_pool_first(pool); b != NULL; b = npa_pool_next(pool, b)) {
		if (!npa_block_is_split(b) && !npa_block_is_expandable(b)) {
			total_age += (double)gc_age(pool, b);
			count++;
		}
	}
	if (count == 0)
		return;
	(void)npa_sync_device_if_flavor(dev); /* see npa_device_malloc */
	size_t reclaimed = 0;
	bool freed = true;
	while (reclaimed < target && freed && count > 0) {
		double age_threshold = total_age / (double)count;

		freed = false;
		for (b = npa_pool_first(pool); b != NULL; b = next) {
			next = npa_pool_next(pool, b);
			if (npa_block_is_split(b) || npa_block_is_expandable(b) ||
			    (double)gc_age(pool, b) < age_threshold)
				continue;
			freed = true;
			reclaimed += b->size;
			total_age -= (double)gc_age(pool, b);
			count--;
			npa_release_block(dev, b);
		}
	}
}
