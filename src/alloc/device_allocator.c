/*
 * device_allocator.c - malloc and free on one device: best fit, the retry
 * ladder, splitting and merging (upstream DeviceCachingAllocator::malloc,
 * get_free_block, alloc_found_block, free, free_block, try_merge_blocks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "ptr_map.h"

int npa_device_init(struct npa_device *dev, int id, const struct npa_flavor *flavor,
		    const struct npa_conf *conf)
{
	memset(dev, 0, sizeof(*dev));
	if (pthread_mutex_init(&dev->lock, NULL) != 0)
		return -ENOMEM;
	dev->id = id;
	dev->flavor = flavor;
	dev->conf = conf;
	npa_pool_init(&dev->small, true);
	npa_pool_init(&dev->large, false);
	RB_INIT(&dev->segments);
	dev->oversize_exact = true;
	npa_ptr_map_add(&dev->allocated, &dev->map_anchor);
	dev->stats.max_split_size =
		conf->max_split_size == SIZE_MAX ? -1 : (int64_t)conf->max_split_size;
	if (conf->per_process_memory_fraction < 1.0)
		return npa_device_set_fraction(dev, conf->per_process_memory_fraction);
	return 0;
}

struct npa_block *npa_device_find(struct npa_device *dev, const void *ptr)
{
	return ptr != NULL ? npa_ptr_map_find(dev->allocated, ptr) : NULL;
}

/* Best fit in the request's own stream, within the oversize rules. */
static bool get_free_block(struct npa_device *dev, struct npa_alloc_params *p)
{
	size_t max_split = dev->conf->max_split_size;

	if (npa_gc_enabled(dev))
		p->pool->gc_calls++;
	struct npa_block *b = npa_pool_nfind(p->pool, p->stream, p->size);
	if (b == NULL || b->stream != p->stream)
		return false;
	/* Never hand an oversize block to a normal request ... */
	if (p->size < max_split && b->size >= max_split)
		return false;
	/* ... nor one much larger than an oversize request. */
	if (p->size >= max_split && b->size >= p->size + dev->conf->max_non_split_rounding)
		return false;
	npa_pool_remove(p->pool, b);
	p->block = b;
	return true;
}

static bool should_split(const struct npa_device *dev, const struct npa_block *b, size_t size)
{
	size_t remaining = b->size - size;

	if (b->pool->is_small)
		return remaining >= NPA_MIN_BLOCK_SIZE;
	return size < dev->conf->max_split_size && remaining > NPA_SMALL_SIZE;
}

/* The front `size` bytes become a new block; `b` keeps the rest and goes back. */
static struct npa_block *split_front(struct npa_device *dev, struct npa_block *b, size_t size)
{
	struct npa_block *front = npa_block_get(&dev->cache);

	if (front == NULL)
		return NULL;
	front->ptr = b->ptr;
	front->size = size;
	front->stream = b->stream;
	front->pool = b->pool;
	front->seg = b->seg;
	front->prev = b->prev;
	front->next = b;
	if (front->prev != NULL)
		front->prev->next = front;
	else
		b->seg->head = front;
	b->prev = front;
	b->ptr += size;
	b->size -= size;
	npa_pool_insert(b->pool, b);
	return front;
}

static int alloc_found_block(struct npa_device *dev, struct npa_alloc_params *p,
			     size_t orig_size, void **ptr)
{
	struct npa_block *b = p->block;
	struct npa_stats *st = &dev->stats;
	const bool already_split = npa_block_is_split(b);

	if (should_split(dev, b, p->size)) {
		struct npa_block *rest = b;

		b = split_front(dev, rest, p->size);
		if (b == NULL) {
			npa_pool_insert(rest->pool, rest);
			return -ENOMEM;
		}
		if (already_split) {
			npa_stat_update(st->inactive_split_bytes, b->pool, -(int64_t)b->size);
		} else {
			npa_stat_update(st->inactive_split_bytes, b->pool, (int64_t)rest->size);
			npa_stat_update(st->inactive_split, b->pool, 1);
		}
	} else if (already_split) {
		npa_stat_update(st->inactive_split_bytes, b->pool, -(int64_t)b->size);
		npa_stat_update(st->inactive_split, b->pool, -1);
	}
	b->allocated = true;
	b->requested_size = orig_size;
	npa_ptr_map_add(&dev->allocated, b);
	npa_stat_update(st->allocation, b->pool, 1);
	npa_stat_update(st->allocated_bytes, b->pool, (int64_t)b->size);
	npa_stat_update(st->active, b->pool, 1);
	npa_stat_update(st->active_bytes, b->pool, (int64_t)b->size);
	npa_stat_update(st->requested_bytes, b->pool, (int64_t)orig_size);
	if (b->size >= dev->conf->max_split_size)
		npa_stat_single_update(&st->oversize_allocations, 1);
	*ptr = b->ptr;
	return 0;
}

static int out_of_memory(struct npa_device *dev, const struct npa_alloc_params *p,
			 char *err, size_t errlen)
{
	size_t dev_free = 0, dev_total = 0;

	npa_device_mem_info(dev->id, &dev_free, &dev_total);
	dev->stats.num_ooms += 1;
	npa_oom_message(dev, p->alloc_size, dev_free, dev_total, err, errlen);
	return -ENOMEM;
}

