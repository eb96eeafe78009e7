/*
 * Private pools (upstream PrivatePool, MemPool, beginAllocateToPool):
 * routing, use counts, upstream's refusals, release by empty_cache,
 * no_split, use_on_oom, live-allocation checks and per-pool snapshots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/device/mempool.h"
#include "alloc_fixture.h"

#define N8G (8 * GiB)

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

/* A scope for the allocations of one stream (upstream: the capturing stream). */
static bool on_stream(aclrtStream stream, void *arg)
{
	return stream == *(aclrtStream *)arg;
}

static bool always(aclrtStream stream, void *arg)
{
	(void)stream, (void)arg;
	return true;
}

static struct npa_pool_info pool_info(struct npa *a, struct npa_pool_id id)
{
	struct npa_pool_info *all, found = { .use_count = -1 };
	size_t n;

	assert_int_equal(npa_pool_list(a, 0, &all, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (npa_pool_id_eq(all[i].id, id))
			found = all[i];
	free(all);
	return found;
}

static size_t pool_count(struct npa *a)
{
	struct npa_pool_info *all;
	size_t n;

	assert_int_equal(npa_pool_list(a, 0, &all, &n), 0);
	free(all);
	return n;
}

static void begin(struct npa *a, struct npa_pool_id id, npa_pool_filter f, void *arg)
{
	char err[256] = "";

	assert_int_equal(npa_begin_allocate_to_pool(a, 0, id, f, arg, err, sizeof(err)), 0);
}

static void end(struct npa *a, struct npa_pool_id id)
{
	char err[256] = "";

	assert_int_equal(npa_end_allocate_to_pool(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
}

static void graph_pool_handle_counts_users_and_captures_from_1(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id u1 = npa_graph_pool_handle(a, true);
	struct npa_pool_id u2 = npa_graph_pool_handle(a, true);
	struct npa_pool_id g1 = npa_graph_pool_handle(a, false);

	assert_true(u1.first == 0 && u1.second == 1);
	assert_true(u2.first == 0 && u2.second == 2);
	assert_true(g1.first == 1 && g1.second == 0);
	fx_stop(a);
}

/* MemPool(): use_count 1; use_mem_pool: 2 inside, 1 after (upstream's test). */
static void mempool_use_count_is_1_then_2_inside_a_scope_then_1(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	assert_int_equal(pool_info(a, id).use_count, 1);
	begin(a, id, always, NULL);
	assert_int_equal(pool_info(a, id).use_count, 2);
	assert_true(pool_info(a, id).routing);
	end(a, id);
	assert_int_equal(pool_info(a, id).use_count, 1);
	assert_false(pool_info(a, id).routing);
	assert_false(pool_info(a, id).freeable);
	fx_stop(a);
}

/* Upstream increfs before it looks for the scope: the refused call keeps its use. */
static void begin_twice_is_refused_after_taking_a_use(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256] = "";

	begin(a, id, always, NULL);
	assert_int_equal(npa_begin_allocate_to_pool(a, 0, id, always, NULL, err, sizeof(err)),
			 -EBUSY);
	assert_string_equal(err, "beginAllocateToPool: already recording to mempool_id");
	assert_int_equal(pool_info(a, id).use_count, 2);
	end(a, id);
	fx_stop(a);
}

static void end_without_begin_is_refused_with_upstreams_text(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256] = "";

	assert_int_equal(npa_end_allocate_to_pool(a, 0, id, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "endAllocatePool: not currently recording to mempool_id");
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "Could not find pool of id");
	fx_stop(a);
}

static void only_the_routed_streams_allocations_go_to_the_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	aclrtStream s = new_stream();

	begin(a, id, on_stream, &s);
	void *in = fx_malloc(a, 4096, s);
	void *out = fx_malloc(a, 4096, NULL);
	struct npa_pool_id got = fx_pool_of(a, in), def = fx_pool_of(a, out);

	assert_true(npa_pool_id_eq(got, id));
	assert_true(npa_pool_id_is_default(def));
	/* Its own small pool: a segment of its own. */
	assert_int_equal(pool_info(a, id).segments, 1);
	end(a, id);
	fx_free(a, in);
	fx_free(a, out);
	fx_stop(a);
}

static void the_newest_scope_that_accepts_the_stream_wins(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id outer = npa_graph_pool_handle(a, true);
	struct npa_pool_id inner = npa_graph_pool_handle(a, true);
	aclrtStream s = new_stream(), t = new_stream();

	begin(a, outer, always, NULL);
	begin(a, inner, on_stream, &s);
	void *on_s = fx_malloc(a, 4096, s);
	void *on_t = fx_malloc(a, 4096, t);

	assert_true(npa_pool_id_eq(fx_pool_of(a, on_s), inner));
	assert_true(npa_pool_id_eq(fx_pool_of(a, on_t), outer));
	end(a, inner);
	end(a, outer);
	fx_free(a, on_s);
	fx_free(a, on_t);
	fx_stop(a);
}

/* A pool's cached block is not the default pool's to give. */
static void a_pools_free_block_is_not_reused_outside_it(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);

	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 4096, NULL);
	end(a, id);
	fx_free(a, p);
	void *q = fx_malloc(a, 4096, NULL);

	assert_ptr_not_equal(q, p);
	assert_true(npa_pool_id_is_default(fx_pool_of(a, q)));
	assert_int_equal(pool_info(a, id).segments, 1);
	fx_free(a, q);
	fx_stop(a);
}

