/*
 * test_alloc_conf_parse.c - PYTORCH_NPU_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF as
 * torch_npu and current PyTorch read them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/conf/alloc_conf.h"

#define MiB ((size_t)1 << 20)
#define NPU (&npa_flavor_npu)
#define CUDA (&npa_flavor_cuda)

static char err[NPA_CONF_ERRLEN];

static struct npa_conf defaults(const struct npa_flavor *f)
{
	struct npa_conf c;

	npa_conf_default(&c, f);
	return c;
}

static void parse_ok(struct npa_conf *c, const struct npa_flavor *f, const char *s)
{
	int rc = npa_conf_parse(c, f, s, NPA_ORIGIN_WRITE, err, sizeof(err));

	if (rc != 0)
		print_error("parsing \"%s\" failed: %s\n", s, err);
	assert_int_equal(rc, 0);
}

static struct npa_conf parsed(const struct npa_flavor *f, const char *s)
{
	struct npa_conf c = defaults(f);

	parse_ok(&c, f, s);
	return c;
}

static void assert_prefix(const char *text, const char *prefix)
{
	if (strncmp(text, prefix, strlen(prefix)) != 0) {
		print_error("\"%s\"\ndoes not start with\n\"%s\"\n", text, prefix);
		fail();
	}
}

/* `s` is refused with a message starting with `prefix`; the settings stay as they were. */
static void refused(const struct npa_flavor *f, const char *s, const char *prefix)
{
	struct npa_conf c = defaults(f), before = c;

	if (npa_conf_parse(&c, f, s, NPA_ORIGIN_WRITE, err, sizeof(err)) != -EINVAL) {
		print_error("\"%s\" was not refused\n", s);
		fail();
	}
	assert_prefix(err, prefix);
	assert_memory_equal(&c, &before, sizeof(c));
}

/* ---- defaults ---- */

static void default_npu_is_upstream_torch_npu(void **state)
{
	struct npa_conf c = defaults(NPU);

	(void)state;
	assert_true(c.max_split_size == SIZE_MAX);
	assert_int_equal(c.max_non_split_rounding, 20971520);
	assert_true(c.garbage_collection_threshold == 0.0);
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		assert_int_equal(c.roundup_power2_divisions[i], 0);
	assert_false(c.expandable_segments);
	assert_int_equal(c.large_segment_size, 20971520);
	assert_int_equal(c.segment_size, 0);
	assert_int_equal(c.base_addr_aligned, 16384);
	assert_false(c.page_size_1g);
	assert_true(c.per_process_memory_fraction == 1.0);
	assert_false(c.throw_on_npumalloc_oom);
	assert_false(c.multi_stream_lazy_reclaim);
	for (int k = 0; k < NPA_CONF_NKEYS; k++)
		assert_int_equal(c.origin[k], NPA_ORIGIN_DEFAULT);
	assert_string_equal(c.last_string, "");
}

static void default_cuda_has_no_base_address_alignment(void **state)
{
	struct npa_conf c = defaults(CUDA);

	(void)state;
	assert_int_equal(c.base_addr_aligned, 0);
	assert_true(c.max_split_size == SIZE_MAX);
	assert_int_equal(c.large_segment_size, 20971520);
}

/* ---- each key alone ---- */

static void max_split_size_mb_20_is_accepted_in_both_flavors(void **state)
{
	(void)state;
	/* Current AcceleratorAllocatorConfig: >= large_segment_size_mb (1.13-2.7 said > 20). */
	assert_int_equal(parsed(NPU, "max_split_size_mb:20").max_split_size, 20971520);
	assert_int_equal(parsed(CUDA, "max_split_size_mb:20").max_split_size, 20971520);
	assert_int_equal(parsed(NPU, "max_split_size_mb:128").max_split_size, 134217728);
}

static void max_split_size_mb_19_is_too_small(void **state)
{
	(void)state;
	refused(NPU, "max_split_size_mb:19",
		"CachingAllocator option max_split_size_mb too small, must be >= 20;");
	refused(CUDA, "max_split_size_mb:2",
		"CachingAllocator option max_split_size_mb too small, must be >= 20;");
}

static void max_split_size_mb_minimum_is_large_segment_size(void **state)
{
	(void)state;
	refused(NPU, "large_segment_size_mb:50,max_split_size_mb:30",
		"CachingAllocator option max_split_size_mb too small, must be >= 50");
	/* large_segment_size_mb is read first wherever it stands. */
	refused(NPU, "max_split_size_mb:30,large_segment_size_mb:50",
		"CachingAllocator option max_split_size_mb too small, must be >= 50");
	assert_int_equal(parsed(NPU, "max_split_size_mb:50,large_segment_size_mb:50").max_split_size,
			 50 * MiB);
}

static void max_split_size_mb_huge_is_clamped_like_upstream(void **state)
{
	(void)state;
	/* val = min(val, SIZE_MAX / MiB), then * MiB. */
	assert_true(parsed(NPU, "max_split_size_mb:18446744073709551615").max_split_size ==
		    (SIZE_MAX / MiB) * MiB);
}

static void max_non_split_rounding_mb_40_is_41943040(void **state)
{
	(void)state;
	assert_int_equal(parsed(NPU, "max_non_split_rounding_mb:40").max_non_split_rounding, 41943040);
	assert_int_equal(parsed(CUDA, "max_non_split_rounding_mb:20").max_non_split_rounding, 20971520);
	refused(CUDA, "max_non_split_rounding_mb:19",
		"CachingAllocator option max_non_split_rounding_mb too small, must be >= 20;");
}

static void large_segment_size_mb_50_also_sets_non_split_rounding(void **state)
{
	struct npa_conf c = parsed(NPU, "large_segment_size_mb:50");

	(void)state;
	assert_int_equal(c.large_segment_size, 52428800);
	assert_int_equal(c.max_non_split_rounding, 52428800);
	assert_int_equal(parsed(CUDA, "large_segment_size_mb:11").large_segment_size, 11 * MiB);
}