/* Steps 4a-4e of upstream's malloc once the cache has no fitting block. */
static int retry_ladder(struct npa_device *dev, struct npa_alloc_params *p, char *err,
			size_t errlen)
{
	int rc;

	if (npa_gc_enabled(dev))
		npa_garbage_collect(dev);
	rc = npa_alloc_block(dev, p, false, err, errlen);
	if (rc == 0 && npa_release_available_cached_blocks(dev, p))
		rc = npa_alloc_block(dev, p, false, err, errlen);
	if (rc == 0) {
		npa_release_cached_blocks(dev);
		rc = npa_alloc_block(dev, p, true, err, errlen);
	}
	return rc;
}

int npa_device_malloc(struct npa_device *dev, size_t orig_size, aclrtStream stream,
		      void **ptr, char *err, size_t errlen)
{
	npa_process_events(dev);
	size_t size = npa_round_size(dev, orig_size);
	struct npa_alloc_params p = {
		.size = size,
		.alloc_size = npa_allocation_size(dev, size),
		.stream = stream,
		.pool = npa_pool_for(dev, size),
	};
	if (!get_free_block(dev, &p)) {
		int rc = retry_ladder(dev, &p, err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return out_of_memory(dev, &p, err, errlen);
	}
	return alloc_found_block(dev, &p, orig_size, ptr);
}

/* Absorb free neighbour `src` into `dst`; returns the bytes taken over. */
static size_t try_merge(struct npa_device *dev, struct npa_block *dst, struct npa_block *src)
{
	if (src == NULL || src->allocated || src->event_count > 0 || src->nuses > 0 ||
	    dst->mapped != src->mapped)
		return 0;
	if (dst->prev == src) {
		dst->ptr = src->ptr;
		dst->prev = src->prev;
		if (dst->prev != NULL)
			dst->prev->next = dst;
		else
			dst->seg->head = dst;
	} else {
		dst->next = src->next;
		if (dst->next != NULL)
			dst->next->prev = dst;
	}
	size_t taken = src->size;
	dst->size += taken;
	npa_pool_remove(src->pool, src);
	npa_block_put(&dev->cache, src);
	return taken;
}

/* Back into the pool, merged with free neighbours. */
void npa_free_block(struct npa_device *dev, struct npa_block *b)
{
	size_t orig_size = b->size;
	int64_t split_blocks = 0, split_bytes = 0;
	struct npa_block *candidates[2] = { b->prev, b->next };

	for (int i = 0; i < 2; i++) {
		size_t taken = try_merge(dev, b, candidates[i]);
		if (taken > 0) {
			split_blocks -= 1;
			split_bytes -= (int64_t)taken;
		}
	}
	npa_pool_insert(b->pool, b);
	if (npa_block_is_split(b)) {
		split_blocks += 1;
		split_bytes += (int64_t)b->size;
	}
	npa_stat_update(dev->stats.inactive_split, b->pool, split_blocks);
	npa_stat_update(dev->stats.inactive_split_bytes, b->pool, split_bytes);
	npa_stat_update(dev->stats.active, b->pool, -1);
	npa_stat_update(dev->stats.active_bytes, b->pool, -(int64_t)orig_size);
	npa_stat_update(dev->stats.requested_bytes, b->pool, -(int64_t)b->requested_size);
}

void npa_device_free(struct npa_device *dev, struct npa_block *b)
{
	b->allocated = false;
	npa_ptr_map_del(&dev->allocated, b);
	npa_stat_update(dev->stats.allocation, b->pool, -1);
	npa_stat_update(dev->stats.allocated_bytes, b->pool, -(int64_t)b->size);
	if (b->size >= dev->conf->max_split_size)
		npa_stat_single_update(&dev->stats.oversize_allocations, -1);
	if (b->nuses > 0)
		npa_insert_events(dev, b);
	else
		npa_free_block(dev, b);
}

static void free_segment_blocks(struct npa_segment *seg, size_t *leaks, uint64_t *leaked_bytes)
{
	struct npa_block *b = seg->head;

	while (b != NULL) {
		struct npa_block *next = b->next;

		if (b->allocated) {
			(*leaks)++;
			*leaked_bytes += b->size;
		}
		free(b->uses);
		free(b);
		b = next;
	}
}

size_t npa_device_fini(struct npa_device *dev, uint64_t *leaked_bytes)
{
	struct npa_segment *seg, *next;
	size_t leaks = 0;
	uint64_t bytes = 0;
	int32_t saved;

	npa_synchronize_and_free_events(dev);
	HASH_CLEAR(hh, dev->allocated);
	int entered = npa_device_enter(dev->id, &saved);
	for (seg = RB_MIN(npa_segment_tree, &dev->segments); seg != NULL; seg = next) {
		next = RB_NEXT(npa_segment_tree, &dev->segments, seg);
		RB_REMOVE(npa_segment_tree, &dev->segments, seg);
		if (entered == 0)
			aclrtFree(seg->ptr);
		free_segment_blocks(seg, &leaks, &bytes);
		free(seg);
	}
	npa_device_leave(saved);
	npa_event_queues_fini(&dev->events);
	npa_block_cache_drain(&dev->cache);
	pthread_mutex_destroy(&dev->lock);
	if (leaked_bytes != NULL)
		*leaked_bytes += bytes;
	return leaks;
}
