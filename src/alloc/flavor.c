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
	/* AddPadSize(): every request grows by 32 bytes before rounding. */
	.pad = 32,
	.oom_rejections_stat = true,
	.pending_ignores_stream_uses = true,
	.record_stream_on_alloc_stream = true,
	.oom_style = NPA_OOM_NPU,
	.conf_dialect = NPA_CONF_DIALECT_TORCH_NPU,
	.release_syncs_device = true,
	.units = NPA_UNITS_DECIMAL_LABELS,
	.requested_memory_row = false,
	.summary_title = "PyTorch NPU memory summary, device ID ",
	.device_id_width = 18,
	.ooms_label = "NPU OOMs: ",
	.ooms_width = 13,
	.retries_label = "npuMalloc retries: ",
	.retries_width = 9,
	.reserved_memory_label = "NPU reserved memory",
	.reserved_segments_label = "NPU reserved segments",
	.oversize_segments_label = "Oversize NPU segments",
};

const struct npa_flavor npa_flavor_cuda = {
	.name = "cuda",
	.pad = 0,
	.oom_rejections_stat = false,
	.pending_ignores_stream_uses = false,
	.record_stream_on_alloc_stream = false,
	.oom_style = NPA_OOM_CUDA,
	.conf_dialect = NPA_CONF_DIALECT_PYTORCH,
	.release_syncs_device = false,
	.units = NPA_UNITS_BINARY_LABELS,
	.requested_memory_row = true,
	.summary_title = "PyTorch CUDA memory summary, device ID ",
	.device_id_width = 17,
	.ooms_label = "CUDA OOMs: ",
	.ooms_width = 12,
	.retries_label = "cudaMalloc retries: ",
	.retries_width = 8,
	.reserved_memory_label = "GPU reserved memory",
	.reserved_segments_label = "GPU reserved segments",
	.oversize_segments_label = "Oversize GPU segments",
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
