/*
 * test_replay.c - replaying traces against the caching allocator on the
 * simulated NPU: the stats each event leads to, OOMs, streams, stopping,
 * and that a bad trace touches nothing.
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

#include <npumemfs/npusim.h>
#include "workload/replay.h"
#include "workload/trace_gen.h"

#include "bad_traces.h"
#include "replay_fixture.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* npu flavor: 1 MiB + 1 B, padded by 32 and rounded to 512. */
#define BLOCK_1MIB_PLUS_1 1049088

static struct fixture *start(int devices, uint64_t capacity)
{
	return start_flavor(&npa_flavor_npu, devices, capacity);
}

static struct npa_stats stats(struct fixture *fx, int device)
{
	struct npa_stats s;

	assert_int_equal(npa_get_stats(fx->a, device, &s), 0);
	return s;
}

static struct wl_replay_counters counters(struct fixture *fx)
{
	struct wl_replay_counters c;

	wl_replay_counters(fx->r, &c);
	return c;
}

static void bad_trace_leaves_allocator_untouched(void **state)
{
	const struct bad_trace *b = *state;
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats before = stats(fx, 0), after;
	struct npusim_counters dev;

	assert_int_equal(parse(fx, b->text, b->len), -EINVAL);
	assert_string_equal(fx->err, b->message);
	after = stats(fx, 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(after.allocation[NPA_STAT_ALL].allocated, 0);
	assert_int_equal(npusim_device_counters(0, &dev), 0);
	assert_int_equal(dev.malloc_calls, 0);
	stop_fixture(fx);
}

static void alloc_of_1_mib_plus_1_reserves_a_20_mib_segment(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	assert_int_equal(s.reserved_bytes[NPA_STAT_LARGE_POOL].current, 20 * MiB);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, BLOCK_1MIB_PLUS_1);
	assert_int_equal(s.requested_bytes[NPA_STAT_ALL].current, 1048577);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 1);
	assert_int_equal(counters(fx).allocs, 1);
	stop_fixture(fx);
}

static void free_keeps_the_segment_cached_and_empty_cache_releases_it(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 3MiB\nfree a\nempty_cache\n");
	assert_int_equal(wl_replay_run(fx->r, 0, 2, NULL, fx->err, sizeof(fx->err)), 0);
	s = stats(fx, 0);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	assert_int_equal(wl_replay_run(fx->r, 2, 3, NULL, fx->err, sizeof(fx->err)), 0);
	s = stats(fx, 0);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(s.num_device_free, 1);
	stop_fixture(fx);
}

/* torch.npu.empty_virt_addr_cache(): the cached segment goes, as with
 * empty_cache, once expandable segments are on. */
static void empty_virt_addr_cache_releases_the_cached_segment(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	char err[WL_ERRLEN];

	(void)state;
	assert_int_equal(npa_set_conf(fx->a, "expandable_segments:True", NPA_ORIGIN_WRITE, err,
				      sizeof(err)), 0);
	load(fx, "alloc a 30MiB\nfree a\nempty_virt_addr_cache\n");
	run_all(fx);
	assert_int_equal(stats(fx, 0).reserved_bytes[NPA_STAT_ALL].current, 0);
	stop_fixture(fx);
}

/* Without expandable segments the allocator refuses, with upstream's text. */
static void empty_virt_addr_cache_needs_expandable_segments(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);

	(void)state;
	load(fx, "alloc a 1MiB\nfree a\nempty_virt_addr_cache\n");
	assert_int_equal(wl_replay_run(fx->r, 0, fx->t->nevents, NULL, fx->err, sizeof(fx->err)),
			 -EINVAL);
	assert_string_equal(fx->err, "t:3: Unsupported config for empty_virt_addr_cache, please "
				     "enable expandable_segments.");
	stop_fixture(fx);
}

static void record_stream_keeps_a_freed_block_active_until_its_stream_syncs(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\nrecord_stream a 1\nfree a\nalloc b 1048577\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, BLOCK_1MIB_PLUS_1);
	assert_int_equal(s.active_bytes[NPA_STAT_ALL].current, 2 * BLOCK_1MIB_PLUS_1);
	assert_int_equal(s.active[NPA_STAT_ALL].current, 2);
	stop_fixture(fx);
}

