/*
 * flavor.c - the two upstreams the allocator can imitate.
 *
 * npu: torch_npu's NPUCachingAllocator (torch_npu/csrc/core/npu/
 * NPUCachingAllocator.cpp, torch_npu/npu/memory.py). cuda: current PyTorch's
 * CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp,
 * torch/cuda/memory.py).
 */
#include <string.h>

#include "flavor.h"

const struct npa_flavor npa_flavor_npu = {
	.name = "npu",
	.plugin_init_gets_current_device = true,
	/* v2.6.0 MemPool::MemPool only takes an id (NPUCachingAllocator.cpp). */
	.mempool_is_only_an_id = true,
	.upstream = NPA_UPSTREAM_TORCH_NPU,
	/* AddPadSize(): every request grows by 32 bytes before rounding. */
	.pad = 32,
	.oom_rejections_stat = true,
	.pending_ignores_stream_uses = true,
	.record_stream_on_alloc_stream = true,
	.oom_style = NPA_OOM_NPU,
	.conf_dialect = NPA_CONF_DIALECT_TORCH_NPU,
	.release_syncs_device = true,
	/* NPUCachingAllocator.cpp is_capture_context(), try_mempool_fallback. */
	.any_scope_is_capture = false,
	.mempool_fallback_last = false,
	/* NPUStream.cpp makeStreamId(StreamIdType::NORMAL = 3, i): (3 << 5) | i,
	 * on DeviceType::PrivateUse1 (20). */
	.c10_device_type = 20,
	.pool_index_shift = 0,
	.pool_id_bits = 3u << 5,
};

const struct npa_flavor npa_flavor_cuda = {
	.name = "cuda",
	/* MemPool::MemPool calls createOrIncrefPool on the current allocator
	 * (ATen/cuda/MemPool.cpp), which CUDAPluggableAllocator leaves to
	 * CUDAAllocator's refusal. */
	.mempool_is_only_an_id = false,
	.upstream = NPA_UPSTREAM_PYTORCH,
	.pad = 0,
	.oom_rejections_stat = false,
	.pending_ignores_stream_uses = false,
	.record_stream_on_alloc_stream = false,
	.oom_style = NPA_OOM_CUDA,
	.conf_dialect = NPA_CONF_DIALECT_PYTORCH,
	.release_syncs_device = false,
	/* CUDACachingAllocator.cpp captures_underway; "try to use existing
	 * mempools as a last resort". */
	.any_scope_is_capture = true,
	.mempool_fallback_last = true,
	/* CUDAStream.cpp makeStreamId(StreamIdType(1), i): i << 5 | 1 << 1 | 1,
	 * on DeviceType::CUDA (1). */
	.c10_device_type = 1,
	.pool_index_shift = 5,
	.pool_id_bits = 3,
};

const struct npa_flavor *npa_flavor_find(const char *name)
{
	if (name == NULL)
		return NULL;
	if (strcmp(name, npa_flavor_npu.name) == 0)
		return &npa_flavor_npu;
	if (strcmp(name, npa_flavor_cuda.name) == 0)
		return &npa_flavor_cuda;
	return NULL;
}
