/*
 * The pinned host allocator with upstream's numbers: ATen's default
 * algorithm (test_unexpandable_host_allocator.py, test_pinned_max_threshold.py),
 * torch_npu's pin_memory_expandable_segments variant
 * (test_expandable_host_allocator.py), and pinned memory in graph private
 * pools (the six scenarios of test_aclgraph_pin_memory.py).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/graph/graph.h"
#include "alloc/host/host_allocator.h"
#include "alloc_fixture.h"

#define N8G (8 * GiB)

/* ---- helpers ---- */

static void expandable_host(struct npa_conf *c)
{
	c->pin_memory_expandable_segments = true;
}

static struct npa_host *H(struct npa *a)
{
	return npa_host_of(a);
}

static void *pin(struct npa *a, size_t size, aclrtStream stream)
{
	char err[NPA_ERRLEN] = "";
	void *p = NULL;
	int rc = npa_host_malloc(H(a), size, stream, &p, err, sizeof(err));

	if (rc != 0)
		fail_msg("npa_host_malloc(%zu): %d %s", size, rc, err);
	return p;
}

static void unpin(struct npa *a, void *p)
{
	assert_int_equal(npa_host_free(H(a), p, NULL, 0), 0);
}

static struct npa_host_stats hstats(struct npa *a)
{
	struct npa_host_stats st;

	npa_host_get_stats(H(a), &st);
	return st;
}

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

static void set_conf(struct npa *a, const char *str)
{
	char err[NPA_CONF_ERRLEN] = "";

	if (npa_set_conf(a, str, NPA_ORIGIN_WRITE, err, sizeof(err)) != 0)
		fail_msg("npa_set_conf(%s): %s", str, err);
}

static void fill(void *p, size_t floats, float v)
{
	float *f = p;

	for (size_t i = 0; i < floats; i++)
		f[i] = v;
}