static void sync_of_the_stream_lets_the_next_alloc_reuse_the_block(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\nrecord_stream a 1\nfree a\nsync 1\nalloc b 1048577\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.active_bytes[NPA_STAT_ALL].current, BLOCK_1MIB_PLUS_1);
	assert_int_equal(s.active[NPA_STAT_ALL].current, 1);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	stop_fixture(fx);
}

/* The generated trace, cut down (cuda flavor): a sync between
 * record_stream and free does not complete the event the free records. */
static void a_sync_before_the_free_leaves_its_event_pending(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_cuda, 1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc t33 53971039 stream=2\nrecord_stream t33 0\nsync\n"
		 "free t33\nalloc t34 4096 stream=2\n");
	run_all(fx);
	s = stats(fx, 0);
	/* 53971039 takes all of a 52 MiB segment (the 554496 B left over is
	 * too small to split off): still active, pending free */
	assert_int_equal(s.active_bytes[NPA_STAT_LARGE_POOL].current, 54525952);
	assert_int_equal(s.allocated_bytes[NPA_STAT_LARGE_POOL].current, 0);
	stop_fixture(fx);
}

static void the_first_sync_after_the_free_completes_its_event(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_cuda, 1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc t33 53971039 stream=2\nrecord_stream t33 0\nsync\n"
		 "free t33\nsync 0\nalloc t34 4096 stream=2\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.active_bytes[NPA_STAT_LARGE_POOL].current, 0);
	assert_int_equal(s.reserved_bytes[NPA_STAT_LARGE_POOL].current, 54525952);
	stop_fixture(fx);
}

/*
 * A small segment [A 1 MiB][B 512 KiB][free 512 KiB]; A used on stream 1,
 * B on stream 3, both freed, one sync. The next alloc walks the pending
 * events in upstream's hash order: stream 3 (slot 1 of 4) before stream 1
 * (slot 3), so B comes back first, merging with the free tail (+512 KiB of
 * inactive split), then A takes the whole segment. A first would add 1 MiB.
 */
static const char two_pending_blocks_of_one_segment[] =
	"alloc A 1048576\nalloc B 524288\nrecord_stream A 1\nrecord_stream B 3\n"
	"free A\nfree B\nsync\nalloc C 512\n";

static void pending_blocks_return_in_upstream_hash_order_cuda(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_cuda, 1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, two_pending_blocks_of_one_segment);
	run_all(fx);
	s = stats(fx, 0);
	/* A's split tail, B's return, C's split tail */
	assert_int_equal(s.inactive_split_bytes[NPA_STAT_SMALL_POOL].allocated,
			 1048576 + 524288 + (2097152 - 512));
	stop_fixture(fx);
}

/* torch_npu pads by 32: the same blocks from requests 32 bytes smaller;
 * its stream 3 (id 98) is slot 0 of 4, stream 1 (id 96) slot 3. */
static void pending_blocks_return_in_upstream_hash_order_npu(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc A 1048544\nalloc B 524256\nrecord_stream A 1\nrecord_stream B 3\n"
		 "free A\nfree B\nsync\nalloc C 480\n");
	run_all(fx);
	s = stats(fx, 0);
	/* A's split tail, B's return, C's split tail */
	assert_int_equal(s.inactive_split_bytes[NPA_STAT_SMALL_POOL].allocated,
			 1048576 + 524288 + (2097152 - 512));
	stop_fixture(fx);
}

/* A snapshot's free_completed, replayed: complete returns the block at the
 * next alloc without any sync. */
static void complete_returns_the_freed_block_at_the_next_alloc(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_cuda, 1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\nrecord_stream a 1\nfree a\nalloc b 512\n"
		 "complete a\nalloc c 1048577\n");
	assert_int_equal(wl_replay_run(fx->r, 0, 4, NULL, fx->err, sizeof(fx->err)), 0);
	s = stats(fx, 0);
	assert_int_equal(s.active_bytes[NPA_STAT_LARGE_POOL].current, 1049088);
	assert_int_equal(wl_replay_run(fx->r, 4, 6, NULL, fx->err, sizeof(fx->err)), 0);
	s = stats(fx, 0);
	/* c reuses a's block: one 20 MiB segment, one large block active */
	assert_int_equal(s.reserved_bytes[NPA_STAT_LARGE_POOL].current, 20 * MiB);
	assert_int_equal(s.active[NPA_STAT_LARGE_POOL].current, 1);
	stop_fixture(fx);
}