/* test_mempool_destructor: empty_cache keeps a live MemPool's memory. */
static void empty_cache_keeps_a_live_pool_and_frees_it_once_released(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 64 * MiB, NULL);
	end(a, id);
	int64_t reserved = fx_stats(a).reserved_bytes[ALL].current;
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, reserved);
	assert_int_equal(pool_info(a, id).segments, 1);

	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	assert_true(pool_info(a, id).freeable);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	assert_int_equal(pool_count(a), 0);
	fx_stop(a);
}

/* A freeable pool stays while it holds a live block, and goes after. */
static void a_freeable_pool_stays_while_a_block_is_allocated(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, false);

	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 64 * MiB, NULL);
	end(a, id);
	int64_t reserved = fx_stats(a).reserved_bytes[ALL].current;
	assert_true(pool_info(a, id).freeable);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_count(a), 1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, reserved);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_count(a), 0);
	fx_stop(a);
}

/* Released more often than taken while it routes: kept until routing ends. */
static void a_pool_released_while_it_routes_stays_until_routing_ends(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];

	begin(a, id, always, NULL);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	assert_true(pool_info(a, id).freeable);
	/* A freeable pool is not taken again (upstream asserts use_count > 0). */
	assert_int_equal(npa_create_or_incref_pool(a, 0, id), -EINVAL);
	if (!FLAVOR(state)->any_scope_is_capture)
		assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_count(a), 1);
	void *p = fx_malloc(a, 4096, NULL);
	assert_true(npa_pool_id_eq(fx_pool_of(a, p), id));
	assert_int_equal(npa_end_allocate_to_pool(a, 0, id, err, sizeof(err)), 0);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_count(a), 0);
	fx_stop(a);
}

/* emptyCache(id) frees that pool's unused segments and nothing else. */
static void empty_cache_of_a_pool_touches_that_pool_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id x = npa_graph_pool_handle(a, true);
	struct npa_pool_id y = npa_graph_pool_handle(a, true);
	void *d = fx_malloc(a, 64 * MiB, NULL);

	fx_free(a, d);
	begin(a, x, always, NULL);
	fx_free(a, fx_malloc(a, 64 * MiB, NULL));
	end(a, x);
	begin(a, y, always, NULL);
	fx_free(a, fx_malloc(a, 64 * MiB, NULL));
	end(a, y);
	int64_t each = (int64_t)pool_info(a, x).reserved_bytes;
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 3 * each);
	assert_int_equal(npa_empty_cache_pool(a, 0, x), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 2 * each);
	assert_int_equal(pool_count(a), 1);
	assert_true(npa_pool_id_eq(pool_info(a, y).id, y));
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	fx_stop(a);
}

static void set_no_split(struct npa *a, struct npa_pool_id id)
{
	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	assert_int_equal(npa_set_no_split(a, 0, id), 0);
}

