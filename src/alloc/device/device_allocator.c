/*
 * device_allocator.c - malloc and free on one device: best fit, the retry
 * ladder, splitting and merging (upstream DeviceCachingAllocator::malloc,
 * get_free_block, alloc_found_block, free, free_block, try_merge_blocks),
 * and npa_malloc and npa_free, which lock the device around them: in one
 * file, a cached pair makes no call between the entry point and the pool.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"

int npa_device_init(struct npa_device *dev, int id, const struct npa_flavor *flavor,
		    const struct npa_conf *conf)
{
	memset(dev, 0, sizeof(*dev));
	dev->lock = NPA_LOCK_INIT;
	dev->lock.publish = npa_device_publish_stats;
	dev->addr_lo = UINTPTR_MAX;
	dev->id = id;
	dev->flavor = flavor;
	dev->conf = conf;
	npa_pool_init(&dev->small, true);
	npa_pool_init(&dev->large, false);
	npa_private_pools_init(&dev->pools);
	RB_INIT(&dev->segments);
	dev->oversize_exact = true;
	dev->rounds_by_divisions = npa_conf_rounds_by_divisions(conf);
	if (npa_ptr_map_init(&dev->allocated) < 0)
		return -ENOMEM;
	dev->stats.max_split_size =
		conf->max_split_size == SIZE_MAX ? -1 : (int64_t)conf->max_split_size;
	if (conf->per_process_memory_fraction < 1.0)
		return npa_device_set_fraction(dev, conf->per_process_memory_fraction);
	return 0;
}

/* Growth room of a free expandable block: itself and the unmapped block after it. */
static size_t expandable_size(const struct npa_block *b)
{
	return b->size + (b->next != NULL && !b->next->mapped ? b->next->size : 0);
}

/*
 * Expandable mode picks, among this stream's consecutive expandable
 * candidates, the one that can grow least; with the mode off they are
 * passed over (they stay until freed, as upstream keeps them). Kept out
 * of line: a cached hit on device segments never comes here.
 */
static __attribute__((noinline)) struct npa_block *
expandable_candidate(struct npa_device *dev, struct npa_block *b)
{
	const struct npa_pool *pool = b->pool;
	struct npa_block *next = npa_pool_next_in_stream(pool, b);

	if (dev->conf->expandable_segments) {
		while (npa_block_is_expandable(b) && next != NULL &&
		       expandable_size(next) < expandable_size(b)) {
			b = next;
			next = npa_pool_next_in_stream(pool, b);
		}
		return b;
	}
	while (next != NULL && npa_block_is_expandable(next))
		next = npa_pool_next_in_stream(pool, next);
	return next;
}

/* Best fit in the request's own stream, within the oversize rules. */
static inline bool get_free_block(struct npa_device *dev, struct npa_alloc_params *p)
{
	size_t max_split = dev->conf->max_split_size;

	if (npa_gc_enabled(dev))
		p->pool->gc_calls++;
	struct npa_block *b = npa_pool_nfind(p->pool, p->stream, p->size);

	if (b == NULL)
		return false;
	if (npa_block_is_expandable(b)) {
		b = expandable_candidate(dev, b);
		if (b == NULL)
			return false;
	}
	/* Never hand an oversize block to a normal request ... */
	if (p->size < max_split && b->size >= max_split)
		return false;
	/* ... nor one much larger than an oversize request. */
	if (p->size >= max_split && b->size >= p->size + dev->conf->max_non_split_rounding)
		return false;
	p->block = b;
	p->in_pool = true;
	return true;
}

static void take_out_of_pool(struct npa_alloc_params *p)
{
	if (p->in_pool)
		npa_pool_remove(p->pool, p->block);
	p->in_pool = false;
}

static bool should_split(const struct npa_device *dev, const struct npa_block *b, size_t size)
{
	size_t remaining = b->size - size;

	if (b->pool->owner != NULL && b->pool->owner->no_split)
		return false;
	if (b->pool->is_small || dev->conf->expandable_segments)
		return remaining >= NPA_MIN_BLOCK_SIZE;
	return size < dev->conf->max_split_size && remaining > NPA_SMALL_SIZE;
}

/* The front `size` bytes become a new block; `b` keeps the rest, in the pool. */
static struct npa_block *split_front(struct npa_device *dev, struct npa_alloc_params *p)
{
	struct npa_block *b = p->block;
	size_t size = p->size;
	struct npa_block *front = npa_block_get(&dev->cache);

