/*
 * Each PYTORCH_*_ALLOC_CONF option alone, with the numbers it must give,
 * the combinations torch_npu refuses, and malformed strings that must
 * change nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloc_fixture.h"

#define N8G (8 * GiB)

static bool is_npu(void **state)
{
	return FLAVOR(state) == &npa_flavor_npu;
}

static void split_20mib(struct npa_conf *c)
{
	c->max_split_size = 20 * MiB;
}

/* cuda numbers: a 50 MiB segment is oversize and never serves a 5 MiB request. */
static void max_split_size_20_never_splits_a_50mib_block(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_cuda, N8G, split_20mib);
	void *p = fx_malloc(a, 50 * MiB, NULL);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.max_split_size, 20 * MiB);
	assert_int_equal(st.oversize_allocations.current, 1);
	assert_int_equal(st.oversize_segments.current, 1);
	fx_free(a, p);
	void *q = fx_malloc(a, 5 * MiB, NULL);
	st = fx_stats(a);
	assert_int_equal(st.oversize_allocations.current, 0);
	assert_int_equal(st.oversize_allocations.peak, 1);
	/* The new 20 MiB segment is itself >= max_split_size. */
	assert_int_equal(st.oversize_segments.current, 2);
	assert_int_equal(st.num_device_alloc, 2);
	assert_int_equal(st.segment[LARGE].current, 2);
	assert_int_equal(st.reserved_bytes[ALL].current, 70 * MiB);
	assert_int_equal(st.inactive_split[ALL].current, 1);
	/* An oversize request takes it whole when it is less than 20 MiB larger. */
	void *r = fx_malloc(a, 31 * MiB, NULL);
	assert_ptr_equal(r, p);
	assert_int_equal(npa_block_size(a, r), 50 * MiB);
	assert_int_equal(fx_stats(a).oversize_allocations.current, 1);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
}

/* 80 MiB >= 30 MiB + 20 MiB: the cached block is too large, a new segment comes. */
static void oversize_request_passes_a_block_max_non_split_rounding_larger(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_cuda, N8G, split_20mib);
	void *p = fx_malloc(a, 80 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 45 * MiB, NULL);
	assert_ptr_not_equal(q, p);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, q);
	fx_stop(a);
}

static void split_20_rounding_40(struct npa_conf *c)
{
	c->max_split_size = 20 * MiB;
	c->max_non_split_rounding = 40 * MiB;
}

/* max_non_split_rounding_mb:40: 80 MiB < 45 MiB + 40 MiB, so it is taken unsplit. */
static void max_non_split_rounding_40_takes_a_block_40mib_larger(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_cuda, N8G, split_20_rounding_40);
	void *p = fx_malloc(a, 80 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 45 * MiB, NULL);
	assert_ptr_equal(q, p);
	assert_int_equal(npa_block_size(a, q), 80 * MiB);
	assert_int_equal(fx_stats(a).num_device_alloc, 1);
	fx_free(a, q);
	fx_stop(a);
}

static size_t block_of(struct npa *a, size_t request)
{
	void *p = fx_malloc(a, request, NULL);
	size_t size = npa_block_size(a, p);

	fx_free(a, p);
	return size;
}

/* torch_npu test_roundup_power2_divisions: [8:1,64:4,128:8,256:2,>:16]. */
static void roundup_power2_divisions_per_interval(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_cuda, N8G, NULL);

	assert_int_equal(npa_set_conf(a, "roundup_power2_divisions:[8:1,64:4,128:8,256:2,>:16]",
				      NPA_ORIGIN_WRITE, NULL, 0), 0);
	assert_int_equal(block_of(a, 34 * MiB), 34 * MiB);   /* [32,64): 0, plain */
	assert_int_equal(block_of(a, 65 * MiB), 80 * MiB);   /* 4: steps of 16 MiB */
	assert_int_equal(block_of(a, 200 * MiB), 208 * MiB); /* 8: steps of 16 MiB */
	assert_int_equal(block_of(a, 510 * MiB), 512 * MiB); /* 2: steps of 128 MiB */
	assert_int_equal(block_of(a, 513 * MiB), 544 * MiB); /* 16: steps of 32 MiB */
	fx_stop(a);
}