/* MemPool(no_split=True): a 4 KiB request takes the whole 2 MiB segment. */
static void a_no_split_pool_gives_whole_segments(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];

	set_no_split(a, id);
	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 4096, NULL);
	void *q = fx_malloc(a, 4096, NULL);
	end(a, id);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.allocated_bytes[SMALL].current, (int64_t)(4 * MiB));
	/* Expandable segments map pages and count no segments. */
	assert_int_equal(st.segment[SMALL].current, fx_expandable() ? 0 : 2);
	assert_int_equal(st.inactive_split[ALL].current, 0);
	fx_free(a, p);
	fx_free(a, q);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/* Private-pool blocks count in all and in small_pool or large_pool. */
static void private_pool_blocks_count_in_the_usual_stats(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, false);

	begin(a, id, always, NULL);
	void *small = fx_malloc(a, 4096, NULL);
	void *large = fx_malloc(a, 32 * MiB, NULL);
	end(a, id);
	struct npa_stats st = fx_stats(a);
	size_t pad = FLAVOR(state)->pad;
	int64_t small_block = (int64_t)((4096 + pad + 511) / 512 * 512);

	assert_int_equal(st.allocation[ALL].current, 2);
	assert_int_equal(st.allocated_bytes[SMALL].current, small_block);
	assert_int_equal(st.allocated_bytes[LARGE].current,
			 (int64_t)npa_block_size(a, large));
	assert_int_equal(st.requested_bytes[ALL].current, (int64_t)(4096 + 32 * MiB));
	fx_free(a, small);
	fx_free(a, large);
	fx_stop(a);
}

/* test_check_pool_live_allocations, at allocator level. */
static void live_allocations_are_exactly_the_pools_allocated_blocks(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];
	bool live;

	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 4096, NULL);
	end(a, id);
	void *outside = fx_malloc(a, 4096, NULL);
	void *just_p[] = { p }, *p_and_0[] = { p, NULL };

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), -EINVAL);
	assert_int_equal(npa_check_pool_live_allocations(a, 0, id, just_p, 1, &live, err, 256), 0);
	assert_true(live);
	assert_int_equal(npa_check_pool_live_allocations(a, 0, id, p_and_0, 2, &live, err, 256), 0);
	assert_false(live);
	assert_int_equal(npa_check_pool_live_allocations(a, 0, id, NULL, 0, &live, err, 256), 0);
	assert_false(live);
	fx_free(a, p);
	assert_int_equal(npa_check_pool_live_allocations(a, 0, id, NULL, 0, &live, err, 256), 0);
	assert_true(live);
	struct npa_pool_id none = { 0, 77 };
	assert_int_equal(npa_check_pool_live_allocations(a, 0, none, NULL, 0, &live, err, 256),
			 -ENOENT);
	assert_string_equal(err, "Could not find pool of id");
	fx_free(a, outside);
	fx_stop(a);
}

/* memory_snapshot(mempool_id): that pool's segments only; none for no pool. */
static void a_pool_snapshot_has_that_pools_segments_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	struct npa_snapshot snap;

	void *d = fx_malloc(a, 4096, NULL);
	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 32 * MiB, NULL);
	end(a, id);
	assert_int_equal(npa_snapshot_pool(a, 0, id, &snap), 0);
	assert_int_equal(snap.nsegments, 1);
	assert_int_equal(snap.segments[0].address, (uint64_t)(uintptr_t)p);
	assert_int_equal(snap.segments[0].pool_id[0], 0);
	assert_int_equal(snap.segments[0].pool_id[1], id.second);
	npa_snapshot_release(&snap);
	assert_int_equal(npa_snapshot_pool(a, 0, (struct npa_pool_id){ 5, 0 }, &snap), 0);
	assert_int_equal(snap.nsegments, 0);
	npa_snapshot_release(&snap);
	fx_free(a, d);
	fx_free(a, p);
	fx_stop(a);
}

static void assert_pool_id(const struct npa_trace_entry *e, const char *action,
			   struct npa_pool_id id)
{
	/* expandable segments map pages where others allocate segments */
	if (fx_expandable() && strcmp(action, "segment_alloc") == 0)
		action = "segment_map";
	assert_string_equal(npa_trace_action_name(e->action), action);
	assert_int_equal(e->pool_id[0], id.first);
	assert_int_equal(e->pool_id[1], id.second);
}

/* upstream's TraceEntry mempool_: the owner pool of the block, (0, 0) for
 * the default pools; a pool snapshot notes the id it was asked for. */
