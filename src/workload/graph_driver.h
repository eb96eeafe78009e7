/*
 * graph_driver.h - NPUGraph captures and MemPools driven as a torch_npu
 * program drives them (graphs.py, memory.py, MemPool.cpp), for ctl/graph,
 * ctl/mempool and a trace's graph and mempool lines alike: which pool a
 * capture allocates into, the order of the allocator's calls (graph.h,
 * mempool.h), and what a refusal leaves behind.
 *
 * The caller owns the names, the streams, the current device and the
 * check that the caching allocator is the one in use; refusals come with
 * upstream's text from the allocator.
 */
#ifndef NPUMEMFS_GRAPH_DRIVER_H
#define NPUMEMFS_GRAPH_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/device/mempool.h"
#include "alloc/graph/graph.h"

/*
 * torch.npu.graph_pool_handle() kept under a name: the first use takes a
 * user-created (0, uid++) id, every later use shares it. The pool itself
 * is made by the first capture or MemPool() that names it. Zeroed: not
 * taken yet.
 */
struct wl_pool_handle {
	struct npa_pool_id id;
	bool taken;
};

struct npa_pool_id wl_pool_handle_id(struct npa *a, struct wl_pool_handle *h);

/* One capture's begin. */
struct wl_capture {
	int device;
	aclrtStream stream;
	struct npa_pool_id pool;   /* (0, 0): a pool of the graph's own */
	aclmdlRICaptureMode mode;
	/* torch.npu.graph(g, ...).__enter__ (synchronize, empty both caches,
	 * then capture_begin) rather than NPUGraph.capture_begin alone. */
	bool enter;
};

/* Graph *g of caching allocator a, its pools asked of `pools`
 * (npa_graph_new), made first when NULL ("out of memory" when it cannot
 * be), begins capture c. 0 or -errno with upstream's text. */
int wl_graph_capture_begin(struct npa *a, struct allocator pools, struct npa_graph **g,
			   const struct wl_capture *c,
			   char *err, size_t errlen);
/*
 * pool=`name`: the pool of graph `other`'s successful capture (pool()),
 * for a capture on `device`; a pool is one device's, so another device's
 * is refused with -EINVAL.
 */
int wl_graph_pool_of(const struct npa_graph *other, const char *name, int device,
		     struct npa_pool_id *id, char *err, size_t errlen);

/* A torch.npu.MemPool object. Zeroed: not created yet. */
struct wl_mempool {
	struct wl_pool_handle handle;  /* its id; a capture may have named it first */
	int device;
	bool live;       /* created and not released */
	bool routing;    /* a use_mem_pool entered and not exited */
	int32_t stream;  /* while routing: the caller's number of the stream routed */
	/* Made while a plug-in was current, in a flavor whose MemPool() asks
	 * nothing of the allocator: an id, with no pool of the caching
	 * allocator's behind it. */
	bool only_an_id;
	/* What use_mem_pool's calls are asked of: the allocator in use (the
	 * switch, whose current allocator answers, as upstream's get()). */
	struct allocator pools;
};

/*
 * MemPool(use_on_oom, no_split[, allocator]) on `device`, with the
 * handle's id (taken now if not yet); `pools` is asked whether a plug-in
 * is current. With the caching allocator current: createOrIncrefPool,
 * then the flags. With a plug-in current, as the flavor's upstream: npu
 * (torch_npu v2.6.0's MemPool holds an id and calls nothing) keeps only
 * the id, and refuses the flags and a source with -EINVAL; cuda
 * (createOrIncrefPool reaches CUDAPluggableAllocator, which does not
 * support it) refuses with -EOPNOTSUPP and PyTorch's text. `source`
 * (NULL: the device's memory) is the caching allocator's; it is dropped
 * when refused. A refused create leaves no pool behind. 0 or -errno; the
 * plug-in refusals' reason in err.
 */
int wl_mempool_create(struct npa *a, struct allocator pools, struct wl_mempool *m,
		      int device, bool use_on_oom, bool no_split,
		      const struct npa_segment_source *source, char *err, size_t errlen);

/*
 * What a refused use_mem_pool entry leaves: upstream's
 * beginAllocateToPool has taken a use of the pool before it refuses, and
 * a program stops there with that use taken; a control file's refused
 * write must change nothing, so the use is given back.
 */
enum wl_refusal { WL_REFUSAL_AS_UPSTREAM, WL_REFUSAL_UNDONE };

/* use_mem_pool's entry for the allocations on `s`, which the caller calls
 * `stream`: beginAllocateToPool of the allocator current (a plug-in's
 * begin_allocate_to_pool hook, with a filter that accepts `s`).
 * -EBUSY "beginAllocateToPool: already recording to mempool_id". */
int wl_mempool_begin(struct npa *a, struct wl_mempool *m, aclrtStream s, int32_t stream,
		     enum wl_refusal refusal, char *err, size_t errlen);
/* use_mem_pool's exit: endAllocateToPool, then releasePool, of the
 * allocator that began it. -ENOENT "endAllocatePool: not currently
 * recording to mempool_id". */
int wl_mempool_end(struct npa *a, struct wl_mempool *m, char *err, size_t errlen);
/* The destructor: the object is gone whatever the allocator says, which is
 * returned. Only an id: nothing to call (v2.6.0 has no destructor). */
int wl_mempool_release(struct npa *a, struct wl_mempool *m, char *err, size_t errlen);
/* As at a program's end: a use_mem_pool still entered exits, a live
 * MemPool is destroyed, and *m is zeroed (its handle forgotten). */
void wl_mempool_drop(struct npa *a, struct wl_mempool *m, char *err, size_t errlen);

#endif /* NPUMEMFS_GRAPH_DRIVER_H */
