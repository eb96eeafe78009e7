/*
 * test_pluggable_allocator.c - stats, snapshot and guards around a plug-in.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <npumemfs/npusim.h>
#include "alloc/plugin/pluggable_allocator.h"

#include "fixture_host.h"
#include "plugin_tmpdir.h"

#define MiB (1024 * 1024)

static struct plugin_tmpdir tmp;
static char err[PLUGIN_ERRLEN];

struct ctx {
	struct npl *a;
	struct fx_counts *fx;
};

static struct ctx load(const char *functions)
{
	char line[2 * PATH_MAX];
	struct plugin *p = NULL;
	struct ctx c = { 0 };

	snprintf(line, sizeof(line), "%s %s", tmp.so, functions);
	assert_int_equal(plugin_open(line, tmp.dir, getuid(), 2, NULL, &p, err,
				     sizeof(err)), 0);
	struct fx_counts *(*counts)(void);
	*(void **)&counts = dlsym(p->handle, "fx_counts");
	assert_non_null(counts);
	c.fx = counts();
	assert_int_equal(npl_create(p, 2, &c.a), 0);
	return c;
}

static struct npa_stats stats_of(struct ctx *c, int device)
{
	struct npa_stats s;
	assert_int_equal(npl_ops.get_stats(c->a, device, &s), 0);
	return s;
}

/* Two simulated devices: the wrapper makes the device current, as a
 * framework's device guard would. The fixture itself uses host memory. */
static int setup(void **state)
{
	struct npusim_config cfg;
	(void)state;

	err[0] = '\0';
	npusim_config_default(&cfg, 2, 64ull << 20);
	if (npusim_init(&cfg))
		return -1;
	return plugin_tmpdir_make(&tmp, FIXTURE_SO, "fixture.so");
}

static int teardown(void **state)
{
	(void)state;
	plugin_tmpdir_remove(&tmp);
	npusim_shutdown();
	return 0;
}

static void each_allocation_is_one_segment_of_its_size(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *small, *large;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 1000, NULL, &small, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 3 * MiB, NULL, &large, err, sizeof(err)), 0);
	struct npa_stats s = stats_of(&c, 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 2);
	assert_int_equal(s.allocation[NPA_STAT_SMALL_POOL].current, 1);
	assert_int_equal(s.allocation[NPA_STAT_LARGE_POOL].current, 1);
	assert_int_equal(s.segment[NPA_STAT_ALL].current, 2);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, 1000 + 3 * MiB);
	assert_int_equal(s.reserved_bytes[NPA_STAT_ALL].current, 1000 + 3 * MiB);
	assert_int_equal(s.requested_bytes[NPA_STAT_SMALL_POOL].current, 1000);
	assert_int_equal(s.active_bytes[NPA_STAT_LARGE_POOL].current, 3 * MiB);
	assert_int_equal(s.inactive_split_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(s.num_device_alloc, 2);
	assert_int_equal(c.fx->alloc, 2);
	assert_int_equal(npl_destroy(c.a), 2);
}

static void free_lowers_current_and_keeps_the_peak(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *small, *large;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 1, 1000, NULL, &small, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 1, 3 * MiB, NULL, &large, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.free(c.a, large, err, sizeof(err)), 0);
	struct npa_stats s = stats_of(&c, 1);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, 1000);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].peak, 1000 + 3 * MiB);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].freed, 3 * MiB);
	assert_int_equal(s.segment[NPA_STAT_LARGE_POOL].current, 0);
	assert_int_equal(s.num_device_free, 1);
	/* The plug-in hears the size, device and stream of the allocation. */
	assert_int_equal(c.fx->last_free_size, 3 * MiB);
	assert_int_equal(c.fx->last_free_device, 1);
	assert_null(c.fx->last_free_stream);
	assert_int_equal(npl_destroy(c.a), 1);
}

static void stats_are_kept_per_device(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 1, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(stats_of(&c, 0).allocation[NPA_STAT_ALL].allocated, 0);
	assert_int_equal(stats_of(&c, 1).allocation[NPA_STAT_ALL].allocated, 1);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	npl_destroy(c.a);
}