	if (front == NULL)
		return NULL;
	front->ptr = b->ptr;
	front->size = size;
	front->stream = b->stream;
	front->pool = b->pool;
	front->seg = b->seg;
	front->expandable = b->expandable;
	npa_block_link_before(front, b);
	if (p->in_pool) {
		npa_pool_rekey(b->pool, b, b->ptr + size, b->size - size);
	} else {
		b->ptr += size;
		b->size -= size;
		npa_pool_insert(b->pool, b);
	}
	return front;
}

static __attribute__((cold, noinline)) void trace_alloc(struct npa_device *dev,
							 struct npa_block *b)
{
	b->frame = npa_history_add(dev, NPA_TRACE_ALLOC, (uintptr_t)b->ptr, b->requested_size,
				   b->stream, npa_pool_owner_id(b->pool), NULL);
}

/* A cached hit the next malloc may take again ("The last hit, again" below). */
static void note_hit(struct npa_device *dev, struct npa_block *b, size_t size, bool split)
{
	if (dev->conf->expandable_segments || npa_block_is_expandable(b) ||
	    npa_recording(dev) || npa_gc_enabled(dev))
		return;
	dev->last_hit = (struct npa_last_hit){ .block = b, .size = size, .split = split };
}

static int alloc_found_block(struct npa_device *dev, struct npa_alloc_params *p,
			     size_t orig_size, bool cached, void **ptr)
{
	struct npa_block *b = p->block;
	struct npa_stats *st = &dev->stats;
	const bool already_split = npa_block_is_split(b);
	/* Whole pages of expandable segments can always be released, so
	 * upstream leaves them out of inactive_split. */
	const bool counts_split = !npa_block_is_expandable(b);

	const int t = npa_pool_stat_type(b->pool);

	if (should_split(dev, b, p->size)) {
		struct npa_block *rest = b;

		b = split_front(dev, p);
		if (b == NULL) {
			take_out_of_pool(p);
			npa_pool_insert(rest->pool, rest);
			return -ENOMEM;
		}
		if (already_split && counts_split) {
			npa_stat_sub(st->inactive_split_bytes, t, (int64_t)b->size);
		} else if (counts_split) {
			npa_stat_add(st->inactive_split_bytes, t, (int64_t)rest->size);
			npa_stat_add(st->inactive_split, t, 1);
		}
		if (cached)
			note_hit(dev, b, p->size, true);
	} else {
		take_out_of_pool(p);
		if (already_split && counts_split) {
			npa_stat_sub(st->inactive_split_bytes, t, (int64_t)b->size);
			npa_stat_sub(st->inactive_split, t, 1);
		}
		if (cached)
			note_hit(dev, b, p->size, false);
	}
	b->allocated = true;
	b->requested_size = orig_size;
	npa_ptr_map_add(&dev->allocated, b->ptr, b);
	npa_stat_add(st->allocation, t, 1);
	npa_stat_add(st->allocated_bytes, t, (int64_t)b->size);
	npa_stat_add(st->active, t, 1);
	npa_stat_add(st->active_bytes, t, (int64_t)b->size);
	npa_stat_add(st->requested_bytes, t, (int64_t)orig_size);
	if (b->size >= dev->conf->max_split_size)
		npa_stat_increase(&st->oversize_allocations, 1);
	if (npa_recording(dev))
		trace_alloc(dev, b);
	*ptr = b->ptr;
	return 0;
}

static __attribute__((cold, noinline)) int
out_of_memory(struct npa_device *dev, const struct npa_alloc_params *p, char *err, size_t errlen)
{
	size_t dev_free = 0, dev_total = 0;

	npa_device_mem_info(dev->id, &dev_free, &dev_total);
	dev->stats.num_ooms += 1;
	npa_trace(dev, NPA_TRACE_OOM, (void *)(uintptr_t)dev_free, p->size, p->stream, p->pool,
		  NULL);
	npa_oom_why(dev, p, dev_free, dev_total, &dev->last_oom_why);
	npa_oom_message(dev, p->alloc_size, dev_free, dev_total,
			npa_oom_in_private_pools(&dev->last_oom_why), dev->last_oom,
			sizeof(dev->last_oom));
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", dev->last_oom);
	return -ENOMEM;
}

/* Whether scope filter `arg` is this very call: the fallback's own scope. */
static bool this_call(aclrtStream stream, void *arg)
{
	(void)stream;
	return arg != NULL;
}

