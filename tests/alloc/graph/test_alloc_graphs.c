/*
 * NPUGraph / CUDAGraph at allocator level: captures route the capturing
 * stream's allocations to a private pool, and upstream's graph tests
 * (test_graph_two_successive, test_graph_three_successive,
 * test_graph_record_stream, test_graph_error, test_allocate_in_thread_to_pool,
 * the failed-capture leak) with their numbers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/graph/graph.h"
#include "alloc/device/mempool.h"
#include "alloc_fixture.h"

#define N8G (8 * GiB)
#define FLOATS_1000 4000 /* upstream's size = 1000 floats */

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

static bool on_stream(aclrtStream stream, void *arg)
{
	return stream == arg;
}

static struct npa_graph *new_graph(struct npa *a)
{
	struct npa_graph *g;

	assert_int_equal(npa_graph_new(a, npa_allocator(a), &g), 0);
	return g;
}

static void capture_begin(struct npa_graph *g, aclrtStream s, struct npa_pool_id pool)
{
	char err[512] = "";

	assert_int_equal(npa_graph_capture_begin(g, 0, s, pool, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
						 err, sizeof(err)), 0);
}

static void capture_end(struct npa_graph *g, aclrtStream s)
{
	char err[512] = "";
	int rc = npa_graph_capture_end(g, s, err, sizeof(err));

	if (rc)
		fail_msg("capture_end: %s", err);
}