static void expandable_40mib_pages(struct npa_conf *c)
{
	c->expandable_segments = true;
	c->large_segment_size = 40 * MiB;
}

/* large_segment_size_mb is also the expandable page of the large pool. */
static void large_segment_size_40_maps_40mib_pages(void **state)
{
	(void)state;
	struct npa *a = fx_start_conf(&npa_flavor_cuda, N8G, expandable_40mib_pages);
	void *p = fx_malloc(a, 5 * MiB, NULL);

	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 40 * MiB);
	void *q = fx_malloc(a, 50 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 80 * MiB);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, p);
	fx_free(a, q);
	fx_stop(a);
}

static void expandable_segment_size_30(struct npa_conf *c)
{
	c->expandable_segments = true;
	c->segment_size = 30 * MiB;
}

static void expandable_segment_size_30_large_40(struct npa_conf *c)
{
	expandable_segment_size_30(c);
	c->large_segment_size = 40 * MiB;
}

/* npu segment_size_mb (deprecated) sets the page unless large_segment_size_mb is set. */
static void npu_segment_size_mb_sets_the_expandable_page(void **state)
{
	(void)state;
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, expandable_segment_size_30);
	void *p = fx_malloc(a, 5 * MiB, NULL);

	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 30 * MiB);
	fx_free(a, p);
	fx_stop(a);
	a = fx_start_conf(&npa_flavor_npu, N8G, expandable_segment_size_30_large_40);
	p = fx_malloc(a, 5 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 40 * MiB);
	fx_free(a, p);
	fx_stop(a);
}

static void expandable_aligned_0(struct npa_conf *c)
{
	c->expandable_segments = true;
	c->base_addr_aligned = 0;
}

static void expandable_aligned_4k(struct npa_conf *c)
{
	c->expandable_segments = true;
	c->base_addr_aligned = 4 * KiB;
}

static void expandable_only(struct npa_conf *c)
{
	c->expandable_segments = true;
}

/* 5 MiB + 32 is 5 MiB + 512: the next 2 MiB-or-larger block starts on the alignment. */
static ptrdiff_t second_block_offset(void (*tweak)(struct npa_conf *))
{
	struct npa *a = fx_start_conf(&npa_flavor_npu, N8G, tweak);
	char *p = fx_malloc(a, 5 * MiB, NULL);
	char *q = fx_malloc(a, 5 * MiB, NULL);

	fx_free(a, p);
	fx_free(a, q);
	fx_stop(a);
	return q - p;
}

static void npu_base_addr_aligned_kb_aligns_expandable_blocks(void **state)
{
	(void)state;
	assert_int_equal(second_block_offset(expandable_only), 5 * MiB + 16 * KiB);
	assert_int_equal(second_block_offset(expandable_aligned_4k), 5 * MiB + 4 * KiB);
	assert_int_equal(second_block_offset(expandable_aligned_0), 5 * MiB + 512);
}

static void page_1g(struct npa_conf *c)
{
	c->page_size_1g = true;
}

/* npu page_size:1g: large-pool segments are whole GiBs; the small pool is unchanged. */
static void npu_page_size_1g_rounds_large_segments_to_1gib(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N8G, page_1g);
	void *p = fx_malloc(a, 12 * MiB, NULL);
	void *s = fx_malloc(a, 1000, NULL);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.reserved_bytes[LARGE].current, GiB);
	assert_int_equal(st.reserved_bytes[SMALL].current, 2 * MiB);
	void *q = fx_malloc(a, 1000 * MiB, NULL);
	assert_int_equal(fx_stats(a).reserved_bytes[LARGE].current, GiB);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, p);
	fx_free(a, q);
	fx_free(a, s);
	fx_stop(a);
}

static void lazy_reclaim(struct npa_conf *c)
{
	c->multi_stream_lazy_reclaim = true;
}