static void history_entries_carry_the_pool_of_their_block(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	struct npa_pool_id none = { 0, 0 }, missing = { 5, 0 };
	struct npa_snapshot snap;
	struct npa_trace t;

	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	void *d = fx_malloc(a, 4096, NULL);
	begin(a, id, always, NULL);
	void *p = fx_malloc(a, 32 * MiB, NULL);
	end(a, id);
	fx_free(a, p);
	assert_int_equal(npa_snapshot_pool(a, 0, missing, &snap), 0);
	npa_snapshot_release(&snap);
	fx_free(a, d);

	assert_int_equal(npa_history_copy(a, 0, 0, &t), 0);
	assert_int_equal(t.n, 9);
	assert_pool_id(&t.entries[0], "segment_alloc", none);
	assert_pool_id(&t.entries[1], "alloc", none);
	assert_pool_id(&t.entries[2], "segment_alloc", id);
	assert_pool_id(&t.entries[3], "alloc", id);
	assert_pool_id(&t.entries[4], "free_requested", id);
	assert_pool_id(&t.entries[5], "free_completed", id);
	assert_pool_id(&t.entries[6], "snapshot", missing);
	assert_pool_id(&t.entries[7], "free_requested", none);
	assert_pool_id(&t.entries[8], "free_completed", none);
	npa_trace_release(&t);
	fx_stop(a);
}

/*
 * A 64 MiB device: pool `id` caches a free 30 MiB block, the default pool
 * holds another; a third request then finds no room on the device.
 */
static void *fill_beside_a_cached_pool_block(struct npa *a, struct npa_pool_id id,
					     bool use_on_oom, void **cached)
{
	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	assert_int_equal(npa_set_use_on_oom(a, 0, id, use_on_oom), 0);
	begin(a, id, always, NULL);
	*cached = fx_malloc(a, 30 * MiB, NULL);
	end(a, id);
	fx_free(a, *cached);
	return fx_malloc(a, 30 * MiB, NULL);
}

/* MemPool(use_on_oom=True): its cached block serves a request the device cannot. */
static void a_use_on_oom_pool_serves_a_request_the_device_cannot(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 64 * MiB, NULL);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	void *cached, *extra = NULL;
	void *fill = fill_beside_a_cached_pool_block(a, id, true, &cached);
	char err[256];

	assert_int_equal(npa_malloc(a, 0, 30 * MiB, NULL, &extra, err, sizeof(err)), 0);
	assert_ptr_equal(extra, cached);
	assert_true(npa_pool_id_eq(fx_pool_of(a, extra), id));
	assert_int_equal(pool_info(a, id).use_count, 1);
	assert_int_equal(fx_stats(a).num_ooms, 0);
	fx_free(a, extra);
	fx_free(a, fill);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/*
 * With a use_on_oom pool's cached block and a cached default block that
 * could be released, torch_npu tries the pool first (try_mempool_fallback,
 * before any release); PyTorch releases cached blocks first and takes the
 * pool only as the last resort. 64 MiB device, a 30 MiB pool block and a
 * cached 20 MiB default segment, then 30 MiB more: npu takes the pool's
 * block (reserved 32 + 22 MiB, nothing freed), cuda frees the 20 MiB
 * segment and maps a new 30 MiB one (reserved 30 + 30 MiB).
 */
static void npu_tries_use_on_oom_pools_before_releasing_cached_blocks(void **state)
{
	bool npu = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU;
	struct npa *a = fx_start_device_segments(FLAVOR(state), 64 * MiB, NULL);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	void *cached, *extra = NULL;
	char err[256];

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	assert_int_equal(npa_set_use_on_oom(a, 0, id, true), 0);
	begin(a, id, always, NULL);
	cached = fx_malloc(a, 30 * MiB, NULL);
	end(a, id);
	fx_free(a, cached);
	fx_free(a, fx_malloc(a, 20 * MiB, NULL));
	assert_int_equal(npa_malloc(a, 0, 30 * MiB, NULL, &extra, err, sizeof(err)), 0);
	struct npa_stats st = fx_stats(a);

	assert_true(npu ? extra == cached : extra != cached);
	assert_int_equal(st.num_device_free, npu ? 0 : 1);
	assert_int_equal(st.reserved_bytes[ALL].current, npu ? 54 * MiB : 60 * MiB);
	fx_free(a, extra);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/* Without use_on_oom the same request fails. */
static void a_pool_without_use_on_oom_leaves_the_request_to_fail(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 64 * MiB, NULL);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	void *cached, *extra = NULL;
	void *fill = fill_beside_a_cached_pool_block(a, id, false, &cached);
	char err[256];

	assert_int_equal(npa_malloc(a, 0, 30 * MiB, NULL, &extra, err, sizeof(err)), -ENOMEM);
	assert_int_equal(fx_stats(a).num_ooms, 1);
	fx_free(a, fill);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	fx_stop(a);
}

