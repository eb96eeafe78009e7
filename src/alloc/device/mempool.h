/*
 * mempool.h - private memory pools: the pools graph captures and MemPool
 * allocate into (upstream PrivatePool, beginAllocateToPool, releasePool).
 *
 * A private pool has its own small and large free blocks, so memory it
 * holds is never handed to an allocation outside it. A pool lives while
 * its use_count is above 0 (create_or_incref, begin_allocate_to_pool and
 * a graph capture each take one use; release_pool gives one back); at 0
 * it is freeable, and empty_cache then frees its unused segments and
 * deletes it once it holds none. Allocations go to a pool while a scope
 * routes them there: scopes are searched newest first, and the first
 * whose filter accepts the allocation's stream wins.
 */
#ifndef NPUMEMFS_MEMPOOL_H
#define NPUMEMFS_MEMPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/pools/pool_id.h"
#include "alloc/core/snapshot.h"

struct npa;

/*
 * upstream graph_pool_handle(is_user_created): (0, uid++) for a user's
 * pool (torch.npu.graph_pool_handle(), MemPool()), (uuid++, 0) for a
 * capture without one; both counters start at 1, per allocator.
 */
struct npa_pool_id npa_graph_pool_handle(struct npa *a, bool user_created);

/* createOrIncrefPool: a new pool with use_count 1, or one more use. */
int npa_create_or_incref_pool(struct npa *a, int device, struct npa_pool_id id);
/* MemPool(use_on_oom=True): a last resort for allocations that found no memory. */
int npa_set_use_on_oom(struct npa *a, int device, struct npa_pool_id id, bool on);
/* MemPool(no_split=True): its blocks are never split. */
int npa_set_no_split(struct npa *a, int device, struct npa_pool_id id);

/*
 * Route allocations accepted by `filter` to pool `id` (created or increfed
 * first, as upstream: so a refused call has still taken a use).
 * -EBUSY "beginAllocateToPool: already recording to mempool_id".
 */
int npa_begin_allocate_to_pool(struct npa *a, int device, struct npa_pool_id id,
			       npa_pool_filter filter, void *arg, char *err,
			       size_t errlen);
/* -ENOENT "endAllocatePool: not currently recording to mempool_id". */
int npa_end_allocate_to_pool(struct npa *a, int device, struct npa_pool_id id,
			     char *err, size_t errlen);
/* One use fewer; at 0 the pool is freeable. -ENOENT for no such pool. */
int npa_release_pool(struct npa *a, int device, struct npa_pool_id id, char *err,
		     size_t errlen);
/* The first device where a scope (a capture, a MemPool's use) routes
 * allocations to a private pool now, or -1. */
int npa_routing_device(struct npa *a);
/* emptyCache(id): free the unused segments of pool `id` if it is freeable
 * (npu: -EBUSY while a stream of the device captures, as npa_empty_cache). */
int npa_empty_cache_pool(struct npa *a, int device, struct npa_pool_id id);
/*
 * checkPoolLiveAllocations: whether the allocated blocks of pool `id` are
 * exactly the `n` pointers given. -ENOENT "Could not find pool of id".
 */
int npa_check_pool_live_allocations(struct npa *a, int device, struct npa_pool_id id,
				    void *const *ptrs, size_t n, bool *out,
				    char *err, size_t errlen);

/*
 * torch.npu.MemPool's own operations over pool `id` (from
 * npa_graph_pool_handle(a, true)), as torch_npu's MemPool.cpp and
 * memory.py make them from the calls above.
 */
/* MemPool(use_on_oom, no_split): createOrIncrefPool, then the flags. */
int npa_mempool_create(struct npa *a, int device, struct npa_pool_id id, bool use_on_oom,
		       bool no_split);

/*
 * MemPool(allocator=...): where a private pool's segments come from
 * instead of the device (upstream PrivatePool::allocator(): raw_alloc for
 * each segment, raw_delete when it is released). Used for device-malloc
 * segments only: with expandable_segments the pool maps pages as any
 * other, as upstream does.
 *
 * alloc and free run with the device's lock held, as upstream calls
 * raw_alloc under its mutex: they must not call back into the caching
 * allocator (npa_range_reserved_held is the one exception). alloc returns
 * 0, -ENOMEM (no memory: the allocation goes on down upstream's ladder to
 * its OOM) or another negative errno with the reason in err (the
 * allocation fails with it). The caching allocator refuses a pointer that
 * overlaps one of its segments: not given back (free is not called), the
 * allocation fails with -EFAULT. drop is called once, when the pool is
 * deleted (the source may go then); never at npa_destroy, whose caller
 * takes the source down itself.
 */
struct npa_segment_source {
	int (*alloc)(void *ctx, int device, size_t size, aclrtStream stream, void **ptr,
		     char *err, size_t errlen);
	void (*free)(void *ctx, void *ptr);
	/* The pointer was refused (it overlaps a segment): forget it without
	 * giving it back. */
	void (*forget)(void *ctx, void *ptr);
	void (*drop)(void *ctx);
	void *ctx;
	char name[32];            /* for messages and listings ("plugin1") */
};

/*
 * npa_mempool_create with a segment source. -EEXIST if pool `id` exists
 * (upstream asserts that no allocator comes with an incref); the source's
 * drop is then not called.
 */
int npa_mempool_create_from(struct npa *a, int device, struct npa_pool_id id,
			    bool use_on_oom, bool no_split,
			    const struct npa_segment_source *source);
/* use_mem_pool's entry, _npu_beginAllocateCurrentStreamToPool: the
 * allocations on `stream` go to the pool. */
int npa_mempool_begin_stream(struct npa *a, int device, struct npa_pool_id id,
			     aclrtStream stream, char *err, size_t errlen);
/* use_mem_pool's exit: endAllocateToPool, then releasePool for the use
 * the entry took. */
int npa_mempool_end(struct npa *a, int device, struct npa_pool_id id, char *err,
		    size_t errlen);
/* ~MemPool: setUseOnOOM(false), releasePool, then emptyCache(id). */
int npa_mempool_destroy(struct npa *a, int device, struct npa_pool_id id, char *err,
			size_t errlen);

/* One private pool as pools/deviceN shows it. */
struct npa_pool_info {
	struct npa_pool_id id;
	int use_count;
	bool freeable;
	bool use_on_oom;
	bool no_split;
	bool routing;          /* a scope routes allocations to it now */
	char allocator[32];    /* its segment source's name, "" for the device */
	long device_mallocs;   /* npuMalloc_count: device mallocs not yet freed */
	size_t segments;
	uint64_t reserved_bytes;
	uint64_t allocated_bytes;
	uint64_t active_bytes;
};

/* Every private pool of `device`, in creation order; free(*out). */
int npa_pool_list(struct npa *a, int device, struct npa_pool_info **out, size_t *n);
/* snapshot(mempool_id): the segments of pool `id` only (none if no such pool). */
int npa_snapshot_pool(struct npa *a, int device, struct npa_pool_id id,
		      struct npa_snapshot *out);

#endif /* NPUMEMFS_MEMPOOL_H */
