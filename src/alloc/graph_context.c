/*
 * graph_context.c - what torch.npu.graph's context does around a capture
 * (torch_npu/npu/graphs.py): on entry the device is synchronized and both
 * caches emptied, the host one after the device one since "[ACLGRAPH]
 * support pin memory", so that the capture starts from blocks no earlier
 * work still owns.
 */
#include "caching_allocator.h"
#include "graph.h"
#include "host_allocator.h"

int npa_graph_enter(struct npa_graph *g, int device, aclrtStream stream,
		    struct npa_pool_id pool, aclmdlRICaptureMode mode, char *err,
		    size_t errlen)
{
	struct npa *a = npa_graph_allocator(g);
	int32_t saved = 0;

	if (aclrtGetDevice(&saved) == ACL_SUCCESS && aclrtSetDevice(device) == ACL_SUCCESS) {
		aclrtSynchronizeDevice();
		aclrtSetDevice(saved);
	}
	npa_empty_cache(a, -1);
	npa_host_empty_cache(npa_host_of(a));
	return npa_graph_capture_begin(g, device, stream, pool, mode, err, errlen);
}