/* gpu_dst.copy_(pinned, non_blocking=True): the copy, then record_event. */
static void h2d(struct npa *a, void *dst, void *pinned, size_t n, aclrtStream s)
{
	assert_int_equal(aclrtMemcpyAsync(dst, n, pinned, n, ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_SUCCESS);
	assert_int_equal(npa_host_record_event(H(a), pinned, s), 1);
}

/* What 64 floats of device memory hold now, all equal to `v`? */
static bool device_holds(void *dev, float v)
{
	float got[64];

	assert_int_equal(aclrtMemcpy(got, sizeof(got), dev, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	for (int i = 0; i < 64; i++)
		if (got[i] != v)
			return false;
	return true;
}

static void zero_device(void *dev)
{
	float z[64] = { 0 };

	assert_int_equal(aclrtMemcpy(dev, sizeof(z), z, sizeof(z), ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_SUCCESS);
}

/* ---- the default algorithm ---- */

static void host_memory_stats_of_two_pinned_tensors(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_host_stats st = hstats(a);
	void *t1, *t2;

	assert_int_equal(st.allocations.current, 0);
	assert_int_equal(st.host_alloc_time.count, 0);
	t1 = pin(a, 10 * 1024 * 4, NULL);          /* torch.ones(10 * 1024, pin_memory=True) */
	st = hstats(a);
	assert_int_equal(st.allocations.allocated, 1);
	assert_int_equal(st.allocations.current, 1);
	assert_int_equal(st.allocations.peak, 1);
	assert_int_equal(st.active_requests.current, 1);
	assert_int_equal(st.allocated_bytes.current, 65536);
	assert_int_equal(st.active_bytes.peak, 65536);
	assert_int_equal(st.num_host_alloc, 1);
	assert_int_equal(st.host_alloc_time.count, 1);
	t2 = pin(a, 20 * 1024 * 4, NULL);
	st = hstats(a);
	assert_int_equal(st.allocations.current, 2);
	assert_int_equal(st.active_requests.peak, 2);
	assert_int_equal(st.allocated_bytes.allocated, 196608);
	assert_int_equal(st.active_bytes.current, 196608);
	assert_int_equal(st.num_host_alloc, 2);
	assert_int_equal(st.host_alloc_time.count, 2);
	npa_host_empty_cache(H(a));                /* both live: nothing changes */
	{
		struct npa_host_stats now = hstats(a);

		assert_memory_equal(&now.allocations, &st.allocations, sizeof(st.allocations));
		assert_memory_equal(&now.active_bytes, &st.active_bytes, sizeof(st.active_bytes));
		assert_int_equal(now.num_host_free, 0);
		assert_int_equal(now.host_free_time.count, 0);
	}
	unpin(a, t1);
	unpin(a, t2);
	npa_host_empty_cache(H(a));
	st = hstats(a);
	assert_int_equal(st.allocated_bytes.current, 0);
	assert_int_equal(st.num_host_free, 2);
	assert_int_equal(st.host_free_time.count, 2);
	npa_host_reset_peak_stats(H(a));
	npa_host_reset_accumulated_stats(H(a));
	st = hstats(a);
	assert_int_equal(st.allocated_bytes.peak, 0);
	assert_int_equal(st.allocations.allocated, 0);
	assert_int_equal(st.host_alloc_time.count, 0);
	fx_stop(a);
}

static void a_freed_block_is_reused_newest_first(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *t = pin(a, 4, NULL), *u = pin(a, 4, NULL), *again;

	unpin(a, u);
	unpin(a, t);
	again = pin(a, 3, NULL);                   /* test_pin_memory_reuse */
	assert_ptr_equal(again, t);
	assert_int_equal(npa_host_block_size(H(a), again), 4);
	assert_int_equal(hstats(a).allocations.current, 2);
	unpin(a, again);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

/* Serials follow the making of blocks, not their addresses: a block made
 * after host_empty_cache is new whatever address the runtime gives it. */
static void blocks_are_named_in_the_order_they_were_made(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *t = pin(a, 4, NULL), *u = pin(a, 4, NULL), *again, *fresh;

	assert_int_equal(npa_host_block_serial(H(a), t), 1);
	assert_int_equal(npa_host_block_serial(H(a), u), 2);
	unpin(a, u);
	unpin(a, t);
	assert_int_equal(npa_host_block_serial(H(a), t), 0);   /* no longer live */
	again = pin(a, 3, NULL);
	assert_int_equal(npa_host_block_serial(H(a), again), 1);
	unpin(a, again);
	npa_host_empty_cache(H(a));
	fresh = pin(a, 4, NULL);
	assert_int_equal(npa_host_block_serial(H(a), fresh), 3);
	assert_int_equal(npa_host_block_serial(H(a), (char *)fresh + 1), 0);
	unpin(a, fresh);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

static void a_block_used_by_a_stream_waits_for_its_work(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *t = pin(a, 1 << 20, NULL), *u;

	assert_int_equal(npa_host_record_event(H(a), t, s), 1);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	unpin(a, t);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).allocated_bytes.current, 1 << 20);
	assert_int_equal(hstats(a).active_bytes.current, 1 << 20);
	u = pin(a, 1 << 20, NULL);                 /* the pending block is not handed out */
	assert_ptr_not_equal(u, t);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	unpin(a, u);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).allocations.current, 0);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

static void an_unknown_pointer_is_refused_and_changes_nothing(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char err[128] = "", local[8];
	void *t = pin(a, 100, NULL);

	assert_int_equal(npa_host_free(H(a), local, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid pinned pointer: 0x"));
	assert_int_equal(npa_host_free(H(a), (char *)t + 8, NULL, 0), -EINVAL);
	assert_int_equal(npa_host_record_event(H(a), local, NULL), 0);
	unpin(a, t);
	assert_int_equal(npa_host_free(H(a), t, NULL, 0), -EINVAL);
	assert_int_equal(npa_host_free(H(a), NULL, NULL, 0), 0);
	assert_int_equal(hstats(a).active_requests.current, 0);
	assert_int_equal(hstats(a).allocations.current, 1);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

static void the_runtime_refusing_host_memory_is_an_oom(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char err[256] = "";
	void *p = NULL;

	assert_int_equal(npusim_fail_nth_host_malloc(1), 0);
	assert_int_equal(npa_host_malloc(H(a), 4096, NULL, &p, err, sizeof(err)), -ENOMEM);
	assert_null(p);
	assert_string_equal(err, "NPU function error: aclrtMallocHost, error code is 207001");
	assert_int_equal(hstats(a).allocations.current, 0);
	assert_int_equal(hstats(a).host_alloc_time.count, 0);
	fx_stop(a);
}

/* ---- pinned_max_round_threshold_mb and pinned_max_cached_size_mb ---- */

static void above_the_round_threshold_the_exact_size_is_used(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *t;

	set_conf(a, "pinned_max_round_threshold_mb:64");
	t = pin(a, 80 * MiB, NULL);                /* 128 MiB without the threshold */
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	assert_int_equal(hstats(a).active_bytes.current, 80 * MiB);
	unpin(a, t);
	npa_host_empty_cache(H(a));
	set_conf(a, "pinned_max_round_threshold_mb:128");
	t = pin(a, 10 * MiB, NULL);                /* below: PowerOf2Ceil, 16 MiB */
	assert_int_equal(hstats(a).allocated_bytes.current, 16 * MiB);
	unpin(a, t);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

static void a_block_above_the_cached_size_goes_back_on_free(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *t;

	set_conf(a, "pinned_max_cached_size_mb:32");
	t = pin(a, 64 * MiB, NULL);
	assert_int_equal(hstats(a).active_bytes.current, 64 * MiB);
	unpin(a, t);
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	assert_int_equal(hstats(a).num_host_free, 1);
	set_conf(a, "pinned_max_cached_size_mb:128");
	t = pin(a, 10 * MiB, NULL);
	unpin(a, t);                               /* below the cap: cached */
	assert_int_equal(hstats(a).active_bytes.current, 0);
	assert_int_equal(hstats(a).allocated_bytes.current, 16 * MiB);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	fx_stop(a);
}

static void the_cached_size_takes_precedence_over_the_round_threshold(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *t;

	set_conf(a, "pinned_max_round_threshold_mb:256,pinned_max_cached_size_mb:128");
	t = pin(a, 130 * MiB, NULL);
	assert_int_equal(hstats(a).allocated_bytes.current, 130 * MiB);
	unpin(a, t);
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	set_conf(a, "pinned_max_round_threshold_mb:64,pinned_max_cached_size_mb:64");
	t = pin(a, 80 * MiB, NULL);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	unpin(a, t);
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	fx_stop(a);
}

static void exact_sizes_sharing_a_list_never_get_a_smaller_block(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *small, *big;

	set_conf(a, "pinned_max_round_threshold_mb:64");
	small = pin(a, 80 * MiB, NULL);
	unpin(a, small);
	big = pin(a, 100 * MiB, NULL);             /* same log2 list, 80 MiB is too small */
	assert_ptr_not_equal(big, small);
	assert_int_equal(npa_host_block_size(H(a), big), 100 * MiB);
	unpin(a, big);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

/* ---- pinned_reserve_segment_size_mb ---- */

static void reserve_64(struct npa_conf *c)
{
	c->pinned_reserve_segment_size = 64 * MiB;
}

static void the_reserve_segment_serves_blocks_in_4kib_steps(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), N8G, reserve_64);
	struct npusim_host_counters c;
	char err[NPA_CONF_ERRLEN] = "";
	void *t1 = pin(a, 4, NULL), *t2 = pin(a, 4, NULL);

	assert_int_equal((char *)t2 - (char *)t1, 4096);
	assert_int_equal(npusim_host_counters(&c), 0);
	assert_int_equal(c.live_allocations, 1);   /* the 64 MiB segment only */
	assert_int_equal(hstats(a).allocations.current, 2);
	assert_int_equal(hstats(a).host_alloc_time.count, 1);
	assert_int_equal(npa_set_conf(a, "pinned_reserve_segment_size_mb:128", NPA_ORIGIN_WRITE,
				      err, sizeof(err)), -EBUSY);
	assert_string_equal(err, "pinned_reserve_segment_size_mb cannot change at run time: the "
			    "reserve segment was set up with the first pinned block");
	unpin(a, t1);
	unpin(a, t2);
	npa_host_empty_cache(H(a));                /* the segment itself is never freed */
	assert_int_equal(npusim_host_counters(&c), 0);
	assert_int_equal(c.live_allocations, 1);
	assert_int_equal(hstats(a).allocations.current, 0);
	fx_stop(a);
}

/* ---- pin_memory_expandable_segments ---- */

static void the_variant_is_chosen_once(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char err[NPA_CONF_ERRLEN] = "";
	struct npa_conf c;

	assert_int_equal(npa_set_conf(a, "pin_memory_expandable_segments:True", NPA_ORIGIN_WRITE,
				      err, sizeof(err)), -EBUSY);
	assert_string_equal(err, "pin_memory_expandable_segments cannot change at run time: the "
			    "pinned host allocator is chosen once, when it starts");
	npa_get_conf(a, &c);
	assert_false(c.pin_memory_expandable_segments);
	assert_int_equal(npa_host_variant(H(a)), NPA_HOST_CACHING);
	fx_stop(a);
}

static void thresholds_with_the_expandable_variant_warn(void **state)
{
	struct npa_conf c;

	(void)state;
	npa_conf_default(&c, &npa_flavor_npu);
	assert_null(npa_conf_pinned_warning(&c));
	assert_int_equal(npa_conf_parse(&c, &npa_flavor_npu,
					"pin_memory_expandable_segments:True",
					NPA_ORIGIN_INI, NULL, 0), 0);
	assert_null(npa_conf_pinned_warning(&c));
	assert_int_equal(npa_conf_parse(&c, &npa_flavor_npu, "pinned_max_cached_size_mb:32",
					NPA_ORIGIN_INI, NULL, 0), 0);
	assert_string_equal(npa_conf_pinned_warning(&c),
		"`pinned_max_round_threshold_mb` and `pinned_max_cached_size_mb` do not take "
		"effect when `pin_memory_expandable_segments` is enabled. To use these options, "
		"set `pin_memory_expandable_segments` to `False`.");
}

/* Blocks split and merge there, so none has a lasting name. */
static void expandable_blocks_have_no_serial(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);
	void *p = pin(a, 4 * MiB, NULL);

	(void)state;
	assert_int_equal(npa_host_block_size(H(a), p), 4 * MiB + 512);
	assert_int_equal(npa_host_block_serial(H(a), p), 0);
	unpin(a, p);
	npa_host_empty_cache(H(a));
	fx_stop(a);
}

static void expandable_64mib_maps_80mib(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);
	void *m64, *m4, *m8, *m16;

	(void)state;
	assert_int_equal(npa_host_variant(H(a)), NPA_HOST_EXPANDABLE);
	m64 = pin(a, 64 * MiB, NULL);              /* test_allocate_with_block_cut */
	assert_int_equal(hstats(a).active_bytes.current, 64 * MiB + 512);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	unpin(a, m64);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	assert_int_equal(hstats(a).active_bytes.current, 0);
	m4 = pin(a, 4 * MiB, NULL);
	m8 = pin(a, 8 * MiB, NULL);
	m16 = pin(a, 16 * MiB, NULL);
	assert_int_equal(hstats(a).active_bytes.current, 28 * MiB + 3 * 512);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	unpin(a, m4);
	unpin(a, m8);
	unpin(a, m16);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	assert_int_equal(hstats(a).active_bytes.current, 0);
	/* Only these move: no block counts, no host malloc counts. */
	assert_int_equal(hstats(a).allocations.allocated, 0);
	assert_int_equal(hstats(a).num_host_alloc, 0);
	fx_stop(a);
}

/* test_allocate_with_block_merge: the second 40 MiB extends by 2 pages. */
static void expandable_block_merge(struct npa *a)
{
	void *m1 = pin(a, 40 * MiB, NULL), *m2 = pin(a, 40 * MiB, NULL), *m64;

	unpin(a, m1);
	unpin(a, m2);
	assert_int_equal(hstats(a).allocated_bytes.current, 100 * MiB);
	m64 = pin(a, 64 * MiB, NULL);
	assert_int_equal(hstats(a).allocated_bytes.current, 100 * MiB);
	assert_int_equal(hstats(a).active_bytes.current, 64 * MiB + 512);
	npa_host_empty_cache(H(a));                /* only the last 20 MiB page is whole */
	assert_int_equal(hstats(a).active_bytes.current, 64 * MiB + 512);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	fx_check(a);
	unpin(a, m64);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).active_bytes.current, 0);
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
}

/* test_event_free: a non-blocking D2H copy still running keeps the block. */
static void expandable_event_free(struct npa *a)
{
	aclrtStream s = new_stream();
	void *t = pin(a, 64 * MiB, NULL);

	assert_int_equal(npa_host_record_event(H(a), t, s), 1);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	unpin(a, t);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).active_bytes.current, 64 * MiB + 512);
	assert_int_equal(hstats(a).allocated_bytes.current, 80 * MiB);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).active_bytes.current, 0);
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void expandable_two_40mib_then_64mib(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);

	(void)state;
	expandable_block_merge(a);
	fx_stop(a);
}

