/*
 * graph.h - NPUGraph (CUDAGraph in flavor cuda): a capture on a stream
 * whose allocations go to a private pool, replayed later without any
 * allocator activity (torch_npu NPUGraph.cpp).
 *
 * capture_begin routes the capturing stream's allocations to the graph's
 * pool (a pool given, or a new (uuid++, 0) one) and starts the runtime's
 * capture; capture_end stops both; reset gives the pool's use back, but
 * only after a successful capture: in flavor npu a capture whose end
 * failed keeps its pool for the process's life, as torch_npu does; flavor
 * cuda gives it back (PyTorch #190348).
 */
#ifndef NPUMEMFS_GRAPH_H
#define NPUMEMFS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

#include "alloc/allocator.h"
#include "alloc/device/mempool.h"

struct npa;
struct npa_graph;

enum npa_graph_state {
	NPA_GRAPH_EMPTY,      /* created, or reset */
	NPA_GRAPH_CAPTURING,
	NPA_GRAPH_CAPTURED,   /* has_graph_exec_: replayable */
	NPA_GRAPH_FAILED,     /* its capture did not end well */
};

struct npa_graph_info {
	enum npa_graph_state state;
	int device;
	aclrtStream stream;       /* of the capture */
	struct npa_pool_id pool;  /* (0, 0) before the first capture */
	uint32_t capture_id;      /* the runtime's, 0 when none */
	uint64_t replays;
};

/*
 * A graph of caching allocator `a` (its pool ids, capture marks and host
 * allocator) whose device pool calls go to `pools`, the allocator that
 * serves allocations: `a` itself, or the switch, whose current plug-in
 * then gets begin_allocate_to_pool, end_allocate_to_pool and release_pool
 * as upstream's NPUGraph gives them to NPUPluggableAllocator.
 */
int npa_graph_new(struct npa *a, struct allocator pools, struct npa_graph **out);
/* The destructor: reset, then free. */
void npa_graph_free(struct npa_graph *g);

/* pool (0, 0): a pool of the graph's own. 0 or -errno with upstream's text. */
int npa_graph_capture_begin(struct npa_graph *g, int device, aclrtStream stream,
			    struct npa_pool_id pool, aclmdlRICaptureMode mode,
			    char *err, size_t errlen);
/* torch.npu.graph's capture_error_mode by name ("global", "thread_local",
 * "relaxed"); -EINVAL with Graph.cpp's text otherwise. */
int npa_graph_parse_mode(const char *name, aclmdlRICaptureMode *mode, char *err,
			 size_t errlen);
int npa_graph_capture_end(struct npa_graph *g, aclrtStream stream, char *err,
			  size_t errlen);
int npa_graph_replay(struct npa_graph *g, aclrtStream stream, char *err, size_t errlen);
int npa_graph_reset(struct npa_graph *g);
/* The pool another capture can share. -EINVAL before a successful capture. */
int npa_graph_pool(const struct npa_graph *g, struct npa_pool_id *out, char *err,
		   size_t errlen);
void npa_graph_get_info(const struct npa_graph *g, struct npa_graph_info *out);
struct npa *npa_graph_allocator(const struct npa_graph *g);
/* The allocator its pools are asked of (npa_graph_new). */
struct allocator npa_graph_pools(const struct npa_graph *g);
const char *npa_graph_state_name(enum npa_graph_state state);

/*
 * torch.npu.graph(g, pool, stream).__enter__ (graphs.py): synchronize,
 * empty_cache(), host_empty_cache() (SEED), then capture_begin.
 */
int npa_graph_enter(struct npa_graph *g, int device, aclrtStream stream,
		    struct npa_pool_id pool, aclmdlRICaptureMode mode, char *err,
		    size_t errlen);

#endif /* NPUMEMFS_GRAPH_H */