static void double_free_is_refused_and_never_reaches_the_plugin(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	struct npl_guard_counts g;
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Trying to free a pointer not allocated here");
	assert_int_equal(c.fx->free, 1);
	npl_guard_counts(c.a, &g);
	assert_int_equal(g.refused_frees, 1);
	assert_int_equal(stats_of(&c, 0).num_device_free, 1);
	npl_destroy(c.a);
}

static void foreign_pointer_free_is_refused(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	static char elsewhere[512] __attribute__((aligned(512)));
	struct npl_guard_counts g;
	(void)state;

	assert_int_equal(npl_ops.free(c.a, elsewhere, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Trying to free a pointer not allocated here");
	assert_int_equal(c.fx->free, 0);
	npl_guard_counts(c.a, &g);
	assert_int_equal(g.refused_frees, 1);
	npl_destroy(c.a);
}

static void null_from_the_plugin_is_an_oom(void **state)
{
	struct ctx c = load("fx_alloc_null fx_free");
	struct npl_guard_counts g;
	void *p = (void *)1;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 2 * MiB, NULL, &p, err, sizeof(err)), -ENOMEM);
	assert_null(p);
	assert_non_null(strstr(err, "out of memory"));
	assert_non_null(strstr(err, "returned NULL for 2097152 bytes on device 0"));
	struct npa_stats s = stats_of(&c, 0);
	assert_int_equal(s.num_ooms, 1);
	assert_int_equal(s.allocation[NPA_STAT_ALL].allocated, 0);
	npl_guard_counts(c.a, &g);
	assert_int_equal(g.null_returns, 1);
	assert_int_equal(npl_destroy(c.a), 0);
}

static void unaligned_pointer_is_given_back_and_refused(void **state)
{
	struct ctx c = load("fx_alloc_odd fx_free_odd");
	struct npl_guard_counts g;
	void *p = (void *)1;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &p, err, sizeof(err)), -EFAULT);
	assert_null(p);
	assert_non_null(strstr(err, "not 512-byte aligned"));
	/* Given back: the fixture's free ran (and its memory is not leaked). */
	assert_int_equal(c.fx->free, 1);
	npl_guard_counts(c.a, &g);
	assert_int_equal(g.refused_unaligned, 1);
	assert_int_equal(g.live_blocks, 0);
	assert_int_equal(stats_of(&c, 0).allocation[NPA_STAT_ALL].current, 0);
	npl_destroy(c.a);
}

static void same_pointer_twice_is_an_overlap(void **state)
{
	struct ctx c = load("fx_alloc_same fx_free_same");
	struct npl_guard_counts g;
	void *first, *second = (void *)1;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 1024, NULL, &first, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 1, 1024, NULL, &second, err, sizeof(err)), -EFAULT);
	assert_null(second);
	assert_non_null(strstr(err, "overlapping live block"));
	/* Not given back: the plug-in would free the first block with it. */
	assert_non_null(strstr(err, "not given back"));
	assert_int_equal(c.fx->free, 0);
	npl_guard_counts(c.a, &g);
	assert_int_equal(g.refused_overlap, 1);
	assert_int_equal(g.live_blocks, 1);
	assert_int_equal(npl_destroy(c.a), 1);
}

static void adjacent_blocks_are_not_an_overlap(void **state)
{
	struct ctx c = load("fx_bump_alloc fx_bump_free");
	void *a, *b;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 1024, NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 512, NULL, &b, err, sizeof(err)), 0);
	assert_ptr_equal((char *)a + 1024, b);
	assert_int_equal(npl_destroy(c.a), 2);
}

static void block_starting_inside_the_previous_one_is_an_overlap(void **state)
{
	struct ctx c = load("fx_bump_alloc fx_bump_free");
	void (*rewind)(size_t);
	void *a, *b = (void *)1;
	(void)state;

	*(void **)&rewind = dlsym(npl_plugin(c.a)->handle, "fx_bump_rewind");
	assert_int_equal(npl_ops.malloc(c.a, 0, 1024, NULL, &a, err, sizeof(err)), 0);
	rewind(512);
	assert_int_equal(npl_ops.malloc(c.a, 0, 512, NULL, &b, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "overlapping live block"));
	assert_non_null(strstr(err, "given back"));
	assert_int_equal(c.fx->free, 1);
	assert_int_equal(npl_destroy(c.a), 1);
}

