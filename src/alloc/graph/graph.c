/*
 * graph.c - NPUGraph's capture_begin, capture_end, replay and reset, with
 * their checks in upstream's order and upstream's texts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc/caching/caching_allocator.h"
#include "alloc/core/stream_id.h"
#include "graph.h"
#include "alloc/host/host_allocator.h"

struct npa_graph {
	struct npa *a;         /* pool ids, capture marks, the host allocator */
	struct allocator pools; /* whoever serves allocations: its private pools */
	int device;
	aclrtStream stream;
	struct npa_pool_id pool;
	aclmdlRI model;
	uint32_t capture_id;   /* read by the pool filter: atomic */
	bool capturing;
	bool has_exec;         /* has_graph_exec_ */
	bool failed;
	uint64_t replays;
};

/* What each upstream says, NPUGraph.cpp and CUDAGraph.cpp. */
struct graph_texts {
	const char *default_stream;
	const char *already_owns;
	const char *replay_first;
	const char *pool_first;
};

static const struct graph_texts texts[] = {
	[NPA_UPSTREAM_TORCH_NPU] = {
		"NPU graphs must be captured on a non-default stream. (However, after "
		"capture, it's ok to replay them on the default stream.)",
		"This NPUGraph instance already owns a captured graph. To capture a new "
		"graph, create a new instance.",
		"Called NPUGraph::replay without a preceding successful capture.",
		"Called NPUGraph::pool() without a preceding successful capture.",
	},
	[NPA_UPSTREAM_PYTORCH] = {
		"CUDA graphs must be captured on a non-default stream. (However, after "
		"capture, it's ok to replay them on the default stream.)",
		"This CUDAGraph instance already owns a captured graph. To capture a new "
		"graph, create a new instance.",
		"Called CUDAGraph::replay without a preceding successful capture.",
		"Called CUDAGraph::pool() without a preceding successful capture.",
	},
};

static const struct graph_texts *texts_of(const struct npa_graph *g)
{
	return &texts[npa_get_flavor(g->a)->upstream];
}

static int refuse(char *err, size_t errlen, int rc, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

/* NPU_CHECK_ERROR's message for a failed runtime call, with the runtime's
 * words for it when it has some (AclGetErrMsg). */
static int acl_failed(char *err, size_t errlen, const char *call, aclError e)
{
	const char *why = aclGetRecentErrMsg();

	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "NPU function error: %s, error code is %d%s%s", call, e,
			 why ? ": " : "", why ? why : "");
	return e == ACL_ERROR_INVALID_PARAM ? -EINVAL : -EIO;
}

int npa_graph_new(struct npa *a, struct allocator pools, struct npa_graph **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	(*out)->a = a;
	(*out)->pools = pools;
	return 0;
}

static void end_pools(struct npa_graph *g);

/* A capture still running when its graph goes is abandoned: the scope's
 * filter must not outlive the graph it names. */
static void abandon_capture(struct npa_graph *g)
{
	aclmdlRI model = NULL;

	if (!g->capturing)
		return;
	if (aclmdlRICaptureEnd(g->stream, &model) == ACL_SUCCESS)
		aclmdlRIDestroy(model);
	else
		aclGetRecentErrMsg(); /* nobody asked: not a later call's reason */
	npa_mark_capture_end(g->a, g->device);
	end_pools(g);
	g->capturing = false;
}

void npa_graph_free(struct npa_graph *g)
{
	if (g == NULL)
		return;
	abandon_capture(g);
	npa_graph_reset(g);
	free(g);
}

/* The capture a stream belongs to now (captureIdMayInitCtx), 0 if none. */
static uint32_t capture_id_of(aclrtStream stream)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI model = NULL;
	uint32_t id = 0;

	if (aclmdlRICaptureGetInfo(stream, &status, &model) != ACL_SUCCESS ||
	    status == ACL_MODEL_RI_CAPTURE_STATUS_NONE || aclmdlRIGetId(model, &id) != ACL_SUCCESS)
		return 0;
	return id;
}