/*
 * npu multi_stream_lazy_reclaim: a completed cross-stream free is not
 * collected by a malloc the cache can serve, only when it finds nothing.
 */
static void npu_multi_stream_lazy_reclaim_defers_event_processing(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N8G, lazy_reclaim);
	aclrtStream s;
	void *q, *r;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	void *p = fx_malloc(a, 4096, NULL);
	assert_int_equal(npa_record_stream(a, p, s), 0);
	fx_free(a, p);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	q = fx_malloc(a, 4096, NULL);
	assert_ptr_not_equal(q, p);
	assert_int_equal(fx_stats(a).active[ALL].current, 2);
	/* 2 MiB finds nothing cached: the events are processed, p's block returns. */
	r = fx_malloc(a, 2 * MiB, NULL);
	assert_int_equal(fx_stats(a).active[ALL].current, 2);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
}

static void lazy_reclaim_and_gc(struct npa_conf *c)
{
	c->multi_stream_lazy_reclaim = true;
	c->per_process_memory_fraction = 0.75;
	c->garbage_collection_threshold = 0.75;
}

/* A request of n whole MiB (less the npu pad and rounding). */
#define MIB_LESS(n) ((n) * MiB - 4096)

/*
 * npu multi_stream_lazy_reclaim: a malloc that finds nothing searches
 * again after processing events, pending or not (torch_npu's malloc), and
 * each search ages GC's cached blocks. 128 MiB at fraction 0.75 allows 96
 * MiB, GC starts above 72. A (12 MiB) is cached, then 3 searches find
 * nothing (2 ages each) and 3 are served by p's split 20 MiB segment (1
 * each) around the caching of B (14 MiB) and C (16 MiB). At the 30 MiB
 * request A is 11 searches old, B 6 and C 2: the average 6.33 frees only A,
 * which is enough (reserved 78 MiB, 6 over). One age a search would make
 * it 7, 4 and 1, and B would go too (82 MiB reserved at the end).
 */
static void npu_lazy_reclaim_searches_twice_and_ages_gc_blocks_twice(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, 128 * MiB, lazy_reclaim_and_gc);
	void *p = fx_malloc(a, MIB_LESS(9), NULL);

	fx_free(a, fx_malloc(a, MIB_LESS(12), NULL));
	void *l1 = fx_malloc(a, MIB_LESS(16), NULL);
	fx_free(a, fx_malloc(a, MIB_LESS(2), NULL));
	fx_free(a, fx_malloc(a, MIB_LESS(14), NULL));
	fx_free(a, fx_malloc(a, MIB_LESS(2), NULL));
	fx_free(a, fx_malloc(a, MIB_LESS(2), NULL));
	fx_free(a, fx_malloc(a, MIB_LESS(16), NULL));
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 78 * MiB);
	void *big = fx_malloc(a, MIB_LESS(30), NULL);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.reserved_bytes[ALL].current, 96 * MiB);
	fx_free(a, big);
	fx_free(a, l1);
	fx_free(a, p);
	fx_stop(a);
}

/* torch_npu refuses max_split_size_mb and garbage_collection_threshold with
 * expandable_segments; upstream CUDA takes them together. */
static void npu_refuses_split_or_gc_with_expandable_segments(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, NULL);
	char err[NPA_ERRLEN] = "";
	int want = is_npu(state) ? -EINVAL : 0;

	assert_int_equal(npa_set_conf(a, "expandable_segments:True,max_split_size_mb:40",
				      NPA_ORIGIN_WRITE, err, sizeof(err)), want);
	assert_int_equal(npa_set_conf(a, "garbage_collection_threshold:0.5,"
				      "expandable_segments:True", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), want);
	if (is_npu(state))
		assert_non_null(strstr(err, "`max_split_size_mb` or `garbage_collection_threshold`, "
					    "cannot be enabled with `expandable_segments`"));
	fx_stop(a);
}