/* Two pending blocks on one stream: completing the later one does not
 * complete the earlier, and vice versa (each waits up to its own free). */
static void complete_leaves_a_later_free_on_the_same_stream_pending(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_cuda, 1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 3MiB\nalloc b 5MiB\nrecord_stream a 1\nrecord_stream b 1\n"
		 "free a\nfree b\ncomplete a\nalloc c 512\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.active_bytes[NPA_STAT_LARGE_POOL].current, 5 * MiB);
	stop_fixture(fx);
}

/* torch_npu.erase_stream: the stream's use is over, so the free waits
 * for nothing and the next allocation takes the block again. */
static void erase_stream_lets_the_freed_block_be_reused_without_a_sync(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\nrecord_stream a 1\nerase_stream a 1\nfree a\n"
		 "alloc b 1048577\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.active_bytes[NPA_STAT_ALL].current, BLOCK_1MIB_PLUS_1);
	assert_int_equal(s.active[NPA_STAT_ALL].current, 1);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	stop_fixture(fx);
}

static void bare_sync_completes_every_stream(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 1048577\nrecord_stream a 1\nrecord_stream a 2\nfree a\n"
		 "sync\nalloc b 1048577\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.active[NPA_STAT_ALL].current, 1);
	stop_fixture(fx);
}

static void oom_is_counted_and_the_replay_goes_on(void **state)
{
	struct fixture *fx = start(1, 64 * MiB);
	struct wl_replay_counters c;
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 40MiB\nalloc b 40MiB\nalloc c 1MiB\n");
	run_all(fx);
	c = counters(fx);
	assert_int_equal(c.events, 3);
	assert_int_equal(c.ooms, 1);
	assert_int_equal(c.allocs, 2);
	s = stats(fx, 0);
	assert_int_equal(s.num_ooms, 1);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 2);
	stop_fixture(fx);
}

static void free_after_an_oom_is_skipped(void **state)
{
	struct fixture *fx = start(1, 64 * MiB);
	struct wl_replay_counters c;

	(void)state;
	load(fx, "alloc a 40MiB\nalloc b 40MiB\nrecord_stream b 1\nfree b\nfree a\n");
	run_all(fx);
	c = counters(fx);
	assert_int_equal(c.ooms, 1);
	assert_int_equal(c.skipped_record_streams, 1);
	assert_int_equal(c.skipped_frees, 1);
	assert_int_equal(c.frees, 1);
	assert_int_equal(stats(fx, 0).allocated_bytes[NPA_STAT_ALL].current, 0);
	stop_fixture(fx);
}

static void fraction_limits_what_the_device_may_reserve(void **state)
{
	struct fixture *fx = start(1, 64 * MiB);

	(void)state;
	load(fx, "fraction 0.5\nalloc a 40MiB\nalloc b 1MiB\n");
	run_all(fx);
	assert_int_equal(counters(fx).ooms, 1);
	assert_int_equal(stats(fx, 0).reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	stop_fixture(fx);
}

static void reset_peak_brings_peaks_down_to_current(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 10MiB\nalloc b 2MiB\nfree a\nreset_peak\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].peak, 2 * MiB + 512);
	stop_fixture(fx);
}

static void reset_accumulated_zeroes_allocated_and_freed(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	struct npa_stats s;

	(void)state;
	load(fx, "alloc a 10MiB\nfree a\nreset_accumulated\n");
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].allocated, 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].freed, 0);
	/* 10 MiB is not below kMinLargeAlloc: its own segment, rounded to 2 MiB. */
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 12 * MiB);
	stop_fixture(fx);
}