/* create_allocate_filter: allocations of streams in this graph's capture. */
static bool in_this_capture(aclrtStream stream, void *arg)
{
	const struct npa_graph *g = arg;
	uint32_t mine = __atomic_load_n(&g->capture_id, __ATOMIC_ACQUIRE);

	return mine != 0 && capture_id_of(stream) == mine;
}

static int begin_capture(struct npa_graph *g, aclmdlRICaptureMode mode, char *err,
			 size_t errlen)
{
	aclmdlRICaptureStatus status;
	uint32_t id = 0;
	aclError e = aclmdlRICaptureBegin(g->stream, mode);

	if (e != ACL_SUCCESS)
		return acl_failed(err, errlen, "AclmdlRICaptureBegin(capture_stream_, capture_mode)", e);
	npa_mark_capture_begin(g->a, g->device);
	e = aclmdlRICaptureGetInfo(g->stream, &status, &g->model);
	if (e == ACL_SUCCESS)
		e = aclmdlRIGetId(g->model, &id);
	__atomic_store_n(&g->capture_id, id, __ATOMIC_RELEASE);
	g->capturing = true;
	return e == ACL_SUCCESS ? 0 : acl_failed(err, errlen, "AclmdlRICaptureGetInfo", e);
}

/* Both allocators route the capture's allocations (SEED: pinned memory in
 * the graph's pool too); a refusal of the second ends the first. */
static int begin_pools(struct npa_graph *g, char *err, size_t errlen)
{
	int rc = g->pools.ops->begin_allocate_to_pool(g->pools.self, g->device, g->pool,
						      in_this_capture, g, err, errlen);

	if (rc == 0)
		rc = npa_host_begin_allocate_to_pool(npa_host_of(g->a), g->pool, in_this_capture, g,
						     err, errlen);
	if (rc == -EBUSY || rc == -ENOMEM)
		g->pools.ops->end_allocate_to_pool(g->pools.self, g->device, g->pool, NULL, 0);
	return rc;
}

static void end_pools(struct npa_graph *g)
{
	g->pools.ops->end_allocate_to_pool(g->pools.self, g->device, g->pool, NULL, 0);
	npa_host_end_allocate_to_pool(npa_host_of(g->a), g->pool, NULL, 0);
}

int npa_graph_capture_begin(struct npa_graph *g, int device, aclrtStream stream,
			    struct npa_pool_id pool, aclmdlRICaptureMode mode,
			    char *err, size_t errlen)
{
	const char *host_refusal = npa_host_capture_refusal(npa_host_of(g->a));

	if (host_refusal != NULL)
		return refuse(err, errlen, -EINVAL, host_refusal);
	if (g->has_exec || g->capturing)
		return refuse(err, errlen, -EBUSY, texts_of(g)->already_owns);
	/* By NULL or by its own handle (stream id 0), as upstream compares
	 * with getDefaultNPUStream(). */
	if (stream == NULL || npa_stream_id(stream) == 0)
		return refuse(err, errlen, -EINVAL, texts_of(g)->default_stream);
	if (pool.first != 0 && pool.second != 0)
		return refuse(err, errlen, -EINVAL,
			      "a pool id has first or second nonzero, not both");
	g->device = device;
	g->stream = stream;
	g->pool = npa_pool_id_is_default(pool) ? npa_graph_pool_handle(g->a, false) : pool;
	g->failed = false;
	int rc = begin_pools(g, err, errlen);
	if (rc)
		return rc;
	rc = begin_capture(g, mode, err, errlen);
	/* Upstream leaves the scope routing after a failed begin; its filter
	 * names this graph, which may go away, so the scope ends here. */
	if (rc && !g->capturing)
		end_pools(g);
	return rc;
}

