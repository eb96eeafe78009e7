/*
 * device.h - one device's caching allocator (upstream DeviceCachingAllocator).
 *
 * Every function here expects the caller to hold dev->lock, except
 * npa_device_init/npa_device_fini.
 */
#ifndef NPA_DEVICE_H
#define NPA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/conf/alloc_conf.h"
#include "alloc/conf/flavor.h"
#include "alloc/core/format_size.h"
#include "alloc/core/oom_why.h"
#include "memory_history.h"
#include "native.h"

#include "alloc/blocks/block.h"
#include "frames.h"
#include "alloc/core/lock.h"
#include "private_pool.h"
#include "alloc/blocks/ptr_map.h"
#include "alloc/core/stats_block.h"
#include "stream_events.h"

#define NPA_MIN_BLOCK_SIZE ((size_t)512)        /* kMinBlockSize */
#define NPA_SMALL_SIZE ((size_t)1 << 20)        /* kSmallSize */
#define NPA_SMALL_BUFFER ((size_t)2 << 20)      /* kSmallBuffer */
#define NPA_MIN_LARGE_ALLOC ((size_t)10 << 20)  /* kMinLargeAlloc */
#define NPA_ROUND_LARGE ((size_t)2 << 20)       /* kRoundLarge */

/* The memory history ring: entry i is at ring[i % cap]; no ring when off. */
struct npa_history {
	struct npa_trace_entry *ring;
	size_t cap;
	bool all;            /* "all" (else "state") */
	uint64_t recorded;   /* written under the lock, read atomically by waiters */
	const char *last_file; /* the file name interned last: origins repeat */
};

/* The last malloc's cached block, while the device has done nothing else
 * since (device_allocator.c, "The last hit, again"). */
struct npa_last_hit {
	struct npa_block *block; /* NULL: none */
	size_t size;             /* the rounded request that found it */
	bool split;              /* split off its cached block; block->next is the rest */
	bool freed;              /* freed, its return to the pool put off */
	/* Takings of the block whose changes the stats still owe, each but
	 * the last freed again ("Owed", device_stats.c). */
	uint64_t owed;
	uint64_t owed_requested; /* the sum of their requests */
	size_t owed_largest;     /* the largest of them */
};

/* The live allocations of PYTORCH_NO_NPU_MEMORY_CACHING, outside every segment. */
struct npa_uncached {
	struct npa_uncached_ptr {
		void *ptr;
		size_t size;
	} *v;
	size_t n, cap;
};

struct npa_device {
	struct npa_lock lock;
	int id;
	const struct npa_flavor *flavor;
	const struct npa_conf *conf;   /* shared; changed only with every device locked */
	struct npa_stats stats;
	struct npa_stats_block published; /* stats for readers, stats_block.h */
	struct npa_pool small;
	struct npa_pool large;
	struct npa_segment_tree segments;
	struct npa_ptr_map allocated;  /* allocated blocks by address */
	/* Every segment this device ever had lies in [addr_lo, addr_hi): free
	 * reads it without the lock to skip devices that cannot own a pointer.
	 * Written under the lock; it only widens, so a stale read is wider. */
	uintptr_t addr_lo, addr_hi;
	struct npa_block_cache cache;
	struct npa_event_queues events;
	/* Freed during a capture with stream uses: their events are recorded
	 * once no capture is under way (needs_events_deferred_until_no_capture). */
	struct npa_block *deferred;
	struct pool_registry pools; /* graph_pools and allocation_scopes_ */
	int active_captures;           /* num_active_captures_ (markCaptureBegin) */
	size_t total_allocated_memory; /* device bytes held */
	bool set_fraction;
	double fraction;               /* as set; the limit is truncated to bytes */
	size_t allowed_memory_maximum;
	bool oversize_exact;           /* max_split_size unchanged since creation */
	/* Some roundup_power2_divisions interval has more than one division;
	 * kept with conf (set at creation and by npa_set_conf). */
	bool rounds_by_divisions;
	struct npa_history history;
	struct npa_last_hit last_hit;
	struct npa_frame_names *names; /* the allocator's, shared by its devices */
	char last_oom[NPA_ERRLEN];     /* "" until an allocation fails */
	struct npa_oom_why last_oom_why; /* the figures behind last_oom, if any */
	struct npa_uncached uncached;
};

/* A request on its way through the ladder (upstream AllocParams). */
struct npa_alloc_params {
	size_t size;        /* rounded */
	size_t alloc_size;  /* segment size if a device malloc is needed */
	aclrtStream stream;
	struct npa_pool *pool;
	struct npa_block *block;
	/* A cached block found by best fit stays in the pool until it is known
	 * whether it must leave. */
	bool in_pool;
};

