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

#include "alloc_conf.h"
#include "flavor.h"
#include "snapshot.h"
#include "stats.h"

#define NPA_ERRLEN 1024
/* As many devices as the runtime can have (aclrtGetDeviceCount). */
#define NPA_MAX_DEVICES 16

struct npa;

struct npa_options {
	const struct npa_flavor *flavor; /* NULL: npu */
	struct npa_conf conf;            /* from npa_conf_default + npa_conf_parse */
	int device_count;                /* devices 0..device_count-1, at most NPA_MAX_DEVICES */
	/* Pinned host memory of the machine (sizes the expandable host
	 * variant's ranges); 0: 64 GiB, upstream's device size. */
	uint64_t host_capacity;
};

int npa_create(const struct npa_options *opt, struct npa **out);
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
int npa_device_count(const struct npa *a);

/*
 * Allocate `size` bytes on `device` for use on `stream` (NULL: default).
 * size 0 gives *ptr = NULL and no stats. On OOM returns -ENOMEM with the
 * upstream message in err ("NPU out of memory. Tried to allocate ...").
 */
int npa_malloc(struct npa *a, int device, size_t size, aclrtStream stream,
	       void **ptr, char *err, size_t errlen);
/* Free a pointer from npa_malloc. Unknown: -EINVAL, "invalid device pointer: 0x..". */
int npa_free(struct npa *a, void *ptr, char *err, size_t errlen);
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

/* The last out-of-memory message of `device` ("" if none yet); 0 or -ENODEV. */
int npa_last_oom(struct npa *a, int device, char *buf, size_t len);

/*
 * upstream _record_memory_history(enabled, max_entries=..., device=...):
 * enabled "all" keeps the last max_entries trace entries of each device in
 * a ring, "state" keeps 1 (upstream: blocks' context only), NULL turns
 * recording off and clears the ring. device -1: every device. Off by
 * default. -EINVAL for another `enabled` or max_entries 0, -ENOMEM.
 */
int npa_record_memory_history(struct npa *a, int device, const char *enabled,
			      size_t max_entries);

/*
 * Where the calling thread's allocator calls come from, until the next
 * call of this: the memory history keeps this frame with each entry it
 * records and with each block and segment made meanwhile (upstream gathers
 * a Python stack per call; here the caller names one frame: a trace file
 * and line, a tensor file, a control file). *o stays the caller's and may
 * change between calls; its filename need live only until each call
 * returns (the history keeps a copy), its name must live as long as the
 * allocator (a string literal). NULL, or a NULL filename: no frame, and a
 * free or a segment's release shows the frame of the allocation instead,
 * as upstream does. Costs nothing while no history is recorded.
 */
void npa_set_origin(const struct npa_frame *o);
const struct npa_frame *npa_origin(void);

struct npa_history_state {
	const char *enabled;   /* "all", "state" or NULL (off) */
	size_t max_entries;    /* ring size in force (0 when off) */
	uint64_t recorded;     /* entries recorded since turned on */
	size_t kept;           /* entries in the ring now */
};
int npa_history_state(struct npa *a, int device, struct npa_history_state *out);
/* Entries recorded so far on `device`, read without the lock (for waiting). */
uint64_t npa_history_recorded(struct npa *a, int device);
/*
 * Copy the device's trace entries numbered `since` and later (those still
 * in the ring: entries overwritten are skipped) under the lock; format the
 * copy without it. 0, -ENODEV or -ENOMEM; release with npa_trace_release.
 */
int npa_history_copy(struct npa *a, int device, uint64_t since, struct npa_trace *out);

/*
 * Segment events of the history (segment_alloc/free/map/unmap only), kept
 * for callers that want no more than these.
 */
enum npa_segment_action {
	NPA_SEG_EV_ALLOC,  /* "segment_alloc": a device malloc */
	NPA_SEG_EV_FREE,   /* "segment_free" */
	NPA_SEG_EV_MAP,    /* "segment_map": pages mapped into an expandable segment */
	NPA_SEG_EV_UNMAP,  /* "segment_unmap" */
};

struct npa_segment_event {
	enum npa_segment_action action;
	uint64_t address;
	uint64_t size;
	uint64_t stream;   /* stream number, 0 for the default stream */
};

const char *npa_segment_action_name(enum npa_segment_action action);
/* Copy up to `max` of the device's latest segment events from the history
 * ring (nothing unless recording is on), oldest first; returns how many
 * were copied, or -ENODEV / -ENOMEM. */
int npa_segment_events(struct npa *a, int device, struct npa_segment_event *out,
		       size_t max);

/*
 * Check every invariant (stats recomputed from the blocks equal the
 * counters, segments do not overlap, pools hold exactly the free blocks).
 * Returns 0 or -EFAULT with the first broken rule in err.
 */
int npa_check(struct npa *a, int device, char *err, size_t errlen);

#endif /* NPUMEMFS_CACHING_ALLOCATOR_H */
