/*
 * host_allocator.h - the pinned host caching allocator (torch_npu's
 * NPUCachingHostAllocator): the memory behind pin_memory=True tensors and
 * non-blocking copies.
 *
 * Two algorithms, chosen once when the allocator is made, as torch_npu's
 * call_once does: ATen's CachingHostAllocatorImpl (power-of-two blocks in
 * 64 LIFO free lists, never split, reused once the events of every stream
 * that used a block complete; the pinned_max_* thresholds and the reserve
 * segment) or, with pin_memory_expandable_segments:True, torch_npu's
 * expandable variant (size + 32 rounded to 512, best fit with split and
 * merge in 20 MiB host pages mapped into one reserved range).
 *
 * Private pools: while a scope routes a stream's allocations to pool id
 * (graph capture), blocks come from and go back to that pool only; scopes
 * are searched in insertion order. A block allocated during a capture and
 * used by a stream is never recycled. The expandable variant has no pools.
 *
 * The allocator has its own lock; every call takes it. Errors are negative
 * errno values, with upstream's words in `err` where upstream has some.
 */
#ifndef NPUMEMFS_HOST_ALLOCATOR_H
#define NPUMEMFS_HOST_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "host_stats.h"
#include "alloc/pools/pool_id.h"

struct npa_conf;
struct npa_host;

enum npa_host_variant {
	NPA_HOST_CACHING,    /* ATen CachingHostAllocatorImpl */
	NPA_HOST_EXPANDABLE, /* pin_memory_expandable_segments:True */
};

/* The thresholds in force, copied from the settings under h->lock. */
struct host_limits {
	size_t round_threshold;    /* pinned_max_round_threshold; SIZE_MAX: none */
	size_t cached_max;         /* pinned_max_cached_size; SIZE_MAX: none */
	size_t reserve_size;       /* pinned_reserve_segment_size_mb in bytes */
};

/* For the caching allocator that owns the host allocator: its making,
 * its end, and the settings it follows. */
int npa_host_create(struct npa_host **out, enum npa_host_variant variant,
		    const struct host_limits *limits, uint64_t host_capacity);
/* The limits a configuration gives. */
struct host_limits npa_host_limits_of(const struct npa_conf *conf);
void npa_host_destroy(struct npa_host *h);
/* npa_set_conf changed the thresholds. */
void npa_host_set_limits(struct npa_host *h, const struct host_limits *limits);
/* Whether the reserve segment's size can still change. */
bool npa_host_reserve_decided(struct npa_host *h);

enum npa_host_variant npa_host_variant(const struct npa_host *h);

/*
 * pin_memory(): `size` bytes for a tensor made while `stream` is current
 * (NULL: the default stream). 0 gives *ptr = NULL. -ENOMEM with the
 * runtime's error or, expandable, upstream's "Malloc pin memory failed,
 * host out of memory, Rried to allocate size: ..." in err.
 */
int npa_host_malloc(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen);
/* The tensor's deleter. -EINVAL "invalid pinned pointer: 0x.." for a
 * pointer that is not an allocated block's. */
int npa_host_free(struct npa_host *h, void *ptr, char *err, size_t errlen);
/*
 * CachingHostAllocator_recordEvent: `stream` used the block at `ptr` (a
 * non-blocking copy); its free waits for that work. 1 if ptr is a live
 * pinned block, 0 if not (upstream then synchronizes the stream instead).
 */
int npa_host_record_event(struct npa_host *h, const void *ptr, aclrtStream stream);
/* Size of the live block at `ptr` (0 if none). */
size_t npa_host_block_size(struct npa_host *h, const void *ptr);
/*
 * Which block the live allocation at `ptr` is: its serial, the order in
 * which the allocator made its blocks (1 for the first), so two pins
 * served by one cached block get one number whatever its address. 0 if
 * ptr is not a live block's, and under the expandable variant, whose
 * blocks split and merge.
 */
uint64_t npa_host_block_serial(struct npa_host *h, const void *ptr);
/* host_empty_cache(). */
void npa_host_empty_cache(struct npa_host *h);

void npa_host_get_stats(struct npa_host *h, struct npa_host_stats *out);
void npa_host_reset_peak_stats(struct npa_host *h);
void npa_host_reset_accumulated_stats(struct npa_host *h);

/* Private pools (CachingHostAllocatorImpl::begin_allocate_to_pool etc.). */
int npa_host_begin_allocate_to_pool(struct npa_host *h, struct npa_pool_id id,
				    npa_pool_filter filter, void *arg, char *err,
				    size_t errlen);
int npa_host_end_allocate_to_pool(struct npa_host *h, struct npa_pool_id id, char *err,
				  size_t errlen);
int npa_host_release_pool(struct npa_host *h, struct npa_pool_id id, char *err,
			  size_t errlen);

/* One block, as the host blocks view shows it. */
struct npa_host_block_info {
	uint64_t address;
	uint64_t size;
	uint64_t requested;        /* expandable: the size asked for; else size */
	struct npa_pool_id pool;   /* (0, 0): the default pool */
	bool allocated;
	bool mapped;               /* expandable: backed by pages; else true */
	bool during_capture;       /* allocated while its stream captured */
	uint64_t pending_events;   /* event_count_ */
	size_t nstreams;           /* streams that used it since its allocation */
	uint64_t streams[4];       /* the first of them, by stream number */
};

/* Every block (allocated, pending and free) in address order; free(*out). */
int npa_host_blocks(struct npa_host *h, struct npa_host_block_info **out, size_t *n);

/* One private pool of the host allocator, as pools/host shows it. */
struct npa_host_pool_info {
	struct npa_pool_id id;
	int use_count;
	bool freeable;
	bool routing;
	size_t blocks;
	uint64_t bytes;            /* of its blocks */
	uint64_t free_bytes;       /* in its free lists */
};

int npa_host_pools(struct npa_host *h, struct npa_host_pool_info **out, size_t *n);

/* Every invariant (stats recomputed from the blocks, lists hold exactly
 * the free blocks, no overlap). 0 or -EFAULT with the first broken rule. */
int npa_host_check(struct npa_host *h, char *err, size_t errlen);

/* The capture_begin refusal under the expandable variant, upstream's text
 * (NPUGraph.cpp); NULL when capture is allowed. */
const char *npa_host_capture_refusal(const struct npa_host *h);

#endif /* NPUMEMFS_HOST_ALLOCATOR_H */
