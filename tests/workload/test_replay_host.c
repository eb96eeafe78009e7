/*
 * test_replay_host.c - the pinned host lines of a trace (pin, unpin, copy,
 * host_empty_cache) replayed against the caching allocator's pinned host
 * allocator, with upstream's numbers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/host/host_allocator.h"
#include "workload/trace_gen.h"

#include "replay_fixture.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static struct fixture *start(void)
{
	return start_flavor(&npa_flavor_npu, 1, 8 * GiB);
}

static struct npa_host_stats host_stats(struct fixture *fx)
{
	struct npa_host_stats s;

	npa_host_get_stats(npa_host_of(fx->a), &s);
	return s;
}

static struct wl_replay_counters counters(struct fixture *fx)
{
	struct wl_replay_counters c;

	wl_replay_counters(fx->r, &c);
	return c;
}

static void pin_lines_resolve_ids_streams_and_devices(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin a 40960\npin b 1KiB stream=3\ncopy b 3\nunpin a\nhost_empty_cache\n");
	assert_int_equal(fx->t->npins, 2);
	assert_int_equal(fx->t->events[0].op, WL_PIN);
	assert_int_equal(fx->t->events[0].size, 40960);
	assert_int_equal(fx->t->events[1].slot, 1);
	assert_int_equal(fx->t->stream_number[fx->t->events[1].stream], 3);
	assert_int_equal(fx->t->events[2].op, WL_COPY);
	assert_int_equal(fx->t->events[2].stream, fx->t->events[1].stream);
	assert_int_equal(fx->t->events[3].op, WL_UNPIN);
	assert_int_equal(fx->t->events[3].slot, 0);
	assert_int_equal(fx->t->events[4].op, WL_HOST_EMPTY_CACHE);
	stop_fixture(fx);
}

/* test_unexpandable_host_allocator.py: 10 x 1024 then 20 x 1024 floats. */
static void pins_of_40960_and_81920_bytes_hold_196608(void **state)
{
	struct fixture *fx = start();
	struct npa_host_stats s;

	(void)state;
	load(fx, "pin a 40960\npin b 81920\nhost_empty_cache\n");
	run_all(fx);
	s = host_stats(fx);
	assert_int_equal(s.allocated_bytes.current, 196608);
	assert_int_equal(s.allocations.current, 2);
	assert_int_equal(s.num_host_alloc, 2);
	assert_int_equal(counters(fx).pins, 2);
	assert_int_equal(counters(fx).pinned_requested, 40960 + 81920);
	stop_fixture(fx);
}

/* A copy's stream keeps the unpinned block until the stream syncs. */
static void an_unpinned_block_waits_for_its_copy_until_the_stream_syncs(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin a 40960\ncopy a 1\nunpin a\nhost_empty_cache\nsync 1\nhost_empty_cache\n");
	assert_int_equal(wl_replay_run(fx->r, 0, 4, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(host_stats(fx).active_bytes.current, 65536);
	assert_int_equal(host_stats(fx).allocated_bytes.current, 65536);
	assert_int_equal(wl_replay_run(fx->r, 4, 6, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(host_stats(fx).active_bytes.current, 0);
	assert_int_equal(host_stats(fx).allocated_bytes.current, 0);
	assert_int_equal(counters(fx).copies, 1);
	stop_fixture(fx);
}

/* Without a copy the block is cached at once and comes back to a pin. */
static void an_unpinned_block_without_copies_is_reused(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin a 40960\nunpin a\npin b 50000\n");
	run_all(fx);
	assert_int_equal(host_stats(fx).allocations.allocated, 1);
	assert_int_equal(host_stats(fx).allocated_bytes.current, 65536);
	stop_fixture(fx);
}

/* "[ACLGRAPH] support pin memory": a pin on the capturing stream goes to
 * the graph's host pool, and used by a captured copy it is never recycled. */
static void a_pin_during_a_capture_stays_in_the_graphs_host_pool(void **state)
{
	struct fixture *fx = start();
	struct npa_host_pool_info *pools = NULL;
	size_t n = 0;

	(void)state;
	load(fx, "capture_begin 1 graph=g\npin c 256 stream=1\ncopy c 1\nunpin c\ncapture_end 1\n"
		 "host_empty_cache\npin d 256\n");
	run_all(fx);
	assert_int_equal(npa_host_pools(npa_host_of(fx->a), &pools, &n), 0);
	assert_int_equal(n, 1);
	assert_true(pools[0].id.first == 1 && pools[0].id.second == 0);
	assert_int_equal(pools[0].blocks, 1);
	assert_int_equal(pools[0].free_bytes, 0);
	free(pools);
	/* host_empty_cache kept it; d got a block of its own. */
	assert_int_equal(host_stats(fx).allocations.current, 2);
	stop_fixture(fx);
}

static void a_pin_the_host_cannot_hold_is_counted_and_skipped(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin huge 100GiB\ncopy huge 1\nunpin huge\npin a 1\n");
	run_all(fx);
	assert_int_equal(counters(fx).pin_ooms, 1);
	assert_int_equal(counters(fx).pins, 1);
	assert_int_equal(counters(fx).copies, 0);
	assert_int_equal(host_stats(fx).allocations.current, 1);
	stop_fixture(fx);
}

/* The "20 GiB became 32 GiB" report, and pinned_max_round_threshold_mb. */
static void a_20_gib_pin_holds_32_gib(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin batch 20GiB\nunpin batch\n");
	run_all(fx);
	assert_int_equal(host_stats(fx).allocated_bytes.current, 32 * GiB);
	assert_int_equal(counters(fx).pinned_requested_peak, 20 * GiB);
	assert_int_equal(counters(fx).pinned_requested, 0);
	stop_fixture(fx);
}

static void release_all_unpins_what_the_trace_left_pinned(void **state)
{
	struct fixture *fx = start();

	(void)state;
	load(fx, "pin a 4096\npin b 8192\n");
	run_all(fx);
	wl_replay_release_all(fx->r);
	assert_int_equal(host_stats(fx).active_bytes.current, 0);
	assert_int_equal(counters(fx).pinned_requested, 0);
	stop_fixture(fx);
}

/* The generated loader trace parses, replays, and holds more than it asks. */
static void pinned_loader_trace_rounds_its_batches_up(void **state)
{
	struct fixture *fx = start();
	struct wl_gen_options opt = { .seed = 1, .steps = 50 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(wl_gen_write(WL_GEN_PINNED_LOADER, &opt, f), 0);
	fclose(f);
	load(fx, text);
	run_all(fx);
	assert_int_equal(counters(fx).pins, 50);
	assert_int_equal(counters(fx).copies, 50);
	assert_true((uint64_t)host_stats(fx).allocated_bytes.peak >
		    counters(fx).pinned_requested_peak);
	free(text);
	stop_fixture(fx);
}

#define T(test) cmocka_unit_test_teardown(test, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(pin_lines_resolve_ids_streams_and_devices),
		T(pins_of_40960_and_81920_bytes_hold_196608),
		T(an_unpinned_block_waits_for_its_copy_until_the_stream_syncs),
		T(an_unpinned_block_without_copies_is_reused),
		T(a_pin_during_a_capture_stays_in_the_graphs_host_pool),
		T(a_pin_the_host_cannot_hold_is_counted_and_skipped),
		T(a_20_gib_pin_holds_32_gib),
		T(release_all_unpins_what_the_trace_left_pinned),
		T(pinned_loader_trace_rounds_its_batches_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