/*
 * use_on_oom pools, in creation order: a cached block of one of them
 * serves a request that found no memory (upstream try_mempool_fallback:
 * begin routing to the pool, get_free_block, end, release). Not for a
 * request already routed to a private pool.
 */
static bool mempool_fallback(struct npa_device *dev, struct npa_alloc_params *p)
{
	if (p->pool->owner != NULL)
		return false;
	for (struct npa_private_pool *pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp)) {
		if (!pp->use_on_oom)
			continue;
		struct npa_pool_id id = pp->base.id;
		struct npa_alloc_params mp = *p;

		/* Upstream throws here when the pool already routes (its use is
		 * taken all the same); the request then fails. */
		if (npa_private_pool_begin(&dev->pools, id, this_call, dev) != 0)
			return false;
		mp.pool = npa_get_pool(dev, p->size, p->stream);
		bool found = get_free_block(dev, &mp);
		pool_registry_end(&dev->pools, id);
		pool_registry_release(&dev->pools, id);
		if (found) {
			*p = mp;
			return true;
		}
	}
	return false;
}

/* Steps 4a-4e of upstream's malloc once the cache has no fitting block:
 * 1 a new segment (or a use_on_oom pool's block), 0 none, <0 refused. */
static int retry_ladder(struct npa_device *dev, struct npa_alloc_params *p, char *err,
			size_t errlen)
{
	bool last = dev->flavor->mempool_fallback_last;
	int rc;

	if (npa_gc_enabled(dev))
		npa_garbage_collect(dev);
	rc = npa_alloc_block(dev, p, false, err, errlen);
	if (rc == 0 && !last && mempool_fallback(dev, p))
		return 1;
	if (rc == 0 && npa_release_available_cached_blocks(dev, p))
		rc = npa_alloc_block(dev, p, false, err, errlen);
	if (rc == 0 && !npa_capture_underway(dev, p->stream)) {
		/* torch_npu's npuSynchronizeDevice(true) would throw here if
		 * another stream of the device captured; the retry goes on and
		 * ends in the OOM it would have reported anyway. */
		(void)npa_release_cached_blocks(dev, false);
		rc = npa_alloc_block(dev, p, true, err, errlen);
	}
	if (rc == 0 && last && mempool_fallback(dev, p))
		return 1;
	return rc;
}

/*
 * torch_npu, expandable mode: a block for 2 MiB or more starts on a
 * base_addr_aligned boundary. As upstream, the found block keeps the bytes
 * before it (and its requested_size) in the pool; the aligned rest is a
 * new block. Only expandable blocks are cut, so inactive_split needs no change.
 */
static __attribute__((noinline)) int align_base(struct npa_device *dev,
						 struct npa_alloc_params *p)
{
	struct npa_block *b = p->block;
	size_t align = dev->conf->base_addr_aligned;
	size_t mis = align != 0 ? (uintptr_t)b->ptr % align : 0;

	if (p->size < NPA_ROUND_LARGE || mis == 0 ||
	    !npa_block_is_expandable(b) || align - mis + p->size > b->size)
		return 0;
	struct npa_block *back = npa_block_get(&dev->cache);
	if (back == NULL)
		return -ENOMEM;
	size_t offset = align - mis;

	back->ptr = b->ptr + offset;
	back->size = b->size - offset;
	back->stream = b->stream;
	back->pool = b->pool;
	back->seg = b->seg;
	back->expandable = b->expandable;
	npa_block_link_after(back, b);
	b->size = offset;
	npa_pool_insert(b->pool, b);
	p->block = back;
	return 0;
}

/*
 * The last hit, again. A malloc served by a cached block M leaves the pool
 * as upstream's: the block b it returns is M whole, or M's front split off
 * a rest R that stays in the pool. If the device's next operation frees b,
 * upstream puts it back: it merges with R again, or (whole) goes back into
 * the pool alone, as M's other neighbours cannot merge (a pool block's free
 * neighbours are merged into it already). Either way the pool is again the
 * one that malloc found. If the operation after that is a malloc of the
 * same rounded size, stream and pool with no events to process, best fit
 * finds M again and returns the same b. So that free leaves b aside, still
 * in the pointer map, with every statistic changed as its return to the
 * pool changes it, and that malloc takes b back: the pool is then
 * upstream's again, and neither paid for the tree or the pointer map. Any
 * other operation first returns b to the pool (npa_device_settle, through
 * npa_device_lock), so nothing else ever sees a pool that upstream's could
 * not have. The stats of both go back to values they had since the last
 * reset_peak (that would have settled), so no peak needs a test but
 * requested_bytes', whose request may differ within a rounded size. A
 * taking again and the free after it do not even change the stats: the
 * stats owe them until something reads them (device_stats.c, "Owed").
 */

