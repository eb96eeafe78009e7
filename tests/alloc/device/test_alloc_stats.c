/*
 * Statistics: the Stat primitive and the two resets (upstream
 * reset_peak_memory_stats, reset_accumulated_memory_stats).
 */
#include <errno.h>

#include "alloc_fixture.h"

#define N8G (8 * GiB)

/* 4 KiB kept, 20 MiB freed: peak is the high-water mark until reset. */
static void reset_peak_sets_every_peak_to_current(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *keep = fx_malloc(a, 4096, NULL);
	int64_t k = (int64_t)npa_block_size(a, keep);
	void *tmp = fx_malloc(a, 20 * MiB, NULL);
	int64_t t = (int64_t)npa_block_size(a, tmp);

	fx_free(a, tmp);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.allocated_bytes[ALL].peak, k + t);
	assert_int_equal(st.allocated_bytes[LARGE].peak, t);
	assert_int_equal(st.allocation[ALL].peak, 2);
	assert_int_equal(npa_reset_peak_stats(a, 0), 0);
	st = fx_stats(a);
	assert_int_equal(st.allocated_bytes[ALL].peak, k);
	assert_int_equal(st.allocated_bytes[LARGE].peak, 0);
	assert_int_equal(st.allocation[ALL].peak, 1);
	assert_int_equal(st.reserved_bytes[ALL].peak, st.reserved_bytes[ALL].current);
	/* Totals are not peaks: they stay. */
	assert_int_equal(st.allocated_bytes[ALL].allocated, k + t);
	assert_int_equal(st.allocated_bytes[ALL].freed, t);
	fx_free(a, keep);
	fx_stop(a);
}

static void reset_accumulated_zeroes_totals_and_counters_only(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), 64 * MiB);
	void *p = fx_malloc(a, 40 * MiB, NULL);
	void *q = NULL;

	assert_int_equal(npa_malloc(a, 0, 40 * MiB, NULL, &q, NULL, 0), -ENOMEM);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_ooms, 1);
	assert_int_equal(st.num_alloc_retries, 1);
	assert_int_equal(st.num_sync_all_streams, 2);
	assert_int_equal(st.num_device_alloc, 1);
	assert_int_equal(st.num_device_free, 1);
	int64_t peak = st.reserved_bytes[ALL].peak;

	assert_int_equal(npa_reset_accumulated_stats(a, 0), 0);
	st = fx_stats(a);
	assert_int_equal(st.num_ooms, 0);
	assert_int_equal(st.num_alloc_retries, 0);
	assert_int_equal(st.num_sync_all_streams, 0);
	assert_int_equal(st.num_device_alloc, 0);
	assert_int_equal(st.num_device_free, 0);
	assert_int_equal(st.max_split_size, -1);
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
		assert_int_equal(st.allocated_bytes[t].allocated, 0);
		assert_int_equal(st.allocated_bytes[t].freed, 0);
		assert_int_equal(st.segment[t].allocated, 0);
		assert_int_equal(st.requested_bytes[t].freed, 0);
	}
	assert_int_equal(st.reserved_bytes[ALL].peak, peak);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	fx_stop(a);
}

/* Each update goes to "all" and to the block's own pool, never the other. */
static void stats_count_all_and_the_blocks_pool(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *s = fx_malloc(a, 1000, NULL);
	void *l = fx_malloc(a, 12 * MiB, NULL);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.allocation[ALL].current, 2);
	assert_int_equal(st.allocation[SMALL].current, 1);
	assert_int_equal(st.allocation[LARGE].current, 1);
	/* Expandable: a 2 MiB and a 20 MiB page, no segment counted. */
	assert_int_equal(st.segment[SMALL].current, fx_expandable() ? 0 : 1);
	assert_int_equal(st.segment[LARGE].current, fx_expandable() ? 0 : 1);
	if (fx_expandable())
		assert_int_equal(st.reserved_bytes[LARGE].current, 20 * MiB);
	assert_int_equal(st.reserved_bytes[ALL].current,
			 st.reserved_bytes[SMALL].current + st.reserved_bytes[LARGE].current);
	assert_int_equal(st.requested_bytes[SMALL].current, 1000);
	assert_int_equal(st.requested_bytes[LARGE].current, 12 * MiB);
	fx_free(a, s);
	fx_free(a, l);
	st = fx_stats(a);
	assert_int_equal(st.allocation[SMALL].freed, 1);
	assert_int_equal(st.allocation[LARGE].freed, 1);
	assert_int_equal(st.allocation[ALL].freed, 2);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(reset_peak_sets_every_peak_to_current),
		BOTH_FLAVORS(reset_accumulated_zeroes_totals_and_counters_only),
		BOTH_FLAVORS(stats_count_all_and_the_blocks_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