static void large_segment_size_mb_must_exceed_10(void **state)
{
	(void)state;
	refused(NPU, "large_segment_size_mb:10",
		"CachingAllocator option large_segment_size_mb must be > 10 MB;");
	refused(CUDA, "large_segment_size_mb:5",
		"CachingAllocator option large_segment_size_mb must be > 10 MB;");
}

static void garbage_collection_threshold_is_a_fraction_exclusive(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "garbage_collection_threshold:0.5").garbage_collection_threshold == 0.5);
	assert_true(parsed(CUDA, "garbage_collection_threshold:0.999").garbage_collection_threshold == 0.999);
	refused(NPU, "garbage_collection_threshold:0",
		"garbage_collect_threshold is invalid, set it in (0.0, 1.0);");
	refused(NPU, "garbage_collection_threshold:1",
		"garbage_collect_threshold is invalid, set it in (0.0, 1.0);");
	refused(CUDA, "garbage_collection_threshold:1.2",
		"garbage_collect_threshold is invalid, set it in (0.0, 1.0);");
}

static void roundup_single_value_sets_every_interval(void **state)
{
	struct npa_conf c = parsed(NPU, "roundup_power2_divisions:4");

	(void)state;
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		assert_int_equal(c.roundup_power2_divisions[i], 4);
	assert_int_equal(npa_conf_divisions(&c, 1200), 4);
	assert_int_equal(npa_conf_divisions(&c, 84 * MiB), 4);
	assert_int_equal(npa_conf_divisions(&c, (size_t)64 << 30), 4);
}

static void roundup_single_value_must_be_a_power_of_two(void **state)
{
	(void)state;
	refused(NPU, "roundup_power2_divisions:3",
		"For roundups, the divisions has to be power of 2;");
	/* 0 only in the list form. */
	refused(CUDA, "roundup_power2_divisions:0",
		"For roundups, the divisions has to be power of 2;");
}

static void roundup_list_fills_intervals_as_torch_npu_test(void **state)
{
	static const unsigned want[NPA_ROUNDUP_INTERVALS] = {
		1, 1, 1, 1, 0, 0, 4, 8, 2, 16, 16, 16, 16, 16, 16, 16,
	};
	struct npa_conf c = parsed(NPU, "roundup_power2_divisions:[8:1,64:4,128:8,256:2,>:16]");

	(void)state;
	assert_memory_equal(c.roundup_power2_divisions, want, sizeof(want));
	assert_int_equal(npa_conf_divisions(&c, 1200), 1);
	assert_int_equal(npa_conf_divisions(&c, 33 * MiB), 0);
	assert_int_equal(npa_conf_divisions(&c, 65 * MiB), 4);
	assert_int_equal(npa_conf_divisions(&c, 200 * MiB), 8);
	assert_int_equal(npa_conf_divisions(&c, 510 * MiB), 2);
	assert_int_equal(npa_conf_divisions(&c, 513 * MiB), 16);
}

static void roundup_list_greater_first_leaves_interval_0(void **state)
{
	struct npa_conf c = parsed(CUDA, "roundup_power2_divisions:[>:2]");

	(void)state;
	assert_int_equal(c.roundup_power2_divisions[0], 0);
	assert_int_equal(c.roundup_power2_divisions[1], 2);
	assert_int_equal(c.roundup_power2_divisions[15], 2);
	/* Boundaries past 32 GiB land in the last interval. */
	c = parsed(CUDA, "roundup_power2_divisions:[1048576:8]");
	assert_int_equal(c.roundup_power2_divisions[14], 8);
	assert_int_equal(c.roundup_power2_divisions[15], 8);
}

static void roundup_list_checks_values_and_intervals(void **state)
{
	(void)state;
	assert_int_equal(parsed(NPU, "roundup_power2_divisions:[64:0,>:2]").roundup_power2_divisions[6], 0);
	refused(NPU, "roundup_power2_divisions:[64:3]",
		"For roundups, the divisions has to be power of 2 or 0 to disable roundup;");
	refused(NPU, "roundup_power2_divisions:[48:2]",
		"For roundups, the intervals have to be power of 2;");
	refused(CUDA, "roundup_power2_divisions:[8:1,64:4",
		"Expected closing bracket ']' in ConfigTokenizer but reached end of config;");
}

static void expandable_segments_takes_exactly_True_or_False(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "expandable_segments:True").expandable_segments);
	assert_false(parsed(CUDA, "expandable_segments:False").expandable_segments);
	refused(NPU, "expandable_segments:true",
		"Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true';");
}

static void per_process_memory_fraction_is_in_0_to_1(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "per_process_memory_fraction:0.25").per_process_memory_fraction == 0.25);
	assert_true(parsed(NPU, "per_process_memory_fraction:0").per_process_memory_fraction == 0.0);
	assert_true(parsed(CUDA, "per_process_memory_fraction:1").per_process_memory_fraction == 1.0);
	refused(NPU, "per_process_memory_fraction:1.5",
		"per_process_memory_fraction is invalid, set it in [0.0, 1.0];");
}

static void throw_on_malloc_oom_is_spelled_per_flavor(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "throw_on_npumalloc_oom:True").throw_on_npumalloc_oom);
	assert_true(parsed(CUDA, "throw_on_cudamalloc_oom:True").throw_on_npumalloc_oom);
	refused(NPU, "throw_on_npumalloc_oom:1",
		"Expected a single True/False argument for throw_on_npumalloc_oom;");
	refused(CUDA, "throw_on_npumalloc_oom:True",
		"Unrecognized key 'throw_on_npumalloc_oom' in Accelerator allocator config. input");
	refused(NPU, "throw_on_cudamalloc_oom:True",
		"Unrecognized key 'throw_on_cudamalloc_oom' in NPU allocator config, input");
}

static void multi_stream_lazy_reclaim_is_an_npu_boolean(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "multi_stream_lazy_reclaim:True").multi_stream_lazy_reclaim);
	refused(NPU, "multi_stream_lazy_reclaim:yes",
		"Expected a single True/False argument for multi_stream_lazy_reclaim;");
}