int npa_device_init(struct npa_device *dev, int id, const struct npa_flavor *flavor,
		    const struct npa_conf *conf);
/* Releases everything; counts blocks still allocated. */
size_t npa_device_fini(struct npa_device *dev, uint64_t *leaked_bytes);

/* uncached.c: torch_npu's allocate and uncached_delete under
 * PYTORCH_NO_NPU_MEMORY_CACHING=1, with the device lock held. */
int npa_uncached_malloc(struct npa_device *dev, size_t size, void **ptr, char *err,
			size_t errlen);
/* -ENOENT if `ptr` is not one of dev's. */
int npa_uncached_free(struct npa_device *dev, void *ptr);
/* Frees what is left; returns how many, their bytes added to *bytes. */
size_t npa_uncached_fini(struct npa_device *dev, uint64_t *bytes);
/* How many are live; the bytes they asked for (less the pad) added to *bytes. */
size_t npa_uncached_live(const struct npa_device *dev, uint64_t *bytes);

/* size_class.c */
size_t npa_roundup_power2_next_division(size_t size, unsigned divisions);
bool npa_conf_rounds_by_divisions(const struct npa_conf *conf);

/* Upstream round_size. */
static inline size_t npa_round_size(const struct npa_device *dev, size_t size)
{
	size += dev->flavor->pad;
	if (size < NPA_MIN_BLOCK_SIZE)
		return NPA_MIN_BLOCK_SIZE;
	unsigned d = dev->rounds_by_divisions ? npa_conf_divisions(dev->conf, size) : 0;
	if (d > 1 && size > NPA_MIN_BLOCK_SIZE * d)
		return npa_roundup_power2_next_division(size, d);
	return NPA_MIN_BLOCK_SIZE * ((size + NPA_MIN_BLOCK_SIZE - 1) / NPA_MIN_BLOCK_SIZE);
}

#define NPA_EXTRA_LARGE_BUFFER ((size_t)1 << 30) /* npu kExtraLargeBuffer */

/* Upstream get_allocation_size: the segment a device malloc would make. */
static inline size_t npa_allocation_size(const struct npa_device *dev, size_t size)
{
	if (size <= NPA_SMALL_SIZE)
		return NPA_SMALL_BUFFER;
	/* npu page_size:1g puts large-pool segments on 1 GiB pages. */
	if (dev->conf->page_size_1g)
		return NPA_EXTRA_LARGE_BUFFER *
		       ((size + NPA_EXTRA_LARGE_BUFFER - 1) / NPA_EXTRA_LARGE_BUFFER);
	if (size < NPA_MIN_LARGE_ALLOC)
		return dev->conf->large_segment_size;
	return NPA_ROUND_LARGE * ((size + NPA_ROUND_LARGE - 1) / NPA_ROUND_LARGE);
}

/* Upstream get_pool: a routing scope's private pool, or the default one. */
static inline struct npa_pool *npa_get_pool(struct npa_device *dev, size_t size,
					    aclrtStream stream)
{
	if (__builtin_expect(dev->pools.nscopes != 0, 0)) {
		struct npa_private_pool *p = npa_private_pool_route(&dev->pools, stream);

		if (p != NULL)
			return size <= NPA_SMALL_SIZE ? &p->small : &p->large;
	}
	return size <= NPA_SMALL_SIZE ? &dev->small : &dev->large;
}

bool npa_stream_capturing(aclrtStream stream);

/*
 * Whether a capture is under way for work on `stream`, when event queries
 * and synchronization are not allowed: cuda counts any routing scope
 * (captures_underway); torch_npu a capture begun on this device whose
 * stream is `stream` (is_capture_context, asked of the runtime only while
 * some capture runs).
 */
static inline bool npa_capture_underway(const struct npa_device *dev, aclrtStream stream)
{
	if (dev->flavor->any_scope_is_capture)
		return dev->pools.nscopes != 0;
	return __builtin_expect(dev->active_captures > 0, 0) && npa_stream_capturing(stream);
}

/* Upstream's update_stat: a signed change, peak kept. */
static inline void npa_stat_single_update(struct npa_stat *s, int64_t amount)
{
	if (amount > 0)
		npa_stat_increase(s, amount);
	else if (amount < 0)
		npa_stat_decrease(s, -amount);
}

/* Every change counts for "all" and for the block's own pool. */
static inline void npa_stat_update(struct npa_stat *arr, const struct npa_pool *pool,
				   int64_t amount)
{
	npa_stat_single_update(&arr[NPA_STAT_ALL], amount);
	npa_stat_single_update(&arr[pool->is_small ? NPA_STAT_SMALL_POOL : NPA_STAT_LARGE_POOL],
			       amount);
}