/* Whether an allocation on `stream` goes to `pool`'s private pool (or to
 * the default pools, for a default one), as npa_get_pool routes it. */
static inline bool routes_to(struct npa_device *dev, const struct npa_pool *pool,
			     aclrtStream stream)
{
	if (__builtin_expect(dev->pools.nscopes == 0, 1))
		return pool->owner == NULL;
	return pool->owner == npa_private_pool_route(&dev->pools, stream);
}

/* Reclaim lazily (npu multi_stream_lazy_reclaim) only when events pile up. */
#define NPA_LAZY_RECLAIM_EVENTS 512

/*
 * Whether a malloc processes events before it looks for a cached block:
 * some are pending, no capture is under way (events may not be queried
 * then; upstream skips process_events) and lazy reclaim does not put them
 * off. The caller has seen that some are pending or deferred.
 */
static inline bool events_first(const struct npa_device *dev, bool capture)
{
	bool lazy = dev->conf->multi_stream_lazy_reclaim && !capture;

	return !capture && (!lazy || dev->events.pending > NPA_LAZY_RECLAIM_EVENTS);
}

/* The freed last hit b allocated again; the stats are owed the change
 * (device_stats.c, "Owed"). */
static inline void take_again(struct npa_device *dev, size_t orig_size, void **ptr)
{
	struct npa_last_hit *hit = &dev->last_hit;
	struct npa_block *b = hit->block;

	/* Upstream's rest is the merged block, which kept b's last request. */
	if (hit->split)
		b->next->requested_size = b->requested_size;
	b->requested_size = orig_size;
	b->allocated = true;
	hit->owed++;
	hit->owed_requested += orig_size;
	if (orig_size > hit->owed_largest)
		hit->owed_largest = orig_size;
	hit->freed = false;
	*ptr = b->ptr;
}

/* The malloc after a freed last hit: b again, if best fit would find it:
 * the pool is the one that found it, unless events are processed first. */
static inline bool hit_again(struct npa_device *dev, size_t orig_size, aclrtStream stream,
			     void **ptr)
{
	const struct npa_last_hit *hit = &dev->last_hit;
	const struct npa_block *b = hit->block;

	/* The same size picks the same one of a pool's two halves. */
	if (npa_round_size(dev, orig_size) != hit->size || stream != b->stream ||
	    !routes_to(dev, b->pool, stream))
		return false;
	if (__builtin_expect(dev->events.pending > 0 || dev->deferred != NULL, 0) &&
	    events_first(dev, npa_capture_underway(dev, stream)))
		return false;
	take_again(dev, orig_size, ptr);
	return true;
}

/* Every malloc but a last hit taken again. */
static inline int npa_device_malloc(struct npa_device *dev, size_t orig_size,
				    aclrtStream stream, void **ptr, char *err, size_t errlen)
{
	if (dev->last_hit.block != NULL)
		npa_device_settle(dev);
	if (npa_ptr_map_reserve(&dev->allocated) < 0) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "out of host memory for allocator bookkeeping");
		return -ENOMEM;
	}
	bool capture = npa_capture_underway(dev, stream);
	bool lazy = dev->conf->multi_stream_lazy_reclaim && !capture;

	/* Nothing pending is the common case: no call then. */
	if (__builtin_expect(dev->events.pending > 0 || dev->deferred != NULL, 0) &&
	    events_first(dev, capture))
		npa_process_events(dev);
	size_t size = npa_round_size(dev, orig_size);
	struct npa_alloc_params p = {
		.size = size,
		.alloc_size = npa_allocation_size(dev, size),
		.stream = stream,
		.pool = npa_get_pool(dev, size, stream),
	};
	bool found = get_free_block(dev, &p);
	/* Lazy reclaim searches again after processing the events, even when
	 * none was pending: a second search ages GC's blocks once more. */
	if (!found && lazy) {
		if (dev->events.pending > 0 || dev->deferred != NULL)
			npa_process_events(dev);
		found = get_free_block(dev, &p);
	}
	const bool cached = found;

	if (!found) {
		int rc = retry_ladder(dev, &p, err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return out_of_memory(dev, &p, err, errlen);
	}
	if (dev->conf->expandable_segments) {
		take_out_of_pool(&p);
		if (align_base(dev, &p) < 0) {
			npa_pool_insert(p.pool, p.block);
			return -ENOMEM;
		}
	}
	return alloc_found_block(dev, &p, orig_size, cached, ptr);
}