static void base_addr_aligned_kb_is_0_to_16(void **state)
{
	(void)state;
	assert_int_equal(parsed(NPU, "base_addr_aligned_kb:0").base_addr_aligned, 0);
	assert_int_equal(parsed(NPU, "base_addr_aligned_kb:8").base_addr_aligned, 8192);
	refused(NPU, "base_addr_aligned_kb:17",
		"CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int;");
	refused(NPU, "base_addr_aligned_kb:08",
		"CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int;");
	refused(NPU, "base_addr_aligned_kb:-1",
		"CachingAllocator option base_addr_aligned_kb is invalid. input");
}

static void page_size_takes_only_1g(void **state)
{
	(void)state;
	assert_true(parsed(NPU, "page_size:1g").page_size_1g);
	refused(NPU, "page_size:2m", "Unsupported page_size value: 2m;");
	refused(NPU, "page_size", "page_size requires format 'page_size:1g';");
}

static void segment_size_mb_is_20_to_512(void **state)
{
	(void)state;
	assert_int_equal(parsed(NPU, "segment_size_mb:50").segment_size, 52428800);
	assert_int_equal(parsed(NPU, "segment_size_mb:512").segment_size, 536870912);
	refused(NPU, "segment_size_mb:19",
		"CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int;");
	refused(NPU, "segment_size_mb:513",
		"CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int;");
}

static void npu_only_keys_are_unknown_to_cuda(void **state)
{
	(void)state;
	refused(CUDA, "page_size:1g",
		"Unrecognized key 'page_size' in Accelerator allocator config. input");
	refused(CUDA, "base_addr_aligned_kb:8",
		"Unrecognized key 'base_addr_aligned_kb' in Accelerator allocator config. input");
	refused(NPU, "backend:native",
		"Unrecognized key 'backend' in NPU allocator config, input");
}

static void pinned_host_keys_set_the_host_allocator(void **state)
{
	struct npa_conf c;

	(void)state;
	c = parsed(NPU, "pin_memory_expandable_segments:True,pinned_reserve_segment_size_mb:64,"
		   "pinned_max_cached_size_mb:100,pinned_max_round_threshold_mb:0");
	assert_true(c.pin_memory_expandable_segments);
	assert_int_equal(c.pinned_reserve_segment_size, 64 * MiB);
	assert_int_equal(c.pinned_max_cached_size, 100 * MiB);
	assert_int_equal(c.pinned_max_round_threshold, 0);
	c = parsed(CUDA, "pinned_reserve_segment_size_mb:8,pinned_max_round_threshold_mb:1");
	assert_int_equal(c.pinned_reserve_segment_size, 8 * MiB);
	assert_int_equal(c.pinned_max_round_threshold, 1 * MiB);
	assert_int_equal(c.pinned_max_cached_size, SIZE_MAX);
	refused(NPU, "pin_memory_expandable_segments:yes",
		"Expected a single True/False argument for pin_memory_expandable_segments;");
	refused(NPU, "pinned_max_cached_size_mb:-1",
		"CachingAllocator option pinned_max_cached_size_mb is invalid. input");
	refused(CUDA, "pin_memory_expandable_segments:True",
		"Unrecognized key 'pin_memory_expandable_segments' in Accelerator allocator config.");
}

static void hardware_only_keys_are_checked_and_change_nothing(void **state)
{
	struct npa_conf d = defaults(NPU), c;

	(void)state;
	c = parsed(NPU, "release_lock_on_npumalloc:True,pinned_mem_register:False,"
		   "pinned_use_background_threads:True");
	assert_int_equal(npa_conf_diff(&d, &c, NULL, 0), 0);
	refused(NPU, "release_lock_on_npumalloc:none",
		"Expected a single True/False argument for release_lock_on_npumalloc;");
	d = defaults(CUDA);
	c = parsed(CUDA, "backend:native,release_lock_on_cudamalloc:True,pinned_num_register_threads:8,"
		   "graph_capture_record_stream_reuse:True,expandable_segments_reserve:0.5,"
		   "expandable_segments_reserve_by_class:[capture:0.25,workspace:40G]");
	assert_int_equal(npa_conf_diff(&d, &c, NULL, 0), 0);
	refused(CUDA, "backend:cudaMallocAsync",
		"Allocator backend parsed at runtime != allocator backend parsed at load time, cudaMallocAsync != native;");
	refused(CUDA, "backend:other",
		"Unknown allocator backend, options are native and cudaMallocAsync;");
	refused(CUDA, "pinned_num_register_threads:3",
		"Number of register threads has to be power of 2, got 3;");
	refused(CUDA, "pinned_num_register_threads:256",
		"Number of register threads should be less than or equal to 128, got 256;");
	refused(CUDA, "pinned_reserve_segment_size_mb:0",
		"Pinned reserve segment size has to be greater than 0;");
}

static void blanks_vanish_and_one_trailing_comma_is_accepted(void **state)
{
	struct npa_conf c = parsed(NPU, " max_split_size_mb : 64 ,\tgarbage_collection_threshold: 0.5 ,");

	(void)state;
	assert_int_equal(c.max_split_size, 64 * MiB);
	assert_true(c.garbage_collection_threshold == 0.5);
	/* Blanks inside a word vanish too, as upstream's tokenizer does. */
	assert_int_equal(parsed(CUDA, "max_split_size_mb:1 28").max_split_size, 128 * MiB);
}

/* ---- every parse starts over for some keys ---- */

static void reparse_resets_split_roundup_and_gc(void **state)
{
	struct npa_conf c = parsed(CUDA,
		"max_split_size_mb:64,roundup_power2_divisions:4,garbage_collection_threshold:0.5");

	(void)state;
	parse_ok(&c, CUDA, "garbage_collection_threshold:0.75");
	assert_true(c.max_split_size == SIZE_MAX);
	assert_int_equal(npa_conf_divisions(&c, 1200), 0);
	assert_true(c.garbage_collection_threshold == 0.75);
	c = parsed(NPU, "roundup_power2_divisions:4");
	parse_ok(&c, NPU, "garbage_collection_threshold:0.5");
	assert_int_equal(npa_conf_divisions(&c, 84 * MiB), 0);
}

