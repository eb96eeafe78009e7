/*
 * graph_context.c - what torch.npu.graph's context does around a capture
 * (torch_npu/npu/graphs.py): on entry the device is synchronized and both
 * caches emptied, the host one after the device one since "[ACLGRAPH]
 * support pin memory", so that the capture starts from blocks no earlier
 * work still owns. NPUGraph.capture_begin alone does none of this.
 */
#include <errno.h>
#include <stdio.h>

#include "alloc/acl/acl_adapter.h"
#include "alloc/caching/caching_allocator.h"
#include "graph.h"
#include "alloc/host/host_allocator.h"

/* torch.npu.synchronize() raises what the runtime returns, e.g. while
 * another stream of the device captures. */
static int synchronize(int device, char *err, size_t errlen)
{
	int32_t saved = 0;
	aclError e = aclrtGetDevice(&saved);
	char name[64];

	if (e == ACL_SUCCESS && (e = aclrtSetDevice(device)) == ACL_SUCCESS) {
		e = aclrtSynchronizeDevice();
		aclrtSetDevice(saved);
	}
	if (e == ACL_SUCCESS)
		return 0;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "torch.npu.synchronize(): aclrtSynchronizeDevice: %s",
			 acl_error_name(e, name, sizeof(name)));
	return e == ACL_ERROR_RT_STREAM_CAPTURED ? -EBUSY : -EIO;
}

int npa_graph_enter(struct npa_graph *g, int device, aclrtStream stream,
		    struct npa_pool_id pool, aclmdlRICaptureMode mode, char *err,
		    size_t errlen)
{
	struct npa *a = npa_graph_allocator(g);
	struct allocator current = npa_graph_pools(g);
	int rc = synchronize(device, err, errlen);

	/* torch.npu.empty_cache(): whichever allocator serves allocations. */
	if (rc == 0 && (rc = current.ops->empty_cache(current.self, -1)) != 0 && err != NULL &&
	    errlen > 0)
		snprintf(err, errlen, "torch.npu.empty_cache(): %s", npa_control_strerror(rc));
	if (rc != 0)
		return rc;
	npa_host_empty_cache(npa_host_of(a));
	return npa_graph_capture_begin(g, device, stream, pool, mode, err, errlen);
}
