/*
 * Expandable segments: one virtual range per stream and pool, pages mapped
 * as it grows and unmapped by empty_cache (upstream's ExpandableSegment),
 * and torch_npu's empty_virt_addr_cache.
 */
#include <errno.h>
#include <string.h>

#include "alloc_fixture.h"

static void expandable(struct npa_conf *conf)
{
	conf->expandable_segments = true;
}

static struct npa *start(void **state, uint64_t capacity)
{
	return fx_start_conf(FLAVOR(state), capacity, expandable);
}

static bool is_npu(void **state)
{
	return FLAVOR(state) == &npa_flavor_npu;
}

static struct npa_snapshot snapshot(struct npa *a)
{
	struct npa_snapshot s;

	assert_int_equal(npa_snapshot(a, 0, &s), 0);
	return s;
}

/*
 * cuda: 5 MiB maps one 20 MiB page; a second 5 MiB fits in it; 30 MiB takes
 * the free 10 MiB tail and one more page. npu pads each request by 32 bytes
 * and starts blocks of 2 MiB or more on 16 KiB, so the 30 MiB block begins
 * past 10 MiB + 16 KiB and needs two more pages.
 */
static void two_growing_allocations_share_one_segment(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	size_t grown = is_npu(state) ? 60 * MiB : 40 * MiB;

	void *p1 = fx_malloc(a, 5 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 20 * MiB);
	assert_int_equal(fx_stats(a).segment[ALL].current, 0);
	assert_int_equal(fx_stats(a).num_device_alloc, 1);
	void *p2 = fx_malloc(a, 5 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 20 * MiB);
	assert_int_equal(fx_stats(a).num_device_alloc, 1);
	void *p3 = fx_malloc(a, 30 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, grown);
	assert_int_equal(fx_stats(a).reserved_bytes[LARGE].current, grown);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	assert_int_equal(fx_stats(a).segment[ALL].current, 0);
	assert_int_equal(fx_stats(a).inactive_split[ALL].current, 0);
	assert_int_equal(npa_block_size(a, p3), is_npu(state) ? 30 * MiB + 512 : 30 * MiB);
	if (is_npu(state))
		assert_int_equal((uintptr_t)p3 % (16 * KiB), 0);

	struct npa_snapshot s = snapshot(a);
	assert_int_equal(s.nsegments, 1);
	assert_true(s.segments[0].is_expandable);
	assert_int_equal(s.segments[0].total_size, is_npu(state) ? 62914560 : 41943040);
	assert_int_equal(s.segments[0].address, (uintptr_t)p1);
	npa_snapshot_release(&s);
	fx_check(a);
	fx_free(a, p1);
	fx_free(a, p2);
	fx_free(a, p3);
	fx_stop(a);
}

/* Freeing the 30 MiB block frees 10..40 MiB: only the page 20..40 is whole. */
static void empty_cache_returns_whole_pages(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	struct npa_segment_event ev[8];

	assert_int_equal(npa_record_memory_history(a, -1, "all", 64), 0);
	void *p1 = fx_malloc(a, 10 * MiB - 512, NULL);
	void *p2 = fx_malloc(a, 30 * MiB - 512, NULL);
	if (!is_npu(state))
		assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 40 * MiB);
	fx_free(a, p2);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 20 * MiB);
	assert_int_equal(fx_stats(a).num_device_free, 1);
	struct npa_snapshot s = snapshot(a);
	assert_int_equal(s.nsegments, 1);
	assert_int_equal(s.segments[0].total_size, 20 * MiB);
	npa_snapshot_release(&s);
	fx_check(a);

	fx_free(a, p1);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	assert_int_equal(fx_stats(a).num_device_free, 2);
	s = snapshot(a);
	assert_int_equal(s.nsegments, 0);
	npa_snapshot_release(&s);
	assert_int_equal(fx_device().physical_used, 0);

	assert_int_equal(npa_segment_events(a, 0, ev, 8), 4);
	assert_string_equal(npa_segment_action_name(ev[0].action), "segment_map");
	assert_int_equal(ev[0].address, (uintptr_t)p1);
	assert_int_equal(ev[0].size, 20 * MiB);
	assert_int_equal(ev[1].action, NPA_SEG_EV_MAP);
	assert_int_equal(ev[1].address, (uintptr_t)p1 + 20 * MiB);
	assert_int_equal(ev[2].action, NPA_SEG_EV_UNMAP);
	assert_int_equal(ev[2].address, (uintptr_t)p1 + 20 * MiB);
	assert_int_equal(ev[2].size, 20 * MiB);
	assert_int_equal(ev[3].action, NPA_SEG_EV_UNMAP);
	assert_int_equal(ev[3].address, (uintptr_t)p1);
	fx_stop(a);
}

