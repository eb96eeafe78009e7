/*
 * test_replay_switch.c - a replay driving the allocator switch: with a
 * plug-in current the trace's blocks come from the plug-in, not from the
 * caching allocator, and each block is freed by whoever made it across a
 * swap.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc/switch/allocator_switch.h"
#include "alloc/device/mempool.h"
#include <npumemfs/npusim.h>
#include "workload/replay.h"

#define MiB (1024ull * 1024)
#define CACHING 0
#define PLUGIN1 1

struct fixture {
	struct npa *npa;
	struct sw *sw;
	struct wl_trace *t;
	struct wl_replay *r;
	char err[WL_ERRLEN];
};

static struct fixture fx;

static int setup(void **state)
{
	struct npusim_config cfg;
	struct npa_options opt = { .flavor = &npa_flavor_npu, .device_count = 2 };
	struct sw_options so = {
		.device_count = 2,
		.plugin_dirs = PLUGIN_DIR,
		.owner = getuid(),
	};
	(void)state;

	memset(&fx, 0, sizeof(fx));
	npusim_config_default(&cfg, 2, 512 * MiB);
	if (npusim_init(&cfg))
		return -1;
	npa_conf_default(&opt.conf, opt.flavor);
	if (npa_create(&opt, &fx.npa))
		return -1;
	so.caching = fx.npa;
	return sw_create(&so, &fx.sw);
}

static int teardown(void **state)
{
	(void)state;
	if (fx.r) {
		wl_replay_release_all(fx.r);
		wl_replay_free(fx.r);
	}
	wl_trace_free(fx.t);
	sw_destroy(fx.sw);
	npa_destroy(fx.npa, NULL);
	npusim_shutdown();
	return 0;
}

static void use_plugin(const char *so, const char *functions)
{
	char spec[PATH_MAX + 256];

	snprintf(spec, sizeof(spec), "%s/%s %s", PLUGIN_DIR, so, functions);
	if (sw_set_plugin(fx.sw, spec, fx.err, sizeof(fx.err)) != 0)
		fail_msg("load %s: %s", so, fx.err);
}

static void use_passthrough(void)
{
	use_plugin("passthrough.so", "passthrough_alloc_silent passthrough_free_silent");
}

static int load(const char *text)
{
	struct allocator target = sw_allocator(fx.sw);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = wl_trace_parse(f, "t", &fx.t, fx.err, sizeof(fx.err));
	fclose(f);
	if (rc)
		fail_msg("parse: %s", fx.err);
	return wl_replay_new_target(target, fx.t, &fx.r, fx.err, sizeof(fx.err));
}

static void run(size_t from, size_t to)
{
	if (wl_replay_run(fx.r, from, to, NULL, fx.err, sizeof(fx.err)) != 0)
		fail_msg("replay: %s", fx.err);
}

static struct npa_stat allocations_of(unsigned id, int device)
{
	struct npa_stats s;

	assert_int_equal(sw_get_stats_of(fx.sw, id, device, &s), 0);
	return s.allocation[NPA_STAT_ALL];
}

static int64_t segments_of(unsigned id, int device)
{
	struct npa_stats s;

	assert_int_equal(sw_get_stats_of(fx.sw, id, device, &s), 0);
	return s.segment[NPA_STAT_ALL].allocated;
}

static struct wl_replay_counters counters(void)
{
	struct wl_replay_counters c;

	wl_replay_counters(fx.r, &c);
	return c;
}

/* 5 allocations (3 on device 0, 2 on device 1), 3 of them freed. */
static const char five_allocs[] =
	"alloc a 1MiB\n"
	"alloc b 3000 stream=1\n"
	"record_stream b 2\n"
	"free b\n"
	"sync\n"
	"alloc c 5MiB device=1\n"
	"alloc d 512 device=1 stream=1\n"
	"free c\n"
	"empty_cache\n"
	"alloc e 20MiB\n"
	"free a\n"
	"reset_peak\n";

