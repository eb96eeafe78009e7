/*
 * test_min_capacity.c - the bisection over capacity, against probes whose
 * answer is known: the least capacity that runs, found in pages, checked
 * by a second run, a smaller one that runs said beside it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "workload/min_capacity.h"

#define MiB (1ull << 20)
#define PAGE (2 * MiB)

/* A trace that runs from `need` bytes up, and also in [window_lo, window_hi). */
struct fake {
	uint64_t need;
	uint64_t window_lo, window_hi;
	unsigned calls;
	unsigned flaky_after;  /* fails every run after this many, 0: never */
};

static int fake_runs(void *ctx, uint64_t capacity, char *err, size_t errlen)
{
	struct fake *f = ctx;

	(void)err;
	(void)errlen;
	assert_int_equal(capacity % PAGE, 0);
	f->calls++;
	if (f->flaky_after && f->calls > f->flaky_after)
		return 0;
	return capacity >= f->need || (capacity >= f->window_lo && capacity < f->window_hi);
}

static int find_hinted(struct fake *f, uint64_t floor, uint64_t start,
		       enum wl_start_result known, uint64_t hint, struct wl_min_capacity *out)
{
	const struct wl_capacity_probe p = { .runs = fake_runs, .ctx = f };
	const struct wl_capacity_search s = { .floor = floor, .start = start,
					      .limit = 1ull << 40, .page = PAGE,
					      .start_result = known, .hint = hint };
	char err[256] = "";

	return wl_min_capacity_find(&p, &s, out, err, sizeof(err));
}

static int find_known(struct fake *f, uint64_t floor, uint64_t start,
		      enum wl_start_result known, struct wl_min_capacity *out)
{
	return find_hinted(f, floor, start, known, 0, out);
}

static int find(struct fake *f, uint64_t floor, uint64_t start, struct wl_min_capacity *out)
{
	return find_known(f, floor, start, WL_START_UNKNOWN, out);
}

/* 1000 MiB needed: 500 pages, found between the floor and 32 GiB. */
static void answer_is_the_least_page_multiple_that_runs(void **state)
{
	struct fake f = { .need = 1000 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 3 * MiB, 32768 * MiB, &m), 0);
	assert_int_equal(m.bytes, 1000 * MiB);
	assert_int_equal(m.smaller, 0);
	assert_int_equal(m.probes, f.calls);
}

/* 999 MiB is not a page multiple: 1000 MiB is the first that holds it. */
static void answer_is_rounded_up_to_a_page(void **state)
{
	struct fake f = { .need = 999 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 0, 32768 * MiB, &m), 0);
	assert_int_equal(m.bytes, 1000 * MiB);
}

/* Nothing runs at 1 GiB: the search doubles to 8 GiB, then bisects. */
static void search_doubles_past_a_capacity_too_small(void **state)
{
	struct fake f = { .need = 5000 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 0, 1024 * MiB, &m), 0);
	assert_int_equal(m.bytes, 5000 * MiB);
}

/* Beyond the limit: no answer, no error. */
static void none_up_to_the_limit_is_zero(void **state)
{
	struct fake f = { .need = 1ull << 41 };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 0, 1024 * MiB, &m), 0);
	assert_int_equal(m.bytes, 0);
}

/* The floor is the largest request: the floor itself may be the answer
 * (a trace of one 64 MiB block runs in 64 MiB). */
static void floor_can_be_the_answer(void **state)
{
	struct fake f = { .need = 64 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 64 * MiB, 32768 * MiB, &m), 0);
	assert_int_equal(m.bytes, 64 * MiB);
}

/*
 * Runs from 1000 MiB, and also in a window below. Bisection from 1024 MiB
 * (runs) probes 512, 768, 896, 960, 992 MiB (fail), 1008, 1000 (run), 996,
 * 998 (fail): 1000 MiB, never looking inside a window. The tries below it
 * are the floor (1 page) and quarter steps to the page below the answer:
 * 1 + (499 - 1) * k / 4 pages = 2, 250, 500, 748, 998 MiB. A window at
 * 600..700 MiB is missed by all of them; one at 498..502 MiB holds 500.
 */