static void reparse_keeps_expandable_and_large_segment(void **state)
{
	struct npa_conf c = parsed(CUDA, "expandable_segments:True,large_segment_size_mb:40,"
				   "max_non_split_rounding_mb:60");

	(void)state;
	parse_ok(&c, CUDA, "garbage_collection_threshold:0.5");
	assert_true(c.expandable_segments);
	assert_int_equal(c.large_segment_size, 40 * MiB);
	/* Upstream sets max_non_split_rounding to large_segment_size on every parse. */
	assert_int_equal(c.max_non_split_rounding, 40 * MiB);
}

static void reparse_keeps_torch_npu_own_keys(void **state)
{
	struct npa_conf c = parsed(NPU, "base_addr_aligned_kb:4,page_size:1g,segment_size_mb:64,"
				   "per_process_memory_fraction:0.5,throw_on_npumalloc_oom:True");

	(void)state;
	parse_ok(&c, NPU, "max_split_size_mb:40");
	assert_int_equal(c.base_addr_aligned, 4096);
	assert_true(c.page_size_1g);
	assert_int_equal(c.segment_size, 64 * MiB);
	assert_true(c.per_process_memory_fraction == 0.5);
	assert_true(c.throw_on_npumalloc_oom);
}

static void empty_string_changes_nothing_in_npu_and_resets_in_cuda(void **state)
{
	struct npa_conf c = parsed(NPU, "max_split_size_mb:40"), before = c;

	(void)state;
	parse_ok(&c, NPU, "");
	assert_memory_equal(&c, &before, sizeof(c));
	/* Not empty: AcceleratorAllocatorConfig::parseArgs runs and resets. */
	parse_ok(&c, NPU, " ");
	assert_true(c.max_split_size == SIZE_MAX);
	c = parsed(CUDA, "max_split_size_mb:40");
	parse_ok(&c, CUDA, "");
	assert_true(c.max_split_size == SIZE_MAX);
	assert_string_equal(c.last_string, "");
}

/* ---- combinations ---- */

#define EXPANDABLE_TEXT "`max_split_size_mb` or `garbage_collection_threshold`, cannot be enabled with " \
	"`expandable_segments`, please set `expandable_segments` to `False`. input"

static void npu_refuses_expandable_with_split_limit_or_gc(void **state)
{
	(void)state;
	refused(NPU, "expandable_segments:True,max_split_size_mb:40", EXPANDABLE_TEXT);
	refused(NPU, "garbage_collection_threshold:0.5,expandable_segments:True", EXPANDABLE_TEXT);
	/* PyTorch allows both. */
	assert_true(parsed(CUDA, "expandable_segments:True,max_split_size_mb:40").expandable_segments);
}

static void npu_expandable_from_earlier_parse_refuses_later_split_limit(void **state)
{
	struct npa_conf c = parsed(NPU, "expandable_segments:True"), before = c;

	(void)state;
	assert_int_equal(npa_conf_parse(&c, NPU, "max_split_size_mb:40", NPA_ORIGIN_WRITE,
					err, sizeof(err)), -EINVAL);
	assert_prefix(err, EXPANDABLE_TEXT);
	assert_memory_equal(&c, &before, sizeof(c));
	parse_ok(&c, NPU, "expandable_segments:False,max_split_size_mb:40");
	assert_int_equal(c.max_split_size, 40 * MiB);
}

/* ---- malformed strings ---- */

static const char *const bad_npu[] = {
	"max_split_size_mb",
	"max_split_size_mb:",
	"max_split_size_mb:,expandable_segments:True",
	":30",
	",",
	"[",
	"]",
	"max_split_size_mb:30,,expandable_segments:True",
	"max_split_size_mb::30",
	"max_split_size_mb 30",
	"max_split_size_mb:30abc",
	"max_split_size_mb:-30",
	"max_split_size_mb:+30",
	"max_split_size_mb:0x40",
	"max_split_size_mb:99999999999999999999999",
	"max_split_size_mb:19",
	"max_split_size_mb:30:40",
	"max_split_size_mb:30]",
	"max_split_size_mb:[30]",
	"max_split_size_mb:30\x01",
	"max_split_size_mb:30,foo",
	"MAX_SPLIT_SIZE_MB:30",
	"foo:1",
	"garbage_collection_threshold:0",
	"garbage_collection_threshold:1",
	"garbage_collection_threshold:nan",
	"garbage_collection_threshold:inf",
	"garbage_collection_threshold:0.5x",
	"roundup_power2_divisions:3",
	"roundup_power2_divisions:0",
	"roundup_power2_divisions:[8:1,64:4",
	"roundup_power2_divisions:[8:3]",
	"roundup_power2_divisions:[6:2]",
	"roundup_power2_divisions:[8:1 64:4]",
	"roundup_power2_divisions:[8:[1]]",
	"roundup_power2_divisions:[:1]",
	"roundup_power2_divisions:[8:]",
	"roundup_power2_divisions:[8]",
	"roundup_power2_divisions:[8:1;64:4]",
	"roundup_power2_divisions:[8:4294967296]",
	"roundup_power2_divisions:[8:1]]",
	"expandable_segments:true",
	"expandable_segments:1",
	"expandable_segments:True,max_split_size_mb:40",
	"expandable_segments:True : False",
	"base_addr_aligned_kb:17",
	"base_addr_aligned_kb:016",
	"base_addr_aligned_kb:99999999999",
	"page_size:2m",
	"page_size",
	"segment_size_mb:513",
	"segment_size_mb:2.5",
	"per_process_memory_fraction:1.5",
	"per_process_memory_fraction:-0.1",
	"per_process_memory_fraction:",
	"throw_on_npumalloc_oom:yes",
	"large_segment_size_mb:10",
	"release_lock_on_npumalloc:maybe",
	"throw_on_cudamalloc_oom:True",
	"backend:native",
};

static const char *const bad_cuda[] = {
	"page_size:1g",
	"segment_size_mb:64",
	"multi_stream_lazy_reclaim:True",
	"backend:cudaMallocAsync",
	"pinned_num_register_threads:3",
	"pinned_reserve_segment_size_mb:0",
	"expandable_segments_reserve_by_class:0.5",
	"expandable_segments_reserve_by_class:[capture]",
	"garbage_collection_threshold:1.2",
	"max_split_size_mb:2",
	"release_lock_on_cudamalloc:none",
	"max_split_size_mb:30,,",
};

