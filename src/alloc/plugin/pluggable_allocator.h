/*
 * pluggable_allocator.h - a loaded plug-in made into an allocator with stats.
 *
 * Upstream's pluggable allocator keeps only ptr -> (size, device, stream)
 * and answers every stats call with "does not yet support". This wrapper
 * keeps the same map and, from it, the memory_stats() counters and a
 * snapshot, so every view works for a plug-in. A plug-in has no visible
 * cache: each allocation counts as one segment of exactly its size, so
 * reserved equals allocated and the inactive_split counters, retries,
 * oversize counters and max_split_size stay 0.
 *
 * It also guards the daemon against a plug-in's mistakes: a pointer that
 * is not NPL_ALIGNMENT-aligned, or overlaps a live allocation, is given
 * back to the plug-in and the allocation fails; NULL is an OOM; a free of
 * a pointer it did not hand out never reaches the plug-in.
 *
 * Thread-safe. Plug-in functions are never called with the lock held, so
 * a slow plug-in never holds up a stats reader.
 */
#ifndef NPUMEMFS_PLUGGABLE_ALLOCATOR_H
#define NPUMEMFS_PLUGGABLE_ALLOCATOR_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/allocator.h"
#include "plugin_loader.h"
#include "alloc/core/snapshot.h"
#include "alloc/core/stats.h"

/* What the caching allocator guarantees (kMinBlockSize), so callers may too. */
#define NPL_ALIGNMENT 512
/* upstream kSmallSize: requests up to 1 MiB count in small_pool. */
#define NPL_SMALL_SIZE (1u << 20)

struct npl;

/* Counters of the wrapper itself, beyond memory_stats(). */
struct npl_guard_counts {
	uint64_t refused_frees;     /* foreign or double frees */
	uint64_t refused_unaligned; /* allocations given back: unaligned */
	uint64_t refused_overlap;   /* allocations refused: overlapping a live block,
				     * its own or (not given back) another allocator's */
	uint64_t refused_not_device; /* allocations given back: not live device
				      * memory of the device (freed, host, unknown) */
	uint64_t null_returns;      /* allocations the plug-in could not make */
	uint64_t live_blocks;       /* all devices */
	uint64_t live_bytes;
	uint64_t lent_blocks;       /* of those: segments of MemPools (npl_lend) */
	uint64_t lent_bytes;
};

/*
 * What torch_npu warns about (TORCH_NPU_WARN, a UserWarning) where a hook
 * is absent or a call is not supported; the text is upstream's, verbatim.
 */
enum npl_warning {
	NPL_WARN_GET_DEVICE_STATS,   /* memory_stats without get_device_stats */
	NPL_WARN_RESET_PEAK_STATUS,  /* reset_peak_stats without reset_peak_status */
	NPL_WARN_RESET_ACCUMULATED,  /* reset_accumulated_stats: never supported */
	NPL_WARN_SNAPSHOT,           /* memory_snapshot: never supported */
	NPL_WARN_BEGIN_POOL,         /* a private pool's begin without begin_allocate_to_pool */
	NPL_WARN_END_POOL,           /* its end without end_allocate_to_pool */
	NPL_WARN_RELEASE_POOL,       /* its release without release_pool */
	NPL_NWARNINGS
};
const char *npl_warning_text(enum npl_warning w);

/* Wrap `p` (the wrapper owns it from now on, even on error). */
int npl_create(struct plugin *p, int device_count, struct npl **out);

/*
 * The wrapper as an allocator (alloc/allocator.h), self a struct npl:
 * - malloc: size 0 gives NULL; -ENOMEM when the plug-in returns NULL,
 *   -EFAULT when it returns a bad pointer, -EINVAL for a bad device;
 * - free: -EINVAL "Trying to free a pointer not allocated here" for a
 *   foreign pointer, which never reaches the plug-in;
 * - record_stream, erase_stream: the hooks, for a live pointer (nothing
 *   without one, as upstream);
 * - empty_cache: the reset hook, once whatever the device;
 * - reset_peak: the wrapper's peaks and the reset_peak_status hook per
 *   device (NPL_WARN_RESET_PEAK_STATUS without one); reset_accumulated:
 *   the wrapper's totals (upstream only warns);
 * - get_stats: the get_device_stats hook's numbers, or without one the
 *   wrapper's bookkeeping (NPL_WARN_GET_DEVICE_STATS once), -EFAULT when
 *   the hook faulted and retired the plug-in;
 * - snapshot: one segment with one active block per live allocation
 *   (NPL_WARN_SNAPSHOT once: upstream has no snapshot of a plug-in);
 * - ranges: the live blocks; the pool hooks: a no-op without them;
 * - no graphs, MemPools or host allocator of its own.
 * Its functions are called as npl_ops.malloc(a, ...) where a struct npl
 * is at hand, or through npl_allocator(a).
 */
extern const struct allocator_ops npl_ops;
struct allocator npl_allocator(struct npl *p);
/*
 * Whether [ptr, ptr + size) on `device` is memory of another allocator
 * (the caller's view of every allocator but this one). Called without the
 * wrapper's lock held.
 */
typedef bool (*npl_foreign_fn)(void *arg, const struct npl *self, int device,
			       const void *ptr, size_t size, char *owner, size_t ownerlen);
void npl_set_foreign_check(struct npl *a, npl_foreign_fn fn, void *arg);
/*
 * Told each warning once per plug-in, as Python shows a warning once per
 * place (outside the wrapper's lock). May be left unset.
 */
typedef void (*npl_warn_fn)(void *arg, const struct npl *self, const char *text);
void npl_set_warn(struct npl *a, npl_warn_fn fn, void *arg);
/* An eventfd written when the plug-in's host ends while no call is in it
 * (the plug-in is then retired, as after a fault). */
void npl_set_fault_notify(struct npl *a, int fd);
/* Whether a fault retired the plug-in; what happened in buf. */
bool npl_fault(struct npl *a, char *buf, size_t len);
/* Whether a live block of this plug-in shares a byte with [ptr, ptr + size). */
bool npl_range_live(struct npl *a, const void *ptr, size_t size);
/*
 * Give every live block back to the plug-in, then unload it. Returns the
 * number of blocks that were still live.
 */
size_t npl_destroy(struct npl *a);
const struct plugin *npl_plugin(const struct npl *a);

/*
 * npl_ops.malloc for a segment of the caching allocator's MemPool: the pointer
 * is checked with `foreign` in place of the wrapper's own check, and the
 * block is listed as lent (the caching allocator lists it as its segment).
 * npl_ops.free gives it back.
 */
int npl_lend(struct npl *a, int device, size_t size, aclrtStream stream, void **ptr,
	     npl_foreign_fn foreign, void *arg, char *err, size_t errlen);
/* A lent block refused by the borrower: forgotten, not given back to the
 * plug-in (counted in refused_overlap). */
void npl_forget(struct npl *a, void *ptr);
/* base_alloc hook (the pointer itself, and its size, without one). */
void *npl_base_allocation(struct npl *a, void *ptr, size_t *size);

/* The wrapper's own bookkeeping, whatever hooks the plug-in has. */
int npl_get_own_stats(struct npl *a, int device, struct npa_stats *out);
/* A DeviceStats of the plug-in ABI in the schema's struct. */
void npl_stats_from_abi(struct npa_stats *out, const struct npumemfs_device_stats *in);
void npl_guard_counts(struct npl *a, struct npl_guard_counts *out);

#endif /* NPUMEMFS_PLUGGABLE_ALLOCATOR_H */