static void devices_of_the_trace_are_the_allocators_devices(void **state)
{
	struct fixture *fx = start(2, 8 * GiB);

	(void)state;
	load(fx, "alloc a 1MiB device=1\nalloc b 3MiB stream=4 device=1\nrecord_stream a 4\n"
		 "free a\nsync 4\n");
	run_all(fx);
	assert_int_equal(stats(fx, 0).reserved_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(stats(fx, 1).allocated_bytes[NPA_STAT_ALL].current, 3 * MiB + 512);
	stop_fixture(fx);
}

static void record_stream_on_the_default_stream_of_device_1_waits_for_sync_0(void **state)
{
	struct fixture *fx = start(2, 8 * GiB);

	(void)state;
	load(fx, "alloc x 1MiB\nalloc a 1MiB device=1\nrecord_stream a 0\nfree a\n"
		 "alloc b 1MiB device=1\nsync 0\nalloc c 1MiB device=1\n");
	assert_int_equal(wl_replay_run(fx->r, 0, 5, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(stats(fx, 1).active[NPA_STAT_ALL].current, 2);
	assert_int_equal(wl_replay_run(fx->r, 5, 7, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(stats(fx, 1).active[NPA_STAT_ALL].current, 2);
	assert_int_equal(stats(fx, 1).allocation[NPA_STAT_ALL].current, 2);
	stop_fixture(fx);
}

static void a_device_the_allocator_lacks_is_refused_before_running(void **state)
{
	struct fixture *fx = start(2, 8 * GiB);

	(void)state;
	assert_int_equal(parse(fx, "alloc a 1\nalloc b 1 device=3\n", 0), 0);
	assert_int_equal(wl_replay_new(fx->a, fx->t, &fx->r, fx->err, sizeof(fx->err)),
			 -EINVAL);
	assert_string_equal(fx->err, "t:2: device 3 does not exist (2 devices)");
	assert_null(fx->r);
	stop_fixture(fx);
}

static const char *many_pairs(size_t pairs)
{
	static char text[64 * 4096];
	size_t n = 0;

	assert_true(pairs <= 4096);
	for (size_t i = 0; i < pairs; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "alloc x%zu 4096\nfree x%zu\n",
				      i, i);
	return text;
}

static void a_set_stop_flag_cancels_before_any_event(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	atomic_bool stop = true;

	(void)state;
	load(fx, many_pairs(3000));
	assert_int_equal(wl_replay_run(fx->r, 0, 6000, &stop, fx->err, sizeof(fx->err)),
			 -ECANCELED);
	assert_int_equal(counters(fx).position, 0);
	assert_int_equal(counters(fx).events, 0);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].allocated, 0);
	stop_fixture(fx);
}

static void a_stopped_replay_resumes_where_it_stopped(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);
	atomic_bool stop = true;
	struct wl_replay_counters c;

	(void)state;
	load(fx, many_pairs(3000));
	assert_int_equal(wl_replay_run(fx->r, 0, 100, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(wl_replay_run(fx->r, 100, 6000, &stop, fx->err, sizeof(fx->err)),
			 -ECANCELED);
	stop = false;
	c = counters(fx);
	assert_int_equal(c.position, 100);
	assert_int_equal(wl_replay_run(fx->r, c.position, 6000, &stop, fx->err,
				       sizeof(fx->err)), 0);
	c = counters(fx);
	assert_int_equal(c.position, 6000);
	assert_int_equal(c.events, 6000);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].allocated, 3000);
	stop_fixture(fx);
}

static void release_all_frees_what_the_trace_left_live(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);

	(void)state;
	load(fx, "alloc a 1MiB\nalloc b 30MiB\nalloc c 0\n");
	run_all(fx);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].current, 2);
	wl_replay_release_all(fx->r);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].current, 0);
	/* The same replay runs again from the start: a loop. */
	run_all(fx);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].current, 2);
	assert_int_equal(counters(fx).events, 6);
	stop_fixture(fx);
}

static struct wl_trace *generated(enum wl_gen_kind kind, unsigned steps)
{
	struct wl_gen_options opt = { .seed = 1, .steps = steps };
	char *text = NULL, err[WL_ERRLEN];
	size_t len = 0;
	struct wl_trace *t = NULL;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(wl_gen_write(kind, &opt, f), 0);
	fclose(f);
	f = fmemopen(text, len, "r");
	assert_int_equal(wl_trace_parse(f, "gen", &t, err, sizeof(err)), 0);
	fclose(f);
	free(text);
	return t;
}