static void block_running_into_the_next_one_is_an_overlap(void **state)
{
	struct ctx c = load("fx_bump_alloc fx_bump_free");
	void (*rewind)(size_t);
	void *a, *b, *big = (void *)1;
	(void)state;

	*(void **)&rewind = dlsym(npl_plugin(c.a)->handle, "fx_bump_rewind");
	assert_int_equal(npl_ops.malloc(c.a, 0, 512, NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 512, NULL, &b, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.free(c.a, a, err, sizeof(err)), 0);
	rewind(1024);
	/* Starts where a was (free now) and runs 512 bytes into b. */
	assert_int_equal(npl_ops.malloc(c.a, 0, 1024, NULL, &big, err, sizeof(err)), -EFAULT);
	assert_null(big);
	assert_int_equal(npl_destroy(c.a), 1);
}

static void snapshot_has_one_segment_per_block_sorted_by_device(void **state)
{
	struct ctx c = load("fx_bump_alloc fx_bump_free");
	struct npa_snapshot snap;
	void *p[3];
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 1, 512, NULL, &p[0], err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 2 * MiB - 4096, NULL, &p[1], err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 1000, NULL, &p[2], err, sizeof(err)), 0);
	assert_int_equal(npl_ops.snapshot(c.a, -1, &snap), 0);
	assert_int_equal(snap.nsegments, 3);
	assert_int_equal(snap.segments[0].device, 0);
	assert_int_equal(snap.segments[0].address, (uintptr_t)p[1]);
	assert_int_equal(snap.segments[0].total_size, 2 * MiB - 4096);
	assert_true(snap.segments[0].is_large);
	assert_int_equal(snap.segments[1].address, (uintptr_t)p[2]);
	assert_false(snap.segments[1].is_large);
	assert_int_equal(snap.segments[2].device, 1);
	assert_int_equal(snap.segments[2].nblocks, 1);
	assert_int_equal(snap.segments[2].blocks[0].state, NPA_BLOCK_ACTIVE_ALLOCATED);
	assert_int_equal(snap.segments[2].blocks[0].requested_size, 512);
	npa_snapshot_release(&snap);

	assert_int_equal(npl_ops.snapshot(c.a, 1, &snap), 0);
	assert_int_equal(snap.nsegments, 1);
	npa_snapshot_release(&snap);
	npl_destroy(c.a);
}

static void empty_cache_calls_the_reset_hook_once(void **state)
{
	struct ctx c = load("fx_alloc fx_free reset=fx_reset");
	(void)state;

	assert_int_equal(npl_ops.empty_cache(c.a, -1), 0);
	assert_int_equal(c.fx->reset, 1);
	npl_destroy(c.a);
}

static void memory_fraction_reaches_the_hook(void **state)
{
	struct ctx c = load("fx_alloc fx_free memory_fraction=fx_fraction");
	(void)state;

	assert_int_equal(npl_ops.set_fraction(c.a, 1, 0.5, err, sizeof(err)), 0);
	assert_int_equal(c.fx->fraction, 1);
	assert_true(c.fx->last_fraction == 0.5);
	assert_int_equal(c.fx->last_fraction_device, 1);
	assert_true(npl_ops.get_fraction(c.a, 1) == 0.5);
	assert_true(npl_ops.get_fraction(c.a, 0) == 1.0);
	assert_int_equal(npl_ops.set_fraction(c.a, 1, 1.5, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Invalid fraction value: 1.5. Allowed range: 0~1");
	assert_int_equal(c.fx->fraction, 1);
	npl_destroy(c.a);
}

static void record_stream_reaches_the_hook_for_live_pointers_only(void **state)
{
	struct ctx c = load("fx_alloc fx_free record_stream=fx_record_stream");
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.record_stream(c.a, p, NULL), 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.record_stream(c.a, p, NULL), -EINVAL);
	assert_int_equal(c.fx->record_stream, 1);
	npl_destroy(c.a);
}

static void reset_peak_brings_peak_down_to_current(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *p, *q;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 8192, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.reset_peak(c.a, 0), 0);
	assert_int_equal(stats_of(&c, 0).allocated_bytes[NPA_STAT_ALL].peak, 4096);
	assert_int_equal(npl_ops.reset_accumulated(c.a, -1), 0);
	assert_int_equal(stats_of(&c, 0).allocated_bytes[NPA_STAT_ALL].allocated, 0);
	assert_int_equal(stats_of(&c, 0).num_device_alloc, 0);
	assert_int_equal(npl_ops.free(c.a, q, err, sizeof(err)), 0);
	npl_destroy(c.a);
}