/* The stat array slot of a pool: small_pool or large_pool. */
static inline int npa_pool_stat_type(const struct npa_pool *pool)
{
	return NPA_STAT_LARGE_POOL - (int)pool->is_small;
}

/* A change of known sign for "all" and one pool: no sign tests on the hot path. */
static inline void npa_stat_add(struct npa_stat *arr, int type, int64_t n)
{
	npa_stat_increase(&arr[NPA_STAT_ALL], n);
	npa_stat_increase(&arr[type], n);
}

static inline void npa_stat_sub(struct npa_stat *arr, int type, int64_t n)
{
	npa_stat_decrease(&arr[NPA_STAT_ALL], n);
	npa_stat_decrease(&arr[type], n);
}

/* An increase back to a value the stat has had since its peak was last
 * reset, so the peak cannot move: no compare. */
static inline void npa_stat_add_below_peak(struct npa_stat *arr, int type, int64_t n)
{
	arr[NPA_STAT_ALL].current += n;
	arr[NPA_STAT_ALL].allocated += n;
	arr[type].current += n;
	arr[type].allocated += n;
}

/* device_stats.c */
/* The stats as they would be had every taking of the last hit changed
 * them: called before anything reads them or a change other than a
 * taking or its free lands on them. */
void npa_device_pay_owed(struct npa_device *dev);
void npa_stats_reset_peak(struct npa_stats *st);
/* The device lock's publisher: its stats into its stats block. */
void npa_device_publish_stats(struct npa_lock *lock);
/* npa_device_pay_owed for the device of `lock`, for npa_stats_copy. */
void npa_device_complete_stats(struct npa_lock *lock);
void npa_stats_reset_accumulated(struct npa_stats *st);

/* device_memory.c: the device side (aclrtMalloc/aclrtFree and release paths). */
int npa_device_enter(int device, int32_t *saved);
void npa_device_leave(int32_t saved);
int npa_device_mem_info(int device, size_t *free, size_t *total);
int npa_alloc_block(struct npa_device *dev, struct npa_alloc_params *p, bool is_retry,
		    char *err, size_t errlen);
void npa_release_block(struct npa_device *dev, struct npa_block *b);
/* Whether [lo, end) shares a byte with a segment of the device. */
bool npa_device_segments_overlap(struct npa_device *dev, uintptr_t lo, uintptr_t end);
bool npa_release_available_cached_blocks(struct npa_device *dev,
					 const struct npa_alloc_params *p);
/* empty_cache; with keep_handles (empty_virt_addr_cache) unmapped pages stay
 * allocated in the pool's handle cache, else that cache is freed too. */
int npa_release_cached_blocks(struct npa_device *dev, bool keep_handles);
void npa_garbage_collect(struct npa_device *dev);
static inline bool npa_gc_enabled(const struct npa_device *dev)
{
	return dev->set_fraction && dev->conf->garbage_collection_threshold > 0.0;
}
/* npu: npuSynchronizeDevice. 0, or -EBUSY if the runtime refuses because
 * a stream of the device captures. */
int npa_sync_device_if_flavor(struct npa_device *dev);
int npa_device_set_fraction(struct npa_device *dev, double fraction);

/* expandable_segment.c: reservations and pages. */
size_t npa_expandable_page(const struct npa_device *dev, const struct npa_pool *pool);
int npa_expandable_create(struct npa_device *dev, size_t page, char **va,
			  struct npa_expandable **out);
size_t npa_expandable_map(struct npa_device *dev, struct npa_segment *seg, char *ptr,
			  size_t size);
size_t npa_expandable_unmap(struct npa_device *dev, struct npa_segment *seg, char *ptr,
			    size_t size, bool keep, char **start);
void npa_expandable_destroy(struct npa_segment *seg);
void npa_handle_cache_drain(struct npa_pool *pool);
void npa_handle_cache_fini(struct npa_pool *pool);

/* expandable_blocks.c */
int npa_alloc_expandable(struct npa_device *dev, struct npa_alloc_params *p);
void npa_unmap_block(struct npa_device *dev, struct npa_block *b, bool keep_handles);
void npa_release_expandable_segment(struct npa_device *dev, struct npa_block *b);

/* A new segment at [ptr, ptr + size) widens the device's address bounds. */
static inline void npa_device_note_segment(struct npa_device *dev, const char *ptr, size_t size)
{
	uintptr_t lo = (uintptr_t)ptr, hi = lo + size;

	if (lo < __atomic_load_n(&dev->addr_lo, __ATOMIC_RELAXED))
		__atomic_store_n(&dev->addr_lo, lo, __ATOMIC_RELAXED);
	if (hi > __atomic_load_n(&dev->addr_hi, __ATOMIC_RELAXED))
		__atomic_store_n(&dev->addr_hi, hi, __ATOMIC_RELAXED);
}

