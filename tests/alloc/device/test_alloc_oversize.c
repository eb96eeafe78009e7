/*
 * max_split_size_mb and the oversize rules, release_available_cached_blocks,
 * and garbage_collection_threshold.
 *
 * All on device-malloc segments, in the expandable run too: upstream's
 * oversize release and GC paths skip expandable blocks, and torch_npu
 * refuses these options together with expandable_segments.
 */
#include <errno.h>

#include "alloc_fixture.h"

#define N8G (8 * GiB)

static void split_40mib(struct npa_conf *c)
{
	c->max_split_size = 40 * MiB;
}

static void max_split_size_stat_is_the_setting_or_minus_1(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, split_40mib);

	assert_int_equal(fx_stats(a).max_split_size, 41943040);
	fx_stop(a);
	a = fx_start_device_segments(FLAVOR(state), N8G, NULL);
	assert_int_equal(fx_stats(a).max_split_size, -1);
	fx_stop(a);
}

static void oversize_block_is_not_given_to_a_normal_request(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, split_40mib);
	void *p = fx_malloc(a, 50 * MiB, NULL);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.oversize_allocations.current, 1);
	assert_int_equal(st.oversize_segments.current, 1);
	fx_free(a, p);
	assert_int_equal(fx_stats(a).oversize_allocations.current, 0);
	void *q = fx_malloc(a, 30 * MiB, NULL);
	st = fx_stats(a);
	assert_ptr_not_equal(q, p);
	assert_int_equal(st.num_device_alloc, 2);
	assert_int_equal(st.oversize_segments.current, 1);
	assert_int_equal(st.oversize_allocations.current, 0);
	fx_free(a, q);
	fx_stop(a);
}

/* 45 MiB may take a cached 50 MiB block (less than 20 MiB more), whole. */
static void oversize_request_takes_a_block_less_than_20mib_larger_unsplit(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, split_40mib);
	void *p = fx_malloc(a, 50 * MiB, NULL);
	int64_t whole = (int64_t)npa_block_size(a, p);

	fx_free(a, p);
	void *q = fx_malloc(a, 45 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_ptr_equal(q, p);
	assert_int_equal(st.allocated_bytes[ALL].current, whole);
	assert_int_equal(st.inactive_split[ALL].current, 0);
	assert_int_equal(st.num_device_alloc, 1);
	assert_int_equal(st.oversize_allocations.current, 1);
	fx_free(a, q);
	fx_stop(a);
}

/* 50 MiB will not take a cached 80 MiB block: 80 >= 50 + 20. */
static void oversize_request_skips_a_block_20mib_larger(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, split_40mib);
	void *p = fx_malloc(a, 80 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 50 * MiB, NULL);
	assert_ptr_not_equal(q, p);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, q);
	fx_stop(a);
}

/* Cached 60 and 50 MiB blocks on a 128 MiB device; 70 MiB frees both, largest first. */
static void release_available_frees_largest_oversize_blocks_until_enough(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 128 * MiB, split_40mib);
	void *p60 = fx_malloc(a, 60 * MiB, NULL);
	void *p50 = fx_malloc(a, 50 * MiB, NULL);

	fx_free(a, p60);
	fx_free(a, p50);
	void *q = fx_malloc(a, 70 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 2);
	assert_int_equal(st.num_alloc_retries, 0);
	assert_int_equal(st.num_sync_all_streams, 0);
	assert_int_equal(st.segment[ALL].current, 1);
	fx_free(a, q);
	fx_stop(a);
}

/* One cached 100 MiB block is enough for 60 MiB: only it is released. */
static void release_available_frees_one_block_big_enough(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 128 * MiB, split_40mib);
	void *small = fx_malloc(a, 4096, NULL);
	void *p = fx_malloc(a, 100 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 60 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.num_alloc_retries, 0);
	assert_int_equal(st.segment[ALL].current, 2);
	fx_free(a, q);
	fx_free(a, small);
	fx_stop(a);
}

/* Unlimited max_split_size: a 100 MiB cached block serves 60 MiB and is split. */
static void without_max_split_size_any_larger_cached_block_is_split(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 128 * MiB, NULL);
	void *p = fx_malloc(a, 100 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 60 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_ptr_equal(q, p);
	assert_int_equal(st.num_device_alloc, 1);
	assert_int_equal(st.inactive_split[LARGE].current, 1);
	fx_free(a, q);
	fx_stop(a);
}

/*
 * A cached 100 MiB block split for 30 MiB leaves a free 70 MiB part; once
 * max_split_size drops to 40 MiB that part counts as oversize, yet it is
 * only part of a segment and must not be handed back to the device.
 */
static void lowered_max_split_size_never_releases_part_of_a_segment(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 128 * MiB, NULL);
	char err[NPA_ERRLEN];
	void *big = fx_malloc(a, 100 * MiB, NULL);
	void *q = NULL;

	fx_free(a, big);
	void *p = fx_malloc(a, 30 * MiB, NULL);
	assert_ptr_equal(p, big);
	assert_int_equal(npa_set_conf(a, "max_split_size_mb:40", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), 0);
	assert_int_equal(npa_malloc(a, 0, 50 * MiB, NULL, &q, err, sizeof(err)), -ENOMEM);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 0);
	assert_int_equal(st.num_ooms, 1);
	fx_check(a);
	fx_free(a, p);
	fx_stop(a);
}

static void gc_at_40_percent(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.75;
	c->garbage_collection_threshold = 0.4;
}

/*
 * 128 MiB at fraction 0.75 allows 96 MiB; GC starts above 40% of that
 * (38.4 MiB). The 30 MiB block, idle for 4 searches, is older than the
 * average and goes; the 12 MiB block used a search ago stays.
 */
static void gc_frees_the_oldest_unsplit_blocks_first(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 128 * MiB, gc_at_40_percent);
	aclrtStream s;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	void *old = fx_malloc(a, 30 * MiB, NULL);
	fx_free(a, old);
	for (int i = 0; i < 3; i++)
		fx_free(a, fx_malloc(a, 12 * MiB, s));
	void *q = fx_malloc(a, 40 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.segment[LARGE].current, 2);
	assert_int_equal(st.num_alloc_retries, 0);
	void *again = fx_malloc(a, 12 * MiB, s);
	assert_int_equal(fx_stats(a).num_device_alloc, 3);
	fx_free(a, again);
	fx_free(a, q);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(max_split_size_stat_is_the_setting_or_minus_1),
		BOTH_FLAVORS(oversize_block_is_not_given_to_a_normal_request),
		BOTH_FLAVORS(oversize_request_takes_a_block_less_than_20mib_larger_unsplit),
		BOTH_FLAVORS(oversize_request_skips_a_block_20mib_larger),
		BOTH_FLAVORS(release_available_frees_largest_oversize_blocks_until_enough),
		BOTH_FLAVORS(release_available_frees_one_block_big_enough),
		BOTH_FLAVORS(without_max_split_size_any_larger_cached_block_is_split),
		BOTH_FLAVORS(lowered_max_split_size_never_releases_part_of_a_segment),
		BOTH_FLAVORS(gc_frees_the_oldest_unsplit_blocks_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
