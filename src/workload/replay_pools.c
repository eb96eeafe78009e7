/*
 * replay_pools.c - graph and mempool events: a trace's dense graph and
 * pool indexes mapped onto graph_driver.h, which makes the caching
 * allocator's NPUGraph and MemPool calls in the order torch_npu makes
 * them, so that a refusal is upstream's, with its text.
 *
 * With a plug-in current (the allocator switch) a capture's and a
 * use_mem_pool's pool calls are the plug-in's hooks; a MemPool is what
 * the flavor's upstream makes of MemPool() then (graph_driver.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_impl.h"

int wl_replay_pools_grow(struct wl_replay *r)
{
	const struct wl_trace *t = r->t;
	int rc = wl_replay_grow(&r->graphs, &r->graph_cap, t->ngraphs, sizeof(*r->graphs));

	return rc ? rc : wl_replay_grow(&r->pools, &r->pool_cap, t->npools, sizeof(*r->pools));
}

/* 0, or rc with "TRACE:LINE: <what the allocator said>". */
static int said(struct wl_replay *r, const struct wl_event *ev, int rc, char *err,
		size_t errlen)
{
	return rc ? wl_replay_fail(r, ev, rc, err, errlen, r->msg) : 0;
}

/* The caching allocator: a graph's and a MemPool's pool ids and host
 * allocator are the built-in one's whoever allocates (their pools are
 * asked of the replay's allocator, a plug-in's hooks when one is
 * current). A replay target without one has no pools. */
static int need_caching(struct wl_replay *r, const struct wl_event *ev, char *err,
			size_t errlen)
{
	struct npa *a = r->a.ops->builtin(r->a.self);

	if (a != NULL) {
		r->npa = a;
		return 0;
	}
	snprintf(r->msg, sizeof(r->msg), "%s: memory pools belong to the caching "
		 "allocator, and the replay has none", wl_op_name(ev->op));
	return wl_replay_fail(r, ev, -ENOTSUP, err, errlen, r->msg);
}

/* pool=graph:G is G.pool(), which upstream refuses before G's capture
 * has ended; pool=P the handle kept as P. The parser has checked G's
 * device. G is the capturing graph itself when the replay has not made it
 * yet: made now, as NPUGraph() exists before its pool() is asked. */
static int capture_pool(struct wl_replay *r, const struct wl_event *ev,
			struct npa_pool_id *id)
{
	struct npa_graph **other = &r->graphs[ev->pool];
	int rc;

	if (!(ev->flags & WL_POOL_OF_GRAPH)) {
		*id = wl_pool_handle_id(r->npa, &r->pools[ev->pool].handle);
		return 0;
	}
	if (*other == NULL && (rc = npa_graph_new(r->npa, r->a, other)) != 0) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return rc;
	}
	return wl_graph_pool_of(*other, "named by pool=graph:", ev->device, id, r->msg,
				sizeof(r->msg));
}

static int capture_begin(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen)
{
	struct wl_capture c = { .device = ev->device,
				.mode = (aclmdlRICaptureMode)(ev->flags & ~WL_POOL_OF_GRAPH) };
	int rc = wl_replay_stream(r, ev, ev->device, ev->stream, &c.stream, err, errlen);

	if (rc)
		return rc;
	if (ev->pool != WL_NO_POOL && (rc = capture_pool(r, ev, &c.pool)) != 0)
		return said(r, ev, rc, err, errlen);
	aclrtSetDevice(ev->device);
	rc = wl_graph_capture_begin(r->npa, r->a, &r->graphs[ev->slot], &c, r->msg,
				    sizeof(r->msg));
	return said(r, ev, rc, err, errlen);
}

/* A graph the replay made: the parser saw its capture_begin first, and a
 * replay stops at a capture_begin that fails before making it. */
static struct npa_graph *graph_of(struct wl_replay *r, const struct wl_event *ev)
{
	return r->graphs[ev->slot];
}

/* A call on the graph and a stream: capture_end's and replay's. */
static int on_stream(struct wl_replay *r, const struct wl_event *ev, char *err,
		     size_t errlen,
		     int (*call)(struct npa_graph *g, aclrtStream s, char *err, size_t errlen))
{
	aclrtStream s;
	int rc = wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen);

	if (rc)
		return rc;
	aclrtSetDevice(ev->device);
	rc = call(graph_of(r, ev), s, r->msg, sizeof(r->msg));
	return said(r, ev, rc, err, errlen);
}