/* Every field a different value, so a stray write anywhere shows. */
static struct npa_conf sentinel(const struct npa_flavor *f)
{
	struct npa_conf s;

	memset(&s, 0x5a, sizeof(s));
	s.max_split_size = 64 * MiB;
	s.max_non_split_rounding = 24 * MiB;
	s.garbage_collection_threshold = 0.25;
	s.expandable_segments = false;
	s.large_segment_size = 22 * MiB;
	s.base_addr_aligned = 4096;
	s.page_size_1g = true;
	s.per_process_memory_fraction = 0.75;
	s.throw_on_npumalloc_oom = false;
	s.multi_stream_lazy_reclaim = true;
	for (int k = 0; k < NPA_CONF_NKEYS; k++)
		s.origin[k] = NPA_ORIGIN_CLI;
	s.last_string[sizeof(s.last_string) - 1] = '\0';
	(void)f;
	return s;
}

static void refuse_all(const struct npa_flavor *f, const char *const *bad, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct npa_conf c = sentinel(f), before = c;
		int rc;

		memset(err, 0, sizeof(err));
		rc = npa_conf_parse(&c, f, bad[i], NPA_ORIGIN_WRITE, err, sizeof(err));
		if (rc != -EINVAL || err[0] == '\0') {
			print_error("%s: \"%s\" gave %d \"%s\"\n", f->name, bad[i], rc, err);
			fail();
		}
		assert_memory_equal(&c, &before, sizeof(c));
	}
}

static void malformed_strings_are_refused_and_change_nothing(void **state)
{
	(void)state;
	assert_true(sizeof(bad_npu) / sizeof(bad_npu[0]) >= 30);
	refuse_all(NPU, bad_npu, sizeof(bad_npu) / sizeof(bad_npu[0]));
	refuse_all(CUDA, bad_cuda, sizeof(bad_cuda) / sizeof(bad_cuda[0]));
}

static void error_quotes_the_input_and_lists_the_keys(void **state)
{
	(void)state;
	refused(NPU, "foo:1,bar:2",
		"Unrecognized key 'foo' in NPU allocator config, input \"foo:1,bar:2\"; valid keys: "
		"max_split_size_mb, max_non_split_rounding_mb, garbage_collection_threshold, "
		"roundup_power2_divisions, expandable_segments, large_segment_size_mb, "
		"segment_size_mb, base_addr_aligned_kb, page_size, per_process_memory_fraction, "
		"throw_on_npumalloc_oom, multi_stream_lazy_reclaim, pinned_use_background_threads, "
		"pinned_max_round_threshold_mb, pinned_max_cached_size_mb, "
		"pin_memory_expandable_segments, pinned_mem_register, "
		"pinned_reserve_segment_size_mb, release_lock_on_npumalloc");
	refused(CUDA, "max_split_size_mb:30:40",
		"Error parsing CachingAllocator settings, expected ',' after the value of "
		"max_split_size_mb, got ':'; input \"max_split_size_mb:30:40\"; valid keys: "
		"max_split_size_mb, max_non_split_rounding_mb, garbage_collection_threshold, "
		"roundup_power2_divisions, expandable_segments, large_segment_size_mb, "
		"per_process_memory_fraction, throw_on_cudamalloc_oom, ");
	assert_null(strstr(err, "multi_stream_lazy_reclaim"));
}

