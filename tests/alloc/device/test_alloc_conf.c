/*
 * Settings at run time (npa_set_conf): what changes, what is refused.
 */
#include <errno.h>
#include <string.h>

#include "alloc_fixture.h"

#define N8G (8 * GiB)

/* max_split_size_mb changes with blocks live; the stat keeps the creation value. */
static void max_split_size_changes_with_live_blocks(void **state)
{
	/* torch_npu refuses max_split_size_mb with expandable_segments. */
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, NULL);
	struct npa_conf conf;
	void *p = fx_malloc(a, 50 * MiB, NULL);

	assert_int_equal(npa_set_conf(a, "max_split_size_mb:40", NPA_ORIGIN_WRITE, NULL, 0), 0);
	npa_get_conf(a, &conf);
	assert_int_equal(conf.max_split_size, 40 * MiB);
	assert_int_equal(fx_stats(a).max_split_size, -1);
	fx_free(a, p);
	/* The cached 50 MiB block is now oversize: a 30 MiB request needs a new segment. */
	void *q = fx_malloc(a, 30 * MiB, NULL);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, q);
	fx_stop(a);
}

static void large_segment_size_waits_for_an_empty_device(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char err[NPA_ERRLEN];
	void *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_set_conf(a, "large_segment_size_mb:40", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), -EBUSY);
	assert_string_equal(err, "large_segment_size_mb cannot change while the allocator holds "
				 "memory: segments already made keep the old value; free every "
				 "block and empty the cache first");
	fx_free(a, p);
	assert_int_equal(npa_set_conf(a, "large_segment_size_mb:40", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), -EBUSY);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(npa_set_conf(a, "large_segment_size_mb:40", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), 0);
	void *q = fx_malloc(a, 2 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[LARGE].current, 40 * MiB);
	fx_free(a, q);
	fx_stop(a);
}

static void fraction_from_settings_applies_at_once(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), 64 * MiB);
	void *p = NULL;

	assert_int_equal(npa_set_conf(a, "per_process_memory_fraction:0.5", NPA_ORIGIN_WRITE,
				      NULL, 0), 0);
	assert_true(npa_get_memory_fraction(a, 0) == 0.5);
	assert_int_equal(npa_malloc(a, 0, 40 * MiB, NULL, &p, NULL, 0), -ENOMEM);
	fx_stop(a);
}


static void bad_string_changes_nothing(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_conf before, after;
	char err[NPA_ERRLEN] = "";

	assert_int_equal(npa_set_conf(a, "roundup_power2_divisions:8", NPA_ORIGIN_WRITE, NULL, 0),
			 0);
	npa_get_conf(a, &before);
	assert_int_equal(npa_set_conf(a, "no_such_key:1", NPA_ORIGIN_WRITE, err, sizeof(err)),
			 -EINVAL);
	assert_true(err[0] != '\0');
	npa_get_conf(a, &after);
	assert_memory_equal(&after, &before, sizeof(after));
	assert_int_equal(after.roundup_power2_divisions[5], 8);
	fx_stop(a);
}

/* torch_npu's _set_allocator_settings refuses it whatever the state. */
static void multi_stream_lazy_reclaim_is_refused_at_run_time(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_conf conf;
	char err[NPA_ERRLEN] = "";

	assert_int_equal(npa_set_conf(a, "multi_stream_lazy_reclaim:True", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), -EBUSY);
	assert_string_equal(err, "multi_stream_lazy_reclaim cannot change at run time: it is "
				 "read once when the allocator starts");
	npa_get_conf(a, &conf);
	assert_false(conf.multi_stream_lazy_reclaim);
	fx_stop(a);
}

/* A refused key refuses the whole string: the safe keys in it do not apply. */
static void busy_string_changes_nothing(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	struct npa_conf conf;
	void *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_set_conf(a, "roundup_power2_divisions:4,large_segment_size_mb:40",
				      NPA_ORIGIN_WRITE, NULL, 0), -EBUSY);
	npa_get_conf(a, &conf);
	assert_int_equal(conf.roundup_power2_divisions[0], 0);
	assert_int_equal(conf.large_segment_size, 20 * MiB);
	fx_free(a, p);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(max_split_size_changes_with_live_blocks),
		BOTH_FLAVORS(large_segment_size_waits_for_an_empty_device),
		cmocka_unit_test_prestate(fraction_from_settings_applies_at_once,
					  (void *)&npa_flavor_npu),
		BOTH_FLAVORS(bad_string_changes_nothing),
		cmocka_unit_test_prestate(multi_stream_lazy_reclaim_is_refused_at_run_time,
					  (void *)&npa_flavor_npu),
		BOTH_FLAVORS(busy_string_changes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