static void churn_keeps_every_invariant_after_every_event(void **state)
{
	struct fixture *fx = start(1, 8 * GiB);

	(void)state;
	fx->t = generated(WL_GEN_CHURN, 3000);
	assert_int_equal(wl_replay_new(fx->a, fx->t, &fx->r, fx->err, sizeof(fx->err)), 0);
	wl_replay_set_check(fx->r, true);
	run_all(fx);
	assert_int_equal(stats(fx, 0).allocation[NPA_STAT_ALL].current, 0);
	stop_fixture(fx);
}

/* The run ends holding its 145 parameters and 26 Adam moments. */
static void training_fits_a_32_gib_device_with_a_peak_of_a_few_gib(void **state)
{
	struct fixture *fx = start(1, 32 * GiB);
	struct npa_stats s;

	(void)state;
	fx->t = generated(WL_GEN_TRAINING, 5);
	assert_int_equal(wl_replay_new(fx->a, fx->t, &fx->r, fx->err, sizeof(fx->err)), 0);
	run_all(fx);
	s = stats(fx, 0);
	assert_int_equal(counters(fx).ooms, 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 145 + 26);
	assert_true(s.allocated_bytes[NPA_STAT_ALL].peak > 2 * (int64_t)GiB);
	assert_true(s.reserved_bytes[NPA_STAT_ALL].peak < 8 * (int64_t)GiB);
	assert_int_equal(npa_check(fx->a, 0, fx->err, sizeof(fx->err)), 0);
	stop_fixture(fx);
}

#define T(test) cmocka_unit_test_teardown(test, teardown)

int main(void)
{
	static struct CMUnitTest tests[NBAD_TRACES + 32];
	static const struct CMUnitTest fixed[] = {
		T(alloc_of_1_mib_plus_1_reserves_a_20_mib_segment),
		T(free_keeps_the_segment_cached_and_empty_cache_releases_it),
		T(empty_virt_addr_cache_releases_the_cached_segment),
		T(empty_virt_addr_cache_needs_expandable_segments),
		T(record_stream_keeps_a_freed_block_active_until_its_stream_syncs),
		T(a_sync_before_the_free_leaves_its_event_pending),
		T(complete_returns_the_freed_block_at_the_next_alloc),
		T(complete_leaves_a_later_free_on_the_same_stream_pending),
		T(pending_blocks_return_in_upstream_hash_order_cuda),
		T(pending_blocks_return_in_upstream_hash_order_npu),
		T(the_first_sync_after_the_free_completes_its_event),
		T(erase_stream_lets_the_freed_block_be_reused_without_a_sync),
		T(sync_of_the_stream_lets_the_next_alloc_reuse_the_block),
		T(bare_sync_completes_every_stream),
		T(oom_is_counted_and_the_replay_goes_on),
		T(free_after_an_oom_is_skipped),
		T(fraction_limits_what_the_device_may_reserve),
		T(reset_peak_brings_peaks_down_to_current),
		T(reset_accumulated_zeroes_allocated_and_freed),
		T(devices_of_the_trace_are_the_allocators_devices),
		T(record_stream_on_the_default_stream_of_device_1_waits_for_sync_0),
		T(a_device_the_allocator_lacks_is_refused_before_running),
		T(a_set_stop_flag_cancels_before_any_event),
		T(a_stopped_replay_resumes_where_it_stopped),
		T(release_all_frees_what_the_trace_left_live),
		T(churn_keeps_every_invariant_after_every_event),
		T(training_fits_a_32_gib_device_with_a_peak_of_a_few_gib),
	};
	size_t n = 0;

	for (size_t i = 0; i < NBAD_TRACES; i++) {
		struct CMUnitTest c = cmocka_unit_test_prestate_setup_teardown(
			bad_trace_leaves_allocator_untouched, NULL, teardown,
			(void *)&bad_traces[i]);
		c.name = bad_traces[i].name;
		tests[n++] = c;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("replay", tests, n, NULL, NULL);
}