static void smaller_capacity_that_runs_is_reported(void **state)
{
	struct fake f = { .need = 1000 * MiB, .window_lo = 600 * MiB, .window_hi = 700 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find(&f, 0, 1024 * MiB, &m), 0);
	assert_int_equal(m.bytes, 1000 * MiB);
	assert_int_equal(m.smaller, 0);
	f = (struct fake){ .need = 1000 * MiB, .window_lo = 498 * MiB, .window_hi = 502 * MiB };
	assert_int_equal(find(&f, 0, 1024 * MiB, &m), 0);
	assert_int_equal(m.bytes, 1000 * MiB);
	assert_int_equal(m.smaller, 500 * MiB);
}

/* The answer is run again: a replay that does not repeat is an error. */
static void answer_that_fails_a_second_run_is_an_error(void **state)
{
	struct fake f = { .need = 1000 * MiB, .flaky_after = 1 };
	struct wl_min_capacity m;

	(void)state;
	/* The start (1000 MiB) runs once; every later run fails, so the
	 * bisection keeps 1000 MiB and its second run fails. */
	assert_int_equal(find(&f, 0, 1000 * MiB, &m), -EPROTO);
}

/* The caller replayed the start already: the same answer, one replay fewer. */
static void a_known_start_is_not_replayed(void **state)
{
	struct fake unknown = { .need = 1000 * MiB }, known = { .need = 1000 * MiB };
	struct wl_min_capacity a, b;

	(void)state;
	assert_int_equal(find(&unknown, 3 * MiB, 32768 * MiB, &a), 0);
	assert_int_equal(find_known(&known, 3 * MiB, 32768 * MiB, WL_START_RUNS, &b), 0);
	assert_int_equal(b.bytes, a.bytes);
	assert_int_equal(b.smaller, a.smaller);
	assert_int_equal(known.calls, unknown.calls - 1);
	assert_int_equal(b.probes, known.calls);
}

/* A start known to run out of memory sends the search up at once. */
static void a_start_known_to_fail_doubles_without_a_replay(void **state)
{
	struct fake f = { .need = 3000 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find_known(&f, 0, 1024 * MiB, WL_START_OOMS, &m), 0);
	assert_int_equal(m.bytes, 3000 * MiB);
	/* 2048 (fails), 4096 (runs), then the bisection: 1024 was never run. */
	struct fake again = { .need = 3000 * MiB };
	struct wl_min_capacity n;
	assert_int_equal(find(&again, 0, 1024 * MiB, &n), 0);
	assert_int_equal(f.calls, again.calls - 1);
}

/* What a replay held at its peak, a little above the answer, is tried
 * first: 1010 MiB runs, and the bisection starts below it instead of
 * halving 32 GiB down to it. */
static void a_hint_above_the_answer_spares_the_halvings(void **state)
{
	struct fake plain = { .need = 1000 * MiB }, hinted = { .need = 1000 * MiB };
	struct wl_min_capacity a, b;

	(void)state;
	assert_int_equal(find_known(&plain, 3 * MiB, 32768 * MiB, WL_START_RUNS, &a), 0);
	assert_int_equal(find_hinted(&hinted, 3 * MiB, 32768 * MiB, WL_START_RUNS, 1010 * MiB,
				     &b), 0);
	assert_int_equal(b.bytes, 1000 * MiB);
	assert_int_equal(b.bytes, a.bytes);
	assert_int_equal(plain.calls, 19);
	assert_int_equal(hinted.calls, 15);
}

/* A hint that does not run costs its probe, never the answer. */
static void a_hint_below_the_answer_still_finds_it(void **state)
{
	struct fake f = { .need = 1000 * MiB };
	struct wl_min_capacity m;

	(void)state;
	assert_int_equal(find_hinted(&f, 3 * MiB, 32768 * MiB, WL_START_RUNS, 900 * MiB, &m), 0);
	assert_int_equal(m.bytes, 1000 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answer_is_the_least_page_multiple_that_runs),
		cmocka_unit_test(answer_is_rounded_up_to_a_page),
		cmocka_unit_test(search_doubles_past_a_capacity_too_small),
		cmocka_unit_test(none_up_to_the_limit_is_zero),
		cmocka_unit_test(floor_can_be_the_answer),
		cmocka_unit_test(smaller_capacity_that_runs_is_reported),
		cmocka_unit_test(answer_that_fails_a_second_run_is_an_error),
		cmocka_unit_test(a_known_start_is_not_replayed),
		cmocka_unit_test(a_start_known_to_fail_doubles_without_a_replay),
		cmocka_unit_test(a_hint_above_the_answer_spares_the_halvings),
		cmocka_unit_test(a_hint_below_the_answer_still_finds_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