static void expandable_pending_copy_survives_empty_cache(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);

	(void)state;
	expandable_event_free(a);
	fx_stop(a);
}

/* The class teardown's peaks, after the tests above in one process. */
static void expandable_peaks_of_the_upstream_class(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);
	void *m64 = pin(a, 64 * MiB, NULL);

	(void)state;
	unpin(a, m64);
	npa_host_empty_cache(H(a));
	expandable_block_merge(a);
	expandable_event_free(a);
	assert_int_equal(hstats(a).active_bytes.peak, 80 * MiB + 2 * 512);
	assert_int_equal(hstats(a).allocated_bytes.peak, 100 * MiB);
	assert_int_equal(hstats(a).active_bytes.current, 0);
	npa_host_reset_peak_stats(H(a));
	assert_int_equal(hstats(a).allocated_bytes.peak, 0);
	fx_stop(a);
}

static void expandable_out_of_host_memory_says_so_as_upstream(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);
	char err[512] = "";
	void *keep = pin(a, 1000 * MiB, NULL), *p = NULL;

	(void)state;
	assert_int_equal(npa_host_malloc(H(a), 100 * MiB, NULL, &p, err, sizeof(err)), -ENOMEM);
	assert_string_equal(err, "Malloc pin memory failed, host out of memory, Rried to allocate "
			    "size: 104857600, total_allocated_memory: 1048576512, "
			    "total_reserved_memory: 1069547520. You might be able to retry after "
			    "freeing up memory using torch_npu.npu.host_empty_cache().");
	unpin(a, keep);
	p = pin(a, 100 * MiB, NULL);               /* from the freed block, no new page */
	unpin(a, p);
	npa_host_empty_cache(H(a));
	assert_int_equal(hstats(a).allocated_bytes.current, 0);
	fx_stop(a);
}

