/*
 * Why an allocation ran out: the figures taken when the retry ladder gives
 * up (the largest free block of the pool asked, its free bytes and their
 * segments, the device's headroom, the private pools' free blocks, the
 * pending frees by stream, other allocators' bytes) and the verdict, on
 * traces built to cause each of the four. A 64 MiB device; sizes are
 * asked as n MiB less the flavor's pad, so both flavors round them to n MiB
 * and every figure is the same in both.
 */
#include <errno.h>
#include <string.h>

#include "alloc/core/oom_why.h"
#include "alloc/graph/graph.h"
#include "alloc_fixture.h"

#define N64M (64 * MiB)

static size_t mib(void **state, size_t n)
{
	return n * MiB - FLAVOR(state)->pad;
}

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

/* A graph capturing on `s` (a relaxed capture: nothing here queries events). */
static struct npa_graph *capture(struct npa *a, aclrtStream s)
{
	struct npa_graph *g;
	char err[512] = "";

	assert_int_equal(npa_graph_new(a, npa_allocator(a), &g), 0);
	assert_int_equal(npa_graph_capture_begin(g, 0, s, (struct npa_pool_id){ 0, 0 },
						 ACL_MODEL_RI_CAPTURE_MODE_RELAXED, err, sizeof(err)),
			 0);
	return g;
}

/* The capture ends, its work and the streams' with it, and the graph goes. */
static void end_capture(struct npa_graph *g, aclrtStream s)
{
	char err[512] = "";

	assert_int_equal(npa_graph_capture_end(g, s, err, sizeof(err)), 0);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	npa_graph_free(g);
}

static struct npa *start(void **state)
{
	return fx_start_device_segments(FLAVOR(state), N64M, NULL);
}

/* An allocation that must fail, then the last OOM's figures. */
static struct npa_oom_why oom(struct npa *a, size_t size, aclrtStream stream, char *text,
			      size_t len)
{
	struct npa_oom_why w;
	void *p = NULL;

	assert_int_equal(npa_malloc(a, 0, size, stream, &p, NULL, 0), -ENOMEM);
	assert_int_equal(npa_last_oom(a, 0, text, len, &w), 0);
	assert_true(w.valid);
	return w;
}

/*
 * A 30 MiB segment cut into three 8 MiB blocks and a 6 MiB rest; with the
 * rest of the device taken by `fill` (fill_mib MiB), the first and third
 * freed leave 8 MiB and 8 + 6 = 14 MiB free in it. Returns the middle one.
 */
static void *fragment_30(void **state, struct npa *a, size_t fill_mib, void **fill)
{
	fx_free(a, fx_malloc(a, mib(state, 30), NULL));
	void *x = fx_malloc(a, mib(state, 8), NULL);
	void *y = fx_malloc(a, mib(state, 8), NULL);
	void *z = fx_malloc(a, mib(state, 8), NULL);

	*fill = fx_malloc(a, mib(state, fill_mib), NULL);
	fx_free(a, x);
	fx_free(a, z);
	return y;
}

/* A live MemPool whose pool caches a freed segment of n MiB. */
static void mempool_caching(void **state, struct npa *a, struct npa_pool_id id, size_t n)
{
	char err[256] = "";

	assert_int_equal(npa_mempool_create(a, 0, id, false, false), 0);
	assert_int_equal(npa_mempool_begin_stream(a, 0, id, NULL, err, sizeof(err)), 0);
	fx_free(a, fx_malloc(a, mib(state, n), NULL));
	assert_int_equal(npa_mempool_end(a, 0, id, err, sizeof(err)), 0);
}

/* 16 MiB fits in the 22 MiB free in the 30 MiB segment, in no block. */
static void free_bytes_in_no_one_block_are_fragmentation(void **state)
{
	struct npa *a = start(state);
	char text[NPA_ERRLEN];
	void *fill, *y = fragment_30(state, a, 34, &fill);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.request, 16 * MiB);
	assert_int_equal(w.alloc_size, 16 * MiB);
	assert_false(w.small_pool);
	assert_int_equal(w.pool_id[0], 0);
	assert_int_equal(w.pool_id[1], 0);
	assert_int_equal(w.largest_free_block, 14 * MiB);
	assert_int_equal(w.pool_free, 22 * MiB);
	assert_int_equal(w.pool_free_segments, 1);
	assert_int_equal(w.headroom, 0);
	assert_int_equal(w.private_free, 0);
	assert_int_equal(w.pending_free, 0);
	assert_int_equal(w.other_allocators, 0);
	assert_int_equal(w.verdict, NPA_OOM_FRAGMENTATION);
	fx_free(a, y);
	fx_free(a, fill);
	fx_stop(a);
}