static inline bool mergeable(const struct npa_block *dst, const struct npa_block *src)
{
	return src != NULL && !src->allocated && src->event_count == 0 && src->nuses == 0 &&
	       dst->mapped == src->mapped;
}

/* `dst` takes over the bytes and segment links of its free neighbour `src`. */
static inline void absorb(struct npa_block *dst, struct npa_block *src)
{
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
	dst->size += src->size;
}

/* Absorb free neighbour `src` into `dst` (in no tree); returns the bytes taken over. */
size_t npa_try_merge(struct npa_device *dev, struct npa_block *dst, struct npa_block *src)
{
	size_t taken = src != NULL ? src->size : 0;

	if (!mergeable(dst, src))
		return 0;
	absorb(dst, src);
	if (src->mapped)
		npa_pool_remove(src->pool, src);
	else
		RB_REMOVE(npa_unmapped_tree, &src->pool->unmapped, src);
	npa_block_put(&dev->cache, src);
	return taken;
}

/*
 * Back into the pool, merged with free neighbours; the changes to split
 * blocks and bytes are added to *split_blocks and *split_bytes. `b` was
 * allocated, so it is mapped and so is every neighbour it can merge with.
 */
static inline void merge_back(struct npa_device *dev, struct npa_block *b,
			      int64_t *split_blocks_out, int64_t *split_bytes_out)
{
	int64_t split_blocks = 0, split_bytes = 0;
	struct npa_block *candidates[2] = { b->prev, b->next };
	struct npa_pool *pool = b->pool;

	for (int i = 0; i < 2; i++) {
		struct npa_block *c = candidates[i];

		if (!mergeable(b, c))
			continue;
		absorb(b, c);
		split_blocks -= 1;
		split_bytes -= (int64_t)c->size;
		npa_pool_remove(pool, c);
		npa_block_put(&dev->cache, c);
	}
	npa_pool_insert(pool, b);
	if (npa_block_is_split(b)) {
		split_blocks += 1;
		split_bytes += (int64_t)b->size;
	}
	*split_blocks_out = split_blocks;
	*split_bytes_out = split_bytes;
}

static inline void free_block(struct npa_device *dev, struct npa_block *b)
{
	size_t orig_size = b->size;
	int64_t split_blocks, split_bytes;
	struct npa_pool *pool = b->pool;

	merge_back(dev, b, &split_blocks, &split_bytes);
	const int t = npa_pool_stat_type(pool);
	struct npa_stats *st = &dev->stats;

	if (!npa_block_is_expandable(b)) {
		npa_stat_update(st->inactive_split, pool, split_blocks);
		npa_stat_update(st->inactive_split_bytes, pool, split_bytes);
	}
	npa_stat_sub(st->active, t, 1);
	npa_stat_sub(st->active_bytes, t, (int64_t)orig_size);
	npa_stat_sub(st->requested_bytes, t, (int64_t)b->requested_size);
}

/* Frees the last hit as malloc took it from the pool: b is left aside,
 * still in the pointer map, and every statistic changes as its return to
 * the pool would change it. A taking of it again is undone by the stats
 * that owe it, when they are paid (device_stats.c, "Owed"). */
static __attribute__((noinline)) void free_last_hit(struct npa_device *dev, struct npa_block *b)
{
	const int t = npa_pool_stat_type(b->pool);
	struct npa_stats *st = &dev->stats;
	const int64_t n = (int64_t)b->size;

	b->allocated = false;
	npa_stat_sub(st->allocation, t, 1);
	npa_stat_sub(st->allocated_bytes, t, n);
	if (b->size >= dev->conf->max_split_size)
		npa_stat_decrease(&st->oversize_allocations, 1);
	if (dev->last_hit.split) {
		struct npa_block *rest = b->next;

		if (b->prev != NULL || rest->next != NULL) {
			npa_stat_add_below_peak(st->inactive_split_bytes, t, n);
		} else {
			npa_stat_sub(st->inactive_split, t, 1);
			npa_stat_sub(st->inactive_split_bytes, t, (int64_t)rest->size);
		}
	} else if (npa_block_is_split(b)) {
		npa_stat_add_below_peak(st->inactive_split_bytes, t, n);
		npa_stat_add_below_peak(st->inactive_split, t, 1);
	}
	npa_stat_sub(st->active, t, 1);
	npa_stat_sub(st->active_bytes, t, n);
	npa_stat_sub(st->requested_bytes, t, (int64_t)b->requested_size);
	dev->last_hit.freed = true;
}

