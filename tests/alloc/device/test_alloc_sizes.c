/*
 * Size rounding, pool choice and segment sizes (upstream round_size,
 * get_pool, get_allocation_size, should_split; the worked table).
 */
#include "alloc_fixture.h"

#include "alloc/device/device.h"

#define N8G (8 * GiB)

/* One allocation on a fresh device: block size, segment size, split or not. */
struct shape {
	int64_t block;
	int64_t segment;
	bool small;
	int64_t inactive_split;
	int64_t inactive_split_bytes;
};

/*
 * Expandable mode maps pages instead: 2 MiB for the small pool, 20 MiB for
 * the large; no segment is counted, expandable blocks stay out of
 * inactive_split, and a block is split down to the 512-rounded request
 * (11 MiB is an 11 MiB block, not a whole 12 MiB segment).
 */
static struct shape expandable_shape(const struct npa_flavor *f, size_t request,
				     struct shape want)
{
	size_t page = want.small ? 2 * MiB : 20 * MiB;
	int64_t rounded = (int64_t)((request + f->pad + 511) / 512 * 512);

	return (struct shape){ .block = rounded,
			       .segment = (int64_t)((rounded + page - 1) / page * page),
			       .small = want.small };
}

static void expect_shape(const struct npa_flavor *f, size_t request, struct shape want)
{
	struct npa *a = fx_start(f, N8G);
	bool exp = fx_expandable();

	if (exp)
		want = expandable_shape(f, request, want);
	void *p = fx_malloc(a, request, NULL);
	struct npa_stats st = fx_stats(a);
	int pool = want.small ? SMALL : LARGE;

	assert_int_equal(st.allocated_bytes[ALL].current, want.block);
	assert_int_equal(st.allocated_bytes[pool].current, want.block);
	assert_int_equal(st.requested_bytes[ALL].current, (int64_t)request);
	assert_int_equal(st.reserved_bytes[pool].current, want.segment);
	assert_int_equal(st.segment[pool].current, exp ? 0 : 1);
	assert_int_equal(st.inactive_split[ALL].current, want.inactive_split);
	assert_int_equal(st.inactive_split_bytes[ALL].current, want.inactive_split_bytes);
	assert_int_equal(npa_block_size(a, p), want.block);
	fx_check(a);
	fx_free(a, p);
	fx_stop(a);
}

static void cuda_1_byte_is_a_512_byte_block_in_a_2mib_small_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 1, (struct shape){ 512, 2097152, true, 1, 2096640 });
}

static void cuda_513_bytes_round_to_1024(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 513, (struct shape){ 1024, 2097152, true, 1, 2096128 });
}

static void cuda_1mib_is_still_the_small_pool(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 1048576,
		     (struct shape){ 1048576, 2097152, true, 1, 1048576 });
}

static void cuda_1mib_plus_1_takes_a_20mib_large_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 1048577,
		     (struct shape){ 1049088, 20971520, false, 1, 19922432 });
}

static void cuda_10mib_minus_512_splits_a_20mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 10485248,
		     (struct shape){ 10485248, 20971520, false, 1, 10486272 });
}

static void cuda_10mib_gets_its_own_10mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 10485760,
		     (struct shape){ 10485760, 10485760, false, 0, 0 });
}

static void cuda_10mib_plus_1_splits_off_2096640_of_12mib(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 10485761,
		     (struct shape){ 10486272, 12582912, false, 1, 2096640 });
}

/* 1 MiB left over is not more than kSmallSize: the whole 12 MiB is handed out. */
static void cuda_11mib_takes_a_whole_12mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_cuda, 11534336,
		     (struct shape){ 12582912, 12582912, false, 0, 0 });
}

/* The npu pad: 512 + 32 bytes round up to 1024 (torch_npu test_add_32). */
static void npu_512_bytes_are_a_1024_byte_block(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 512, (struct shape){ 1024, 2097152, true, 1, 2096128 });
}

static void npu_1_byte_is_a_512_byte_block(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 1, (struct shape){ 512, 2097152, true, 1, 2096640 });
}

/* 1 MiB + 32 is over kSmallSize: large pool, 20 MiB segment. */
static void npu_1mib_goes_to_a_20mib_large_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 1048576,
		     (struct shape){ 1049088, 20971520, false, 1, 19922432 });
}