/* ---- pinned memory in graph private pools (test_aclgraph_pin_memory.py) ---- */

static struct npa_graph *enter(struct npa *a, aclrtStream s, struct npa_pool_id pool)
{
	struct npa_graph *g;
	char err[1024] = "";

	assert_int_equal(npa_graph_new(a, npa_allocator(a), &g), 0);
	if (npa_graph_enter(g, 0, s, pool, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, err, sizeof(err)))
		fail_msg("npa_graph_enter: %s", err);
	return g;
}

static void leave(struct npa_graph *g, aclrtStream s)
{
	char err[512] = "";

	if (npa_graph_capture_end(g, s, err, sizeof(err)))
		fail_msg("capture_end: %s", err);
}

static void replay(struct npa_graph *g, aclrtStream s)
{
	assert_int_equal(npa_graph_replay(g, s, NULL, 0), 0);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
}

static const struct npa_pool_id own_pool = { 0, 0 };

/* with torch.npu.graph(g, stream=s, pool=pool): pinned = torch.full((64,),
 * v).pin_memory(); dst.copy_(pinned, non_blocking=True) */
static struct npa_graph *capture_pin_copy(struct npa *a, aclrtStream s, struct npa_pool_id pool,
					  void *dst, float v, void **pinned)
{
	struct npa_graph *g = enter(a, s, pool);

	*pinned = pin(a, 256, s);
	fill(*pinned, 64, v);
	h2d(a, dst, *pinned, 256, s);
	leave(g, s);
	return g;
}