/*
 * cuda counts any routing as a capture under way (captures_underway): a
 * block used on another stream and freed then waits for its event until
 * routing ends; torch_npu records its event at once.
 */
static void a_free_with_stream_uses_during_routing_waits_in_cuda_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	aclrtStream s = new_stream(), other = new_stream();
	bool cuda = FLAVOR(state)->any_scope_is_capture;

	void *p = fx_malloc(a, 4096, NULL);
	assert_int_equal(npa_record_stream(a, p, s), 0);
	begin(a, id, on_stream, &other);
	fx_free(a, p);
	/* s has no work: an event recorded now is complete at the next malloc. */
	void *q = fx_malloc(a, 4096, NULL);
	if (cuda)
		assert_ptr_not_equal(q, p);
	else
		assert_ptr_equal(q, p);
	end(a, id);
	if (cuda) {
		/* Routing over: the next malloc records and completes the event. */
		void *r = fx_malloc(a, 4096, NULL);
		assert_ptr_equal(r, p);
		assert_int_equal(fx_stats(a).active[ALL].current, 2);
		fx_free(a, r);
	}
	fx_free(a, q);
	fx_stop(a);
}

static void expandable(struct npa_conf *conf)
{
	conf->expandable_segments = true;
}

/*
 * A pool's segments are what snapshot(mempool_id) lists: an expandable
 * segment whose middle page was unmapped is two (PyTorch 2.6.0's
 * snapshot() starts a segment at each mapped run; the differential
 * against it found 3 against our 2 before this counted runs).
 */
static void a_pools_segments_are_its_snapshots_mapped_runs(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), N8G, expandable);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	struct npa_snapshot snap;
	char err[256];
	void *p[3];

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	begin(a, id, always, NULL);
	/* One 20 MiB page each in both flavors (npu adds 32 bytes). */
	for (int i = 0; i < 3; i++)
		p[i] = fx_malloc(a, 20 * MiB - 32, NULL);
	end(a, id);
	assert_int_equal(pool_info(a, id).segments, 1);
	fx_free(a, p[1]);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_empty_cache(a, 0), 0);

	assert_int_equal(npa_snapshot_pool(a, 0, id, &snap), 0);
	assert_int_equal(snap.nsegments, 2);
	npa_snapshot_release(&snap);
	assert_int_equal(pool_info(a, id).segments, 2);
	assert_int_equal(pool_info(a, id).reserved_bytes, 40 * MiB);
	fx_free(a, p[0]);
	fx_free(a, p[2]);
	fx_stop(a);
}

/*
 * PyTorch 2.6.0 counts one cudaMalloc for each expandable block it
 * allocates in a private pool and takes one off for each range it unmaps
 * (CUDACachingAllocator.cpp:2727 and :3033), and deletes a released pool
 * at 0 (:2895): here 60 MiB allocated once, freed, 20 MiB of it taken
 * again and the other 40 MiB unmapped leave 0, so its MemPool's destructor
 * deletes the pool under the live block (its snapshot then names no pool,
 * and freeing the block touches the deleted pool). We keep the pool, as
 * for segments of cudaMalloc, until its last block goes.
 */
