/*
 * test_allocator_switch.c - swapping allocators under live allocations,
 * with the contrib plug-ins on the simulated NPU.
 */
#include <errno.h>
#include <pthread.h>
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
#include "report/report.h"
#include <npumemfs/npusim.h>

#define MiB (1024 * 1024)

static struct npa *npa;
static struct sw *sw;
static char err[1024];
static char spec[2 * PATH_MAX];

static const char *plugin(const char *so, const char *functions)
{
	snprintf(spec, sizeof(spec), "%s/%s %s\n", PLUGIN_DIR, so, functions);
	return spec;
}

static const char *passthrough(void)
{
	return plugin("passthrough.so",
		      "passthrough_alloc_silent passthrough_free_silent");
}

/* ctl/allocator's listing, made as the daemon makes it (malloc'd). */
static char *describe(struct sw *s)
{
	struct sw_info *all;
	struct sbuf out;
	size_t n;

	if (sw_list(s, &all, &n))
		return NULL;
	sbuf_init(&out);
	int rc = report_allocators(&out, all, n, sw_refused_frees(s));
	free(all);
	if (rc)
		sbuf_release(&out);
	return out.data;
}

static uint64_t device_used(int device)
{
	struct npusim_counters c;
	assert_int_equal(npusim_device_counters(device, &c), 0);
	return c.used;
}

/* What the switch told its owner of the last plug-in fault. */
static char fault_name[32], fault_what[2048];

static void on_fault(void *ctx, const char *name, const char *what)
{
	(void)ctx;
	snprintf(fault_name, sizeof(fault_name), "%s", name);
	snprintf(fault_what, sizeof(fault_what), "%s", what);
}

/* The plug-in the switch unloaded last. Unloads are told on whichever
 * thread let go of the last pin, two at once in the racing tests. */
static char unloaded_name[32];
static pthread_mutex_t unloaded_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_unload(void *ctx, const char *name, const char *path)
{
	(void)ctx, (void)path;
	pthread_mutex_lock(&unloaded_lock);
	snprintf(unloaded_name, sizeof(unloaded_name), "%s", name);
	pthread_mutex_unlock(&unloaded_lock);
}

static int setup(void **state)
{
	struct npusim_config cfg;
	struct npa_options opt = { .device_count = 2 };
	(void)state;

	err[0] = '\0';
	npusim_config_default(&cfg, 2, 512ull * MiB);
	if (npusim_init(&cfg))
		return -1;
	npa_conf_default(&opt.conf, &npa_flavor_npu);
	if (npa_create(&opt, &npa))
		return -1;
	struct sw_options so = {
		.caching = npa,
		.device_count = 2,
		.plugin_dirs = "/nonexistent, " PLUGIN_DIR,
		.owner = getuid(),
		.on_fault = on_fault,
		.on_unload = on_unload,
	};
	fault_name[0] = fault_what[0] = unloaded_name[0] = '\0';
	return sw_create(&so, &sw);
}

static int teardown(void **state)
{
	(void)state;
	sw_destroy(sw);
	npa_destroy(npa, NULL);
	npusim_shutdown();
	return 0;
}

static void *alloc_filled(size_t size, int byte)
{
	void *p = NULL;
	assert_int_equal(sw_malloc(sw, 0, size, NULL, &p, err, sizeof(err)), 0);
	assert_non_null(p);
	memset(p, byte, size);
	return p;
}

static void assert_filled(const void *p, size_t size, int byte)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < size; i++)
		if (c[i] != byte)
			fail_msg("byte %zu of %p is %d, not %d", i, p, c[i], byte);
}

static size_t count_allocators(void)
{
	struct sw_info *all;
	size_t n;
	assert_int_equal(sw_list(sw, &all, &n), 0);
	free(all);
	return n;
}