/* What the warning sink was told, for the tests of torch_npu's warnings. */
static char warned[8][256];
static int nwarned;

static void remember_warning(void *arg, const struct npl *self, const char *text)
{
	(void)arg, (void)self;
	if (nwarned < 8)
		snprintf(warned[nwarned++], sizeof(warned[0]), "%s", text);
}

static struct ctx load_warned(const char *functions)
{
	struct ctx c = load(functions);

	nwarned = 0;
	npl_set_warn(c.a, remember_warning, NULL);
	return c;
}

static void get_device_stats_hook_numbers_are_memory_stats(void **state)
{
	struct ctx c = load_warned("fx_alloc fx_free get_device_stats=fx_get_device_stats");
	struct npa_stats s, own;
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 1, 4096, NULL, &p, err, sizeof(err)), 0);
	s = stats_of(&c, 1);
	assert_int_equal(c.fx->last_stats_device, 1);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].current, 1001);
	assert_int_equal(s.allocated_bytes[NPA_STAT_ALL].peak, 2001);
	assert_int_equal(s.reserved_bytes[NPA_STAT_LARGE_POOL].current, 3001);
	assert_int_equal(s.requested_bytes[NPA_STAT_SMALL_POOL].freed, 4001);
	assert_int_equal(s.num_alloc_retries, 5);
	assert_int_equal(s.num_ooms, 6);
	assert_int_equal(s.oversize_segments.current, 7);
	assert_int_equal(s.num_sync_all_streams, 8);
	assert_int_equal(s.num_device_alloc, 9);
	assert_int_equal(s.num_device_free, 10);
	assert_int_equal(s.num_oom_rejections, 11);
	assert_int_equal(s.max_split_size, 12);
	assert_int_equal(npl_get_own_stats(c.a, 1, &own), 0);
	assert_int_equal(own.allocated_bytes[NPA_STAT_ALL].current, 4096);
	assert_int_equal(nwarned, 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	npl_destroy(c.a);
}

static void without_get_device_stats_the_wrapper_counts_and_torch_npu_warns_once(void **state)
{
	struct ctx c = load_warned("fx_alloc fx_free");
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(stats_of(&c, 0).allocated_bytes[NPA_STAT_ALL].current, 4096);
	assert_int_equal(stats_of(&c, 1).allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(nwarned, 1);
	assert_string_equal(warned[0], "get_device_stats_fn_ is not define, "
				       "please set by set_get_device_stats_fn");
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	npl_destroy(c.a);
}

static void a_get_device_stats_hook_that_crashes_retires_the_plugin(void **state)
{
	struct ctx c = load_warned("fx_alloc fx_free get_device_stats=fx_get_device_stats_crash");
	struct npa_stats s;
	char what[PATH_MAX + 512];
	(void)state;

	assert_int_equal(npl_ops.get_stats(c.a, 0, &s), -EFAULT);
	assert_true(npl_fault(c.a, what, sizeof(what)));
	assert_non_null(strstr(what, "faulted in fx_get_device_stats_crash: signal 6"));
	/* Retired: its hook is never called again, its bookkeeping shows. */
	assert_int_equal(npl_ops.get_stats(c.a, 0, &s), 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 0);
	npl_destroy(c.a);
}

static void reset_peak_status_hook_is_called_for_each_device_asked(void **state)
{
	struct ctx c = load_warned("fx_alloc fx_free reset_peak_status=fx_reset_peak_status");
	(void)state;

	assert_int_equal(npl_ops.reset_peak(c.a, 1), 0);
	assert_int_equal(c.fx->reset_peak_status, 1);
	assert_int_equal(c.fx->last_reset_peak_device, 1);
	assert_int_equal(npl_ops.reset_peak(c.a, -1), 0);
	assert_int_equal(c.fx->reset_peak_status, 3);
	assert_int_equal(c.fx->last_reset_peak_device, 1);
	assert_int_equal(nwarned, 0);
	npl_destroy(c.a);
}

static void resets_without_support_warn_with_torch_npu_words(void **state)
{
	struct ctx c = load_warned("fx_alloc fx_free");
	(void)state;

	assert_int_equal(npl_ops.reset_peak(c.a, -1), 0);
	assert_int_equal(npl_ops.reset_peak(c.a, 0), 0);
	assert_int_equal(npl_ops.reset_accumulated(c.a, -1), 0);
	assert_int_equal(nwarned, 2);
	assert_string_equal(warned[0], "reset_peak_status_fn_ is not define, "
				       "please set by set_reset_peak_status_fn");
	assert_string_equal(warned[1], "NPUPluggableAllocator does not yet support "
				       "resetAccumulatedStats. If you need it, please file an "
				       "issue describing your use case.");
	npl_destroy(c.a);
}

static void erase_stream_reaches_the_hook_for_live_pointers_only(void **state)
{
	struct ctx c = load("fx_alloc fx_free erase_stream=fx_erase_stream");
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.erase_stream(c.a, p, NULL), 0);
	assert_int_equal(npl_ops.free(c.a, p, err, sizeof(err)), 0);
	assert_int_equal(npl_ops.erase_stream(c.a, p, NULL), -EINVAL);
	assert_int_equal(c.fx->erase_stream, 1);
	npl_destroy(c.a);
}