void npa_device_settle(struct npa_device *dev)
{
	struct npa_block *b = dev->last_hit.block;
	int64_t split_blocks, split_bytes;

	if (dev->last_hit.owed != 0)
		npa_device_pay_owed(dev);
	if (dev->last_hit.freed) {
		npa_ptr_map_del_at(&dev->allocated, npa_ptr_map_slot(&dev->allocated, b->ptr));
		merge_back(dev, b, &split_blocks, &split_bytes);
	}
	dev->last_hit = (struct npa_last_hit){ 0 };
}

/* The free is complete: the block becomes inactive and forgets its frame.
 * With no origin named, the entry shows the allocation's frame, as
 * upstream's does (context ? context : block->context_when_allocated). */
static __attribute__((cold, noinline)) void trace_free_completed(struct npa_device *dev,
								  struct npa_block *b)
{
	npa_history_add(dev, NPA_TRACE_FREE_COMPLETED, (uintptr_t)b->ptr, b->requested_size,
			b->stream, npa_pool_owner_id(b->pool), &b->frame);
	b->frame = (struct npa_frame){ 0 };
}

/* A deferred free completes: the block's events are done. */
void npa_free_block(struct npa_device *dev, struct npa_block *b)
{
	if (npa_recording(dev))
		trace_free_completed(dev, b);
	free_block(dev, b);
}

/* Both entries of a free, behind the one test the hot path pays. */
static __attribute__((cold, noinline)) void trace_free(struct npa_device *dev,
							struct npa_block *b)
{
	npa_history_add(dev, NPA_TRACE_FREE_REQUESTED, (uintptr_t)b->ptr, b->requested_size,
			b->stream, npa_pool_owner_id(b->pool), &b->frame);
	if (b->nuses == 0)
		trace_free_completed(dev, b);
}

/* Frees the block in `slot`, as npa_device_find returned it. */
static inline void npa_device_free(struct npa_device *dev, struct npa_ptr_slot *slot)
{
	struct npa_block *b = slot->block;

	b->allocated = false;
	npa_ptr_map_del_at(&dev->allocated, slot);
	const int t = npa_pool_stat_type(b->pool);

	npa_stat_sub(dev->stats.allocation, t, 1);
	npa_stat_sub(dev->stats.allocated_bytes, t, (int64_t)b->size);
	if (b->size >= dev->conf->max_split_size)
		npa_stat_decrease(&dev->stats.oversize_allocations, 1);
	if (npa_recording(dev))
		trace_free(dev, b);
	if (b->nuses == 0)
		free_block(dev, b);
	else if (__builtin_expect(npa_capture_underway(dev, b->stream), 0))
		npa_defer_events(dev, b);
	else
		npa_insert_events(dev, b);
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

	npa_device_settle(dev);
	npa_synchronize_and_free_events(dev, NULL);
	npa_ptr_map_fini(&dev->allocated);
	int entered = npa_device_enter(dev->id, &saved);
	for (seg = RB_MIN(npa_segment_tree, &dev->segments); seg != NULL; seg = next) {
		next = RB_NEXT(npa_segment_tree, &dev->segments, seg);
		RB_REMOVE(npa_segment_tree, &dev->segments, seg);
		/* A MemPool allocator's segment is its allocator's to take back
		 * when it goes (mempool.h). */
		bool sourced = seg->pool->owner != NULL && seg->pool->owner->has_source;
		if (entered == 0 && seg->kind == NPA_SEGMENT_EXPANDABLE)
			npa_expandable_destroy(seg);
		else if (entered == 0 && !sourced)
			aclrtFree(seg->ptr);
		if (seg->exp != NULL)
			free(seg->exp->handles);
		free(seg->exp);
		free_segment_blocks(seg, &leaks, &bytes);
		free(seg);
	}
	npa_handle_cache_fini(&dev->small);
	npa_handle_cache_fini(&dev->large);
	npa_pool_fini(&dev->small);
	npa_pool_fini(&dev->large);
	for (struct npa_private_pool *pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp)) {
		npa_handle_cache_drain(&pp->small);
		npa_handle_cache_drain(&pp->large);
	}
	/* Sources are not dropped: their owner is going too. */
	pool_registry_fini(&dev->pools);
	npa_device_leave(saved);
	npa_event_queues_fini(&dev->events);
	npa_block_cache_drain(&dev->cache);
	npa_history_fini(dev);
	leaks += npa_uncached_fini(dev, &bytes);
	if (leaked_bytes != NULL)
		*leaked_bytes += bytes;
	return leaks;
}

