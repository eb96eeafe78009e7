/*
 * Memory history: the trace entries upstream's _record_memory_history
 * keeps, in order, with upstream's addresses and sizes.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "alloc_fixture.h"

#define ALL NPA_STAT_ALL

static bool is_npu(void **state)
{
	return FLAVOR(state) == &npa_flavor_npu;
}

static struct npa *start(void **state, uint64_t capacity)
{
	return fx_start_device_segments(FLAVOR(state), capacity, NULL);
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct npa_trace history(struct npa *a)
{
	struct npa_trace t;

	assert_int_equal(npa_history_copy(a, 0, 0, &t), 0);
	return t;
}

static void assert_entry(const struct npa_trace_entry *e, const char *action,
			 uint64_t addr, uint64_t size)
{
	assert_string_equal(npa_trace_action_name(e->action), action);
	assert_int_equal(e->addr, addr);
	assert_int_equal(e->size, size);
	assert_int_equal(e->stream, 0);
}

/*
 * The worked example of the reference (§4.4). npu pads each request by 32
 * bytes, so x takes 1536 bytes and y starts at S + 1536; the actions and
 * the requested sizes are the same in both flavors.
 */
static void worked_example_records_upstreams_entries(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	uint64_t y_off = is_npu(state) ? 1536 : 1024;
	struct npa_snapshot snap;

	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	int64_t before = now_us();
	char *x = fx_malloc(a, 1000, NULL);
	char *y = fx_malloc(a, 3000, NULL);
	assert_ptr_equal(y, x + y_off);
	fx_free(a, x);
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	npa_snapshot_release(&snap);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	fx_free(a, y);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	int64_t after = now_us();

	uint64_t S = (uintptr_t)x;
	struct npa_trace t = history(a);
	assert_int_equal(t.first, 0);
	assert_int_equal(t.recorded, 9);
	assert_int_equal(t.n, 9);
	assert_entry(&t.entries[0], "segment_alloc", S, 2097152);
	assert_entry(&t.entries[1], "alloc", S, 1000);
	assert_entry(&t.entries[2], "alloc", S + y_off, 3000);
	assert_entry(&t.entries[3], "free_requested", S, 1000);
	assert_entry(&t.entries[4], "free_completed", S, 1000);
	assert_entry(&t.entries[5], "snapshot", 0, 3072);
	assert_entry(&t.entries[6], "free_requested", S + y_off, 3000);
	assert_entry(&t.entries[7], "free_completed", S + y_off, 3000);
	assert_entry(&t.entries[8], "segment_free", S, 2097152);
	for (size_t i = 0; i < t.n; i++) {
		assert_in_range(t.entries[i].time_us, before, after);
		if (i > 0)
			assert_true(t.entries[i].time_us >= t.entries[i - 1].time_us);
	}
	npa_trace_release(&t);
	fx_stop(a);
}

/* 10 entries into a ring of 4: the last 4 stay, numbered 6..9. */
static void ring_keeps_the_last_max_entries(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	struct npa_history_state hs;

	assert_int_equal(npa_record_memory_history(a, -1, "all", 4), 0);
	for (int i = 0; i < 3; i++)
		fx_free(a, fx_malloc(a, 1000, NULL));
	assert_int_equal(npa_history_state(a, 0, &hs), 0);
	assert_string_equal(hs.enabled, "all");
	assert_int_equal(hs.max_entries, 4);
	assert_int_equal(hs.recorded, 10);
	assert_int_equal(hs.kept, 4);

	struct npa_trace t = history(a);
	assert_int_equal(t.first, 6);
	assert_int_equal(t.n, 4);
	const char *want[] = { "free_completed", "alloc", "free_requested", "free_completed" };
	for (int i = 0; i < 4; i++)
		assert_string_equal(npa_trace_action_name(t.entries[i].action), want[i]);
	npa_trace_release(&t);
	fx_stop(a);
}

/* A reader that has seen entries 0..7 asks from 8 and gets 8 and 9. */
static void copy_since_gives_only_newer_entries(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	struct npa_trace t;

	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	for (int i = 0; i < 3; i++)
		fx_free(a, fx_malloc(a, 1000, NULL));
	assert_int_equal(npa_history_copy(a, 0, 8, &t), 0);
	assert_int_equal(t.first, 8);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.recorded, 10);
	assert_int_equal(t.entries[0].action, NPA_TRACE_FREE_REQUESTED);
	npa_trace_release(&t);
	assert_int_equal(npa_history_copy(a, 0, 10, &t), 0);
	assert_int_equal(t.first, 10);
	assert_int_equal(t.n, 0);
	assert_null(t.entries);
	fx_stop(a);
}