static void fill(void *dev, unsigned char byte, size_t n)
{
	static unsigned char buf[MiB];

	memset(buf, byte, n);
	assert_int_equal(aclrtMemcpy(dev, n, buf, n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
}

static bool holds(void *dev, unsigned char byte, size_t n)
{
	static unsigned char buf[MiB];

	assert_int_equal(aclrtMemcpy(buf, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	for (size_t i = 0; i < n; i++)
		if (buf[i] != byte)
			return false;
	return true;
}

static void data_survives_growth_and_release(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	char *p1 = fx_malloc(a, 5 * MiB, NULL);

	fill(p1, 0xA5, MiB);
	fill(p1 + 4 * MiB, 0x5A, MiB);
	void *p2 = fx_malloc(a, 60 * MiB, NULL);
	fill(p2, 0x11, MiB);
	assert_true(holds(p1, 0xA5, MiB));
	fx_free(a, p2);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 20 * MiB);
	assert_true(holds(p1, 0xA5, MiB));
	assert_true(holds(p1 + 4 * MiB, 0x5A, MiB));
	fx_free(a, p1);
	fx_stop(a);
}

/* Small requests grow a 2 MiB-page segment of their own. */
static void small_pool_maps_two_mib_pages(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = fx_malloc(a, 1000 * KiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[SMALL].current, 4 * MiB);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	assert_int_equal(fx_stats(a).segment[SMALL].current, 0);
	assert_int_equal((char *)p[1] - (char *)p[0], is_npu(state) ? 1000 * KiB + 512 : 1000 * KiB);
	for (int i = 0; i < 3; i++)
		fx_free(a, p[i]);
	struct npa_snapshot s = snapshot(a);
	assert_int_equal(s.nsegments, 1);
	assert_false(s.segments[0].is_large);
	npa_snapshot_release(&s);
	fx_stop(a);
}

/* Each stream reserves its own range. */
static void each_stream_grows_its_own_segment(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	aclrtStream s1;

	assert_int_equal(aclrtCreateStream(&s1), ACL_SUCCESS);
	void *p = fx_malloc(a, 5 * MiB, NULL);
	void *q = fx_malloc(a, 5 * MiB, s1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 40 * MiB);
	struct npa_snapshot s = snapshot(a);
	assert_int_equal(s.nsegments, 2);
	npa_snapshot_release(&s);
	fx_free(a, p);
	fx_free(a, q);
	assert_int_equal(aclrtDestroyStream(s1), ACL_SUCCESS);
	fx_stop(a);
}

/* 64 MiB device: 60 MiB mapped, a fourth page cannot be had. */
static void failed_map_rolls_back_into_oom(void **state)
{
	struct npa *a = start(state, 64 * MiB);
	char err[NPA_ERRLEN] = "", last[NPA_ERRLEN] = "x";
	void *p = fx_malloc(a, 50 * MiB, NULL), *q = NULL;

	assert_int_equal(npa_last_oom(a, 0, last, sizeof(last), NULL), 0);
	assert_string_equal(last, "");
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 60 * MiB);
	assert_int_equal(npa_malloc(a, 0, 20 * MiB, NULL, &q, err, sizeof(err)), -ENOMEM);
	assert_null(q);
	assert_int_equal(fx_stats(a).num_ooms, 1);
	assert_int_equal(fx_stats(a).num_alloc_retries, 1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 60 * MiB);
	assert_int_equal(fx_device().physical_used, 60 * MiB);
	assert_int_equal(npa_last_oom(a, 0, last, sizeof(last), NULL), 0);
	assert_string_equal(last, err);
	/* npu rounds 20 MiB + 32 to a 22 MiB segment size. */
	assert_non_null(strstr(err, is_npu(state) ? "NPU out of memory. Tried to allocate 22.00 MiB"
						 : "CUDA out of memory. Tried to allocate 20.00 MiB"));
	fx_check(a);
	fx_free(a, p);
	fx_stop(a);
}

/* npu: the unmapped pages stay allocated and the next map reuses them. */
static void empty_virt_addr_cache_keeps_physical_pages(void **state)
{
	struct npa *a = start(state, 8 * GiB);
	void *p = fx_malloc(a, 30 * MiB, NULL);

	assert_int_equal(fx_device().physical_calls, 2);
	fx_free(a, p);
	assert_int_equal(npa_empty_virt_addr_cache(a, 0, NULL, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].peak, 40 * MiB);
	assert_int_equal(fx_device().physical_used, 40 * MiB);
	p = fx_malloc(a, 30 * MiB, NULL);
	assert_int_equal(fx_device().physical_calls, 2);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 40 * MiB);
	fx_free(a, p);
	assert_int_equal(npa_empty_virt_addr_cache(a, 0, NULL, 0), 0);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_device().physical_frees, 2);
	assert_int_equal(fx_device().physical_used, 0);
	fx_stop(a);
}