static void passthrough_replay_allocates_only_through_the_plugin(void **state)
{
	(void)state;
	use_passthrough();
	assert_int_equal(load(five_allocs), 0);
	run(0, fx.t->nevents);

	assert_int_equal(counters().allocs, 5);
	assert_int_equal(counters().frees, 3);
	assert_int_equal(allocations_of(PLUGIN1, 0).allocated, 3);
	assert_int_equal(allocations_of(PLUGIN1, 0).current, 1);
	assert_int_equal(allocations_of(PLUGIN1, 1).allocated, 2);
	assert_int_equal(allocations_of(PLUGIN1, 1).current, 1);
	for (int d = 0; d < 2; d++) {
		assert_int_equal(allocations_of(CACHING, d).allocated, 0);
		assert_int_equal(segments_of(CACHING, d), 0);
	}
}

static void release_all_frees_through_the_plugin(void **state)
{
	(void)state;
	use_passthrough();
	assert_int_equal(load(five_allocs), 0);
	run(0, fx.t->nevents);
	wl_replay_release_all(fx.r);

	assert_int_equal(allocations_of(PLUGIN1, 0).current, 0);
	assert_int_equal(allocations_of(PLUGIN1, 1).current, 0);
	assert_int_equal(allocations_of(PLUGIN1, 0).freed, 3);
}

/* Blocks made by the plug-in are freed by it after a swap to caching. */
static void blocks_outlive_a_swap_and_unload_the_plugin_when_freed(void **state)
{
	(void)state;
	use_passthrough();
	assert_int_equal(load("alloc a 1MiB\nalloc b 2MiB\n"
			      "alloc c 4MiB\nfree a\nfree b\nfree c\n"), 0);
	run(0, 2);
	sw_set_caching(fx.sw);
	run(2, 3);
	assert_int_equal(allocations_of(PLUGIN1, 0).current, 2);
	assert_int_equal(allocations_of(CACHING, 0).current, 1);

	run(3, 6);
	struct npa_stats gone;
	assert_int_equal(sw_get_stats_of(fx.sw, PLUGIN1, 0, &gone), -ENOENT);
	assert_int_equal(allocations_of(CACHING, 0).allocated, 1);
	assert_int_equal(allocations_of(CACHING, 0).freed, 1);
	assert_int_equal(counters().frees, 3);
}

/* faulty_null3_alloc returns NULL on every third call: 2 of 6 are OOMs. */
static void plugin_null_is_an_oom_and_its_free_is_skipped(void **state)
{
	(void)state;
	use_plugin("faulty.so", "faulty_null3_alloc faulty_free");
	assert_int_equal(load("alloc a 1MiB\nalloc b 1MiB\nalloc c 1MiB\n"
			      "alloc d 1MiB\nalloc e 1MiB\nalloc f 1MiB\n"
			      "free a\nfree b\nfree c\nfree d\nfree e\nfree f\n"), 0);
	run(0, fx.t->nevents);

	assert_int_equal(counters().allocs, 4);
	assert_int_equal(counters().ooms, 2);
	assert_int_equal(counters().frees, 4);
	assert_int_equal(counters().skipped_frees, 2);
	assert_int_equal(allocations_of(PLUGIN1, 0).current, 0);
}

static void a_device_the_switch_lacks_is_refused(void **state)
{
	(void)state;
	assert_int_equal(load("alloc a 1MiB\nalloc b 1MiB device=2\n"), -EINVAL);
	assert_string_equal(fx.err, "t:2: device 2 does not exist (2 devices)");
}

/* With the caching allocator current the switch target is the npa's. */
static void caching_current_replays_into_the_caching_allocator(void **state)
{
	(void)state;
	assert_int_equal(load(five_allocs), 0);
	run(0, fx.t->nevents);

	assert_int_equal(allocations_of(CACHING, 0).allocated, 3);
	assert_int_equal(allocations_of(CACHING, 1).allocated, 2);
}