static int capture_end(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	return on_stream(r, ev, err, errlen, npa_graph_capture_end);
}

static int graph_replay(struct wl_replay *r, const struct wl_event *ev, char *err,
			size_t errlen)
{
	return on_stream(r, ev, err, errlen, npa_graph_replay);
}

static int graph_reset(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	(void)err;
	(void)errlen;
	return npa_graph_reset(graph_of(r, ev));
}

/* A trace's pool name is one namespace with pool=P: mempool_create M takes
 * M's handle, a later pool=M shares it. */
static int mempool_create(struct wl_replay *r, const struct wl_event *ev, char *err,
			  size_t errlen)
{
	int rc;

	r->msg[0] = '\0';
	rc = wl_mempool_create(r->npa, r->a, &r->pools[ev->pool], ev->device,
			       ev->flags & WL_POOL_USE_ON_OOM, ev->flags & WL_POOL_NO_SPLIT, NULL,
			       r->msg, sizeof(r->msg));
	if (rc && r->msg[0] == '\0')
		snprintf(r->msg, sizeof(r->msg), "MemPool: %s", strerror(-rc));
	return said(r, ev, rc, err, errlen);
}

/* A refused entry stops the replay, as it stops the program: the use
 * upstream takes before refusing stays taken. */
static int mempool_begin(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen)
{
	aclrtStream s;
	int rc = wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen);

	if (rc)
		return rc;
	rc = wl_mempool_begin(r->npa, &r->pools[ev->pool], s, ev->stream,
			      WL_REFUSAL_AS_UPSTREAM, r->msg, sizeof(r->msg));
	return said(r, ev, rc, err, errlen);
}

/* A call on the event's MemPool: mempool_end's and mempool_release's. */
static int on_mempool(struct wl_replay *r, const struct wl_event *ev, char *err,
		      size_t errlen,
		      int (*call)(struct npa *a, struct wl_mempool *m, char *err, size_t errlen))
{
	int rc = call(r->npa, &r->pools[ev->pool], r->msg, sizeof(r->msg));

	return said(r, ev, rc, err, errlen);
}

static int mempool_end(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	return on_mempool(r, ev, err, errlen, wl_mempool_end);
}

static int mempool_release(struct wl_replay *r, const struct wl_event *ev, char *err,
			   size_t errlen)
{
	return on_mempool(r, ev, err, errlen, wl_mempool_release);
}

static int (*const pool_ops[])(struct wl_replay *r, const struct wl_event *ev,
			       char *err, size_t errlen) = {
	[WL_CAPTURE_BEGIN - WL_CAPTURE_BEGIN] = capture_begin,
	[WL_CAPTURE_END - WL_CAPTURE_BEGIN] = capture_end,
	[WL_GRAPH_REPLAY - WL_CAPTURE_BEGIN] = graph_replay,
	[WL_GRAPH_RESET - WL_CAPTURE_BEGIN] = graph_reset,
	[WL_MEMPOOL_CREATE - WL_CAPTURE_BEGIN] = mempool_create,
	[WL_MEMPOOL_BEGIN - WL_CAPTURE_BEGIN] = mempool_begin,
	[WL_MEMPOOL_END - WL_CAPTURE_BEGIN] = mempool_end,
	[WL_MEMPOOL_RELEASE - WL_CAPTURE_BEGIN] = mempool_release,
};

int wl_replay_pool_event(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen)
{
	int rc = need_caching(r, ev, err, errlen);

	return rc ? rc : pool_ops[ev->op - WL_CAPTURE_BEGIN](r, ev, err, errlen);
}

static void free_graphs(struct wl_replay *r)
{
	for (uint32_t i = 0; i < r->graph_cap; i++) {
		npa_graph_free(r->graphs[i]);
		r->graphs[i] = NULL;
	}
}

/* As the objects would go at the end of a program: graphs, then mempools
 * (a use_mem_pool still open exits first). */
void wl_replay_pools_release(struct wl_replay *r)
{
	free_graphs(r);
	for (uint32_t i = 0; i < r->pool_cap; i++)
		wl_mempool_drop(r->npa, &r->pools[i], r->msg, sizeof(r->msg));
}

void wl_replay_pools_free(struct wl_replay *r)
{
	if (r->graphs != NULL)
		free_graphs(r);
	free(r->graphs);
	free(r->pools);
}