static void caching_is_current_at_start(void **state)
{
	struct npa_stats s;
	void *p;
	(void)state;

	assert_true(sw_is_caching(sw));
	assert_int_equal(sw_malloc(sw, 0, 1 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npa_get_stats(npa, 0, &s), 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 1);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
}

/* The caching allocator's live figures are its own counts, so uncached
 * allocations (PYTORCH_NO_NPU_MEMORY_CACHING) show too. */
static void caching_live_figures_count_uncached_allocations(void **state)
{
	struct npa_options opt = { .device_count = 2, .no_caching = true };
	struct sw_options so = { .device_count = 2, .plugin_dirs = "", .owner = getuid() };
	struct npa *uncached;
	struct sw *s2;
	struct sw_info *all;
	size_t n;
	void *p, *q;
	(void)state;

	npa_conf_default(&opt.conf, &npa_flavor_npu);
	assert_int_equal(npa_create(&opt, &uncached), 0);
	so.caching = uncached;
	assert_int_equal(sw_create(&so, &s2), 0);
	assert_int_equal(sw_malloc(s2, 0, 1000, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(s2, 1, 3 * MiB, NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(sw_list(s2, &all, &n), 0);
	assert_string_equal(all[0].name, "caching");
	assert_int_equal(all[0].live_blocks, 2);
	assert_int_equal(all[0].live_bytes, 1000 + 3 * MiB);
	free(all);
	assert_int_equal(sw_free(s2, p, err, sizeof(err)), 0);
	assert_int_equal(sw_free(s2, q, err, sizeof(err)), 0);
	assert_int_equal(sw_list(s2, &all, &n), 0);
	assert_int_equal(all[0].live_blocks, 0);
	assert_int_equal(all[0].live_bytes, 0);
	free(all);
	sw_destroy(s2);
	npa_destroy(uncached, NULL);
}

static void plugin_serves_new_allocations_and_its_stats_are_shown(void **state)
{
	struct npa_stats s;
	void *p;
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_false(sw_is_caching(sw));
	assert_int_equal(sw_malloc(sw, 1, 3 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(npusim_device_of(p), 1);
	assert_int_equal(sw_get_stats(sw, 1, &s), 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 1);
	assert_int_equal(s.allocated_bytes[NPA_STAT_LARGE_POOL].current, 3 * MiB);
	assert_int_equal(npa_get_stats(npa, 1, &s), 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].allocated, 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
}

static void swaps_with_live_blocks_keep_every_byte(void **state)
{
	(void)state;

	void *a = alloc_filled(4 * MiB, 0xa1);
	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	void *b = alloc_filled(2 * MiB, 0xb2);
	assert_int_equal(sw_write(sw, plugin("arena.so", "arena_alloc arena_free"),
				  err, sizeof(err)), 0);
	void *c = alloc_filled(1 * MiB, 0xc3);
	assert_int_equal(sw_write(sw, "caching\n", err, sizeof(err)), 0);
	void *d = alloc_filled(512, 0xd4);

	/* caching (current), passthrough and arena (retired, still live). */
	assert_int_equal(count_allocators(), 3);
	assert_filled(a, 4 * MiB, 0xa1);
	assert_filled(b, 2 * MiB, 0xb2);
	assert_filled(c, 1 * MiB, 0xc3);
	assert_filled(d, 512, 0xd4);

	assert_int_equal(sw_free(sw, b, err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 2);
	assert_int_equal(sw_free(sw, c, err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 1);
	assert_int_equal(sw_free(sw, a, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, d, err, sizeof(err)), 0);
	struct npa_stats s;
	assert_int_equal(npa_get_stats(npa, 0, &s), 0);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 0);
}

static void retired_plugin_is_unloaded_with_its_last_block(void **state)
{
	void *p, *q;
	(void)state;

	uint64_t before = device_used(0);
	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 2 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 2 * MiB, NULL, &q, err, sizeof(err)), 0);
	sw_set_caching(sw);
	assert_int_equal(count_allocators(), 2);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 2);
	assert_int_equal(sw_free(sw, q, err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 1);
	assert_int_equal(device_used(0), before);
}

static void plugin_without_blocks_is_unloaded_at_once_when_replaced(void **state)
{
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 2); /* plugin2 and caching */
	assert_int_equal(sw_get_stats_of(sw, 1, 0, &(struct npa_stats){ 0 }), -ENOENT);
	sw_set_caching(sw);
	assert_int_equal(count_allocators(), 1);
}

static void failed_writes_keep_the_current_allocator(void **state)
{
	struct sw_info *all;
	size_t n;
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_write(sw, plugin("missing.so", "a b"), err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_alloc faulty_free "
					     "init_checked=faulty_init_refuse"),
				  err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "refused the load (returned -1)"));
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_alloc nope"),
				  err, sizeof(err)), -EINVAL);
	assert_int_equal(sw_write(sw, "/etc/passwd a b", err, sizeof(err)), -EACCES);
	assert_int_equal(sw_write(sw, "cached", err, sizeof(err)), -EINVAL);
	assert_int_equal(sw_list(sw, &all, &n), 0);
	assert_int_equal(n, 2);
	assert_true(all[0].current);
	assert_string_equal(all[0].name, "plugin1");
	assert_string_equal(all[0].alloc_name, "passthrough_alloc_silent");
	free(all);
}