static void empty_virt_addr_cache_needs_expandable_segments(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 8 * GiB, NULL);
	char err[NPA_ERRLEN] = "";

	assert_int_equal(npa_empty_virt_addr_cache(a, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Unsupported config for empty_virt_addr_cache, please enable "
				 "expandable_segments.");
	fx_stop(a);
}

/*
 * Turned on at run time, new segments grow; turned off, expandable blocks
 * are passed over but kept until freed.
 */
static void expandable_segments_toggle_at_run_time(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 8 * GiB, NULL);

	void *p1 = fx_malloc(a, 5 * MiB, NULL);
	assert_int_equal(fx_stats(a).segment[ALL].current, 1);
	assert_int_equal(npa_set_conf(a, "expandable_segments:True", NPA_ORIGIN_WRITE, NULL, 0), 0);
	void *p2 = fx_malloc(a, 30 * MiB, NULL);
	assert_int_equal(fx_stats(a).segment[ALL].current, 1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 60 * MiB);
	fx_free(a, p2);
	assert_int_equal(npa_set_conf(a, "expandable_segments:False", NPA_ORIGIN_WRITE, NULL, 0), 0);
	p2 = fx_malloc(a, 30 * MiB, NULL);
	assert_int_equal(fx_stats(a).segment[ALL].current, 2);
	/* A device segment of 30 MiB (npu: 30 MiB + 512 rounds to 32 MiB). */
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current,
			 is_npu(state) ? 92 * MiB : 90 * MiB);
	struct npa_snapshot s = snapshot(a);
	assert_int_equal(s.nsegments, 3);
	npa_snapshot_release(&s);
	fx_free(a, p1);
	fx_free(a, p2);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(two_growing_allocations_share_one_segment),
		BOTH_FLAVORS(empty_cache_returns_whole_pages),
		BOTH_FLAVORS(data_survives_growth_and_release),
		BOTH_FLAVORS(small_pool_maps_two_mib_pages),
		BOTH_FLAVORS(each_stream_grows_its_own_segment),
		BOTH_FLAVORS(failed_map_rolls_back_into_oom),
		cmocka_unit_test_prestate(empty_virt_addr_cache_keeps_physical_pages,
					  (void *)&npa_flavor_npu),
		BOTH_FLAVORS(empty_virt_addr_cache_needs_expandable_segments),
		BOTH_FLAVORS(expandable_segments_toggle_at_run_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
