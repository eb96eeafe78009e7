/*
 * caching_allocator.h - a PyTorch/torch_npu-compatible caching allocator.
 *
 * Reproduces upstream's decisions exactly (NativeCachingAllocator with one
 * DeviceCachingAllocator per device): size rounding, small and large pools,
 * best fit by (stream, size, address), splitting and merging, per-stream
 * caching, record_stream with events, the OOM retry ladder, empty_cache and
 * every memory_stats() counter. It reaches the device only through the
 * ACL-compatible API (acl/acl_rt.h), like a plug-in would.
 *
 * Thread-safe: one lock per device. Stats and snapshots are copied out
 * under that lock and formatted by the caller without it.
 *
 * Errors are negative errno values; where a message helps, it is written to
 * `err` (may be NULL) in upstream's words.
 */
#ifndef NPUMEMFS_CACHING_ALLOCATOR_H
#define NPUMEMFS_CACHING_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/allocator.h"
#include "alloc/conf/alloc_conf.h"
#include "alloc/conf/flavor.h"
#include "alloc/core/oom_why.h"
#include "alloc/core/snapshot.h"
#include "alloc/core/stats.h"
#include "alloc/device/memory_history.h"
#include "alloc/device/native.h"

struct npa;

struct npa_options {
	const struct npa_flavor *flavor; /* NULL: npu */
	struct npa_conf conf;            /* from npa_conf_default + npa_conf_parse */
	int device_count;                /* devices 0..device_count-1, at most NPA_MAX_DEVICES */
	/* Pinned host memory of the machine (sizes the expandable host
	 * variant's ranges); 0: 64 GiB, upstream's device size. */
	uint64_t host_capacity;
	/* PYTORCH_NO_NPU_MEMORY_CACHING=1: every allocation is its own device
	 * malloc, freed at once, outside the cache and its stats. */
	bool no_caching;
};

int npa_create(const struct npa_options *opt, struct npa **out);
/* The caching allocator as an allocator (alloc/allocator.h). */
struct allocator npa_allocator(struct npa *a);
/* npa_create, with the reason for a refusal in `err`. */
int npa_create_err(const struct npa_options *opt, struct npa **out, char *err,
		   size_t errlen);
/*
 * Free every live block, release every segment and destroy the allocator.
 * Returns the number of blocks that were still allocated (leaks), and
 * their bytes in *leaked_bytes (may be NULL).
 */
size_t npa_destroy(struct npa *a, uint64_t *leaked_bytes);

const struct npa_flavor *npa_get_flavor(const struct npa *a);
/* The pinned host allocator of `a` (made with it, host_allocator.h). */
struct npa_host *npa_host_of(struct npa *a);
int npa_device_count(const struct npa *a);

/* Mark `ptr` as used on `stream`: its free waits for the stream's work. */
int npa_record_stream(struct npa *a, void *ptr, aclrtStream stream);
/*
 * Stream `stream` of `device` is stream `number` as traces and the mount
 * count them (S >= 1: the S-th stream a fresh process takes from the
 * stream pool; 0: the default stream; below 0: forget the stream). The
 * number names the c10 stream upstream would have, whose hash orders the
 * walk over pending events. A stream never numbered counts by its runtime
 * id. 0 or -ENOMEM.
 */
int npa_set_stream_number(struct npa *a, aclrtStream stream, int device, long number);
/*
 * torch_npu.erase_stream(tensor, stream) on a live pointer: the stream an
 * earlier record_stream added is dropped, so the block's free waits for no
 * event there (upstream also requires the caller to be on the block's own
 * stream, which the daemon and replays always are). -EINVAL if unknown.
 */
int npa_erase_stream(struct npa *a, void *ptr, aclrtStream stream);
/* Whether [ptr, ptr + size) overlaps a segment the allocator holds on `device`. */
bool npa_range_reserved(struct npa *a, int device, const void *ptr, size_t size);
/* The same from a MemPool's segment source, which runs with the device's
 * lock held (mempool.h): taking it again would deadlock. */
bool npa_range_reserved_held(struct npa *a, int device, const void *ptr, size_t size);
/* The segments of `device`, in address order; free(*out). */
int npa_segment_ranges(struct npa *a, int device, struct npa_range **out, size_t *n);
/* Size of the block behind a live pointer (0 if unknown). */
size_t npa_block_size(struct npa *a, const void *ptr);
/* Live allocations over every device, uncached ones too, and the bytes
 * they asked for. */
void npa_live(struct npa *a, uint64_t *blocks, uint64_t *bytes);

/*
 * empty_cache for one device, or all devices with device = -1. -EBUSY
 * while a capture is under way: cuda refuses while any pool routes
 * allocations; npu's device synchronization is refused by the runtime
 * while a stream of the device captures (devices before it were emptied).
 */
int npa_empty_cache(struct npa *a, int device);
/* Why empty_cache, reset or fraction control returned rc, for messages. */
const char *npa_control_strerror(int rc);
int npa_set_memory_fraction(struct npa *a, int device, double fraction,
			    char *err, size_t errlen);
double npa_get_memory_fraction(struct npa *a, int device);
int npa_reset_peak_stats(struct npa *a, int device);         /* -1: all */
int npa_reset_accumulated_stats(struct npa *a, int device);  /* -1: all */

/* A consistent copy of one device's counters. */
int npa_get_stats(struct npa *a, int device, struct npa_stats *out);
/* A consistent copy of the segments of one device (or all with -1). */
int npa_snapshot(struct npa *a, int device, struct npa_snapshot *out);

/* The settings in force, and a run-time change of them (EBUSY if unsafe). */
void npa_get_conf(struct npa *a, struct npa_conf *out);
int npa_set_conf(struct npa *a, const char *str, enum npa_conf_origin origin,
		 char *err, size_t errlen);

/*
 * torch_npu's empty_virt_addr_cache: empty_cache, but the physical pages
 * unmapped from expandable segments are kept for later maps (empty_cache
 * frees them). -EINVAL unless expandable_segments is on.
 */
int npa_empty_virt_addr_cache(struct npa *a, int device, char *err, size_t errlen);

/* The last out-of-memory message of `device` ("" if none yet) and, unless
 * `why` is NULL, its figures (why->valid false when it has none: none yet,
 * or a preemptive rejection); both of one moment. 0 or -ENODEV. */
int npa_last_oom(struct npa *a, int device, char *buf, size_t len, struct npa_oom_why *why);

/*
 * Check every invariant (stats recomputed from the blocks equal the
 * counters, segments do not overlap, pools hold exactly the free blocks).
 * Returns 0 or -EFAULT with the first broken rule in err.
 */
int npa_check(struct npa *a, int device, char *err, size_t errlen);

#endif /* NPUMEMFS_CACHING_ALLOCATOR_H */
