/*
 * test_sim_extent.c - the page allocator behind aclrtMalloc, on its own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "extent_map.h"

static struct extent *take(struct extent_map *m, uint64_t npages)
{
	struct extent *e = NULL;

	assert_int_equal(extent_map_alloc(m, npages, &e), 0);
	return e;
}

static void runs_are_handed_out_from_page_0_upwards(void **state)
{
	struct extent_map m;

	(void)state;
	assert_int_equal(extent_map_init(&m, 10), 0);
	assert_int_equal(take(&m, 3)->start, 0);
	assert_int_equal(take(&m, 2)->start, 3);
	assert_int_equal(m.free_pages, 5);
	assert_int_equal(m.live_count, 2);
	extent_map_destroy(&m);
}

static void a_request_longer_than_every_free_run_gets_enospc(void **state)
{
	struct extent_map m;
	struct extent *a, *b, *e;

	(void)state;
	extent_map_init(&m, 6);
	a = take(&m, 2);
	b = take(&m, 2);
	take(&m, 2);
	extent_map_free(&m, a);
	assert_int_equal(m.free_pages, 2);
	assert_int_equal(extent_map_alloc(&m, 3, &e), -ENOSPC);
	extent_map_free(&m, b);     /* merges with a's run: 4 pages */
	assert_int_equal(extent_map_alloc(&m, 3, &e), 0);
	assert_int_equal(e->start, 0);
	extent_map_destroy(&m);
}

static void best_fit_takes_the_smallest_run_and_the_lowest_among_equals(void **state)
{
	struct extent_map m;
	struct extent *r[7];

	(void)state;
	extent_map_init(&m, 16);
	/* Pages: [0,3) [3,4) [4,6) [6,7) [7,9) [9,10) [10,16) */
	uint64_t len[7] = { 3, 1, 2, 1, 2, 1, 6 };
	for (int i = 0; i < 7; i++)
		r[i] = take(&m, len[i]);
	extent_map_free(&m, r[0]);  /* free run of 3 at 0 */
	extent_map_free(&m, r[2]);  /* free run of 2 at 4 */
	extent_map_free(&m, r[4]);  /* free run of 2 at 7 */
	assert_int_equal(take(&m, 2)->start, 4);
	assert_int_equal(take(&m, 2)->start, 7);
	assert_int_equal(take(&m, 2)->start, 0);
	extent_map_destroy(&m);
}

static void freeing_merges_with_both_neighbours(void **state)
{
	struct extent_map m;
	struct extent *a, *b, *c;

	(void)state;
	extent_map_init(&m, 8);
	a = take(&m, 2);
	b = take(&m, 2);
	c = take(&m, 2);
	take(&m, 2);
	extent_map_free(&m, a);
	extent_map_free(&m, c);
	assert_int_equal(extent_map_free_runs(&m), 2);
	extent_map_free(&m, b);
	assert_int_equal(extent_map_free_runs(&m), 1);
	assert_int_equal(extent_map_largest_free(&m), 6);
	extent_map_destroy(&m);
}

static void lookups_find_a_run_by_start_and_by_any_page_inside(void **state)
{
	struct extent_map m;
	struct extent *a, *b;

	(void)state;
	extent_map_init(&m, 10);
	a = take(&m, 3);
	b = take(&m, 4);
	assert_ptr_equal(extent_map_find(&m, 3), b);
	assert_null(extent_map_find(&m, 4));
	assert_ptr_equal(extent_map_containing(&m, 2), a);
	assert_ptr_equal(extent_map_containing(&m, 6), b);
	assert_null(extent_map_containing(&m, 7));
	extent_map_free(&m, a);
	assert_null(extent_map_containing(&m, 0));
	extent_map_destroy(&m);
}

static void many_runs_free_back_into_one(void **state)
{
	struct extent_map m;
	struct extent *r[1000];

	(void)state;
	extent_map_init(&m, 4000);
	for (int i = 0; i < 1000; i++)
		r[i] = take(&m, 1 + (uint64_t)i % 4);
	for (int i = 0; i < 1000; i += 2)
		extent_map_free(&m, r[i]);
	for (int i = 999; i > 0; i -= 2)
		extent_map_free(&m, r[i]);
	assert_int_equal(m.free_pages, 4000);
	assert_int_equal(extent_map_free_runs(&m), 1);
	assert_int_equal(m.live_count, 0);
	extent_map_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_are_handed_out_from_page_0_upwards),
		cmocka_unit_test(a_request_longer_than_every_free_run_gets_enospc),
		cmocka_unit_test(best_fit_takes_the_smallest_run_and_the_lowest_among_equals),
		cmocka_unit_test(freeing_merges_with_both_neighbours),
		cmocka_unit_test(lookups_find_a_run_by_start_and_by_any_page_inside),
		cmocka_unit_test(many_runs_free_back_into_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