static struct npa_graph *capture_h2d_of_7(struct npa *a, aclrtStream s, void *dst, void **pinned)
{
	return capture_pin_copy(a, s, own_pool, dst, 7.0f, pinned);
}

static void an_h2d_copy_during_capture_replays_the_pinned_bytes(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *dst = fx_malloc(a, 256, NULL), *pinned;
	struct npa_graph *g = capture_h2d_of_7(a, s, dst, &pinned);
	struct npa_host_block_info *b;
	size_t n;

	assert_int_equal(npa_host_block_size(H(a), pinned), 256);   /* is_pinned() */
	assert_int_equal(npa_host_blocks(H(a), &b, &n), 0);
	assert_int_equal(n, 1);
	assert_true(b[0].during_capture);
	assert_int_equal(b[0].pool.first, 1);
	free(b);
	zero_device(dst);
	replay(g, s);
	assert_true(device_holds(dst, 7.0f));
	npa_graph_free(g);
	fx_free(a, dst);
	unpin(a, pinned);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

static void a_captured_pinned_block_is_isolated_from_the_default_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *dst = fx_malloc(a, 256, NULL), *pinned, *scramble[32];
	struct npa_graph *g = capture_h2d_of_7(a, s, dst, &pinned);
	struct npa_host_stats before, after;

	replay(g, s);
	unpin(a, pinned);                          /* del pinned */
	before = hstats(a);
	npa_host_empty_cache(H(a));
	after = hstats(a);
	assert_int_equal(after.allocations.current, before.allocations.current);
	assert_int_equal(after.allocated_bytes.current, before.allocated_bytes.current);
	for (int i = 0; i < 32; i++) {
		scramble[i] = pin(a, 256, NULL);
		fill(scramble[i], 64, (float)(-i - 1));
		assert_ptr_not_equal(scramble[i], pinned);
	}
	for (int i = 0; i < 5; i++) {
		zero_device(dst);
		replay(g, s);
		assert_true(device_holds(dst, 7.0f));
	}
	for (int i = 0; i < 32; i++)
		unpin(a, scramble[i]);
	npa_graph_free(g);
	fx_free(a, dst);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

static void reuse_inside_one_capture_stays_in_the_private_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *dst1 = fx_malloc(a, 256, NULL), *dst2 = fx_malloc(a, 256, NULL), *t1, *t2, *post[16];
	struct npa_graph *g = enter(a, s, own_pool);

	t1 = pin(a, 256, s);
	fill(t1, 64, 3.0f);
	h2d(a, dst1, t1, 256, s);
	unpin(a, t1);                              /* del t1 inside the capture */
	t2 = pin(a, 256, s);
	fill(t2, 64, 5.0f);
	h2d(a, dst2, t2, 256, s);
	leave(g, s);
	unpin(a, t2);
	for (int i = 0; i < 16; i++) {
		post[i] = pin(a, 256, NULL);
		fill(post[i], 64, -1.0f);
		assert_ptr_not_equal(post[i], t2);
	}
	zero_device(dst1);
	zero_device(dst2);
	replay(g, s);
	assert_true(device_holds(dst1, 3.0f));
	assert_true(device_holds(dst2, 5.0f));
	for (int i = 0; i < 16; i++)
		unpin(a, post[i]);
	npa_graph_free(g);
	fx_free(a, dst1);
	fx_free(a, dst2);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

/* Two graphs capturing into one graph_pool_handle(), pinning 11 into d1
 * and 22 into d2. */
struct shared_pool {
	struct npa *a;
	aclrtStream s;
	struct npa_pool_id pool;
	void *d1, *d2, *t1, *t2;
	struct npa_graph *g1, *g2;
};

static void shared_pool_start(struct shared_pool *sp, void **state)
{
	sp->a = fx_start(FLAVOR(state), N8G);
	sp->s = new_stream();
	sp->pool = npa_graph_pool_handle(sp->a, true);
	sp->d1 = fx_malloc(sp->a, 256, NULL);
	sp->d2 = fx_malloc(sp->a, 256, NULL);
}

static void shared_pool_stop(struct shared_pool *sp)
{
	npa_graph_free(sp->g1);
	npa_graph_free(sp->g2);
	fx_free(sp->a, sp->d1);
	fx_free(sp->a, sp->d2);
	assert_int_equal(aclrtDestroyStream(sp->s), ACL_SUCCESS);
	fx_stop(sp->a);
}

static void two_graphs_sharing_a_pool_never_share_a_pinned_block(void **state)
{
	struct shared_pool sp;

	shared_pool_start(&sp, state);
	sp.g1 = capture_pin_copy(sp.a, sp.s, sp.pool, sp.d1, 11.0f, &sp.t1);
	sp.g2 = capture_pin_copy(sp.a, sp.s, sp.pool, sp.d2, 22.0f, &sp.t2);
	assert_ptr_not_equal(sp.t1, sp.t2);
	zero_device(sp.d1);
	zero_device(sp.d2);
	for (int i = 0; i < 3; i++) {
		replay(sp.g2, sp.s);
		replay(sp.g1, sp.s);
		replay(sp.g1, sp.s);
		replay(sp.g2, sp.s);
	}
	assert_true(device_holds(sp.d1, 11.0f));
	assert_true(device_holds(sp.d2, 22.0f));
	unpin(sp.a, sp.t1);
	unpin(sp.a, sp.t2);
	shared_pool_stop(&sp);
}

/* Why a block allocated during capture and used by a stream never comes
 * back: the next capture into the pool would overwrite what replays read. */
static void a_freed_captured_block_is_not_given_to_the_next_capture(void **state)
{
	struct shared_pool sp;

	shared_pool_start(&sp, state);
	sp.g1 = capture_pin_copy(sp.a, sp.s, sp.pool, sp.d1, 11.0f, &sp.t1);
	replay(sp.g1, sp.s);
	unpin(sp.a, sp.t1);                        /* del t1; its stream's work is done */
	sp.g2 = capture_pin_copy(sp.a, sp.s, sp.pool, sp.d2, 22.0f, &sp.t2);
	assert_ptr_not_equal(sp.t2, sp.t1);
	zero_device(sp.d1);
	replay(sp.g2, sp.s);
	replay(sp.g1, sp.s);
	assert_true(device_holds(sp.d1, 11.0f));
	unpin(sp.a, sp.t2);
	shared_pool_stop(&sp);
}

static void released_pools_give_unused_captured_blocks_back(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	struct npa_host_stats baseline, final;
	struct npa_host_pool_info *pools;
	size_t n;

	npa_host_empty_cache(H(a));
	baseline = hstats(a);
	for (int i = 0; i < 10; i++) {
		struct npa_graph *g = enter(a, s, own_pool);
		void *t = pin(a, 1024 * 4, s);     /* used by no captured op */

		leave(g, s);
		unpin(a, t);
		npa_graph_reset(g);
		npa_graph_free(g);
	}
	npa_host_empty_cache(H(a));
	final = hstats(a);
	assert_int_equal(final.allocations.current, baseline.allocations.current);
	assert_int_equal(final.allocated_bytes.current, baseline.allocated_bytes.current);
	assert_int_equal(npa_host_pools(H(a), &pools, &n), 0);
	assert_int_equal(n, 0);                    /* every pool erased */
	npa_empty_cache(a, -1);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

static void capture_is_refused_with_the_expandable_variant(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_host);
	aclrtStream s = new_stream();
	struct npa_graph *g;
	struct npa_graph_info info;
	char err[1024] = "";

	(void)state;
	assert_int_equal(npa_graph_new(a, npa_allocator(a), &g), 0);
	assert_int_equal(npa_graph_enter(g, 0, s, own_pool, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, err,
					 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ACLGraph capture is not supported when "
				    "pin_memory_expandable_segments=True."));
	assert_non_null(strstr(err, "or avoid pin_memory calls inside capture regions."));
	npa_graph_get_info(g, &info);
	assert_int_equal(info.state, NPA_GRAPH_EMPTY);
	assert_int_equal(npusim_stream_capture_id(s), 0);
	npa_graph_free(g);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(host_memory_stats_of_two_pinned_tensors),
		BOTH_FLAVORS(a_freed_block_is_reused_newest_first),
		BOTH_FLAVORS(blocks_are_named_in_the_order_they_were_made),
		BOTH_FLAVORS(a_block_used_by_a_stream_waits_for_its_work),
		BOTH_FLAVORS(an_unknown_pointer_is_refused_and_changes_nothing),
		BOTH_FLAVORS(the_runtime_refusing_host_memory_is_an_oom),
		BOTH_FLAVORS(above_the_round_threshold_the_exact_size_is_used),
		BOTH_FLAVORS(a_block_above_the_cached_size_goes_back_on_free),
		BOTH_FLAVORS(the_cached_size_takes_precedence_over_the_round_threshold),
		BOTH_FLAVORS(exact_sizes_sharing_a_list_never_get_a_smaller_block),
		BOTH_FLAVORS(the_reserve_segment_serves_blocks_in_4kib_steps),
		cmocka_unit_test_prestate(the_variant_is_chosen_once, (void *)&npa_flavor_npu),
		cmocka_unit_test(thresholds_with_the_expandable_variant_warn),
		cmocka_unit_test(expandable_blocks_have_no_serial),
		cmocka_unit_test(expandable_64mib_maps_80mib),
		cmocka_unit_test(expandable_two_40mib_then_64mib),
		cmocka_unit_test(expandable_pending_copy_survives_empty_cache),
		cmocka_unit_test(expandable_peaks_of_the_upstream_class),
		cmocka_unit_test(expandable_out_of_host_memory_says_so_as_upstream),
		BOTH_FLAVORS(an_h2d_copy_during_capture_replays_the_pinned_bytes),
		BOTH_FLAVORS(a_captured_pinned_block_is_isolated_from_the_default_pool),
		BOTH_FLAVORS(reuse_inside_one_capture_stays_in_the_private_pool),
		BOTH_FLAVORS(two_graphs_sharing_a_pool_never_share_a_pinned_block),
		BOTH_FLAVORS(a_freed_captured_block_is_not_given_to_the_next_capture),
		BOTH_FLAVORS(released_pools_give_unused_captured_blocks_back),
		cmocka_unit_test(capture_is_refused_with_the_expandable_variant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