static void zero_bytes_give_null_and_no_stats(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *p = (void *)1;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 0, 0, NULL, &p, err, sizeof(err)), 0);
	assert_null(p);
	assert_int_equal(c.fx->alloc, 0);
	assert_int_equal(stats_of(&c, 0).allocation[NPA_STAT_ALL].allocated, 0);
	npl_destroy(c.a);
}

static void bad_device_is_refused_before_the_plugin(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *p;
	(void)state;

	assert_int_equal(npl_ops.malloc(c.a, 2, 4096, NULL, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(c.fx->alloc, 0);
	npl_destroy(c.a);
}

static void destroy_gives_live_blocks_back_to_the_plugin(void **state)
{
	struct ctx c = load("fx_alloc fx_free");
	void *p;
	(void)state;

	/* A second reference keeps the fixture mapped after npl_destroy. */
	void *keep = dlopen(tmp.so, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(keep);
	for (int i = 0; i < 5; i++)
		assert_int_equal(npl_ops.malloc(c.a, i % 2, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npl_destroy(c.a), 5);
	assert_int_equal(c.fx->free, 5);
	dlclose(keep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(each_allocation_is_one_segment_of_its_size),
		T(free_lowers_current_and_keeps_the_peak),
		T(stats_are_kept_per_device),
		T(double_free_is_refused_and_never_reaches_the_plugin),
		T(foreign_pointer_free_is_refused),
		T(null_from_the_plugin_is_an_oom),
		T(unaligned_pointer_is_given_back_and_refused),
		T(same_pointer_twice_is_an_overlap),
		T(adjacent_blocks_are_not_an_overlap),
		T(block_starting_inside_the_previous_one_is_an_overlap),
		T(block_running_into_the_next_one_is_an_overlap),
		T(snapshot_has_one_segment_per_block_sorted_by_device),
		T(empty_cache_calls_the_reset_hook_once),
		T(memory_fraction_reaches_the_hook),
		T(record_stream_reaches_the_hook_for_live_pointers_only),
		T(reset_peak_brings_peak_down_to_current),
		T(get_device_stats_hook_numbers_are_memory_stats),
		T(without_get_device_stats_the_wrapper_counts_and_torch_npu_warns_once),
		T(a_get_device_stats_hook_that_crashes_retires_the_plugin),
		T(reset_peak_status_hook_is_called_for_each_device_asked),
		T(resets_without_support_warn_with_torch_npu_words),
		T(erase_stream_reaches_the_hook_for_live_pointers_only),
		T(zero_bytes_give_null_and_no_stats),
		T(bad_device_is_refused_before_the_plugin),
		T(destroy_gives_live_blocks_back_to_the_plugin),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