/* Whether `ptr` can belong to the device; callable without its lock. */
static inline bool npa_device_may_own(const struct npa_device *dev, const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;

	return p >= __atomic_load_n(&dev->addr_lo, __ATOMIC_RELAXED) &&
	       p < __atomic_load_n(&dev->addr_hi, __ATOMIC_RELAXED);
}

/* memory_history.c, called only while recording. */
/* The calling thread's origin as a frame the history can keep, or
 * *fallback (NULL: none) when the caller named none. */
struct npa_frame npa_history_frame(struct npa_device *dev, const struct npa_frame *fallback)
	__attribute__((cold, noinline));
/* Records an entry with that frame, and returns the frame. */
struct npa_frame npa_history_add(struct npa_device *dev, enum npa_trace_action action,
				 uint64_t addr, uint64_t size, aclrtStream stream,
				 struct npa_pool_id pool, const struct npa_frame *fallback)
	__attribute__((cold, noinline));
void npa_history_fini(struct npa_device *dev);

/* upstream's owner_MempoolId(): the private pool a block pool serves. */
static inline struct npa_pool_id npa_pool_owner_id(const struct npa_pool *pool)
{
	return pool->owner != NULL ? pool->owner->base.id : (struct npa_pool_id){ 0, 0 };
}

static inline bool npa_recording(const struct npa_device *dev)
{
	return __builtin_expect(dev->history.ring != NULL, 0);
}

/* Recording off costs one predictable branch. `fallback`: the frame of
 * what the entry is about (a segment's), shown if the caller named none. */
static inline void npa_trace(struct npa_device *dev, enum npa_trace_action action,
			     const void *addr, size_t size, aclrtStream stream,
			     const struct npa_pool *pool, const struct npa_frame *fallback)
{
	if (npa_recording(dev))
		npa_history_add(dev, action, (uint64_t)(uintptr_t)addr, size, stream,
				npa_pool_owner_id(pool), fallback);
}

/* device_allocator.c: malloc, free and merging. */
/* Makes the pools upstream's again: a freed last hit goes back to its pool,
 * and the last hit is forgotten. Every locked operation but malloc and
 * free starts with it (npa_device_lock). */
void npa_device_settle(struct npa_device *dev);

static inline void npa_device_lock(struct npa_device *dev)
{
	npa_lock_acquire(&dev->lock);
	if (dev->last_hit.block != NULL)
		npa_device_settle(dev);
}

size_t npa_try_merge(struct npa_device *dev, struct npa_block *dst, struct npa_block *src);
/* The blocks freed during a capture get their events now (none is under way). */
void npa_insert_deferred_events(struct npa_device *dev);
/* empty_cache of pool `id` ((0,0): the default pools and every freeable
 * private pool), as upstream release_cached_blocks. */
int npa_release_pool_blocks(struct npa_device *dev, struct npa_pool_id id,
			    bool keep_handles);
void npa_free_block(struct npa_device *dev, struct npa_block *b);
/* The pointer map's slot of allocated block `ptr`, or NULL; slot->block is the block. */
static inline struct npa_ptr_slot *npa_device_find(struct npa_device *dev, const void *ptr)
{
	return ptr != NULL ? npa_ptr_map_slot(&dev->allocated, ptr) : NULL;
}

/* oom_message.c: upstream's text. `in_private_pools` is upstream's
 * allocated_in_private_pools (the cuda text names it when not 0). */
void npa_oom_message(const struct npa_device *dev, size_t alloc_size, size_t dev_free,
		     size_t dev_total, uint64_t in_private_pools, char *err, size_t errlen);

/* oom_why.c: the figures of an OOM of request `p`, from the device's state
 * after the retry ladder, the device's free and total bytes given. */
void npa_oom_why(struct npa_device *dev, const struct npa_alloc_params *p, size_t dev_free,
		 size_t dev_total, struct npa_oom_why *w);
/* upstream's allocated_in_private_pools: every private pool's free blocks. */
static inline uint64_t npa_oom_in_private_pools(const struct npa_oom_why *w)
{
	return w->private_free + (w->pool_id[0] != 0 || w->pool_id[1] != 0 ? w->pool_free : 0);
}

/* snapshot.c */
int npa_device_snapshot(struct npa_device *dev, struct npa_snapshot *out);
int npa_device_snapshot_pool(struct npa_device *dev, struct npa_pool_id id,
			     struct npa_snapshot *out);

/* check.c */
int npa_device_check(struct npa_device *dev, char *err, size_t errlen);

#endif /* NPA_DEVICE_H */