static void foreign_free_is_refused_and_counted(void **state)
{
	static char elsewhere[4096] __attribute__((aligned(512)));
	(void)state;

	assert_int_equal(sw_free(sw, elsewhere, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Trying to free a pointer not allocated here");
	char *text = describe(sw);
	assert_non_null(strstr(text, "refused_frees 1\n"));
	free(text);
}

static void describe_names_current_and_retired_owners(void **state)
{
	void *p, *q;
	(void)state;

	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_write(sw, plugin("arena.so", "arena_alloc arena_free "
					     "init=arena_init reset=arena_reset"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 1000, NULL, &q, err, sizeof(err)), 0);
	char *text = describe(sw);
	assert_non_null(text);
	char expect[PATH_MAX + 64];
	snprintf(expect, sizeof(expect), "current plugin1\n  path %s/arena.so\n"
		 "  alloc arena_alloc\n  free arena_free\n"
		 "  hooks init=arena_init reset=arena_reset\n", PLUGIN_DIR);
	if (!strstr(text, expect))
		fail_msg("no '%s' in:\n%s", expect, text);
	assert_non_null(strstr(text, "  live_blocks 1\n  live_bytes 1000\n"));
	assert_non_null(strstr(text, "retired caching\n"));
	assert_non_null(strstr(text, "  live_blocks 1\n  live_bytes 4096\n"));
	free(text);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	text = describe(sw);
	assert_null(strstr(text, "retired caching"));
	free(text);
	assert_int_equal(sw_free(sw, q, err, sizeof(err)), 0);
}

static void plugin_null_is_an_oom_counted_in_stats(void **state)
{
	void *p[3];
	struct npa_stats s;
	(void)state;

	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_null3_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &p[0], err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &p[1], err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &p[2], err, sizeof(err)), -ENOMEM);
	assert_null(p[2]);
	assert_int_equal(sw_get_stats(sw, 0, &s), 0);
	assert_int_equal(s.num_ooms, 1);
	assert_int_equal(s.allocation[NPA_STAT_ALL].current, 2);
	assert_int_equal(sw_free(sw, p[0], err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p[1], err, sizeof(err)), 0);
}

static void overlapping_plugin_pointer_is_refused_without_losing_memory(void **state)
{
	void *p, *q = (void *)1;
	(void)state;

	uint64_t before = device_used(0);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_overlap_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 8192, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 8192, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_non_null(strstr(err, "overlapping live block"));
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	assert_int_equal(device_used(0), before);
}

/* FAULTY_STEAL=ptr: the faulty plug-in hands out `ptr` as its own. */
static void steal(const void *ptr)
{
	char hex[32];

	snprintf(hex, sizeof(hex), "%lx", (unsigned long)(uintptr_t)ptr);
	setenv("FAULTY_STEAL", hex, 1);
}