/* No device of that number, size 0, a request of 1 EB or more, and every
 * request when uncached. */
static __attribute__((noinline)) int malloc_rare(struct npa *a, struct npa_device *dev,
						  size_t size, void **ptr, char *err,
						  size_t errlen)
{
	*ptr = NULL;
	if (dev == NULL)
		return -ENODEV;
	if (size == 0)
		return 0;
	if (size >= (size_t)1 << 60) {
		npa_set_err(err, errlen, a->flavor->oom_style == NPA_OOM_CUDA
			? "CUDA out of memory. Tried to allocate more than 1EB memory."
			: "NPU out of memory. Tried to allocate more than 1EB memory.");
		return -ENOMEM;
	}
	npa_lock_acquire(&dev->lock);
	int rc = npa_uncached_malloc(dev, size, ptr, err, errlen);
	npa_lock_release(&dev->lock);
	return rc;
}

/* A malloc that is not the last hit taken again, with the lock held,
 * which it releases. */
static __attribute__((noinline)) int malloc_missed(struct npa_device *dev, size_t size,
						    aclrtStream stream, void **ptr, char *err,
						    size_t errlen)
{
	*ptr = NULL;
	int rc = npa_device_malloc(dev, size, stream, ptr, err, errlen);
	npa_lock_release(&dev->lock);
	return rc;
}

/* A cached malloc with the lock held, which it releases. */
static __attribute__((noinline)) int malloc_locked(struct npa_device *dev, size_t size,
						    aclrtStream stream, void **ptr, char *err,
						    size_t errlen)
{
	/* freed: there is a last hit. */
	if (!dev->last_hit.freed || !hit_again(dev, size, stream, ptr))
		return malloc_missed(dev, size, stream, ptr, err, errlen);
	npa_lock_release(&dev->lock);
	return 0;
}

/* A cached malloc that found the lock held. */
static __attribute__((noinline)) int malloc_contended(struct npa_device *dev, size_t size,
							aclrtStream stream, void **ptr,
							char *err, size_t errlen)
{
	npa_lock_acquire(&dev->lock);
	return malloc_locked(dev, size, stream, ptr, err, errlen);
}

/* The freed last hit asked for again by its last request on its stream,
 * no events to process, while scopes route: best fit finds it again if
 * the request goes to its pool. */
static __attribute__((noinline)) int malloc_in_scope(struct npa_device *dev, size_t size,
						      aclrtStream stream, void **ptr,
						      char *err, size_t errlen)
{
	if (!routes_to(dev, dev->last_hit.block->pool, stream))
		return malloc_missed(dev, size, stream, ptr, err, errlen);
	take_again(dev, size, ptr);
	npa_lock_release(&dev->lock);
	return 0;
}

/* The last hit taken again costs no call on the way: the rest is out of
 * line, reached by tail calls, so this saves no registers for it. */
int npa_malloc(struct npa *a, int device, size_t size, aclrtStream stream, void **ptr,
	       char *err, size_t errlen)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (__builtin_expect(dev == NULL || size - 1 >= a->cached_below, 0))
		return malloc_rare(a, dev, size, ptr, err, errlen);
	if (__builtin_expect(!npa_lock_try(&dev->lock), 0))
		return malloc_contended(dev, size, stream, ptr, err, errlen);
	/* The freed last hit, if best fit finds it again with no call to
	 * ask: its last request on its stream, no events to process, no
	 * scope routing; else malloc_locked asks. */
	const struct npa_block *b = dev->last_hit.block;
	struct private_pool *to;

	if (!dev->last_hit.freed)
		return malloc_missed(dev, size, stream, ptr, err, errlen);
	if (size != b->requested_size || stream != b->stream || dev->events.pending != 0 ||
	    dev->deferred != NULL)
		return malloc_locked(dev, size, stream, ptr, err, errlen);
	if (__builtin_expect(dev->pools.nscopes != 0, 0)) {
		if (!pool_registry_route_one(&dev->pools, stream, &to))
			return malloc_in_scope(dev, size, stream, ptr, err, errlen);
		if (npa_private_pool_of(to) != b->pool->owner)
			return malloc_locked(dev, size, stream, ptr, err, errlen);
	} else if (b->pool->owner != NULL) {
		return malloc_locked(dev, size, stream, ptr, err, errlen);
	}
	take_again(dev, size, ptr);
	npa_lock_release(&dev->lock);
	return 0;
}