static void an_expandable_block_keeps_its_released_pool(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), N8G, expandable);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	begin(a, id, always, NULL);
	fx_free(a, fx_malloc(a, 60 * MiB - 32, NULL));
	void *p = fx_malloc(a, 20 * MiB - 32, NULL);
	end(a, id);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_empty_cache(a, 0), 0);

	struct npa_pool_info kept = pool_info(a, id);
	assert_true(kept.freeable);
	assert_int_equal(kept.use_count, 0);
	assert_int_equal(kept.segments, 1);
	assert_int_equal(kept.reserved_bytes, 20 * MiB);
	assert_int_equal(kept.allocated_bytes, 20 * MiB);
	assert_true(npa_pool_id_eq(fx_pool_of(a, p), id));
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	fx_stop(a);
}

/*
 * An allocation whose expandable segment could not map a page (an OOM)
 * leaves the pool a segment with nothing mapped and no device malloc
 * counted; PyTorch 2.6.0 erases the released pool at count 0
 * (CUDACachingAllocator.cpp:2895), and so does the cuda flavor, with
 * that segment (the differential found the pool kept, empty, for good).
 */
static void a_released_pool_goes_with_a_segment_that_never_mapped(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), 1 * GiB, expandable);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256];
	void *p;

	assert_int_equal(npa_create_or_incref_pool(a, 0, id), 0);
	begin(a, id, always, NULL);
	assert_int_equal(npa_malloc(a, 0, 2 * GiB, NULL, &p, err, sizeof(err)), -ENOMEM);
	end(a, id);
	assert_int_equal(pool_info(a, id).device_mallocs, 0);
	assert_int_equal(pool_info(a, id).segments, 0);
	assert_int_equal(npa_release_pool(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(pool_count(a), 0);
	fx_check(a);
	fx_stop(a);
}

/* cuda's empty_cache asserts captures_underway.empty(); torch_npu's runs. */
static void empty_cache_while_a_pool_routes_is_refused_in_cuda_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	bool cuda = FLAVOR(state)->any_scope_is_capture;

	fx_free(a, fx_malloc(a, 64 * MiB, NULL));
	int64_t reserved = fx_stats(a).reserved_bytes[ALL].current;
	begin(a, id, always, NULL);
	assert_int_equal(npa_empty_cache(a, 0), cuda ? -EBUSY : 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, cuda ? reserved : 0);
	end(a, id);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(graph_pool_handle_counts_users_and_captures_from_1),
		BOTH_FLAVORS(mempool_use_count_is_1_then_2_inside_a_scope_then_1),
		BOTH_FLAVORS(begin_twice_is_refused_after_taking_a_use),
		BOTH_FLAVORS(end_without_begin_is_refused_with_upstreams_text),
		BOTH_FLAVORS(only_the_routed_streams_allocations_go_to_the_pool),
		BOTH_FLAVORS(the_newest_scope_that_accepts_the_stream_wins),
		BOTH_FLAVORS(a_pools_free_block_is_not_reused_outside_it),
		BOTH_FLAVORS(a_pools_segments_are_its_snapshots_mapped_runs),
		BOTH_FLAVORS(an_expandable_block_keeps_its_released_pool),
		BOTH_FLAVORS(a_released_pool_goes_with_a_segment_that_never_mapped),
		BOTH_FLAVORS(empty_cache_keeps_a_live_pool_and_frees_it_once_released),
		BOTH_FLAVORS(a_freeable_pool_stays_while_a_block_is_allocated),
		BOTH_FLAVORS(a_pool_released_while_it_routes_stays_until_routing_ends),
		BOTH_FLAVORS(empty_cache_of_a_pool_touches_that_pool_only),
		BOTH_FLAVORS(a_no_split_pool_gives_whole_segments),
		BOTH_FLAVORS(private_pool_blocks_count_in_the_usual_stats),
		BOTH_FLAVORS(live_allocations_are_exactly_the_pools_allocated_blocks),
		BOTH_FLAVORS(a_pool_snapshot_has_that_pools_segments_only),
		BOTH_FLAVORS(history_entries_carry_the_pool_of_their_block),
		BOTH_FLAVORS(a_use_on_oom_pool_serves_a_request_the_device_cannot),
		BOTH_FLAVORS(a_pool_without_use_on_oom_leaves_the_request_to_fail),
		BOTH_FLAVORS(npu_tries_use_on_oom_pools_before_releasing_cached_blocks),
		BOTH_FLAVORS(a_free_with_stream_uses_during_routing_waits_in_cuda_only),
		BOTH_FLAVORS(empty_cache_while_a_pool_routes_is_refused_in_cuda_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
