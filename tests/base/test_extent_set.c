/*
 * test_extent_set.c - written extents: merged where they touch, clipped
 * when the object shrinks, and bounded by merging the closest when full.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/extent_set.h"

static void assert_extent(const struct extent_set *s, size_t i, uint64_t lo, uint64_t hi)
{
	assert_true(i < s->n);
	assert_int_equal(s->e[i].lo, lo);
	assert_int_equal(s->e[i].hi, hi);
}

static void disjoint_writes_stay_apart_in_order(void **state)
{
	struct extent_set s = { .n = 0 };

	(void)state;
	extent_set_add(&s, 1 << 30, (1 << 30) + 100);
	extent_set_add(&s, 0, 4096);
	assert_int_equal(s.n, 2);
	assert_extent(&s, 0, 0, 4096);
	assert_extent(&s, 1, 1 << 30, (1 << 30) + 100);
}

static void touching_and_overlapping_writes_merge(void **state)
{
	struct extent_set s = { .n = 0 };

	(void)state;
	extent_set_add(&s, 0, 512);
	extent_set_add(&s, 512, 1024);     /* touches: dd's next block */
	extent_set_add(&s, 4096, 8192);
	extent_set_add(&s, 10000, 12000);
	extent_set_add(&s, 1000, 10001);   /* spans the last two and the hole */
	assert_int_equal(s.n, 1);
	assert_extent(&s, 0, 0, 12000);
}

static void shrinking_drops_and_cuts_extents(void **state)
{
	struct extent_set s = { .n = 0 };

	(void)state;
	extent_set_add(&s, 0, 100);
	extent_set_add(&s, 200, 300);
	extent_set_add(&s, 400, 500);
	extent_set_clip(&s, 250);
	assert_int_equal(s.n, 2);
	assert_extent(&s, 1, 200, 250);
	extent_set_clip(&s, 200);
	assert_int_equal(s.n, 1);
	extent_set_clip(&s, 0);
	assert_int_equal(s.n, 0);
}

/* One extent too many: the two with the smallest hole between them merge,
 * so the set covers more than was written, never less. */
static void a_full_set_merges_the_closest_pair(void **state)
{
	struct extent_set s = { .n = 0 };

	(void)state;
	for (uint64_t i = 0; i < EXTENT_SET_MAX; i++)
		extent_set_add(&s, i * 1000, i * 1000 + (i == 7 ? 990 : 10));
	assert_int_equal(s.n, EXTENT_SET_MAX);
	extent_set_add(&s, 1u << 20, (1u << 20) + 1);
	assert_int_equal(s.n, EXTENT_SET_MAX);
	assert_extent(&s, 7, 7000, 8010);
	assert_extent(&s, EXTENT_SET_MAX - 1, 1u << 20, (1u << 20) + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(disjoint_writes_stay_apart_in_order),
		cmocka_unit_test(touching_and_overlapping_writes_merge),
		cmocka_unit_test(shrinking_drops_and_cuts_extents),
		cmocka_unit_test(a_full_set_merges_the_closest_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
