/*
 * test_oom_why.c - the lines below upstream's OOM message, from figures:
 * each figure exact then in format_size, the pending frees by stream, the
 * pool asked named as upstream names pools, and each verdict in words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#define MiB ((uint64_t)1 << 20)

static void expect_text(const struct npa_oom_why *w, const char *want)
{
	struct sbuf out;

	sbuf_init(&out);
	assert_int_equal(report_oom_why(&out, w), 0);
	assert_int_equal(sbuf_puts(&out, ""), 0);
	assert_string_equal(out.len ? out.data : "", want);
	sbuf_release(&out);
}

/* A graph's request held back by frees pending on ten streams: eight named. */
static void pending_frees_name_eight_streams_and_sum_the_rest(void **state)
{
	struct npa_oom_why w = {
		.valid = true, .request = 16 * MiB, .alloc_size = 16 * MiB, .stream = 11,
		.pool_id = { 1, 0 }, .pending_free = 10240, .npending_streams = 8,
		.pending = { { 1, 1024 }, { 2, 1024 }, { 3, 1024 }, { 4, 1024 },
			     { 5, 1024 }, { 6, 1024 }, { 7, 1024 }, { 8, 1024 } },
		.pending_other_streams = 2048, .other_allocators = 3 * MiB,
	};

	(void)state;
	w.verdict = npa_oom_verdict_of(&w);
	expect_text(&w,
		"request 16777216 bytes (16.00 MiB) from large_pool of private pool 1_0 on "
		"stream 11; a new segment 16777216 bytes (16.00 MiB)\n"
		"largest_free_block 0 bytes on stream 11\n"
		"pool_free 0 bytes in 0 segments\n"
		"headroom 0 bytes\n"
		"private_pools 0 bytes in 0 pools\n"
		"pending_frees 10240 bytes (10.00 KiB): stream 1 1024 bytes, stream 2 1024 "
		"bytes, stream 3 1024 bytes, stream 4 1024 bytes, stream 5 1024 bytes, stream 6 "
		"1024 bytes, stream 7 1024 bytes, stream 8 1024 bytes, other streams 2048 bytes "
		"(2.00 KiB)\n"
		"other_allocators 3145728 bytes (3.00 MiB)\n"
		"verdict: out of memory: 16.00 MiB (a new segment of 16.00 MiB) is more than the "
		"0 bytes free in large_pool of private pool 1_0, 0 bytes on the device, 0 bytes "
		"in private pools and 10.00 KiB pending together; 3.00 MiB held by other "
		"allocators\n");
}

/* A free block large enough that best fit passed over is the oversize rule's. */
static void a_large_enough_block_passed_over_is_told_as_oversize(void **state)
{
	struct npa_oom_why w = {
		.valid = true, .request = 20 * MiB, .alloc_size = 20 * MiB, .small_pool = false,
		.largest_free_block = 300 * MiB, .pool_free = 300 * MiB, .pool_free_segments = 1,
	};
	struct sbuf out;

	(void)state;
	w.verdict = npa_oom_verdict_of(&w);
	assert_int_equal(w.verdict, NPA_OOM_FRAGMENTATION);
	sbuf_init(&out);
	assert_int_equal(report_oom_why(&out, &w), 0);
	assert_int_equal(sbuf_puts(&out, ""), 0);
	assert_non_null(strstr(out.data, "\nverdict: fragmentation: 20.00 MiB would fit in the "
				   "free bytes (300.00 MiB in 1 segment of large_pool, 0 bytes on "
				   "the device) and its largest block on stream 0 is 300.00 MiB, "
				   "but max_split_size_mb keeps oversize blocks from it\n"));
	sbuf_release(&out);
}

/* The order of the verdicts: each adds the bytes of the one before. */
static void verdicts_come_in_order_each_adding_the_last(void **state)
{
	struct npa_oom_why w = { .valid = true, .request = 16 * MiB, .alloc_size = 16 * MiB };

	(void)state;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_OUT_OF_MEMORY);
	w.pending_free = 16 * MiB;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_PENDING_FREES);
	w.private_free = 8 * MiB;
	w.pending_free = 8 * MiB;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_PENDING_FREES);
	w.private_free = 16 * MiB;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_PRIVATE_POOLS);
	w.pool_free = 8 * MiB;
	w.headroom = 8 * MiB;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_FRAGMENTATION);
	/* The device's bytes count toward a new segment only with the pool's. */
	w.pool_free = 0;
	w.private_free = 0;
	w.pending_free = 0;
	assert_int_equal(npa_oom_verdict_of(&w), NPA_OOM_OUT_OF_MEMORY);
}

static void figures_that_are_not_valid_write_nothing(void **state)
{
	struct npa_oom_why w = { .valid = false, .request = 1 };

	(void)state;
	expect_text(&w, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pending_frees_name_eight_streams_and_sum_the_rest),
		cmocka_unit_test(a_large_enough_block_passed_over_is_told_as_oversize),
		cmocka_unit_test(verdicts_come_in_order_each_adding_the_last),
		cmocka_unit_test(figures_that_are_not_valid_write_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