static void capture_on_the_default_stream_is_refused(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	char err[512] = "";
	const char *want = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU
		? "NPU graphs must be captured on a non-default stream. (However, after "
		  "capture, it's ok to replay them on the default stream.)"
		: "CUDA graphs must be captured on a non-default stream. (However, after "
		  "capture, it's ok to replay them on the default stream.)";

	assert_int_equal(npa_graph_capture_begin(g, 0, NULL, (struct npa_pool_id){ 0, 0 },
						 ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, want);
	npa_graph_free(g);
	fx_stop(a);
}

static void replay_and_pool_before_a_capture_are_refused(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	struct npa_pool_id id;
	char err[512] = "";
	bool npu = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU;

	assert_int_equal(npa_graph_replay(g, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, npu ? "Called NPUGraph::replay without a preceding successful capture."
				     : "Called CUDAGraph::replay without a preceding successful capture.");
	assert_int_equal(npa_graph_pool(g, &id, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, npu ? "Called NPUGraph::pool() without a preceding successful capture."
				     : "Called CUDAGraph::pool() without a preceding successful capture.");
	assert_int_equal(npa_graph_capture_end(g, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "capture_end() called before capture_begin().");
	npa_graph_free(g);
	fx_stop(a);
}

static void a_capture_ends_on_its_own_stream_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream(), t = new_stream();
	char err[512] = "";

	capture_begin(g, s, (struct npa_pool_id){ 0, 0 });
	assert_int_equal(npa_graph_capture_end(g, t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Capture must end on the same stream it began on.");
	capture_end(g, s);
	assert_int_equal(npa_graph_capture_begin(g, 0, s, (struct npa_pool_id){ 0, 0 },
						 ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "instance already owns a captured graph. To capture a new "
				    "graph, create a new instance."));
	npa_graph_free(g);
	fx_stop(a);
}

/* Only the capturing stream's allocations go to the graph's (1, 0) pool. */
static void a_captures_allocations_go_to_its_own_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream(), t = new_stream();
	struct npa_pool_id id;

	capture_begin(g, s, (struct npa_pool_id){ 0, 0 });
	void *in = fx_malloc(a, 4096, s);
	void *out = fx_malloc(a, 4096, t);
	capture_end(g, s);
	assert_int_equal(npa_graph_pool(g, &id, NULL, 0), 0);
	assert_true(id.first == 1 && id.second == 0);
	assert_true(npa_pool_id_eq(fx_pool_of(a, in), id));
	assert_true(npa_pool_id_is_default(fx_pool_of(a, out)));
	fx_free(a, in);
	fx_free(a, out);
	npa_graph_free(g);
	fx_stop(a);
}

/* b = func_with_temps(b, 1): (t.clone() + v) + (t.clone() + v), temporaries
 * freed as Python drops them, the old b after the new one is made. */
static void *func_with_temps(struct npa *a, void *t, aclrtStream s)
{
	void *x1 = fx_malloc(a, FLOATS_1000, s);
	void *y1 = fx_malloc(a, FLOATS_1000, s);

	fx_free(a, x1);
	void *x2 = fx_malloc(a, FLOATS_1000, s);
	void *y2 = fx_malloc(a, FLOATS_1000, s);
	fx_free(a, x2);
	void *out = fx_malloc(a, FLOATS_1000, s);
	fx_free(a, y1);
	fx_free(a, y2);
	fx_free(a, t);
	return out;
}

/* g0: b = a.clone() then b = func 5 times; g1: c = func(b) then 5 times more
 * (upstream test_graph_two_successive). Returns the reserved bytes. */
static int64_t two_successive(const struct npa_flavor *flavor, bool share)
{
	struct npa *a = fx_start(flavor, N8G);
	struct npa_graph *g0 = new_graph(a), *g1 = new_graph(a);
	aclrtStream s = new_stream();
	void *in = fx_malloc(a, FLOATS_1000, NULL);
	struct npa_pool_id pool = { 0, 0 };

	capture_begin(g0, s, pool);
	void *b = fx_malloc(a, FLOATS_1000, s);
	for (int i = 0; i < 5; i++)
		b = func_with_temps(a, b, s);
	capture_end(g0, s);
	if (share)
		assert_int_equal(npa_graph_pool(g0, &pool, NULL, 0), 0);
	capture_begin(g1, s, pool);
	void *c = fx_malloc(a, FLOATS_1000, s);
	for (int i = 0; i < 5; i++)
		c = func_with_temps(a, c, s);
	capture_end(g1, s);
	int64_t reserved = fx_stats(a).reserved_bytes[ALL].current;

	fx_free(a, b);
	fx_free(a, c);
	fx_free(a, in);
	npa_graph_free(g0);
	npa_graph_free(g1);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	fx_stop(a);
	return reserved;
}

static void sharing_a_pool_between_two_graphs_saves_one_small_segment(void **state)
{
	int64_t unshared = two_successive(FLAVOR(state), false);
	int64_t shared = two_successive(FLAVOR(state), true);

	/* upstream: reserved(no sharing) - reserved(sharing) == kSmallBuffer */
	assert_int_equal(unshared - shared, 2097152);
	/* The input's segment and the one both graphs share. */
	assert_int_equal(shared, 2 * 2097152);
}

/*
 * test_graph_three_successive: g0 makes b, c = b + 1, d = b + 2; g1 makes
 * e = c + 3 and drops c; g2 makes f = d + 4. In a shared pool g2's f takes
 * the block c left, so replaying g0, g2, g1 feeds g1 the f that g2 wrote
 * (upstream: e.sum() == size * 10, not size * 5); with a pool per graph f
 * never lands on c. Returns whether f sits where c was.
 */
static bool f_takes_cs_block(const struct npa_flavor *flavor, bool share)
{
	struct npa *a = fx_start(flavor, N8G);
	struct npa_graph *g[3] = { new_graph(a), new_graph(a), new_graph(a) };
	aclrtStream s = new_stream();
	struct npa_pool_id pool = { 0, 0 };
	void *in = fx_malloc(a, FLOATS_1000, NULL);

	capture_begin(g[0], s, pool);
	void *b = fx_malloc(a, FLOATS_1000, s);
	void *c = fx_malloc(a, FLOATS_1000, s);
	void *d = fx_malloc(a, FLOATS_1000, s);
	capture_end(g[0], s);
	if (share)
		assert_int_equal(npa_graph_pool(g[0], &pool, NULL, 0), 0);
	capture_begin(g[1], s, pool);
	void *e = fx_malloc(a, FLOATS_1000, s);
	fx_free(a, c);
	capture_end(g[1], s);
	capture_begin(g[2], s, pool);
	void *f = fx_malloc(a, FLOATS_1000, s);
	capture_end(g[2], s);

	for (void **p = (void *[]){ in, b, d, e, f, NULL }; *p; p++)
		fx_free(a, *p);
	for (int i = 0; i < 3; i++)
		npa_graph_free(g[i]);
	fx_stop(a);
	return f == c;
}

static void a_shared_pool_lets_a_later_graph_reuse_a_dropped_output(void **state)
{
	assert_true(f_takes_cs_block(FLAVOR(state), true));
	assert_false(f_takes_cs_block(FLAVOR(state), false));
}

struct pool_thread {
	struct npa *a;
	struct npa_pool_id pool;
};

/* alloc_three: a and b of LARGE_BUFFER int8, c = a + b, all dropped. */
static void alloc_three(struct npa *a, aclrtStream s)
{
	void *x = fx_malloc(a, 20 * MiB, s), *y = fx_malloc(a, 20 * MiB, s);
	void *z = fx_malloc(a, 20 * MiB, s);

	fx_free(a, z);
	fx_free(a, x);
	fx_free(a, y);
}

/* use_pool: 10 x alloc_three with its stream routed to the pool, as
 * _use_cuda_memory_pool_manager does, then once more outside it. */
static void *use_pool(void *arg)
{
	struct pool_thread *t = arg;
	aclrtStream s = new_stream();
	char err[256] = "";

	assert_int_equal(npa_begin_allocate_to_pool(t->a, 0, t->pool, on_stream, s, err,
						    sizeof(err)), 0);
	for (int i = 0; i < 10; i++)
		alloc_three(t->a, s);
	assert_int_equal(npa_end_allocate_to_pool(t->a, 0, t->pool, err, sizeof(err)), 0);
	assert_int_equal(npa_release_pool(t->a, 0, t->pool, err, sizeof(err)), 0);
	alloc_three(t->a, NULL);
	return NULL;
}

/* no_pool: 10 x two LARGE_BUFFER allocations on the default stream. */
static void *no_pool(void *arg)
{
	struct pool_thread *t = arg;

	for (int i = 0; i < 10; i++) {
		void *x = fx_malloc(t->a, 20 * MiB, NULL), *y = fx_malloc(t->a, 20 * MiB, NULL);

		fx_free(t->a, x);
		fx_free(t->a, y);
	}
	return NULL;
}

static size_t pool_segments(struct npa *a, struct npa_pool_id id)
{
	struct npa_snapshot snap;

	assert_int_equal(npa_snapshot_pool(a, 0, id, &snap), 0);
	size_t n = snap.nsegments;

	for (size_t i = 0; i < n; i++)
		assert_true(npa_pool_id_eq((struct npa_pool_id){ snap.segments[i].pool_id[0],
								 snap.segments[i].pool_id[1] }, id));
	npa_snapshot_release(&snap);
	return n;
}

/*
 * test_allocate_in_thread_to_pool: a graph_pool_handle() pool holding one
 * graph output has 1 segment; a thread routing its stream to the pool
 * while another allocates outside it leaves 4 (the small one and three of
 * 20 MiB, reused by every iteration; with expandable segments the three
 * are one mapped run of the pool's large segment); after the graph goes,
 * empty_cache leaves none.
 */
static void allocations_routed_from_a_thread_fill_the_graphs_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream();
	struct pool_thread t = { .a = a, .pool = npa_graph_pool_handle(a, true) };
	pthread_t with, without;

	capture_begin(g, s, t.pool);
	fx_free(a, fx_malloc(a, 16, s)); /* torch.rand([4]), output dropped */
	capture_end(g, s);
	assert_int_equal(pool_segments(a, t.pool), 1);
	assert_int_equal(pthread_create(&with, NULL, use_pool, &t), 0);
	assert_int_equal(pthread_create(&without, NULL, no_pool, &t), 0);
	pthread_join(with, NULL);
	pthread_join(without, NULL);
	assert_int_equal(pool_segments(a, t.pool), fx_expandable() ? 2 : 4);
	npa_graph_free(g);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_segments(a, t.pool), 0);
	fx_stop(a);
}

/*
 * test_graph_record_stream: malloc during a capture must not query the
 * event of a block freed before it (the query would invalidate the
 * capture); a block used on another stream and freed during the capture
 * is returned by the first malloc after it.
 */
static void a_capture_neither_queries_events_nor_loses_a_block_freed_in_it(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s0 = new_stream(), s1 = new_stream(), s2 = new_stream();
	void *problem = fx_malloc(a, 12, NULL);
	void *in = fx_malloc(a, 12, NULL);

	assert_int_equal(npa_record_stream(a, problem, s0), 0);
	assert_int_equal(npusim_launch_open(s0), ACL_SUCCESS);
	fx_free(a, problem);
	capture_begin(g, s1, (struct npa_pool_id){ 0, 0 });
	void *b = fx_malloc(a, 12, s1);
	assert_int_equal(npa_record_stream(a, b, s2), 0);
	fx_free(a, b);
	capture_end(g, s1);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	struct npa_stats before = fx_stats(a);
	void *c = fx_malloc(a, 12, NULL);
	struct npa_stats after = fx_stats(a);

	/* problem's and b's blocks came back: only c is active now besides in. */
	assert_int_equal(before.active[ALL].current, 3);
	assert_int_equal(after.active[ALL].current, 2);
	assert_ptr_equal(c, problem);
	fx_free(a, c);
	fx_free(a, in);
	npa_graph_free(g);
	fx_stop(a);
}

static enum npa_block_state state_of(struct npa *a, const void *ptr)
{
	struct npa_snapshot snap;
	enum npa_block_state st = NPA_BLOCK_ACTIVE_ALLOCATED;

	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	for (size_t i = 0; i < snap.nsegments; i++)
		for (size_t j = 0; j < snap.segments[i].nblocks; j++)
			if (snap.segments[i].blocks[j].address == (uint64_t)(uintptr_t)ptr)
				st = snap.segments[i].blocks[j].state;
	npa_snapshot_release(&snap);
	return st;
}

/*
 * A block used on another stream and freed during a capture waits, with no
 * event yet, for the capture to end. PyTorch's snapshot counts its stream
 * uses as activity (active_pending_free); torch_npu's segmentInfo counts
 * only events (block->allocated || event_count > 0): inactive.
 */
static void a_block_freed_in_a_capture_is_pending_in_cuda_and_inactive_in_npu(void **state)
{
	bool npu = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU;
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s1 = new_stream(), s2 = new_stream();

	capture_begin(g, s1, (struct npa_pool_id){ 0, 0 });
	void *b = fx_malloc(a, FLOATS_1000, s1);
	assert_int_equal(npa_record_stream(a, b, s2), 0);
	fx_free(a, b);
	assert_int_equal(state_of(a, b), npu ? NPA_BLOCK_INACTIVE : NPA_BLOCK_ACTIVE_PENDING_FREE);
	capture_end(g, s1);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	npa_graph_free(g);
	fx_stop(a);
}

/*
 * PyTorch 2.6.0 keeps the streams a block was recorded on during a capture
 * in a map keyed by the Block pointer (recordStream,
 * CUDACachingAllocator.cpp:1578) and forgets an entry only when that block
 * is freed during a capture (:3135). An entry left by a block freed after
 * its capture outlives the block, and a later block given the same
 * address loses those streams when it is freed in a capture: its memory
 * comes back while the stream still uses it. A use recorded during an
 * earlier capture belongs to its block alone here.
 */
static void a_use_recorded_in_an_earlier_capture_dies_with_its_block(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g1 = new_graph(a), *g2 = new_graph(a);
	aclrtStream s1 = new_stream(), s2 = new_stream();
	void *x = fx_malloc(a, FLOATS_1000, NULL);

	capture_begin(g1, s1, (struct npa_pool_id){ 0, 0 });
	assert_int_equal(npa_record_stream(a, x, s2), 0);
	capture_end(g1, s1);
	fx_free(a, x);
	void *y = fx_malloc(a, FLOATS_1000, NULL);

	assert_ptr_equal(y, x);
	assert_int_equal(npa_record_stream(a, y, s2), 0);
	assert_int_equal(npusim_launch_open(s2), ACL_SUCCESS);
	capture_begin(g2, s1, (struct npa_pool_id){ 0, 0 });
	fx_free(a, y);
	capture_end(g2, s1);
	void *z = fx_malloc(a, FLOATS_1000, NULL);

	assert_ptr_not_equal(z, y);
	assert_int_equal(state_of(a, y), NPA_BLOCK_ACTIVE_PENDING_FREE);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	fx_free(a, z);
	npa_graph_free(g1);
	npa_graph_free(g2);
	fx_stop(a);
}

/* An event query in a global-mode capture makes the capture fail. */
static void fail_the_capture(struct npa *a, struct npa_graph *g, aclrtStream s)
{
	aclrtEvent e;
	aclrtEventRecordedStatus st;
	char err[512] = "";

	capture_begin(g, s, (struct npa_pool_id){ 0, 0 });
	fx_free(a, fx_malloc(a, 64 * MiB, s));
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_not_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
	assert_int_equal(npa_graph_capture_end(g, s, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "error code is 507903"));
}

/*
 * A capture whose end fails never had a graph: torch_npu's reset then
 * releases nothing and the pool stays (empty_cache cannot reclaim it);
 * PyTorch gives the pool back (#190348).
 */
static void a_failed_captures_pool_leaks_in_npu_and_is_given_back_in_cuda(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream();
	bool npu = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU;
	struct npa_pool_info *pools;
	size_t n;

	fail_the_capture(a, g, s);
	npa_graph_free(g);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(npa_pool_list(a, 0, &pools, &n), 0);
	assert_int_equal(n, npu ? 1 : 0);
	if (npu) {
		assert_int_equal(pools[0].use_count, 1);
		assert_false(pools[0].freeable);
		assert_int_equal(fx_stats(a).reserved_bytes[ALL].current,
				 (int64_t)pools[0].reserved_bytes);
		/* What the test leaks, it gives back itself. */
		assert_int_equal(npa_release_pool(a, 0, pools[0].id, NULL, 0), 0);
		assert_int_equal(npa_empty_cache(a, 0), 0);
	}
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	free(pools);
	fx_stop(a);
}

/*
 * empty_cache during a capture frees nothing: torch_npu's
 * npuSynchronizeDevice is refused by the runtime while a stream of the
 * device captures; PyTorch asserts that no capture is under way. Both
 * empty the cache once the capture ends.
 */
static void empty_cache_during_a_capture_is_refused_and_frees_nothing(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream();
	struct npa_pool_id none = { 0, 0 };

	fx_free(a, fx_malloc(a, 4096, NULL));
	capture_begin(g, s, none);
	assert_int_equal(npa_empty_cache(a, 0), -EBUSY);
	assert_int_equal(npa_empty_cache(a, -1), -EBUSY);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 2097152);
	capture_end(g, s);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	npa_graph_free(g);
	fx_stop(a);
}

/* reset gives the pool's use back; the pool's segments then go with empty_cache. */
static void reset_after_a_capture_lets_empty_cache_free_the_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_graph *g = new_graph(a);
	aclrtStream s = new_stream();
	struct npa_pool_info *pools;
	size_t n;

	capture_begin(g, s, (struct npa_pool_id){ 0, 0 });
	void *p = fx_malloc(a, 64 * MiB, s);
	capture_end(g, s);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_true(fx_stats(a).reserved_bytes[ALL].current > 0);
	assert_int_equal(npa_graph_reset(g), 0);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	assert_int_equal(npa_pool_list(a, 0, &pools, &n), 0);
	assert_int_equal(n, 0);
	free(pools);
	npa_graph_free(g);
	fx_stop(a);
}

