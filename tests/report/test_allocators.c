/*
 * test_allocators.c - ctl/allocator's listing of a switch's allocators.
 *
 * The current allocator, then each retired one still holding blocks; a
 * plug-in with where it came from, its functions, hooks, load time and
 * guard counts; the caching allocator with the time it became current;
 * last the switch's refused frees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/switch/allocator_switch.h"
#include "report/report.h"

#define NOON_2024_05_01 1714564800 /* 2024-05-01T12:00:00Z */

static struct sw_info caching(bool current, uint64_t blocks, uint64_t bytes)
{
	struct sw_info a = { .id = 0, .kind = SW_CACHING, .current = current,
			     .since = NOON_2024_05_01, .live_blocks = blocks,
			     .live_bytes = bytes };
	strcpy(a.name, "caching");
	return a;
}

static struct sw_info arena(bool current, uint64_t blocks, uint64_t bytes)
{
	struct sw_info a = { .id = 1, .kind = SW_PLUGIN, .current = current,
			     .since = NOON_2024_05_01 + 61, .live_blocks = blocks,
			     .live_bytes = bytes };
	strcpy(a.name, "plugin1");
	strcpy(a.path, "/opt/plugins/arena.so");
	strcpy(a.alloc_name, "arena_alloc");
	strcpy(a.free_name, "arena_free");
	a.hooks[0].hook = "init";
	strcpy(a.hooks[0].fn, "arena_init");
	a.hooks[1].hook = "reset";
	strcpy(a.hooks[1].fn, "arena_reset");
	a.nhooks = 2;
	a.guard.refused_unaligned = 3;
	a.guard.refused_not_device = 6;
	a.guard.refused_overlap = 4;
	a.guard.null_returns = 5;
	return a;
}

static void expect_listing(const struct sw_info *all, size_t n,
			   uint64_t refused, const char *want)
{
	struct sbuf out;

	sbuf_init(&out);
	assert_int_equal(report_allocators(&out, all, n, refused), 0);
	assert_string_equal(out.data, want);
	sbuf_release(&out);
}

static void the_caching_allocator_alone_shows_since_when_it_is_current(void **state)
{
	struct sw_info all[] = { caching(true, 2, 8192) };

	(void)state;
	expect_listing(all, 1, 0,
		"current caching\n"
		"  since 2024-05-01T12:00:00Z\n"
		"  live_blocks 2\n"
		"  live_bytes 8192\n"
		"refused_frees 0\n");
}

static void a_plugin_shows_its_functions_hooks_load_time_and_guard_counts(void **state)
{
	struct sw_info all[] = { arena(true, 1, 1000), caching(false, 1, 4096) };

	(void)state;
	expect_listing(all, 2, 7,
		"current plugin1\n"
		"  path /opt/plugins/arena.so\n"
		"  alloc arena_alloc\n"
		"  free arena_free\n"
		"  hooks init=arena_init reset=arena_reset\n"
		"  loaded 2024-05-01T12:01:01Z\n"
		"  live_blocks 1\n"
		"  live_bytes 1000\n"
		"  refused_unaligned 3\n"
		"  refused_overlap 4\n"
		"  refused_not_device 6\n"
		"  null_returns 5\n"
		"  mempools 0\n"
		"  mempool_segments 0\n"
		"  mempool_bytes 0\n"
		"retired caching\n"
		"  since 2024-05-01T12:00:00Z\n"
		"  live_blocks 1\n"
		"  live_bytes 4096\n"
		"refused_frees 7\n");
}

static void a_plugin_loaded_without_hooks_says_none(void **state)
{
	struct sw_info all[] = { arena(true, 0, 0) };
	struct sbuf out;

	(void)state;
	all[0].nhooks = 0;
	sbuf_init(&out);
	assert_int_equal(report_allocators(&out, all, 1, 0), 0);
	assert_non_null(strstr(out.data, "  free arena_free\n  hooks none\n  loaded "));
	sbuf_release(&out);
}

static void a_retired_allocator_holding_no_blocks_is_left_out(void **state)
{
	struct sw_info all[] = { caching(true, 0, 0), arena(false, 0, 0) };

	(void)state;
	expect_listing(all, 2, 0,
		"current caching\n"
		"  since 2024-05-01T12:00:00Z\n"
		"  live_blocks 0\n"
		"  live_bytes 0\n"
		"refused_frees 0\n");
}

static void a_plugin_loaded_beside_the_current_one_is_listed_as_loaded(void **state)
{
	struct sw_info all[] = { caching(true, 0, 0), arena(false, 0, 0) };
	struct sbuf out;

	(void)state;
	all[1].kept = true;
	sbuf_init(&out);
	assert_int_equal(report_allocators(&out, all, 2, 0), 0);
	assert_non_null(strstr(out.data, "\nloaded plugin1\n  path /opt/plugins/arena.so\n"));
	sbuf_release(&out);
}

/* A fault retires it even while a "load" holds it: never called again. */
static void a_loaded_plugin_that_faulted_is_listed_as_retired(void **state)
{
	struct sw_info all[] = { caching(true, 0, 0), arena(false, 0, 0) };
	struct sbuf out;

	(void)state;
	all[1].kept = true;
	all[1].faulted = true;
	sbuf_init(&out);
	assert_int_equal(report_allocators(&out, all, 2, 0), 0);
	assert_non_null(strstr(out.data, "\nretired plugin1\n  path /opt/plugins/arena.so\n"));
	sbuf_release(&out);
}

static void a_retired_plugin_serving_a_mempool_shows_its_segments(void **state)
{
	struct sw_info all[] = { caching(true, 0, 0), arena(false, 0, 0) };
	struct sbuf out;

	(void)state;
	all[1].mempools = 1;
	all[1].guard.lent_blocks = 1;
	all[1].guard.lent_bytes = 20971520;
	sbuf_init(&out);
	assert_int_equal(report_allocators(&out, all, 2, 0), 0);
	assert_non_null(strstr(out.data, "\nretired plugin1\n"));
	assert_non_null(strstr(out.data, "  null_returns 5\n  mempools 1\n"
					 "  mempool_segments 1\n  mempool_bytes 20971520\n"));
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_caching_allocator_alone_shows_since_when_it_is_current),
		cmocka_unit_test(a_plugin_shows_its_functions_hooks_load_time_and_guard_counts),
		cmocka_unit_test(a_plugin_loaded_without_hooks_says_none),
		cmocka_unit_test(a_retired_allocator_holding_no_blocks_is_left_out),
		cmocka_unit_test(a_plugin_loaded_beside_the_current_one_is_listed_as_loaded),
		cmocka_unit_test(a_loaded_plugin_that_faulted_is_listed_as_retired),
		cmocka_unit_test(a_retired_plugin_serving_a_mempool_shows_its_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
