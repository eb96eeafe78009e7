/*
 * test_sim_memory.c - device malloc/free: rounding, capacity, counters,
 * lazily committed memory, init and shutdown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_fixture.h"

static void malloc_of_1_byte_commits_one_2mib_page(void **state)
{
	void *p = NULL;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_non_null(p);
	assert_int_equal(used_bytes(0), 2 * MiB);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 0);
}

/* 2 MiB rounds to 2 MiB, plus aclrtMalloc's 32 bytes: two pages. */
static void malloc_of_one_page_commits_two_pages_because_of_the_32_byte_pad(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 2 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 4 * MiB);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void malloc_align32_of_one_page_commits_one_page(void **state)
{
	void *p, *q;

	(void)state;
	assert_int_equal(aclrtMallocAlign32(&p, 2 * MiB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 2 * MiB);
	/* 2 MiB + 1 rounds to 2 MiB + 32: a second page. */
	assert_int_equal(aclrtMallocAlign32(&q, 2 * MiB + 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 6 * MiB);
	aclrtFree(p);
	aclrtFree(q);
}

static void capacity_of_8mib_fits_four_1_byte_mallocs_then_ooms(void **state)
{
	void *p[5];
	struct npusim_counters c;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(aclrtMalloc(&p[i], 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&p[4], 1, ACL_MEM_MALLOC_HUGE_FIRST),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(npusim_device_counters(0, &c), 0);
	assert_int_equal(c.malloc_calls, 4);
	assert_int_equal(c.malloc_failures, 1);
	assert_int_equal(c.used, 8 * MiB);
	for (int i = 0; i < 4; i++)
		aclrtFree(p[i]);
}

static void oom_then_free_then_the_same_malloc_succeeds(void **state)
{
	void *a, *b, *c;

	(void)state;
	assert_int_equal(aclrtMallocAlign32(&a, 6 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&b, 4 * MiB, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtFree(a), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&c, 4 * MiB, 0), ACL_SUCCESS);
	aclrtFree(c);
}

static void request_larger_than_the_device_ooms(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(aclrtMallocAlign32(&p, 8 * MiB + 1, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	/* Within the span of addresses, past the memory. */
	assert_int_equal(aclrtMallocAlign32(&p, 16 * MiB, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtMallocAlign32(&p, SIZE_MAX, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
}

static void size_0_and_null_out_pointer_are_invalid(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 0, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMallocAlign32(&p, 0, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMalloc(NULL, 64, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(used_bytes(0), 0);
}

static void pointers_are_page_aligned_and_distinct(void **state)
{
	void *a, *b;

	(void)state;
	assert_int_equal(aclrtMalloc(&a, 100, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b, 100, 0), ACL_SUCCESS);
	assert_int_equal((uintptr_t)a % (2 * MiB), 0);
	assert_int_equal((uintptr_t)b % (2 * MiB), 0);
	assert_ptr_not_equal(a, b);
	aclrtFree(a);
	aclrtFree(b);
}

static void free_of_anything_but_a_live_block_is_invalid(void **state)
{
	char host[64];
	void *p;

	(void)state;
	assert_int_equal(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFree(host), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMalloc(&p, 3 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtFree((char *)p + 2 * MiB), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFree((char *)p + 64), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
}

static void mem_info_reports_capacity_minus_whole_pages_used(void **state)
{
	size_t free_b, total;
	void *p;

	(void)state;
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(free_b, 8 * MiB);
	assert_int_equal(total, 8 * MiB);
	assert_int_equal(aclrtMalloc(&p, 3 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM_HUGE, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(free_b, 4 * MiB);
	assert_int_equal(total, 8 * MiB);
	aclrtFree(p);
}

static void mem_info_has_no_ddr_and_refuses_bad_arguments(void **state)
{
	size_t free_b = 1, total = 1;

	(void)state;
	assert_int_equal(aclrtGetMemInfo(ACL_DDR_MEM, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(free_b, 0);
	assert_int_equal(total, 0);
	assert_int_equal(aclrtGetMemInfo((aclrtMemAttr)99, &free_b, &total), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total), ACL_ERROR_INVALID_PARAM);
}

static void counters_track_calls_bytes_used_and_peak(void **state)
{
	struct npusim_counters c;
	void *a, *b, *d;

	(void)state;
	assert_int_equal(aclrtMalloc(&a, 1, 0), ACL_SUCCESS);         /* 2 MiB */
	assert_int_equal(aclrtMalloc(&b, 3 * MiB, 0), ACL_SUCCESS);   /* 4 MiB */
	assert_int_equal(aclrtFree(b), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&d, 1 * MiB, 0), ACL_SUCCESS);   /* 2 MiB */
	assert_int_equal(aclrtFree(a), ACL_SUCCESS);
	assert_int_equal(npusim_device_counters(0, &c), 0);
	assert_int_equal(c.malloc_calls, 3);
	assert_int_equal(c.free_calls, 2);
	assert_int_equal(c.malloc_bytes, 8 * MiB);
	assert_int_equal(c.free_bytes, 6 * MiB);
	assert_int_equal(c.used, 2 * MiB);
	assert_int_equal(c.peak_used, 6 * MiB);
	assert_int_equal(c.live_allocations, 1);
	assert_int_equal(c.malloc_failures, 0);
	aclrtFree(d);
}

static void simulated_latency_is_spent_and_counted(void **state)
{
	struct npusim_counters c;
	void *p;

	(void)state;
	assert_int_equal(npusim_set_latency(0, 3000, 1000), 0);
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
	assert_int_equal(npusim_device_counters(0, &c), 0);
	assert_true(c.malloc_ns >= 3000000);
	assert_true(c.free_ns >= 1000000);
	assert_int_equal(npusim_set_latency(1, 0, 0), -EINVAL);
}

/* Best fit: a 2-page request goes to the 2-page hole at page 1, not to the
 * free tail from page 4 on. */
static void best_fit_prefers_the_smallest_hole(void **state)
{
	void *a, *b, *c, *d;

	(void)state;
	assert_int_equal(aclrtMallocAlign32(&a, 2 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&b, 4 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&c, 2 * MiB, 0), ACL_SUCCESS);
	assert_ptr_equal(b, (char *)a + 2 * MiB);
	assert_int_equal(aclrtFree(b), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&d, 4 * MiB, 0), ACL_SUCCESS);
	assert_ptr_equal(d, b);
	aclrtFree(a);
	aclrtFree(c);
	aclrtFree(d);
}

static void freed_neighbours_merge_into_one_run(void **state)
{
	void *p[4], *big;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(aclrtMallocAlign32(&p[i], 2 * MiB, 0), ACL_SUCCESS);
	aclrtFree(p[2]);
	aclrtFree(p[1]);
	assert_int_equal(aclrtMallocAlign32(&big, 4 * MiB, 0), ACL_SUCCESS);
	assert_ptr_equal(big, p[1]);
	aclrtFree(big);
	aclrtFree(p[0]);
	aclrtFree(p[3]);
	assert_int_equal(aclrtMallocAlign32(&big, 8 * MiB, 0), ACL_SUCCESS);
	assert_ptr_equal(big, p[0]);
	aclrtFree(big);
}

/*
 * A device maps its memory page by page: two free pages apart from each
 * other hold a two-page allocation, whose bytes are all usable, and the
 * device is then full.
 */
static void free_pages_apart_hold_one_allocation_of_them_all(void **state)
{
	void *p[4], *big, *more;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(aclrtMallocAlign32(&p[i], 2 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p[0]), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p[2]), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32(&big, 4 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 8 * MiB);
	memset(big, 0x5a, 4 * MiB);
	assert_int_equal(((unsigned char *)big)[4 * MiB - 1], 0x5a);
	assert_int_equal(aclrtMallocAlign32(&more, 2 * MiB, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	aclrtFree(big);
	aclrtFree(p[1]);
	aclrtFree(p[3]);
}

/*
 * The span's limit, pinned down: blocks of 1, 2, 4, ... pages up to the
 * capacity, every second block of each size freed after each round, cut a
 * 512 MiB device's span (four times its 256 pages) so that 128 free pages
 * find no run. The refusal says it is the simulator's, not the device's.
 */
static void a_span_cut_up_by_a_contrived_pattern_says_it_is_the_simulators_limit(void **state)
{
	enum { PAGES = 256 };
	void *live[2 * PAGES];
	uint64_t size[2 * PAGES], used = 0, refused = 0;
	int n = 0;
	aclError rc = ACL_SUCCESS;

	(void)state;
	for (uint64_t s = 1; s <= PAGES / 2 && rc == ACL_SUCCESS; s *= 2) {
		while (used + s <= PAGES && rc == ACL_SUCCESS) {
			rc = aclrtMallocAlign32(&live[n], s * 2 * MiB, 0);
			if (rc == ACL_SUCCESS) {
				size[n++] = s;
				used += s;
			} else {
				refused = s;
			}
		}
		for (uint64_t c = 1; c <= s && rc == ACL_SUCCESS; c *= 2) {
			int k = 0, kept = 0;

			for (int i = 0; i < n; i++) {
				if (size[i] == c && k++ % 2) {
					aclrtFree(live[i]);
					used -= c;
				} else {
					live[kept] = live[i];
					size[kept++] = size[i];
				}
			}
			n = kept;
		}
	}
	assert_int_equal(rc, ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(refused, 128);
	assert_int_equal(used, 128);
	assert_int_equal(used_bytes(0), 128 * 2 * MiB);
	const char *why = aclGetRecentErrMsg();
	assert_non_null(why);
	assert_non_null(strstr(why, "aclrtMallocAlign32: 128 pages are free but no run of them is left "
				    "in the simulator's span of 1024 pages"));
	for (int i = 0; i < n; i++)
		aclrtFree(live[i]);
}

static void written_bytes_read_back_and_vanish_after_free(void **state)
{
	unsigned char *p, *q;

	(void)state;
	assert_int_equal(aclrtMalloc((void **)&p, 4096, 0), ACL_SUCCESS);
	memset(p, 0xab, 4096);
	assert_int_equal(p[4095], 0xab);
	aclrtFree(p);
	assert_int_equal(aclrtMalloc((void **)&q, 4096, 0), ACL_SUCCESS);
	assert_ptr_equal(q, p);
	assert_int_equal(q[0], 0);
	assert_int_equal(q[4095], 0);
	aclrtFree(q);
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &size, &resident), 2);
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A 64 GiB reservation needs the address space to allow it; valgrind's
 * does not, so under valgrind the test says it is skipped. */
static int one_64gib_device(void **state)
{
	struct npusim_config cfg;
	static bool reserved;

	npusim_config_default(&cfg, 1, 64 * GiB);
	int rc = npusim_init(&cfg);
	if (rc != -ENOMEM)
		assert_int_equal(rc, 0);
	reserved = rc == 0;
	*state = &reserved;
	return 0;
}

static int one_128mib_device(void **state)
{
	(void)state;
	start_sim(1, 128 * MiB);
	return 0;
}

static void a_32gib_malloc_on_a_64gib_device_costs_no_ram(void **state)
{
	uint64_t before = rss_bytes();
	char *p;

	if (!*(bool *)*state) {
		print_message("SKIP: no room in this address space for a 64 GiB device\n");
		skip();
	}
	assert_int_equal(aclrtMallocAlign32((void **)&p, 32 * GiB, 0), ACL_SUCCESS);
	p[0] = 1;
	p[32 * GiB - 1] = 2;
	assert_true(rss_bytes() < before + 16 * MiB);
	assert_int_equal(p[32 * GiB - 1], 2);
	aclrtFree(p);
}

/* Resident bytes of [p, p + len), from mincore(): unlike the process RSS
 * it ignores sanitizer shadow memory. */
static uint64_t resident_in(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = len / page, count = 0;
	unsigned char *vec = malloc(n);

	assert_non_null(vec);
	assert_int_equal(mincore(p, len, vec), 0);
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return (uint64_t)count * page;
}

static void freeing_returns_touched_pages_to_the_os(void **state)
{
	char *p;

	(void)state;
	assert_int_equal(aclrtMallocAlign32((void **)&p, 64 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(resident_in(p, 64 * MiB), 0);
	memset(p, 1, 64 * MiB);
	assert_int_equal(resident_in(p, 64 * MiB), 64 * MiB);
	aclrtFree(p);
	assert_int_equal(resident_in(p, 64 * MiB), 0);
}

static void init_refuses_bad_configs_and_a_second_start(void **state)
{
	struct npusim_config cfg;

	(void)state;
	npusim_config_default(&cfg, 0, 8 * MiB);
	assert_int_equal(npusim_init(&cfg), -EINVAL);
	npusim_config_default(&cfg, NPUSIM_MAX_DEVICES + 1, 8 * MiB);
	assert_int_equal(npusim_init(&cfg), -EINVAL);
	npusim_config_default(&cfg, 1, 1 * MiB);     /* smaller than a page */
	assert_int_equal(npusim_init(&cfg), -EINVAL);
	npusim_config_default(&cfg, 1, 8 * MiB);
	cfg.device[0].page_size = 1000;              /* not whole host pages */
	assert_int_equal(npusim_init(&cfg), -EINVAL);
	assert_int_equal(npusim_init(NULL), -EINVAL);
	assert_false(npusim_initialized());
	npusim_config_default(&cfg, 1, 8 * MiB);
	assert_int_equal(npusim_init(&cfg), 0);
	assert_int_equal(npusim_init(&cfg), -EBUSY);
	assert_true(npusim_initialized());
}

static void calls_before_init_return_uninitialize(void **state)
{
	void *p;
	size_t f, t;
	aclrtStream s;
	aclrtEvent e;
	char buf[8];

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtFree(buf), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtMemcpy(buf, 8, buf, 8, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(aclrtCreateEvent(&e), ACL_ERROR_UNINITIALIZE);
	assert_int_equal(npusim_device_counters(0, &(struct npusim_counters){0}), -EINVAL);
}

static void init_and_shutdown_repeat_and_report_leaks(void **state)
{
	struct npusim_config cfg;
	void *p;

	(void)state;
	npusim_config_default(&cfg, 2, 1 * GiB);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(npusim_init(&cfg), 0);
		assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
		if (i % 2)
			aclrtFree(p);
		npusim_shutdown();
		assert_int_equal(npusim_last_leaked_bytes(), i % 2 ? 0 : 2 * MiB);
	}
	assert_false(npusim_initialized());
}

static int nothing(void **state)
{
	(void)state;
	return 0;
}

static void mem_usage_gives_what_the_runtime_holds_and_its_peak(void **state)
{
	aclrtMemUsageInfo info[4];
	size_t n = 0;
	void *a, *b;

	(void)state;
	assert_int_equal(aclrtMalloc(&a, 3 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtFree(a), ACL_SUCCESS);
	assert_int_equal(aclrtGetMemUsageInfo(0, info, 4, &n), ACL_SUCCESS);
	assert_int_equal(n, 1);
	assert_string_equal(info[0].name, "npusim");
	assert_int_equal(info[0].curMemSize, 2 * MiB);
	assert_int_equal(info[0].memPeakSize, 6 * MiB);
}

static void mem_usage_refuses_a_bad_device_or_no_room(void **state)
{
	aclrtMemUsageInfo info;
	size_t n = 7;

	(void)state;
	assert_int_equal(aclrtGetMemUsageInfo(1, &info, 1, &n), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtGetMemUsageInfo(0, &info, 0, &n), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetMemUsageInfo(0, NULL, 1, &n), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetMemUsageInfo(0, &info, 1, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(n, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(malloc_of_1_byte_commits_one_2mib_page, one_8mib_device),
		SIM_TEST(malloc_of_one_page_commits_two_pages_because_of_the_32_byte_pad, one_8mib_device),
		SIM_TEST(malloc_align32_of_one_page_commits_one_page, one_8mib_device),
		SIM_TEST(capacity_of_8mib_fits_four_1_byte_mallocs_then_ooms, one_8mib_device),
		SIM_TEST(oom_then_free_then_the_same_malloc_succeeds, one_8mib_device),
		SIM_TEST(request_larger_than_the_device_ooms, one_8mib_device),
		SIM_TEST(size_0_and_null_out_pointer_are_invalid, one_8mib_device),
		SIM_TEST(pointers_are_page_aligned_and_distinct, one_8mib_device),
		SIM_TEST(free_of_anything_but_a_live_block_is_invalid, one_8mib_device),
		SIM_TEST(mem_info_reports_capacity_minus_whole_pages_used, one_8mib_device),
		SIM_TEST(mem_info_has_no_ddr_and_refuses_bad_arguments, one_8mib_device),
		SIM_TEST(counters_track_calls_bytes_used_and_peak, one_16mib_device),
		SIM_TEST(simulated_latency_is_spent_and_counted, one_8mib_device),
		SIM_TEST(best_fit_prefers_the_smallest_hole, one_16mib_device),
		SIM_TEST(freed_neighbours_merge_into_one_run, one_8mib_device),
		SIM_TEST(free_pages_apart_hold_one_allocation_of_them_all, one_8mib_device),
		SIM_TEST(a_span_cut_up_by_a_contrived_pattern_says_it_is_the_simulators_limit,
			 one_512mib_device),
		SIM_TEST(written_bytes_read_back_and_vanish_after_free, one_8mib_device),
		SIM_TEST(a_32gib_malloc_on_a_64gib_device_costs_no_ram, one_64gib_device),
		SIM_TEST(freeing_returns_touched_pages_to_the_os, one_128mib_device),
		SIM_TEST(init_refuses_bad_configs_and_a_second_start, nothing),
		SIM_TEST(calls_before_init_return_uninitialize, nothing),
		SIM_TEST(init_and_shutdown_repeat_and_report_leaks, nothing),
		SIM_TEST(mem_usage_gives_what_the_runtime_holds_and_its_peak, one_8mib_device),
		SIM_TEST(mem_usage_refuses_a_bad_device_or_no_room, one_8mib_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