static void off_by_default_records_nothing(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	struct npa_history_state hs;

	fx_free(a, fx_malloc(a, 1000, NULL));
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(npa_history_state(a, 0, &hs), 0);
	assert_null(hs.enabled);
	assert_int_equal(hs.recorded, 0);
	assert_int_equal(npa_history_recorded(a, 0), 0);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 0);
	fx_stop(a);
}

/* enabled=None stops recording and clears the ring. */
static void turning_off_clears_the_ring(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	struct npa_history_state hs;

	assert_int_equal(npa_record_memory_history(a, -1, "all", 100), 0);
	fx_free(a, fx_malloc(a, 1000, NULL));
	assert_int_equal(npa_history_recorded(a, 0), 4);
	assert_int_equal(npa_record_memory_history(a, -1, NULL, 0), 0);
	fx_free(a, fx_malloc(a, 1000, NULL));
	assert_int_equal(npa_history_state(a, 0, &hs), 0);
	assert_null(hs.enabled);
	assert_int_equal(hs.kept, 0);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 0);
	fx_stop(a);
}

/* "state" keeps a ring of one entry whatever max_entries says. */
static void state_keeps_only_the_last_entry(void **state)
{
	struct npa *a = start(state, 1 * GiB);
	struct npa_history_state hs;

	assert_int_equal(npa_record_memory_history(a, 0, "state", 1000), 0);
	char *p = fx_malloc(a, 1000, NULL);
	fx_free(a, p);
	assert_int_equal(npa_history_state(a, 0, &hs), 0);
	assert_string_equal(hs.enabled, "state");
	assert_int_equal(hs.max_entries, 1);
	assert_int_equal(hs.recorded, 4);
	struct npa_trace t = history(a);
	assert_int_equal(t.first, 3);
	assert_int_equal(t.n, 1);
	assert_entry(&t.entries[0], "free_completed", (uintptr_t)p, 1000);
	npa_trace_release(&t);
	fx_stop(a);
}

/* oom: addr is the device's free bytes, size the rounded request. */
static void oom_records_device_free_and_rounded_size(void **state)
{
	struct npa *a = start(state, 16 * MiB);
	size_t dev_free, total;
	void *p = NULL;
	char err[NPA_ERRLEN];

	assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &dev_free, &total), ACL_SUCCESS);
	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	assert_int_equal(npa_malloc(a, 0, 64 * MiB, NULL, &p, err, sizeof(err)), -ENOMEM);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 1);
	assert_entry(&t.entries[0], "oom", dev_free,
		     is_npu(state) ? 64 * MiB + 512 : 64 * MiB);
	npa_trace_release(&t);
	fx_stop(a);
}

/* Expandable segments: a segment_map of one 20 MiB page (cuda) before the alloc. */
static void expandable_growth_records_segment_map(void **state)
{
	struct npa *a = fx_start_conf(&npa_flavor_cuda, 8 * GiB, NULL);
	char err[NPA_ERRLEN];

	(void)state;
	assert_int_equal(npa_set_conf(a, "expandable_segments:True", NPA_ORIGIN_WRITE,
				      err, sizeof(err)), 0);
	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	char *p = fx_malloc(a, 5 * MiB, NULL);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 5);
	assert_entry(&t.entries[0], "segment_map", (uintptr_t)p, 20 * MiB);
	assert_entry(&t.entries[1], "alloc", (uintptr_t)p, 5 * MiB);
	assert_entry(&t.entries[2], "free_requested", (uintptr_t)p, 5 * MiB);
	assert_entry(&t.entries[3], "free_completed", (uintptr_t)p, 5 * MiB);
	assert_entry(&t.entries[4], "segment_unmap", (uintptr_t)p, 20 * MiB);
	npa_trace_release(&t);
	fx_stop(a);
}

static void bad_arguments_are_refused(void **state)
{
	struct npa *a = start(state, 1 * GiB);

	assert_int_equal(npa_record_memory_history(a, 0, "alloc", 10), -EINVAL);
	assert_int_equal(npa_record_memory_history(a, 0, "all", 0), -EINVAL);
	assert_int_equal(npa_record_memory_history(a, 1, "all", 10), -ENODEV);
	assert_int_equal(npa_record_memory_history(a, -2, "all", 10), -ENODEV);
	assert_int_equal(npa_history_recorded(a, 0), 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(worked_example_records_upstreams_entries),
		BOTH_FLAVORS(ring_keeps_the_last_max_entries),
		BOTH_FLAVORS(copy_since_gives_only_newer_entries),
		BOTH_FLAVORS(off_by_default_records_nothing),
		BOTH_FLAVORS(turning_off_clears_the_ring),
		BOTH_FLAVORS(state_keeps_only_the_last_entry),
		BOTH_FLAVORS(oom_records_device_free_and_rounded_size),
		cmocka_unit_test(expandable_growth_records_segment_map),
		BOTH_FLAVORS(bad_arguments_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