static int uncached_free(struct npa *a, void *ptr, char *err, size_t errlen)
{
	for (int i = 0; i < a->ndev; i++) {
		npa_lock_acquire(&a->dev[i].lock);
		int rc = npa_uncached_free(&a->dev[i], ptr);
		npa_lock_release(&a->dev[i].lock);
		if (rc == 0)
			return 0;
	}
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "invalid device pointer: %p", ptr);
	return -EINVAL;
}

/* Frees allocated block `ptr` of locked `dev`; false if it has none. */
static bool free_in(struct npa_device *dev, void *ptr)
{
	struct npa_last_hit *hit = &dev->last_hit;
	struct npa_block *b = hit->block;

	/* The last hit, allocated: its own pointer, no lookup. */
	if (b != NULL && b->ptr == ptr && !hit->freed) {
		if (hit->owed == 0) {
			free_last_hit(dev, b);
		} else {
			b->allocated = false;
			hit->freed = true;
		}
		return true;
	}
	struct npa_ptr_slot *slot = npa_device_find(dev, ptr);

	/* A last hit kept aside is still in the pointer map, freed. */
	if (slot == NULL || (slot->block == b && hit->freed))
		return false;
	/* Settling a freed last hit takes its entry out of the pointer map,
	 * which may move the entry of ptr. */
	if (b != NULL) {
		bool moves = hit->freed;

		npa_device_settle(dev);
		if (moves)
			slot = npa_device_find(dev, ptr);
	}
	npa_device_free(dev, slot);
	return true;
}

/* Frees `ptr` in whichever device from `first` on holds it. */
static int free_from(struct npa *a, int first, void *ptr, char *err, size_t errlen)
{
	for (int i = first; i < a->ndev; i++) {
		struct npa_device *dev = &a->dev[i];

		if (a->ndev > 1 && !npa_device_may_own(dev, ptr))
			continue;
		npa_lock_acquire(&dev->lock);
		bool freed = free_in(dev, ptr);
		npa_lock_release(&dev->lock);
		if (freed)
			return 0;
	}
	/* An uncached allocation is in no pointer map: asked after the miss,
	 * so the cached path pays nothing for the mode. */
	if (a->no_caching)
		return uncached_free(a, ptr, err, errlen);
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "invalid device pointer: %p", ptr);
	return -EINVAL;
}

/* A free of the only device, its lock held, which it releases. */
static __attribute__((noinline)) int free_locked(struct npa *a, void *ptr, char *err,
						  size_t errlen)
{
	bool freed = free_in(&a->dev[0], ptr);

	npa_lock_release(&a->dev[0].lock);
	return freed ? 0 : free_from(a, 1, ptr, err, errlen);
}

/* The last hit, taken again and now freed: left aside, the stats owing it. */
static inline bool frees_taken_again(struct npa_device *dev, const void *ptr)
{
	struct npa_last_hit *hit = &dev->last_hit;
	struct npa_block *b = hit->block;

	if (b == NULL || b->ptr != ptr || hit->freed || hit->owed == 0)
		return false;
	b->allocated = false;
	hit->freed = true;
	return true;
}

int npa_free(struct npa *a, void *ptr, char *err, size_t errlen)
{
	struct npa_device *dev = &a->dev[0];

	if (ptr == NULL)
		return 0;
	if (__builtin_expect(a->ndev != 1 || !npa_lock_try(&dev->lock), 0))
		return free_from(a, 0, ptr, err, errlen);
	if (!frees_taken_again(dev, ptr))
		return free_locked(a, ptr, err, errlen);
	npa_lock_release(&dev->lock);
	return 0;
}