static const char *const bad_inputs[] = {
	"foo:1", "max_split_size_mb", "max_split_size_mb:", "max_split_size_mb:abc",
	"max_split_size_mb:10", "max_split_size_mb:-1", "max_split_size_mb::100",
	"max_split_size_mb:100,foo:1", "max_non_split_rounding_mb:10",
	"garbage_collection_threshold:0", "garbage_collection_threshold:1",
	"garbage_collection_threshold:1.5", "garbage_collection_threshold:x",
	"garbage_collection_threshold:0.5.5", "roundup_power2_divisions:3",
	"roundup_power2_divisions:[8:3]", "roundup_power2_divisions:[3:4]",
	"roundup_power2_divisions:[8:4", "expandable_segments:true", "expandable_segments:1",
	"expandable_segments:", "large_segment_size_mb:10", "large_segment_size_mb:abc",
	"segment_size_mb:10", "segment_size_mb:513", "base_addr_aligned_kb:17",
	"base_addr_aligned_kb:-1", "page_size:2g", "page_size",
	"per_process_memory_fraction:1.5", "per_process_memory_fraction:-0.1",
	"throw_on_npumalloc_oom:yes", "multi_stream_lazy_reclaim:2", ":", ",",
	"expandable_segments:True,max_split_size_mb:40",
};

/* Each gives EINVAL, quotes itself, lists the keys and changes nothing. */
static void malformed_strings_change_nothing(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N8G, NULL);
	struct npa_conf before, after;
	size_t n = sizeof(bad_inputs) / sizeof(bad_inputs[0]);
	char quoted[128];

	assert_true(n >= 30);
	assert_int_equal(npa_set_conf(a, "roundup_power2_divisions:4,max_split_size_mb:100",
				      NPA_ORIGIN_INI, NULL, 0), 0);
	npa_get_conf(a, &before);
	for (size_t i = 0; i < n; i++) {
		char err[NPA_ERRLEN] = "";

		if (npa_set_conf(a, bad_inputs[i], NPA_ORIGIN_WRITE, err, sizeof(err)) != -EINVAL)
			fail_msg("\"%s\" was not refused with EINVAL", bad_inputs[i]);
		snprintf(quoted, sizeof(quoted), "input \"%s\"", bad_inputs[i]);
		assert_non_null(strstr(err, quoted));
		assert_non_null(strstr(err, "valid keys: max_split_size_mb"));
		npa_get_conf(a, &after);
		assert_memory_equal(&after, &before, sizeof(after));
	}
	fx_stop(a);
}

static void a_string_of_512_bytes_is_refused(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), N8G, NULL);
	struct npa_conf before, after;
	char s[513];

	memset(s, 'x', 512);
	s[512] = '\0';
	npa_get_conf(a, &before);
	assert_int_equal(npa_set_conf(a, s, NPA_ORIGIN_WRITE, NULL, 0), -EINVAL);
	npa_get_conf(a, &after);
	assert_memory_equal(&after, &before, sizeof(after));
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(max_split_size_20_never_splits_a_50mib_block),
		cmocka_unit_test(oversize_request_passes_a_block_max_non_split_rounding_larger),
		cmocka_unit_test(max_non_split_rounding_40_takes_a_block_40mib_larger),
		cmocka_unit_test(roundup_power2_divisions_per_interval),
		cmocka_unit_test(large_segment_size_40_maps_40mib_pages),
		cmocka_unit_test(npu_segment_size_mb_sets_the_expandable_page),
		cmocka_unit_test(npu_base_addr_aligned_kb_aligns_expandable_blocks),
		cmocka_unit_test(npu_page_size_1g_rounds_large_segments_to_1gib),
		cmocka_unit_test(npu_multi_stream_lazy_reclaim_defers_event_processing),
		cmocka_unit_test(npu_lazy_reclaim_searches_twice_and_ages_gc_blocks_twice),
		BOTH_FLAVORS(npu_refuses_split_or_gc_with_expandable_segments),
		cmocka_unit_test(malformed_strings_change_nothing),
		BOTH_FLAVORS(a_string_of_512_bytes_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