static void npu_11mib_takes_a_whole_12mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 11534336,
		     (struct shape){ 12582912, 12582912, false, 0, 0 });
}

/* 10 MiB - 544 + 32 = 10485248: under kMinLargeAlloc, so a split 20 MiB segment. */
static void npu_10mib_minus_544_splits_a_20mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 10485216,
		     (struct shape){ 10485248, 20971520, false, 1, 10486272 });
}

/* The pad carries 10 MiB - 512 up to 10 MiB exactly: a dedicated 10 MiB segment. */
static void npu_10mib_minus_512_is_a_dedicated_10mib_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 10485248,
		     (struct shape){ 10485760, 10485760, false, 0, 0 });
}

/* torch_npu test_huge_memory_alloc_20M: 40 Mi floats. */
static void npu_160mib_is_167772672_in_a_169869312_segment(void **state)
{
	(void)state;
	expect_shape(&npa_flavor_npu, 167772160,
		     (struct shape){ 167772672, 169869312, false, 1, 2096640 });
}

static void roundup_power2_next_division_examples(void **state)
{
	(void)state;
	assert_int_equal(npa_roundup_power2_next_division(1200, 4), 1280);
	assert_int_equal(npa_roundup_power2_next_division(88080384, 4), 100663296);
	assert_int_equal(npa_roundup_power2_next_division(88080384, 8), 92274688);
	assert_int_equal(npa_roundup_power2_next_division(419430400, 2), 536870912);
	assert_int_equal(npa_roundup_power2_next_division(67108864, 4), 67108864);
}

static void divisions_4(struct npa_conf *c)
{
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		c->roundup_power2_divisions[i] = 4;
}

static int64_t block_for(const struct npa_flavor *f, size_t request)
{
	struct npa *a = fx_start_conf(f, N8G, divisions_4);
	void *p = fx_malloc(a, request, NULL);
	int64_t size = fx_stats(a).allocated_bytes[ALL].current;

	fx_free(a, p);
	fx_stop(a);
	return size;
}

/* 84 MiB with 4 divisions: the interval [64, 128) MiB in steps of 16 MiB. */
static void divisions_4_round_84mib_to_96mib(void **state)
{
	assert_int_equal(block_for(FLAVOR(state), 88080384), 100663296);
}

/* Upstream only divides sizes above 512 * divisions: 1200 stays 512-rounded. */
static void divisions_4_leave_1200_bytes_at_1536(void **state)
{
	assert_int_equal(block_for(FLAVOR(state), 1200), 1536);
}

/* 2100 (+32 on npu) is above 2048: rounded to the next quarter of 2048. */
static void divisions_4_round_2100_bytes_to_2560(void **state)
{
	assert_int_equal(block_for(FLAVOR(state), 2100), 2560);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda_1_byte_is_a_512_byte_block_in_a_2mib_small_segment),
		cmocka_unit_test(cuda_513_bytes_round_to_1024),
		cmocka_unit_test(cuda_1mib_is_still_the_small_pool),
		cmocka_unit_test(cuda_1mib_plus_1_takes_a_20mib_large_segment),
		cmocka_unit_test(cuda_10mib_minus_512_splits_a_20mib_segment),
		cmocka_unit_test(cuda_10mib_gets_its_own_10mib_segment),
		cmocka_unit_test(cuda_10mib_plus_1_splits_off_2096640_of_12mib),
		cmocka_unit_test(cuda_11mib_takes_a_whole_12mib_segment),
		cmocka_unit_test(npu_512_bytes_are_a_1024_byte_block),
		cmocka_unit_test(npu_1_byte_is_a_512_byte_block),
		cmocka_unit_test(npu_1mib_goes_to_a_20mib_large_segment),
		cmocka_unit_test(npu_11mib_takes_a_whole_12mib_segment),
		cmocka_unit_test(npu_10mib_minus_544_splits_a_20mib_segment),
		cmocka_unit_test(npu_10mib_minus_512_is_a_dedicated_10mib_segment),
		cmocka_unit_test(npu_160mib_is_167772672_in_a_169869312_segment),
		cmocka_unit_test(roundup_power2_next_division_examples),
		BOTH_FLAVORS(divisions_4_round_84mib_to_96mib),
		BOTH_FLAVORS(divisions_4_leave_1200_bytes_at_1536),
		BOTH_FLAVORS(divisions_4_round_2100_bytes_to_2560),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