/* The stolen tensor is refused, not given back, and p keeps its bytes. */
static void plugin_pointer_into_the_caching_allocators_memory_is_refused(void **state)
{
	void *p, *q = (void *)1;
	struct npa_stats before, after;
	(void)state;

	unsigned char back[8192], want[8192];

	memset(want, 0x5a, sizeof(want));
	assert_int_equal(sw_malloc(sw, 0, 8192, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(aclrtMemcpy(p, 8192, want, 8192, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(npa_get_stats(npa, 0, &before), 0);
	steal((char *)p + 512);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_steal_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_non_null(strstr(err, "inside memory of the caching allocator: not given back"));
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	assert_int_equal(npa_get_stats(npa, 0, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(aclrtMemcpy(back, sizeof(back), p, sizeof(back),
				     ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_memory_equal(back, want, sizeof(back));
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	unsetenv("FAULTY_STEAL");
}

/* A live block of another plug-in, retired or not, is no one else's to give. */
static void plugin_pointer_into_another_plugins_block_is_refused(void **state)
{
	void *p, *q = (void *)1;
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 8192, NULL, &p, err, sizeof(err)), 0);
	steal(p);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_steal_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_non_null(strstr(err, "inside memory of plugin"));
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	unsetenv("FAULTY_STEAL");
}

/*
 * A plug-in whose alloc crashes is retired: the caching allocator is
 * current again, the owner is told the function, signal and address, and
 * another allocator's tensor keeps its bytes.
 */
static void a_plugin_crashing_in_alloc_is_retired_and_others_keep_their_bytes(void **state)
{
	void *keep = alloc_filled(8192, 0x77), *q = (void *)1;
	unsigned char want[8192];
	(void)state;

	memset(want, 0x77, sizeof(want));
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_raise_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_non_null(strstr(err, "faulted in faulty_raise_alloc: signal 11 (Segmentation fault)"));
	assert_true(sw_is_caching(sw));
	assert_string_equal(fault_name, "plugin1");
	assert_non_null(strstr(fault_what, "retired, never called again"));
	assert_memory_equal(keep, want, sizeof(want));
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, q, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, keep, err, sizeof(err)), 0);
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
}

/* abort() in a plug-in's free: the block is lost, the daemon goes on. */
static void a_plugin_aborting_in_free_is_retired(void **state)
{
	void *p, *q;
	(void)state;

	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_alloc faulty_abort_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "faulted in faulty_abort_free: signal 6 (Aborted)"));
	assert_non_null(strstr(err, "its 1 live blocks (4096 bytes) are lost"));
	assert_true(sw_is_caching(sw));
	/* Its other block is given back without calling it again. */
	assert_int_equal(sw_free(sw, q, err, sizeof(err)), 0);
	assert_int_equal(sw_empty_cache(sw, -1), 0);
}

static void unaligned_plugin_pointer_is_given_back(void **state)
{
	void *p = (void *)1;
	(void)state;

	uint64_t before = device_used(0);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_unaligned_alloc faulty_free"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 8192, NULL, &p, err, sizeof(err)), -EFAULT);
	assert_null(p);
	assert_non_null(strstr(err, "not 512-byte aligned"));
	assert_int_equal(device_used(0), before);
}

static void empty_cache_runs_the_arena_reset_hook(void **state)
{
	void *p;
	(void)state;

	assert_int_equal(sw_write(sw, plugin("arena.so", "arena_alloc arena_free "
					     "reset=arena_reset"), err, sizeof(err)), 0);
	uint64_t before = device_used(1);
	assert_int_equal(sw_malloc(sw, 1, 1 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	/* The 64 MiB chunk stays after its last block is freed... */
	assert_true(device_used(1) >= before + 64 * MiB);
	/* ...until empty_cache calls the reset hook. */
	assert_int_equal(sw_empty_cache(sw, -1), 0);
	assert_int_equal(device_used(1), before);
}

/* upstream's empty_cache reaches the current allocator alone: a plug-in
 * loaded beside it keeps its chunk. */
static void empty_cache_leaves_a_plugin_that_is_not_current_alone(void **state)
{
	void *p;
	(void)state;

	assert_int_equal(sw_write(sw, "load " PLUGIN_DIR "/arena.so arena_alloc arena_free "
				  "reset=arena_reset", err, sizeof(err)), 0);
	struct sw_entry *arena = sw_hold(sw, "plugin1");
	uint64_t before = device_used(1);
	assert_int_equal(sw_malloc_from(sw, arena, 1, 1 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	assert_int_equal(sw_empty_cache(sw, -1), 0);
	assert_true(device_used(1) >= before + 64 * MiB);
	sw_drop(sw, arena);
}

static void memory_fraction_goes_to_the_current_allocator(void **state)
{
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_set_memory_fraction(sw, 1, 0.25, err, sizeof(err)), 0);
	assert_true(sw_get_memory_fraction(sw, 1) == 0.25);
	sw_set_caching(sw);
	assert_true(sw_get_memory_fraction(sw, 1) == 0.25);
	assert_int_equal(sw_set_memory_fraction(sw, 1, 1.5, err, sizeof(err)), -EINVAL);
}

/* A fault in the fraction hook is a fault like any other: told, retired,
 * the write refused with what happened; the caching allocator has the
 * fraction and is current. */
static void a_plugin_crashing_in_memory_fraction_is_retired_and_told(void **state)
{
	(void)state;

	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_alloc faulty_free "
					      "memory_fraction=faulty_raise_fraction"),
				  err, sizeof(err)), 0);
	assert_int_equal(sw_set_memory_fraction(sw, 0, 0.5, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "faulted in faulty_raise_fraction: signal 11"));
	assert_true(sw_is_caching(sw));
	assert_string_equal(fault_name, "plugin1");
	assert_true(sw_get_memory_fraction(sw, 0) == 0.5);
}

/* What faulty_init_record was given when `sw` loaded it, on a thread whose
 * current device is `current`. */
static int init_argument(int current)
{
	char log[] = "/tmp/npumemfs-init-XXXXXX", line[32] = "";
	int fd = mkstemp(log), arg = -1;
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	setenv("FAULTY_INIT_LOG", log, 1);
	assert_int_equal(aclrtSetDevice(current), ACL_SUCCESS);
	assert_int_equal(sw_write(sw, plugin("faulty.so", "faulty_alloc faulty_free "
					      "init=faulty_init_record"),
				  err, sizeof(err)), 0);
	unsetenv("FAULTY_INIT_LOG");
	assert_non_null(f = fopen(log, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(log);
	assert_int_equal(sscanf(line, "init(%d)", &arg), 1);
	return arg;
}

/* torch_npu's createCustomAllocator: init(c10_npu::GetDevice()). */
static void npu_init_gets_the_current_device(void **state)
{
	(void)state;
	assert_int_equal(init_argument(1), 1);
}

/* PyTorch's createCustomAllocator: init(device_count), a file-scope 0. */
static void cuda_init_gets_zero(void **state)
{
	(void)state;
	sw_destroy(sw);
	npa_destroy(npa, NULL);
	struct npa_options opt = { .flavor = &npa_flavor_cuda, .device_count = 2 };
	npa_conf_default(&opt.conf, &npa_flavor_cuda);
	assert_int_equal(npa_create(&opt, &npa), 0);
	struct sw_options so = { .caching = npa, .device_count = 2,
				 .plugin_dirs = PLUGIN_DIR, .owner = getuid() };
	assert_int_equal(sw_create(&so, &sw), 0);
	assert_int_equal(init_argument(1), 0);
}

struct churn {
	int rounds;
	int failures;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	char e[256];

	for (int i = 0; i < c->rounds; i++) {
		void *p = NULL;
		size_t size = (size_t)(i % 7 + 1) * 4096;
		if (sw_malloc(sw, i % 2, size, NULL, &p, e, sizeof(e)) || !p) {
			c->failures++;
			continue;
		}
		memset(p, i & 0xff, size);
		if (((unsigned char *)p)[size - 1] != (i & 0xff) ||
		    sw_free(sw, p, e, sizeof(e)))
			c->failures++;
	}
	return NULL;
}

static void swaps_race_with_allocations_safely(void **state)
{
	pthread_t t[4];
	struct churn c[4];
	(void)state;

	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){ .rounds = 2000 };
		assert_int_equal(pthread_create(&t[i], NULL, churn_thread, &c[i]), 0);
	}
	for (int i = 0; i < 40; i++) {
		if (i % 2)
			sw_set_caching(sw);
		else
			assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
		free(describe(sw));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(c[i].failures, 0);
	}
	assert_true(sw_is_caching(sw));
	assert_int_equal(count_allocators(), 1);
}

static char *load_spec(const char *so, const char *functions)
{
	static char line[2 * PATH_MAX + 8];

	snprintf(line, sizeof(line), "load %s", plugin(so, functions));
	return line;
}

static bool listed(const char *state_and_name)
{
	char *text = describe(sw);
	bool found = text && strstr(text, state_and_name) != NULL;

	free(text);
	return found;
}

/* NPUPluggableAllocator(...) without change_current_allocator. */
static void a_loaded_plugin_is_not_current_and_stays_until_unloaded(void **state)
{
	(void)state;

	assert_int_equal(sw_write(sw, load_spec("passthrough.so", "passthrough_alloc_silent "
						"passthrough_free_silent"), err, sizeof(err)), 0);
	assert_true(sw_is_caching(sw));
	assert_true(listed("loaded plugin1\n"));
	assert_int_equal(sw_write(sw, "unload plugin1", err, sizeof(err)), 0);
	assert_int_equal(count_allocators(), 1);
	assert_int_equal(sw_write(sw, "unload plugin1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no loaded plug-in plugin1");
}

/* MemPool(allocator) over plugin `name`, routing every allocation of device 0. */
static struct npa_pool_id plugin_pool(const char *name)
{
	struct npa_segment_source src;
	struct npa_pool_id id = npa_graph_pool_handle(npa, true);

	assert_int_equal(sw_mempool_source(sw, name, &src, err, sizeof(err)), 0);
	assert_int_equal(npa_mempool_create_from(npa, 0, id, false, false, &src), 0);
	assert_int_equal(npa_mempool_begin_stream(npa, 0, id, NULL, err, sizeof(err)), 0);
	return id;
}

static void plugin_pool_gone(struct npa_pool_id id)
{
	assert_int_equal(npa_mempool_end(npa, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_mempool_destroy(npa, 0, id, err, sizeof(err)), 0);
	sw_unload_dropped(sw);
}

/* Its segments are lent, not the plug-in's own blocks: no two owners. */
static void a_mempool_plugin_lends_segments_and_keeps_loaded_while_they_live(void **state)
{
	void *p = NULL;
	(void)state;

	uint64_t before = device_used(0);
	assert_int_equal(sw_write(sw, load_spec("passthrough.so", "passthrough_alloc_silent "
						"passthrough_free_silent"), err, sizeof(err)), 0);
	struct npa_pool_id id = plugin_pool("plugin1");
	assert_int_equal(sw_malloc(sw, 0, 4 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_true(listed("  mempools 1\n  mempool_segments 1\n  mempool_bytes 20971520\n"));
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	assert_int_equal(sw_write(sw, "unload plugin1", err, sizeof(err)), 0);
	assert_true(listed("retired plugin1\n"));
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	plugin_pool_gone(id);
	assert_int_equal(count_allocators(), 1);
	assert_int_equal(device_used(0), before);
}

/* The pool's last pin drops under the device lock, where no plug-in code
 * may run; the next call through the switch unloads it, even one that
 * goes to the caching allocator and takes no lock of the switch. */
static void a_dropped_mempool_plugin_is_unloaded_by_the_next_caching_allocation(void **state)
{
	void *p = NULL, *q = NULL;
	(void)state;

	assert_int_equal(sw_write(sw, load_spec("passthrough.so", "passthrough_alloc_silent "
						"passthrough_free_silent"), err, sizeof(err)), 0);
	struct npa_pool_id id = plugin_pool("plugin1");
	assert_int_equal(sw_malloc(sw, 0, 4 * MiB, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(sw_write(sw, "unload plugin1", err, sizeof(err)), 0);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	assert_int_equal(npa_mempool_end(npa, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_mempool_destroy(npa, 0, id, err, sizeof(err)), 0);
	assert_string_equal(unloaded_name, "");
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), 0);
	assert_string_equal(unloaded_name, "plugin1");
	assert_int_equal(sw_free(sw, q, err, sizeof(err)), 0);
}

/*
 * The plug-in answers while the caching allocator holds its device lock:
 * a pointer into one of its segments is refused there (a second take of
 * the lock would hang), not given back, and nothing changes.
 */
static void a_mempool_plugin_pointer_into_a_caching_segment_is_refused(void **state)
{
	void *p, *q = (void *)1;
	struct npa_stats before, after;
	(void)state;

	/* A 20 MiB segment: the 2 MiB asked for lies wholly inside it. */
	assert_int_equal(sw_malloc(sw, 0, 4 * MiB, NULL, &p, err, sizeof(err)), 0);
	steal((char *)p + 2 * MiB);
	assert_int_equal(sw_write(sw, load_spec("faulty.so", "faulty_steal_alloc faulty_free"),
				  err, sizeof(err)), 0);
	struct npa_pool_id id = plugin_pool("plugin1");
	assert_int_equal(npa_get_stats(npa, 0, &before), 0);
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_non_null(strstr(err, "inside a segment the caching allocator holds: "
				    "not given back"));
	assert_int_equal(npa_get_stats(npa, 0, &after), 0);
	assert_int_equal(after.segment[NPA_STAT_ALL].current, before.segment[NPA_STAT_ALL].current);
	assert_true(listed("  refused_overlap 1\n"));
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	plugin_pool_gone(id);
	sw_set_caching(sw);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	unsetenv("FAULTY_STEAL");
}

static void a_mempool_plugin_pointer_into_another_plugins_block_is_refused(void **state)
{
	void *p, *q = (void *)1;
	(void)state;

	assert_int_equal(sw_write(sw, passthrough(), err, sizeof(err)), 0);
	assert_int_equal(sw_malloc(sw, 0, 2 * MiB, NULL, &p, err, sizeof(err)), 0);
	sw_set_caching(sw);
	steal(p);
	assert_int_equal(sw_write(sw, load_spec("faulty.so", "faulty_steal_alloc faulty_free"),
				  err, sizeof(err)), 0);
	struct npa_pool_id id = plugin_pool("plugin2");
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "inside memory of plugin1"));
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	plugin_pool_gone(id);
	assert_int_equal(sw_free(sw, p, err, sizeof(err)), 0);
	unsetenv("FAULTY_STEAL");
}

/*
 * A MemPool's plug-in that crashes inside a caching allocation (the
 * caching allocator current, the pool's scope routing the request to it)
 * is retired at that call: the owner is told then, not at some later
 * call, and the device's memory and accounting are unchanged.
 */
static void a_mempool_plugin_crashing_inside_a_caching_allocation_is_retired_at_once(void **state)
{
	void *q = (void *)1;
	struct npa_stats before, after;
	(void)state;

	assert_int_equal(sw_write(sw, load_spec("faulty.so", "faulty_raise_alloc faulty_free"),
				  err, sizeof(err)), 0);
	struct npa_pool_id id = plugin_pool("plugin1");
	assert_int_equal(npa_get_stats(npa, 0, &before), 0);
	assert_true(sw_is_caching(sw));
	assert_int_equal(sw_malloc(sw, 0, 4096, NULL, &q, err, sizeof(err)), -EFAULT);
	assert_null(q);
	assert_string_equal(fault_name, "plugin1");
	assert_non_null(strstr(fault_what, "retired, never called again"));
	assert_true(listed("retired plugin1\n"));
	assert_int_equal(npa_get_stats(npa, 0, &after), 0);
	assert_int_equal(after.reserved_bytes[NPA_STAT_ALL].current,
			 before.reserved_bytes[NPA_STAT_ALL].current);
	assert_int_equal(sw_check(sw, 0, err, sizeof(err)), 0);
	plugin_pool_gone(id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(caching_is_current_at_start),
		T(caching_live_figures_count_uncached_allocations),
		T(plugin_serves_new_allocations_and_its_stats_are_shown),
		T(swaps_with_live_blocks_keep_every_byte),
		T(retired_plugin_is_unloaded_with_its_last_block),
		T(plugin_without_blocks_is_unloaded_at_once_when_replaced),
		T(failed_writes_keep_the_current_allocator),
		T(foreign_free_is_refused_and_counted),
		T(describe_names_current_and_retired_owners),
		T(plugin_null_is_an_oom_counted_in_stats),
		T(overlapping_plugin_pointer_is_refused_without_losing_memory),
		T(plugin_pointer_into_the_caching_allocators_memory_is_refused),
		T(plugin_pointer_into_another_plugins_block_is_refused),
		T(a_plugin_crashing_in_alloc_is_retired_and_others_keep_their_bytes),
		T(a_plugin_aborting_in_free_is_retired),
		T(unaligned_plugin_pointer_is_given_back),
		T(empty_cache_runs_the_arena_reset_hook),
		T(empty_cache_leaves_a_plugin_that_is_not_current_alone),
		T(memory_fraction_goes_to_the_current_allocator),
		T(a_plugin_crashing_in_memory_fraction_is_retired_and_told),
		T(npu_init_gets_the_current_device),
		T(cuda_init_gets_zero),
		T(swaps_race_with_allocations_safely),
		T(a_loaded_plugin_is_not_current_and_stays_until_unloaded),
		T(a_dropped_mempool_plugin_is_unloaded_by_the_next_caching_allocation),
		T(a_mempool_plugin_lends_segments_and_keeps_loaded_while_they_live),
		T(a_mempool_plugin_pointer_into_a_caching_segment_is_refused),
		T(a_mempool_plugin_pointer_into_another_plugins_block_is_refused),
		T(a_mempool_plugin_crashing_inside_a_caching_allocation_is_retired_at_once),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