static void error_for_long_key_still_lists_every_key(void **state)
{
	char s[500];
	size_t n;

	(void)state;
	memset(s, 'k', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	refused(CUDA, s, "Unrecognized key 'kkkk");
	n = strlen(err);
	assert_true(n < sizeof(err) - 1);
	assert_string_equal(err + n - strlen("expandable_segments_reserve_by_class"),
			    "expandable_segments_reserve_by_class");
	refused(NPU, s, "Unrecognized key 'kkkk");
	n = strlen(err);
	assert_string_equal(err + n - strlen("release_lock_on_npumalloc"),
			    "release_lock_on_npumalloc");
}

static void unprintable_and_long_input_is_quoted_safely(void **state)
{
	char lng[700];

	(void)state;
	refused(NPU, "\x1b[31mfoo:1", "Unrecognized key '?' in NPU allocator config, input \"?[31mfoo:1\"");
	memset(lng, 'a', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	refused(NPU, lng, "settings too long: 699 bytes, at most 511; input \"aaaa");
	assert_non_null(strstr(err, "aaa...\""));
	/* A buffer too small for the message gets as much as fits. */
	struct npa_conf c = defaults(NPU);
	char small[16];
	assert_int_equal(npa_conf_parse(&c, NPU, "foo:1", NPA_ORIGIN_WRITE, small, sizeof(small)),
			 -EINVAL);
	assert_string_equal(small, "Unrecognized ke");
	assert_int_equal(npa_conf_parse(&c, NPU, "foo:1", NPA_ORIGIN_WRITE, NULL, 0), -EINVAL);
}

/* ---- origins and last_string ---- */

static void origins_mark_given_keys(void **state)
{
	struct npa_conf c = defaults(NPU);

	(void)state;
	assert_int_equal(npa_conf_parse(&c, NPU, "max_split_size_mb:64,page_size:1g",
					NPA_ORIGIN_INI, err, sizeof(err)), 0);
	assert_int_equal(c.origin[NPA_CONF_max_split_size_mb], NPA_ORIGIN_INI);
	assert_int_equal(c.origin[NPA_CONF_page_size], NPA_ORIGIN_INI);
	assert_int_equal(c.origin[NPA_CONF_garbage_collection_threshold], NPA_ORIGIN_DEFAULT);
	assert_int_equal(c.origin[NPA_CONF_base_addr_aligned_kb], NPA_ORIGIN_DEFAULT);
	assert_string_equal(c.last_string, "max_split_size_mb:64,page_size:1g");
}

static void origins_mark_keys_the_reset_undid(void **state)
{
	struct npa_conf c = defaults(NPU);

	(void)state;
	assert_int_equal(npa_conf_parse(&c, NPU, "max_split_size_mb:64", NPA_ORIGIN_INI,
					err, sizeof(err)), 0);
	assert_int_equal(npa_conf_parse(&c, NPU, "large_segment_size_mb:30", NPA_ORIGIN_CLI,
					err, sizeof(err)), 0);
	/* The cli string put max_split_size_mb back to unlimited... */
	assert_int_equal(c.origin[NPA_CONF_max_split_size_mb], NPA_ORIGIN_CLI);
	/* ...and moved max_non_split_rounding_mb to the new segment size. */
	assert_int_equal(c.origin[NPA_CONF_max_non_split_rounding_mb], NPA_ORIGIN_CLI);
	assert_int_equal(c.origin[NPA_CONF_large_segment_size_mb], NPA_ORIGIN_CLI);
	/* gc was never set and stays at its default. */
	assert_int_equal(c.origin[NPA_CONF_garbage_collection_threshold], NPA_ORIGIN_DEFAULT);
	assert_int_equal(c.origin[NPA_CONF_roundup_power2_divisions], NPA_ORIGIN_DEFAULT);
	assert_string_equal(c.last_string, "large_segment_size_mb:30");
	/* A setting undone is marked even when its value equals the default. */
	assert_int_equal(npa_conf_parse(&c, NPU, "roundup_power2_divisions:[1:0,>:0]",
					NPA_ORIGIN_INI, err, sizeof(err)), 0);
	assert_int_equal(npa_conf_parse(&c, NPU, "max_split_size_mb:40", NPA_ORIGIN_WRITE,
					err, sizeof(err)), 0);
	assert_int_equal(c.origin[NPA_CONF_roundup_power2_divisions], NPA_ORIGIN_WRITE);
}

/* ---- format ---- */

static void format_default_npu_lines(void **state)
{
	struct npa_conf c = defaults(NPU);
	char buf[2048];
	int n = npa_conf_format(&c, NPU, buf, sizeof(buf));

	(void)state;
	assert_string_equal(buf,
		"max_split_size_mb - default\n"
		"max_non_split_rounding_mb 20 default\n"
		"garbage_collection_threshold - default\n"
		"roundup_power2_divisions [1:0,>:0] default\n"
		"expandable_segments False default\n"
		"large_segment_size_mb 20 default\n"
		"segment_size_mb - default\n"
		"base_addr_aligned_kb 16 default\n"
		"page_size - default\n"
		"per_process_memory_fraction 1 default\n"
		"throw_on_npumalloc_oom False default\n"
		"multi_stream_lazy_reclaim False default\n"
		"pinned_max_round_threshold_mb - default\n"
		"pinned_max_cached_size_mb - default\n"
		"pinned_reserve_segment_size_mb - default\n"
		"pin_memory_expandable_segments False default\n"
		"# accepted, no effect on the simulator: pinned_use_background_threads "
		"pinned_mem_register release_lock_on_npumalloc\n");
	assert_int_equal(n, (int)strlen(buf));
}

static void format_shows_values_in_upstream_syntax(void **state)
{
	struct npa_conf c = defaults(CUDA);
	char buf[2048];

	(void)state;
	assert_int_equal(npa_conf_parse(&c, CUDA, "max_split_size_mb:64,"
		"roundup_power2_divisions:[8:1,64:4,128:8,256:2,>:16],"
		"garbage_collection_threshold:0.1,throw_on_cudamalloc_oom:True",
		NPA_ORIGIN_CLI, err, sizeof(err)), 0);
	assert_true(npa_conf_format(&c, CUDA, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "max_split_size_mb 64 cli\n"));
	assert_non_null(strstr(buf, "garbage_collection_threshold 0.1 cli\n"));
	assert_non_null(strstr(buf,
		"roundup_power2_divisions [1:1,2:1,4:1,8:1,16:0,32:0,64:4,128:8,256:2,>:16] cli\n"));
	assert_non_null(strstr(buf, "throw_on_cudamalloc_oom True cli\n"));
	assert_null(strstr(buf, "page_size"));
	assert_non_null(strstr(buf, " backend "));
}

/* The lines other than "-" and "#", as "key:value,key:value". */
static void lines_to_string(const char *text, char *out, size_t outlen)
{
	char key[64], val[320];
	const char *line = text;
	size_t off = 0;

	out[0] = '\0';
	while (*line) {
		const char *nl = strchr(line, '\n');
		if (line[0] != '#' && sscanf(line, "%63s %319s", key, val) == 2 &&
		    strcmp(val, "-") != 0)
			off += (size_t)snprintf(out + off, outlen - off, "%s%s:%s",
						off ? "," : "", key, val);
		line = nl ? nl + 1 : line + strlen(line);
	}
}

static void roundtrip(const struct npa_flavor *f, const char *s)
{
	struct npa_conf a = parsed(f, s), b = defaults(f);
	char text[2048], again[1024];
	enum npa_conf_key keys[NPA_CONF_NKEYS];

	assert_true(npa_conf_format(&a, f, text, sizeof(text)) > 0);
	lines_to_string(text, again, sizeof(again));
	parse_ok(&b, f, again);
	if (npa_conf_diff(&a, &b, keys, NPA_CONF_NKEYS) != 0) {
		print_error("%s: \"%s\" -> \"%s\" differs in %s\n", f->name, s, again,
			    npa_conf_key_name(keys[0], f));
		fail();
	}
}

static void format_round_trips_through_parse(void **state)
{
	(void)state;
	roundtrip(NPU, "");
	roundtrip(NPU, "max_split_size_mb:64,garbage_collection_threshold:0.1,"
		  "roundup_power2_divisions:[8:1,64:4,128:8,256:2,>:16]");
	roundtrip(NPU, "expandable_segments:True,large_segment_size_mb:50,page_size:1g,"
		  "segment_size_mb:64,base_addr_aligned_kb:0,per_process_memory_fraction:0.3,"
		  "throw_on_npumalloc_oom:True,multi_stream_lazy_reclaim:True");
	roundtrip(NPU, "roundup_power2_divisions:[>:2],max_non_split_rounding_mb:33");
	roundtrip(NPU, "max_split_size_mb:18446744073709551615");
	roundtrip(CUDA, "roundup_power2_divisions:4,large_segment_size_mb:11,"
		  "max_split_size_mb:11,per_process_memory_fraction:0.123456789");
	roundtrip(CUDA, "expandable_segments:True,garbage_collection_threshold:0.3333333333333333,"
		  "throw_on_cudamalloc_oom:True,roundup_power2_divisions:[1:0,32768:1]");
}

static void format_reports_a_buffer_too_small(void **state)
{
	struct npa_conf c = defaults(NPU);
	char buf[64];

	(void)state;
	assert_int_equal(npa_conf_format(&c, NPU, buf, sizeof(buf)), -ENOSPC);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
}

/* ---- random strings ---- */

static uint32_t next_random(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* Pieces of good and bad settings, glued at random. */
static void random_string(uint32_t *seed, char *s, size_t len)
{
	static const char *const pieces[] = {
		"max_split_size_mb", "garbage_collection_threshold", "roundup_power2_divisions",
		"expandable_segments", "large_segment_size_mb", "max_non_split_rounding_mb",
		"page_size", "base_addr_aligned_kb", "per_process_memory_fraction",
		"throw_on_npumalloc_oom", "throw_on_cudamalloc_oom", "backend",
		"expandable_segments_reserve_by_class", ":", ":", ",", ",", "[", "]", ">",
		"True", "False", "0", "1", "8", "20", "64", "0.5", "1g", " ", "\t", "-", "x",
		"99999999999999999999", "\x7f",
	};
	size_t n = next_random(seed) % 14, off = 0;

	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *piece = pieces[next_random(seed) % (sizeof(pieces) / sizeof(pieces[0]))];
		if (off + strlen(piece) + 1 > len)
			break;
		strcpy(s + off, piece);
		off += strlen(piece);
	}
}

static void random_strings_parse_whole_or_not_at_all(void **state)
{
	const struct npa_flavor *flavors[] = { NPU, CUDA };
	static const char *const start[] = {
		"max_split_size_mb:64,garbage_collection_threshold:0.25,page_size:1g,"
		"segment_size_mb:64,roundup_power2_divisions:[8:1,>:4],base_addr_aligned_kb:4",
		"max_split_size_mb:64,garbage_collection_threshold:0.25,large_segment_size_mb:30,"
		"roundup_power2_divisions:2,per_process_memory_fraction:0.5",
	};
	uint32_t seed = 20261122;
	int accepted = 0;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		const struct npa_flavor *f = flavors[i & 1];
		struct npa_conf c = parsed(f, (i & 2) ? start[f == CUDA] : "expandable_segments:True");
		struct npa_conf before = c;
		char s[256], text[2048], again[1024];
		int rc;

		random_string(&seed, s, sizeof(s));
		rc = npa_conf_parse(&c, f, s, NPA_ORIGIN_WRITE, err, sizeof(err));
		assert_true(rc == 0 || rc == -EINVAL);
		assert_true(memchr(err, '\0', sizeof(err)) != NULL);
		if (rc) {
			assert_true(err[0] != '\0');
			assert_memory_equal(&c, &before, sizeof(c));
			continue;
		}
		accepted++;
		/* What was accepted prints and reads back the same. */
		struct npa_conf b = defaults(f);
		assert_true(npa_conf_format(&c, f, text, sizeof(text)) > 0);
		lines_to_string(text, again, sizeof(again));
		parse_ok(&b, f, again);
		b.page_size_1g = c.page_size_1g;  /* sticky: no spelling for "not 1g" */
		b.segment_size = c.segment_size;
		assert_int_equal(npa_conf_diff(&c, &b, NULL, 0), 0);
	}
	/* Both outcomes were exercised. */
	assert_true(accepted > 100);
}

/* ---- run-time changes ---- */

static void runtime_safe_keys_are_those_set_allocator_settings_takes(void **state)
{
	(void)state;
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_max_split_size_mb));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_max_non_split_rounding_mb));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_garbage_collection_threshold));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_roundup_power2_divisions));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_per_process_memory_fraction));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_throw_on_npumalloc_oom));
	assert_true(npa_conf_key_runtime_safe(NPA_CONF_expandable_segments));
	assert_false(npa_conf_key_runtime_safe(NPA_CONF_large_segment_size_mb));
	assert_false(npa_conf_key_runtime_safe(NPA_CONF_segment_size_mb));
	assert_false(npa_conf_key_runtime_safe(NPA_CONF_page_size));
	assert_false(npa_conf_key_runtime_safe(NPA_CONF_base_addr_aligned_kb));
	assert_false(npa_conf_key_runtime_safe(NPA_CONF_multi_stream_lazy_reclaim));
}