/*
 * Free bytes count with the device's: 14 MiB free in the segment and
 * 4 MiB left on the device would hold a new 16 MiB segment, were they one.
 */
static void free_bytes_with_the_devices_rest_are_fragmentation(void **state)
{
	struct npa *a = start(state);
	char text[NPA_ERRLEN];

	fx_free(a, fx_malloc(a, mib(state, 30), NULL));
	void *x = fx_malloc(a, mib(state, 16), NULL);
	void *fill = fx_malloc(a, mib(state, 30), NULL);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.largest_free_block, 14 * MiB);
	assert_int_equal(w.pool_free, 14 * MiB);
	assert_int_equal(w.headroom, 4 * MiB);
	assert_int_equal(w.verdict, NPA_OOM_FRAGMENTATION);
	fx_free(a, x);
	fx_free(a, fill);
	fx_stop(a);
}

/*
 * A MemPool alive keeps its freed 30 MiB segment (empty_cache and the OOM
 * retry release only pools nobody uses); the default pool has nothing
 * free and the device 0 bytes: 16 MiB is held by the private pool. The
 * cuda text names it as upstream does.
 */
static void a_live_mempools_cached_segment_is_held_by_private_pools(void **state)
{
	struct npa *a = start(state);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char text[NPA_ERRLEN], err[256];

	mempool_caching(state, a, id, 30);
	void *fill = fx_malloc(a, mib(state, 34), NULL);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.pool_free, 0);
	assert_int_equal(w.pool_free_segments, 0);
	assert_int_equal(w.largest_free_block, 0);
	assert_int_equal(w.headroom, 0);
	assert_int_equal(w.private_free, 30 * MiB);
	assert_int_equal(w.private_pools, 1);
	assert_int_equal(w.verdict, NPA_OOM_PRIVATE_POOLS);
	if (FLAVOR(state)->oom_style == NPA_OOM_CUDA)
		assert_string_equal(text,
			"CUDA out of memory. Tried to allocate 16.00 MiB. GPU 0 has a total "
			"capacity of 64.00 MiB of which 0 bytes is free. Of the allocated memory "
			"64.00 MiB is allocated by PyTorch, with 30.00 MiB allocated in private "
			"pools (e.g., CUDA Graphs), and 0 bytes is reserved by PyTorch but "
			"unallocated. If reserved but unallocated memory is large try setting "
			"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
			"See documentation for Memory Management  (https://docs.pytorch.org/docs/"
			"stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)");
	else
		assert_string_equal(text,
			"NPU out of memory. Tried to allocate 16.00 MiB (NPU 0; 64.00 MiB total "
			"capacity; 34.00 MiB already allocated; 34.00 MiB current active; 0 bytes "
			"free; 64.00 MiB reserved in total by PyTorch).If reserved memory is >> "
			"allocated memory try setting max_split_size_mb to avoid fragmentation.");
	fx_free(a, fill);
	assert_int_equal(npa_mempool_destroy(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/*
 * Both would do, 22 MiB free in the default pool's segment (as above) and
 * a MemPool's cached 20 MiB: the pool's own free bytes come first.
 */
static void fragmentation_comes_before_private_pools(void **state)
{
	struct npa *a = start(state);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char text[NPA_ERRLEN], err[256];

	mempool_caching(state, a, id, 20);
	void *fill, *y = fragment_30(state, a, 14, &fill);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.pool_free, 22 * MiB);
	assert_int_equal(w.private_free, 20 * MiB);
	assert_int_equal(w.headroom, 0);
	assert_int_equal(w.verdict, NPA_OOM_FRAGMENTATION);
	fx_free(a, y);
	fx_free(a, fill);
	assert_int_equal(npa_mempool_destroy(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/* What the two pending-free traces below leave. */
static void assert_held_by_30_mib_pending_on_stream_1(const struct npa_oom_why *w)
{
	assert_int_equal(w->pending_free, 30 * MiB);
	assert_int_equal(w->npending_streams, 1);
	assert_int_equal(w->pending[0].stream, 1);
	assert_int_equal(w->pending[0].bytes, 30 * MiB);
	assert_int_equal(w->verdict, NPA_OOM_PENDING_FREES);
}

/*
 * A 30 MiB block used on stream s1, whose work runs on, is freed and waits
 * for its event. During a capture on s2 the allocator may not synchronize
 * to get it back (the retry's release is skipped), so the capture's 16 MiB
 * is held by that pending free, listed under s1.
 */
static void a_block_waiting_on_a_stream_during_a_capture_is_held_by_pending_frees(void **state)
{
	struct npa *a = start(state);
	aclrtStream s1 = new_stream(), s2 = new_stream();
	char text[NPA_ERRLEN];
	void *p = fx_malloc(a, mib(state, 30), NULL);
	void *fill = fx_malloc(a, mib(state, 34), NULL);

	assert_int_equal(npa_record_stream(a, p, s1), 0);
	assert_int_equal(npusim_launch_open(s1), ACL_SUCCESS);
	fx_free(a, p);
	struct npa_graph *g = capture(a, s2);
	struct npa_oom_why w = oom(a, mib(state, 16), s2, text, sizeof(text));

	assert_true(w.pool_id[0] != 0 || w.pool_id[1] != 0);
	assert_int_equal(w.stream, 2);
	assert_int_equal(w.pool_free, 0);
	assert_int_equal(w.headroom, 0);
	assert_int_equal(w.private_free, 0);
	assert_held_by_30_mib_pending_on_stream_1(&w);
	end_capture(g, s2);
	fx_free(a, fill);
	fx_stop(a);
}

/*
 * Freed during the capture, a block used on stream s1 waits for the
 * capture to end before it gets its events: its 30 MiB in the graph's
 * pool are pending too, listed under s1.
 */
static void a_block_freed_during_a_capture_is_held_by_pending_frees(void **state)
{
	struct npa *a = start(state);
	aclrtStream s1 = new_stream(), s2 = new_stream();
	char text[NPA_ERRLEN];
	void *fill = fx_malloc(a, mib(state, 34), NULL);

	struct npa_graph *g = capture(a, s2);
	void *p = fx_malloc(a, mib(state, 30), s2);
	assert_int_equal(npa_record_stream(a, p, s1), 0);
	fx_free(a, p);
	struct npa_oom_why w = oom(a, mib(state, 16), s2, text, sizeof(text));

	assert_int_equal(w.pool_free, 0);
	assert_held_by_30_mib_pending_on_stream_1(&w);
	end_capture(g, s2);
	fx_free(a, fill);
	fx_stop(a);
}

/*
 * Ten small blocks, each used on its own stream whose work goes on, freed:
 * the first eight streams are named, the other two summed. A 1000-byte
 * request is a 1024-byte block (1536 with npu's pad).
 */
static void pending_frees_past_eight_streams_are_summed(void **state)
{
	struct npa *a = start(state);
	aclrtStream s[11];
	char text[NPA_ERRLEN];
	uint64_t block = FLAVOR(state)->pad ? 1536 : 1024;

	for (int i = 0; i < 11; i++)
		s[i] = new_stream();
	for (int i = 0; i < 10; i++) {
		void *p = fx_malloc(a, 1000, NULL);

		assert_int_equal(npa_record_stream(a, p, s[i]), 0);
		assert_int_equal(npusim_launch_open(s[i]), ACL_SUCCESS);
		fx_free(a, p);
	}
	void *fill = fx_malloc(a, mib(state, 62), NULL);
	struct npa_graph *g = capture(a, s[10]);
	struct npa_oom_why w = oom(a, mib(state, 16), s[10], text, sizeof(text));

	assert_int_equal(w.pending_free, 10 * block);
	assert_int_equal(w.npending_streams, NPA_OOM_WHY_STREAMS);
	for (int i = 0; i < NPA_OOM_WHY_STREAMS; i++) {
		assert_int_equal(w.pending[i].stream, i + 1);
		assert_int_equal(w.pending[i].bytes, block);
	}
	assert_int_equal(w.pending_other_streams, 2 * block);
	end_capture(g, s[10]);
	fx_free(a, fill);
	fx_stop(a);
}

/*
 * 30 and 24 MiB in use and 10 MiB taken from the device by someone else
 * (as a plug-in would): nothing free anywhere, so 16 MiB is truly out of
 * memory, and the other allocator's share is told.
 */
static void nothing_free_anywhere_is_out_of_memory(void **state)
{
	struct npa *a = start(state);
	char text[NPA_ERRLEN];
	void *other = NULL;

	assert_int_equal(aclrtMallocAlign32(&other, 10 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	void *x = fx_malloc(a, mib(state, 30), NULL);
	void *y = fx_malloc(a, mib(state, 24), NULL);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.pool_free, 0);
	assert_int_equal(w.headroom, 0);
	assert_int_equal(w.private_free, 0);
	assert_int_equal(w.pending_free, 0);
	assert_int_equal(w.other_allocators, 10 * MiB);
	assert_int_equal(w.verdict, NPA_OOM_OUT_OF_MEMORY);
	fx_free(a, x);
	fx_free(a, y);
	assert_int_equal(aclrtFree(other), ACL_SUCCESS);
	fx_stop(a);
}

/*
 * A memory fraction of 1/2 leaves this allocator 32 - 30 = 2 MiB of the
 * device's 34 MiB: the headroom is the smaller, and 16 MiB does not fit.
 */
static void a_memory_fraction_bounds_the_headroom(void **state)
{
	struct npa *a = start(state);
	char text[NPA_ERRLEN];

	assert_int_equal(npa_set_memory_fraction(a, 0, 0.5, NULL, 0), 0);
	void *x = fx_malloc(a, mib(state, 30), NULL);
	struct npa_oom_why w = oom(a, mib(state, 16), NULL, text, sizeof(text));

	assert_int_equal(w.headroom, 2 * MiB);
	assert_int_equal(w.other_allocators, 0);
	assert_int_equal(w.verdict, NPA_OOM_OUT_OF_MEMORY);
	fx_free(a, x);
	fx_stop(a);
}

/* A small request asks the small pool for its rounded size and the
 * device for a 2 MiB segment. */
static void a_small_request_names_the_small_pool_and_its_segment(void **state)
{
	struct npa *a = start(state);
	char text[NPA_ERRLEN];
	void *fill = fx_malloc(a, mib(state, 64), NULL);
	struct npa_oom_why w = oom(a, 1000, NULL, text, sizeof(text));

	assert_true(w.small_pool);
	assert_int_equal(w.request, FLAVOR(state)->pad ? 1536 : 1024);
	assert_int_equal(w.alloc_size, 2 * MiB);
	assert_int_equal(w.verdict, NPA_OOM_OUT_OF_MEMORY);
	fx_free(a, fill);
	fx_stop(a);
}

static void half_and_reject(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.5;
	c->throw_on_npumalloc_oom = true;
}

/*
 * A preemptive rejection has a message but no figures, even after an OOM
 * that had them: 20 MiB is within the 32 MiB limit but not on a device
 * another allocator took 50 MiB of; 40 MiB is refused up front.
 */
static void npu_a_preemptive_rejection_has_no_figures(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N64M, half_and_reject);
	char text[NPA_ERRLEN];
	struct npa_oom_why w;
	void *other = NULL, *p = NULL;

	assert_int_equal(aclrtMallocAlign32(&other, 50 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	w = oom(a, 20 * MiB, NULL, text, sizeof(text));
	assert_int_equal(w.other_allocators, 50 * MiB);
	assert_int_equal(npa_malloc(a, 0, 40 * MiB, NULL, &p, NULL, 0), -ENOMEM);
	assert_int_equal(npa_last_oom(a, 0, text, sizeof(text), &w), 0);
	assert_non_null(strstr(text, "preemptively rejected"));
	assert_false(w.valid);
	assert_int_equal(aclrtFree(other), ACL_SUCCESS);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(free_bytes_in_no_one_block_are_fragmentation),
		BOTH_FLAVORS(free_bytes_with_the_devices_rest_are_fragmentation),
		BOTH_FLAVORS(a_live_mempools_cached_segment_is_held_by_private_pools),
		BOTH_FLAVORS(fragmentation_comes_before_private_pools),
		BOTH_FLAVORS(a_block_waiting_on_a_stream_during_a_capture_is_held_by_pending_frees),
		BOTH_FLAVORS(a_block_freed_during_a_capture_is_held_by_pending_frees),
		BOTH_FLAVORS(pending_frees_past_eight_streams_are_summed),
		BOTH_FLAVORS(nothing_free_anywhere_is_out_of_memory),
		BOTH_FLAVORS(a_memory_fraction_bounds_the_headroom),
		BOTH_FLAVORS(a_small_request_names_the_small_pool_and_its_segment),
		cmocka_unit_test(npu_a_preemptive_rejection_has_no_figures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