/* Flavor cuda gives a failed capture's pool back (PyTorch #190348). */
static void after_failed_end(struct npa_graph *g)
{
	g->failed = true;
	if (npa_get_flavor(g->a)->upstream == NPA_UPSTREAM_PYTORCH) {
		g->pools.ops->release_pool(g->pools.self, g->device, g->pool, NULL, 0);
		npa_host_release_pool(npa_host_of(g->a), g->pool, NULL, 0);
	}
}

int npa_graph_capture_end(struct npa_graph *g, aclrtStream stream, char *err,
			  size_t errlen)
{
	aclmdlRI model = NULL;

	if (g->capturing && stream != g->stream)
		return refuse(err, errlen, -EINVAL,
			      "Capture must end on the same stream it began on.");
	if (!g->capturing)
		return refuse(err, errlen, -EINVAL, "capture_end() called before capture_begin().");
	aclError e = aclmdlRICaptureEnd(g->stream, &model);
	npa_mark_capture_end(g->a, g->device);
	g->capturing = false;
	/* The pool scopes end before the end's error is looked at. */
	end_pools(g);
	if (e != ACL_SUCCESS) {
		after_failed_end(g);
		return acl_failed(err, errlen, "AclmdlRICaptureEnd(capture_stream_, &model_ri)", e);
	}
	if (model != g->model) {
		after_failed_end(g);
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "Invalid end capture model id: %p", model);
		return -EIO;
	}
	g->has_exec = true;
	return 0;
}

int npa_graph_replay(struct npa_graph *g, aclrtStream stream, char *err, size_t errlen)
{
	if (!g->has_exec)
		return refuse(err, errlen, -EINVAL, texts_of(g)->replay_first);
	aclError e = aclmdlRIExecuteAsync(g->model, stream);
	if (e != ACL_SUCCESS)
		return acl_failed(err, errlen, "AclmdlRIExecuteAsync(model_ri_, stream)", e);
	g->replays++;
	return 0;
}

/*
 * Only a graph with a successful capture gives its pool's use back; a
 * capture still running is left to end (upstream's reset does not stop it).
 */
int npa_graph_reset(struct npa_graph *g)
{
	__atomic_store_n(&g->capture_id, 0, __ATOMIC_RELEASE);
	if (!g->has_exec)
		return 0;
	g->pools.ops->release_pool(g->pools.self, g->device, g->pool, NULL, 0);
	npa_host_release_pool(npa_host_of(g->a), g->pool, NULL, 0);
	aclmdlRIDestroy(g->model);
	g->model = NULL;
	g->has_exec = false;
	return 0;
}

int npa_graph_pool(const struct npa_graph *g, struct npa_pool_id *out, char *err,
		   size_t errlen)
{
	if (!g->has_exec)
		return refuse(err, errlen, -EINVAL, texts_of(g)->pool_first);
	*out = g->pool;
	return 0;
}

struct npa *npa_graph_allocator(const struct npa_graph *g)
{
	return g->a;
}

struct allocator npa_graph_pools(const struct npa_graph *g)
{
	return g->pools;
}

void npa_graph_get_info(const struct npa_graph *g, struct npa_graph_info *out)
{
	*out = (struct npa_graph_info){
		.state = g->capturing ? NPA_GRAPH_CAPTURING
			 : g->has_exec ? NPA_GRAPH_CAPTURED
			 : g->failed ? NPA_GRAPH_FAILED
				     : NPA_GRAPH_EMPTY,
		.device = g->device,
		.stream = g->stream,
		.pool = g->pool,
		.capture_id = __atomic_load_n(&g->capture_id, __ATOMIC_ACQUIRE),
		.replays = g->replays,
	};
}

const char *npa_graph_state_name(enum npa_graph_state state)
{
	static const char *const names[] = {
		[NPA_GRAPH_EMPTY] = "empty",
		[NPA_GRAPH_CAPTURING] = "capturing",
		[NPA_GRAPH_CAPTURED] = "captured",
		[NPA_GRAPH_FAILED] = "failed",
	};

	return (unsigned)state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}