static void gc_at_40_percent(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.75;
	c->garbage_collection_threshold = 0.4;
}

/*
 * torch_npu's garbage collection synchronizes the device first
 * (npuSynchronizeDevice(true), NPUCachingAllocator.cpp v2.6.0 line 2580),
 * which the runtime refuses while another stream of the device captures:
 * the malloc throws "NPU function error ... 107027". npumemfs goes on
 * without the sync, as its OOM retry does: GC frees the 32 MiB segment of
 * the 30 MiB block, idle for 4 searches, and the 40 MiB malloc on the
 * default stream gets a 42 MiB segment while stream 2 captures (128 MiB
 * at fraction 0.75, GC above 38.4 MiB); the 14 MiB one of stream 1 stays.
 */
static void npu_gc_during_a_capture_on_another_stream_goes_on(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, 128 * MiB, gc_at_40_percent);
	struct npa_graph *g = new_graph(a);
	aclrtStream s1 = new_stream(), s2 = new_stream();

	fx_free(a, fx_malloc(a, 30 * MiB, NULL));
	for (int i = 0; i < 3; i++)
		fx_free(a, fx_malloc(a, 12 * MiB, s1));
	capture_begin(g, s2, (struct npa_pool_id){ 0, 0 });
	void *q = fx_malloc(a, 40 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.reserved_bytes[ALL].current, (14 + 42) * MiB);
	capture_end(g, s2);
	fx_free(a, q);
	npa_graph_free(g);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(capture_on_the_default_stream_is_refused),
		BOTH_FLAVORS(replay_and_pool_before_a_capture_are_refused),
		BOTH_FLAVORS(a_capture_ends_on_its_own_stream_only),
		BOTH_FLAVORS(a_captures_allocations_go_to_its_own_pool),
		BOTH_FLAVORS(sharing_a_pool_between_two_graphs_saves_one_small_segment),
		BOTH_FLAVORS(a_shared_pool_lets_a_later_graph_reuse_a_dropped_output),
		BOTH_FLAVORS(allocations_routed_from_a_thread_fill_the_graphs_pool),
		BOTH_FLAVORS(a_capture_neither_queries_events_nor_loses_a_block_freed_in_it),
		BOTH_FLAVORS(a_block_freed_in_a_capture_is_pending_in_cuda_and_inactive_in_npu),
		BOTH_FLAVORS(a_use_recorded_in_an_earlier_capture_dies_with_its_block),
		BOTH_FLAVORS(a_failed_captures_pool_leaks_in_npu_and_is_given_back_in_cuda),
		BOTH_FLAVORS(reset_after_a_capture_lets_empty_cache_free_the_pool),
		BOTH_FLAVORS(empty_cache_during_a_capture_is_refused_and_frees_nothing),
		cmocka_unit_test(npu_gc_during_a_capture_on_another_stream_goes_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
