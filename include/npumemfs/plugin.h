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
 * record_stream, begin_allocate_to_pool, end_allocate_to_pool or
 * release_pool; each names a function with the typedef of the same name.
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
typedef void (*npumemfs_begin_allocate_to_pool_fn)(
	int device, struct npumemfs_mempool_id pool,
	npumemfs_stream_filter filter, void *filter_arg);
typedef void (*npumemfs_end_allocate_to_pool_fn)(int device,
						 struct npumemfs_mempool_id pool);
typedef void (*npumemfs_release_pool_fn)(int device,
					 struct npumemfs_mempool_id pool);

#ifdef __cplusplus
}
#endif

#endif /* NPUMEMFS_PLUGIN_H */