static void diff_lists_the_keys_that_changed(void **state)
{
	struct npa_conf a = parsed(NPU, "max_split_size_mb:64");
	struct npa_conf b = a;
	enum npa_conf_key keys[2];

	(void)state;
	parse_ok(&b, NPU, "large_segment_size_mb:30,page_size:1g");
	/* max_split_size_mb (reset), max_non_split_rounding_mb, large_segment_size_mb, page_size. */
	assert_int_equal(npa_conf_diff(&a, &b, keys, 2), 4);
	assert_int_equal(keys[0], NPA_CONF_max_split_size_mb);
	assert_int_equal(keys[1], NPA_CONF_max_non_split_rounding_mb);
	assert_int_equal(npa_conf_diff(&a, &a, keys, 2), 0);
	b = a;
	b.origin[NPA_CONF_page_size] = NPA_ORIGIN_WRITE;
	strcpy(b.last_string, "x");
	assert_int_equal(npa_conf_diff(&a, &b, NULL, 0), 0);
}

static void diff_compares_each_key_on_its_own_value(void **state)
{
	struct npa_conf a = defaults(NPU), b[NPA_CONF_NKEYS];
	enum npa_conf_key key;

	(void)state;
	for (int k = 0; k < NPA_CONF_NKEYS; k++)
		b[k] = a;
	b[NPA_CONF_max_split_size_mb].max_split_size = 64 * MiB;
	b[NPA_CONF_max_non_split_rounding_mb].max_non_split_rounding = 64 * MiB;
	b[NPA_CONF_garbage_collection_threshold].garbage_collection_threshold = 0.5;
	b[NPA_CONF_roundup_power2_divisions].roundup_power2_divisions[15] = 4;
	b[NPA_CONF_expandable_segments].expandable_segments = true;
	b[NPA_CONF_large_segment_size_mb].large_segment_size = 64 * MiB;
	b[NPA_CONF_segment_size_mb].segment_size = 64 * MiB;
	b[NPA_CONF_base_addr_aligned_kb].base_addr_aligned = 0;
	b[NPA_CONF_page_size].page_size_1g = true;
	b[NPA_CONF_per_process_memory_fraction].per_process_memory_fraction = 0.5;
	b[NPA_CONF_throw_on_npumalloc_oom].throw_on_npumalloc_oom = true;
	b[NPA_CONF_multi_stream_lazy_reclaim].multi_stream_lazy_reclaim = true;
	b[NPA_CONF_pinned_max_round_threshold_mb].pinned_max_round_threshold = 64 * MiB;
	b[NPA_CONF_pinned_max_cached_size_mb].pinned_max_cached_size = 64 * MiB;
	b[NPA_CONF_pinned_reserve_segment_size_mb].pinned_reserve_segment_size = 64 * MiB;
	b[NPA_CONF_pin_memory_expandable_segments].pin_memory_expandable_segments = true;
	for (int k = 0; k < NPA_CONF_NKEYS; k++) {
		assert_int_equal(npa_conf_diff(&a, &b[k], &key, 1), 1);
		assert_int_equal(key, k);
	}
}

