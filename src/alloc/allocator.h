/*
 * allocator.h - the one contract of a device allocator.
 *
 * torch_npu's NPUAllocator base class (PyTorch's CUDAAllocator) is one
 * interface for the native caching allocator and the pluggable one; this
 * is the same contract in C. The built-in caching allocator, the plug-in
 * wrapper and the switch that holds them each fill one table, and whoever
 * holds a struct allocator calls through it without asking which kind it
 * is. An operation an implementation lacks is NULL; the allocator_*
 * helpers below give the answer upstream gives for it.
 *
 * Every int function returns 0 or a negative errno; where a message helps
 * it is written to err in upstream's words. -EFAULT means the allocator's
 * code faulted (a plug-in) and the holder should retire it.
 */
#ifndef NPUMEMFS_ALLOCATOR_H
#define NPUMEMFS_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>

#include <acl/acl_rt.h>

#include "alloc/pools/pool_id.h"
#include "alloc/core/snapshot.h"
#include "alloc/core/stats.h"

/* As many devices as the runtime can have (aclrtGetDeviceCount): every
 * allocator serves devices 0..N-1 with N at most this, and so do traces. */
#define NPA_MAX_DEVICES 16

struct npa;
struct npa_host;

struct allocator_ops {
	int (*malloc)(void *self, int device, size_t size, aclrtStream stream,
		      void **ptr, char *err, size_t errlen);
	int (*free)(void *self, void *ptr, char *err, size_t errlen);
	int (*record_stream)(void *self, void *ptr, aclrtStream stream);
	int (*erase_stream)(void *self, void *ptr, aclrtStream stream);
	/* The size it keeps for a live pointer (0 if unknown). */
	size_t (*block_size)(void *self, const void *ptr);

	int (*empty_cache)(void *self, int device);          /* -1: all */
	int (*set_fraction)(void *self, int device, double fraction, char *err,
			    size_t errlen);
	double (*get_fraction)(void *self, int device);
	int (*reset_peak)(void *self, int device);           /* -1: all */
	int (*reset_accumulated)(void *self, int device);    /* -1: all */
	int (*get_stats)(void *self, int device, struct npa_stats *out);
	int (*snapshot)(void *self, int device, struct npa_snapshot *out);
	/* Optional (a holder of allocators has none of its own). The device
	 * memory it holds on `device`, in address order; free(*out). */
	int (*ranges)(void *self, int device, struct npa_range **out, size_t *n);

	/* Optional, as ranges. Private pools (upstream beginAllocateToPool /
	 * endAllocateToPool / releasePool): allocations on streams the filter
	 * accepts go to the pool until the end. */
	int (*begin_allocate_to_pool)(void *self, int device, struct npa_pool_id id,
				      npa_pool_filter filter, void *arg, char *err,
				      size_t errlen);
	int (*end_allocate_to_pool)(void *self, int device, struct npa_pool_id id,
				    char *err, size_t errlen);
	int (*release_pool)(void *self, int device, struct npa_pool_id id, char *err,
			    size_t errlen);

	int (*device_count)(void *self);
	/* Optional. The number traces give a stream (npa_set_stream_number). */
	int (*set_stream_number)(void *self, aclrtStream stream, int device, long number);
	/* Optional. Every invariant of `device`; -EFAULT with the first broken one. */
	int (*check)(void *self, int device, char *err, size_t errlen);
	/* Optional. Whether its code faulted and it was retired; what happened in buf. */
	bool (*faulted)(void *self, char *buf, size_t len);
	/* The caching allocator whose MemPools serve it now, or NULL. */
	struct npa *(*caching)(void *self);
	/* The built-in caching allocator behind it, current or not: graphs
	 * take pool ids, capture marks and the host allocator from it. NULL
	 * for a plug-in on its own. */
	struct npa *(*builtin)(void *self);
	/* The pinned host allocator it keeps, or NULL. */
	struct npa_host *(*host)(void *self);
};

struct allocator {
	const struct allocator_ops *ops;
	void *self;
};

static inline int allocator_set_stream_number(struct allocator a, aclrtStream stream,
					      int device, long number)
{
	return a.ops->set_stream_number ? a.ops->set_stream_number(a.self, stream, device, number)
					: 0;
}

static inline bool allocator_faulted(struct allocator a, char *buf, size_t len)
{
	return a.ops->faulted && a.ops->faulted(a.self, buf, len);
}

#endif /* NPUMEMFS_ALLOCATOR_H */