static const char a_capture[] =
	"alloc a 1MiB\n"
	"capture_begin 1 pool=P\n"
	"alloc b 1MiB stream=1\n"
	"capture_end 1\n";

/* A capture with a plug-in current is the plug-in's, as NPUGraph's calls
 * reach NPUPluggableAllocator: the captured tensor comes from it. */
static void graph_lines_run_on_the_plugin_when_current(void **state)
{
	(void)state;
	use_passthrough();
	assert_int_equal(load(a_capture), 0);
	run(0, fx.t->nevents);
	assert_int_equal(allocations_of(PLUGIN1, 0).allocated, 2);
	assert_int_equal(allocations_of(CACHING, 0).allocated, 0);
}

static const char a_mempool[] =
	"alloc a 1MiB\n"
	"mempool_create m\n"
	"mempool_begin m stream=1\n"
	"alloc b 1MiB stream=1\n"
	"mempool_end m\n"
	"mempool_release m\n";

/* The lines of the plug-in's pool hooks the replay made, in order. */
static char *hook_calls(const char *path)
{
	static char text[512];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	text[n] = '\0';
	return text;
}

/* With a plug-in current, torch_npu v2.6.0's MemPool() is only an id (no
 * pool of the caching allocator's), and use_mem_pool's calls are the
 * plug-in's hooks: begin_allocate_to_pool at the entry, then at the exit
 * end_allocate_to_pool and release_pool; the tensor in between is the
 * plug-in's. */
static void mempool_lines_reach_the_plugins_pool_hooks(void **state)
{
	char log[] = "/tmp/replay-switch-hooks.XXXXXX";
	int fd = mkstemp(log);
	struct npa_pool_info *pools;
	size_t n;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	setenv("PASSTHROUGH_POOL_LOG", log, 1);
	use_plugin("passthrough.so", "passthrough_alloc_silent passthrough_free_silent "
		   "begin_allocate_to_pool=passthrough_begin_pool "
		   "end_allocate_to_pool=passthrough_end_pool "
		   "release_pool=passthrough_release_pool");
	assert_int_equal(load(a_mempool), 0);
	run(0, 3);
	assert_string_equal(hook_calls(log), "begin_allocate_to_pool device=0 pool=0,1\n");
	run(3, fx.t->nevents);
	assert_string_equal(hook_calls(log), "begin_allocate_to_pool device=0 pool=0,1\n"
					     "end_allocate_to_pool device=0 pool=0,1\n"
					     "release_pool device=0 pool=0,1\n");
	assert_int_equal(allocations_of(PLUGIN1, 0).allocated, 2);
	assert_int_equal(npa_pool_list(fx.npa, 0, &pools, &n), 0);
	free(pools);
	assert_int_equal(n, 0);
	unsetenv("PASSTHROUGH_POOL_LOG");
	unlink(log);
}

static void graph_lines_go_to_the_caching_allocator_when_current(void **state)
{
	struct npa_pool_info *pools;
	size_t n;

	(void)state;
	assert_int_equal(load(a_capture), 0);
	run(0, fx.t->nevents);
	assert_int_equal(npa_pool_list(fx.npa, 0, &pools, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pools[0].allocated_bytes, 1048576 + 512);
	free(pools);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(passthrough_replay_allocates_only_through_the_plugin),
		T(release_all_frees_through_the_plugin),
		T(blocks_outlive_a_swap_and_unload_the_plugin_when_freed),
		T(plugin_null_is_an_oom_and_its_free_is_skipped),
		T(a_device_the_switch_lacks_is_refused),
		T(caching_current_replays_into_the_caching_allocator),
		T(graph_lines_run_on_the_plugin_when_current),
		T(mempool_lines_reach_the_plugins_pool_hooks),
		T(graph_lines_go_to_the_caching_allocator_when_current),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