static void key_names_follow_the_flavor(void **state)
{
	(void)state;
	assert_string_equal(npa_conf_key_name(NPA_CONF_throw_on_npumalloc_oom, NPU),
			    "throw_on_npumalloc_oom");
	assert_string_equal(npa_conf_key_name(NPA_CONF_throw_on_npumalloc_oom, CUDA),
			    "throw_on_cudamalloc_oom");
	assert_null(npa_conf_key_name(NPA_CONF_page_size, CUDA));
	assert_string_equal(npa_conf_origin_name(NPA_ORIGIN_WRITE), "write");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_npu_is_upstream_torch_npu),
		cmocka_unit_test(default_cuda_has_no_base_address_alignment),
		cmocka_unit_test(max_split_size_mb_20_is_accepted_in_both_flavors),
		cmocka_unit_test(max_split_size_mb_19_is_too_small),
		cmocka_unit_test(max_split_size_mb_minimum_is_large_segment_size),
		cmocka_unit_test(max_split_size_mb_huge_is_clamped_like_upstream),
		cmocka_unit_test(max_non_split_rounding_mb_40_is_41943040),
		cmocka_unit_test(large_segment_size_mb_50_also_sets_non_split_rounding),
		cmocka_unit_test(large_segment_size_mb_must_exceed_10),
		cmocka_unit_test(garbage_collection_threshold_is_a_fraction_exclusive),
		cmocka_unit_test(roundup_single_value_sets_every_interval),
		cmocka_unit_test(roundup_single_value_must_be_a_power_of_two),
		cmocka_unit_test(roundup_list_fills_intervals_as_torch_npu_test),
		cmocka_unit_test(roundup_list_greater_first_leaves_interval_0),
		cmocka_unit_test(roundup_list_checks_values_and_intervals),
		cmocka_unit_test(expandable_segments_takes_exactly_True_or_False),
		cmocka_unit_test(per_process_memory_fraction_is_in_0_to_1),
		cmocka_unit_test(throw_on_malloc_oom_is_spelled_per_flavor),
		cmocka_unit_test(multi_stream_lazy_reclaim_is_an_npu_boolean),
		cmocka_unit_test(base_addr_aligned_kb_is_0_to_16),
		cmocka_unit_test(page_size_takes_only_1g),
		cmocka_unit_test(segment_size_mb_is_20_to_512),
		cmocka_unit_test(npu_only_keys_are_unknown_to_cuda),
		cmocka_unit_test(pinned_host_keys_set_the_host_allocator),
		cmocka_unit_test(hardware_only_keys_are_checked_and_change_nothing),
		cmocka_unit_test(blanks_vanish_and_one_trailing_comma_is_accepted),
		cmocka_unit_test(reparse_resets_split_roundup_and_gc),
		cmocka_unit_test(reparse_keeps_expandable_and_large_segment),
		cmocka_unit_test(reparse_keeps_torch_npu_own_keys),
		cmocka_unit_test(empty_string_changes_nothing_in_npu_and_resets_in_cuda),
		cmocka_unit_test(npu_refuses_expandable_with_split_limit_or_gc),
		cmocka_unit_test(npu_expandable_from_earlier_parse_refuses_later_split_limit),
		cmocka_unit_test(malformed_strings_are_refused_and_change_nothing),
		cmocka_unit_test(error_quotes_the_input_and_lists_the_keys),
		cmocka_unit_test(error_for_long_key_still_lists_every_key),
		cmocka_unit_test(unprintable_and_long_input_is_quoted_safely),
		cmocka_unit_test(origins_mark_given_keys),
		cmocka_unit_test(origins_mark_keys_the_reset_undid),
		cmocka_unit_test(format_default_npu_lines),
		cmocka_unit_test(format_shows_values_in_upstream_syntax),
		cmocka_unit_test(format_round_trips_through_parse),
		cmocka_unit_test(format_reports_a_buffer_too_small),
		cmocka_unit_test(random_strings_parse_whole_or_not_at_all),
		cmocka_unit_test(runtime_safe_keys_are_those_set_allocator_settings_takes),
		cmocka_unit_test(diff_lists_the_keys_that_changed),
		cmocka_unit_test(diff_compares_each_key_on_its_own_value),
		cmocka_unit_test(key_names_follow_the_flavor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
