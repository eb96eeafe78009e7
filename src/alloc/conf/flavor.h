/*
 * flavor.h - which upstream the allocator imitates.
 *
 * One allocator, two upstreams: "npu" is torch_npu's NPUCachingAllocator,
 * "cuda" is current PyTorch's CUDACachingAllocator. A flavor is this table
 * of the allocator's parameters, chosen at start-up; no code path forks on
 * the flavor's name. The reports' texts (memory_summary's labels and
 * units) live with the reports, which choose them by `upstream`.
 */
#ifndef NPUMEMFS_FLAVOR_H
#define NPUMEMFS_FLAVOR_H

#include <stdbool.h>
#include <stddef.h>

/* The upstream a flavor imitates: reports pick its texts by this. */
enum npa_upstream {
	NPA_UPSTREAM_TORCH_NPU,
	NPA_UPSTREAM_PYTORCH,
};

enum npa_oom_style {
	NPA_OOM_NPU,  /* "NPU out of memory. Tried to allocate ... (NPU 0; ...)" */
	NPA_OOM_CUDA, /* "CUDA out of memory. Tried to allocate ... GPU 0 has ..." */
};

/* Which upstream parser reads PYTORCH_*_ALLOC_CONF (src/alloc/alloc_conf.c). */
enum npa_conf_dialect {
	NPA_CONF_DIALECT_TORCH_NPU, /* NPUAllocatorConfig over AcceleratorAllocatorConfig */
	NPA_CONF_DIALECT_PYTORCH,   /* AcceleratorAllocatorConfig + CUDAAllocatorConfig */
};

struct npa_flavor {
	const char *name;        /* "npu" or "cuda" */
	enum npa_upstream upstream;
	size_t pad;              /* bytes added to each request before rounding */
	bool oom_rejections_stat; /* memory_stats() has num_oom_rejections */
	bool pending_ignores_stream_uses; /* npu: pending = event_count > 0 only */
	bool record_stream_on_alloc_stream; /* npu records even the allocation stream */
	enum npa_oom_style oom_style;
	enum npa_conf_dialect conf_dialect; /* keys, texts and rules of alloc_conf */
	/* npu: empty_cache, the OOM retry, GC and oversize release first
	 * synchronize the whole device (npuSynchronizeDevice). */
	bool release_syncs_device;
	/* Private pools. cuda: a pool routing allocations counts as a capture
	 * under way (captures_underway); npu: only a real capture does. */
	bool any_scope_is_capture;
	/* use_on_oom pools are tried: npu before releasing cached blocks
	 * (try_mempool_fallback), cuda as the last resort after every release. */
	bool mempool_fallback_last;
	/* The c10 stream the S-th stream a fresh process takes from the pool
	 * is (getStreamFromPool; the default stream is id 0): id
	 * ((S - 1) % 32) << pool_index_shift | pool_id_bits, hashed with
	 * device type c10_device_type (c10::Stream::hash). */
	unsigned c10_device_type;
	unsigned pool_index_shift;
	unsigned pool_id_bits;
	/* What a plug-in's init hook is given (createCustomAllocator's
	 * device_count): npu, the loading thread's current device
	 * (c10_npu::GetDevice, 0 before any is set); cuda, 0 (the file-scope
	 * device_count of CUDAPluggableAllocator.cpp, never assigned). */
	bool plugin_init_gets_current_device;
	/* What MemPool() asks of the allocator current: npu (torch_npu
	 * v2.6.0), nothing, so with a plug-in current it is only an id; cuda,
	 * createOrIncrefPool, which a plug-in does not support. */
	bool mempool_is_only_an_id;
};

/* Streams in a stream pool (kStreamsPerPool, both upstreams). */
#define NPA_STREAMS_PER_POOL 32

extern const struct npa_flavor npa_flavor_npu;
extern const struct npa_flavor npa_flavor_cuda;

/* The flavor called `name`, or NULL. */
const struct npa_flavor *npa_flavor_find(const char *name);

#endif /* NPUMEMFS_FLAVOR_H */
