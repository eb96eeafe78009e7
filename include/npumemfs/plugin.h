/*
 * plugin.h - the allocator plug-in ABI.
 *
 * A plug-in is a shared object exporting two functions with torch_npu's
 * NPUPluggableAllocator signatures, plus optional hooks that mirror
 * CUDAPluggableAllocator's setters. Plug-in authors need only the typedefs
 * below (or none: a plug-in written for torch_npu builds unchanged against
 * <acl/acl_rt.h> and libnpusim).
 *
 * Spec line (what is written to ctl/allocator):
 *     PATH ALLOC_FN FREE_FN [HOOK=FN ...]
 * HOOK is init, init_checked, reset, memory_fraction, base_alloc,
 * record_stream, erase_stream, get_device_stats, reset_peak_status,
 * begin_allocate_to_pool, end_allocate_to_pool or release_pool; each names
 * a function with the typedef of the same name: torch_npu's
 * NPUPluggableAllocator setters (set_init_fn, set_reset_fn, ...,
 * set_erase_stream_fn, set_get_device_stats_fn, set_reset_peak_status_fn).
 *
 * In C++ this header also gives the names torch_npu's plug-ins are written
 * with (c10::DeviceIndex, c10_npu::NPUCachingAllocator::DeviceStats), so
 * that their functions compile unchanged once the torch includes are
 * replaced by this one; define NPUMEMFS_NO_TORCH_NAMES to leave them out.
 */
#ifndef NPUMEMFS_PLUGIN_H
#define NPUMEMFS_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <acl/acl_rt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The two required functions (torch_npu's documented example signatures). */
typedef void *(*npumemfs_alloc_fn)(ssize_t size, int device, aclrtStream stream);
typedef void (*npumemfs_free_fn)(void *ptr, ssize_t size, int device,
				 aclrtStream stream);

/* upstream MempoolId_t: std::pair<unsigned long long, unsigned long long>. */
struct npumemfs_mempool_id {
	unsigned long long first;
	unsigned long long second;
};
/* C stand-in for upstream's std::function<bool(stream)> pool filter. */
typedef bool (*npumemfs_stream_filter)(aclrtStream stream, void *arg);

/*
 * torch_npu's DeviceStats (c10::CachingDeviceAllocator::DeviceStats of the
 * torch it builds with, the struct memory_stats() is read from), field for
 * field: what a get_device_stats hook returns, by value. In C++ every field
 * starts at 0, as upstream's do, so `DeviceStats stats; return stats;`
 * returns zeros; the layout is the same in both languages.
 */
#ifdef __cplusplus
#define NPUMEMFS_ZERO_ = 0
#else
#define NPUMEMFS_ZERO_
#endif
struct npumemfs_stat {
	int64_t current NPUMEMFS_ZERO_;
	int64_t peak NPUMEMFS_ZERO_;
	int64_t allocated NPUMEMFS_ZERO_;
	int64_t freed NPUMEMFS_ZERO_;
};

/* StatArray: indexed by upstream's StatType (all, small_pool, large_pool). */
#define NPUMEMFS_STAT_TYPES 3

struct npumemfs_device_stats {
	struct npumemfs_stat allocation[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat segment[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat active[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat inactive_split[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat allocated_bytes[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat reserved_bytes[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat active_bytes[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat inactive_split_bytes[NPUMEMFS_STAT_TYPES];
	struct npumemfs_stat requested_bytes[NPUMEMFS_STAT_TYPES];
	int64_t num_alloc_retries NPUMEMFS_ZERO_;
	int64_t num_ooms NPUMEMFS_ZERO_;
	struct npumemfs_stat oversize_allocations;
	struct npumemfs_stat oversize_segments;
	int64_t num_sync_all_streams NPUMEMFS_ZERO_;
	int64_t num_device_alloc NPUMEMFS_ZERO_;
	int64_t num_device_free NPUMEMFS_ZERO_;
	int64_t num_oom_rejections NPUMEMFS_ZERO_;
	int64_t max_split_size NPUMEMFS_ZERO_;
};
#undef NPUMEMFS_ZERO_

/* Optional hooks. */
typedef void (*npumemfs_init_fn)(int device_count);
/* Extension: like init, but a non-zero return refuses the load. */
typedef int (*npumemfs_init_checked_fn)(int device_count);
/*
 * Called by empty_cache. torch_npu passes check_error; a CUDA-style
 * `void reset(void)` works as well, the argument being ignored.
 */
typedef void (*npumemfs_reset_fn)(bool check_error);
typedef void (*npumemfs_memory_fraction_fn)(double fraction, int device);
typedef void *(*npumemfs_base_alloc_fn)(void *ptr, size_t *size);
typedef void (*npumemfs_record_stream_fn)(void *ptr, aclrtStream stream);
/* torch_npu.erase_stream(tensor, stream): the block is no longer used on
 * `stream`. Like record_stream, the stream comes as its aclrtStream. */
typedef void (*npumemfs_erase_stream_fn)(void *ptr, aclrtStream stream);
/* memory_stats(device): the plug-in's own numbers (c10::DeviceIndex is an
 * int8_t). Without it the wrapper's bookkeeping is shown. */
typedef struct npumemfs_device_stats (*npumemfs_get_device_stats_fn)(int8_t device);
/* reset_peak_memory_stats(device). */
typedef void (*npumemfs_reset_peak_status_fn)(int8_t device);
typedef void (*npumemfs_begin_allocate_to_pool_fn)(
	int device, struct npumemfs_mempool_id pool,
	npumemfs_stream_filter filter, void *filter_arg);
typedef void (*npumemfs_end_allocate_to_pool_fn)(int device,
						 struct npumemfs_mempool_id pool);
typedef void (*npumemfs_release_pool_fn)(int device,
					 struct npumemfs_mempool_id pool);

#ifdef __cplusplus
}

#ifndef NPUMEMFS_NO_TORCH_NAMES
namespace c10 {
typedef int8_t DeviceIndex;
}
namespace c10_npu {
namespace NPUCachingAllocator {
typedef ::npumemfs_stat Stat;
typedef ::npumemfs_device_stats DeviceStats;
}
}
#endif
#endif

#endif /* NPUMEMFS_PLUGIN_H */
