/*
 * test_sim_host.c - pinned host memory: aclrtMallocHost against the host
 * capacity, host physical pages for expandable host segments, and copies
 * between pinned host memory and the device, captured and replayed.
 */
#include <errno.h>
#include <string.h>

#include "sim_fixture.h"

static int host_of_64mib(void **state)
{
	struct npusim_config cfg;

	(void)state;
	npusim_config_default(&cfg, 1, 64 * MiB);
	cfg.host.capacity = 64 * MiB;
	assert_int_equal(npusim_init(&cfg), 0);
	return 0;
}

static struct npusim_host_counters host(void)
{
	struct npusim_host_counters c;

	assert_int_equal(npusim_host_counters(&c), 0);
	return c;
}

static aclrtPhysicalMemProp on_host(void)
{
	aclrtPhysicalMemProp prop = {
		.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
		.memAttr = ACL_HBM_MEM_HUGE,
		.location = { .id = 0, .type = ACL_MEM_LOCATION_TYPE_HOST },
	};
	return prop;
}

static void malloc_host_rounds_to_4kib_and_counts_against_the_host(void **state)
{
	void *p = NULL;

	(void)state;
	assert_int_equal(aclrtMallocHost(&p, 40960 + 1), ACL_SUCCESS);
	assert_int_equal((uintptr_t)p % 4096, 0);
	assert_int_equal(host().used, 45056);
	assert_int_equal(host().live_allocations, 1);
	assert_int_equal(used_bytes(0), 0);
	memset(p, 7, 40961);
	assert_true(npusim_host_range_pinned((char *)p + 40960, 1));
	assert_false(npusim_host_range_pinned((char *)p + 40960, 8192));
	assert_int_equal(aclrtFreeHost(p), ACL_SUCCESS);
	assert_int_equal(host().used, 0);
	assert_int_equal(host().free_calls, 1);
}

static void malloc_host_beyond_the_capacity_fails(void **state)
{
	void *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(aclrtMallocHost(&a, 48 * MiB), ACL_SUCCESS);
	assert_int_equal(aclrtMallocHost(&b, 17 * MiB), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_null(b);
	assert_int_equal(host().malloc_failures, 1);
	assert_int_equal(aclrtMallocHost(&b, 16 * MiB), ACL_SUCCESS);
	assert_int_equal(host().peak_used, 64 * MiB);
	assert_int_equal(aclrtFreeHost(a), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(b), ACL_SUCCESS);
}

static void free_host_of_an_unknown_pointer_is_refused(void **state)
{
	char local[16];
	void *p = NULL;

	(void)state;
	assert_int_equal(aclrtFreeHost(local), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFreeHost(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMallocHost(&p, 4096), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(p), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(p), ACL_ERROR_INVALID_PARAM);
}

static void an_injected_fault_fails_the_nth_host_malloc(void **state)
{
	void *p = NULL;

	(void)state;
	assert_int_equal(npusim_fail_nth_host_malloc(2), 0);
	assert_int_equal(aclrtMallocHost(&p, 4096), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(p), ACL_SUCCESS);
	assert_int_equal(aclrtMallocHost(&p, 4096), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtMallocHost(&p, 4096), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(p), ACL_SUCCESS);
}

static void host_pages_map_into_a_reservation_and_keep_their_bytes(void **state)
{
	aclrtPhysicalMemProp prop = on_host();
	aclrtDrvMemHandle h = NULL;
	void *va = NULL;
	size_t g = 0;

	(void)state;
	assert_int_equal(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_SUCCESS);
	assert_int_equal(g, 2 * MiB);
	assert_int_equal(aclrtMallocPhysical(&h, 20 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(host().physical_used, 20 * MiB);
	assert_int_equal(used_bytes(0), 0);
	assert_int_equal(aclrtReserveMemAddress(&va, 40 * MiB, 0, NULL, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMapMem(va, 20 * MiB, 0, h, 0), ACL_SUCCESS);
	memcpy((char *)va + 5, "pinned", 6);
	/* Host pages are not device memory: a copy cannot target them as such. */
	assert_int_equal(npusim_device_of(va), -1);
	assert_int_equal(aclrtMemcpy(va, 6, "device", 6, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtUnmapMem(va), ACL_SUCCESS);
	assert_int_equal(aclrtMapMem((char *)va + 20 * MiB, 20 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_memory_equal((char *)va + 20 * MiB + 5, "pinned", 6);
	assert_int_equal(aclrtUnmapMem((char *)va + 20 * MiB), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h), ACL_SUCCESS);
	assert_int_equal(host().used, 0);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

/* Host pages behind handles are placed as a device's: freed handles apart
 * from each other make a larger one, every byte of it usable. */
static void freed_host_pages_apart_make_one_handle_of_them_all(void **state)
{
	aclrtPhysicalMemProp prop = on_host();
	aclrtDrvMemHandle h[4], two = NULL;
	void *va = NULL;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(aclrtMallocPhysical(&h[i], 16 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h[0]), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h[2]), ACL_SUCCESS);
	assert_int_equal(aclrtMallocPhysical(&two, 32 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(host().physical_used, 64 * MiB);
	assert_int_equal(aclrtReserveMemAddress(&va, 32 * MiB, 0, NULL, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMapMem(va, 32 * MiB, 0, two, 0), ACL_SUCCESS);
	memcpy((char *)va + 32 * MiB - 6, "pinned", 6);
	assert_memory_equal((char *)va + 32 * MiB - 6, "pinned", 6);
	assert_int_equal(aclrtUnmapMem(va), ACL_SUCCESS);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_SUCCESS);
	aclrtFreePhysical(two);
	aclrtFreePhysical(h[1]);
	aclrtFreePhysical(h[3]);
}

static void host_pages_beyond_the_capacity_fail(void **state)
{
	aclrtPhysicalMemProp prop = on_host();
	aclrtDrvMemHandle a = NULL, b = NULL;
	void *p = NULL;

	(void)state;
	assert_int_equal(aclrtMallocHost(&p, 40 * MiB), ACL_SUCCESS);
	assert_int_equal(aclrtMallocPhysical(&a, 20 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocPhysical(&b, 20 * MiB, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	prop.location.id = 1;
	assert_int_equal(aclrtMallocPhysical(&b, 2 * MiB, &prop, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFreePhysical(a), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(p), ACL_SUCCESS);
}

static void an_h2d_copy_captured_from_pinned_memory_replays_its_bytes(void **state)
{
	aclrtStream s = NULL;
	aclmdlRI model = NULL;
	float *pinned = NULL, *dev = NULL, got[64];

	(void)state;
	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(aclrtMallocHost((void **)&pinned, sizeof(got)), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc((void **)&dev, sizeof(got), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	for (int i = 0; i < 64; i++)
		pinned[i] = 7.0f;
	assert_int_equal(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(dev, sizeof(got), pinned, sizeof(got),
					  ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureEnd(s, &model), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(got, sizeof(got), dev, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	assert_true(got[0] != 7.0f);
	assert_int_equal(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(got, sizeof(got), dev, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	assert_true(got[0] == 7.0f && got[63] == 7.0f);
	assert_int_equal(aclmdlRIDestroy(model), ACL_SUCCESS);
	assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
	assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void a_bad_host_capacity_is_refused(void **state)
{
	struct npusim_config cfg;

	(void)state;
	npusim_config_default(&cfg, 1, 8 * MiB);
	cfg.host.capacity = 1 * MiB;
	assert_int_equal(npusim_init(&cfg), -EINVAL);
	cfg.host.capacity = 0;
	assert_int_equal(npusim_init(&cfg), 0);
	assert_int_equal(host().capacity, NPUSIM_HOST_DEFAULT_CAPACITY);
	npusim_shutdown();
}

static int no_setup(void **state)
{
	(void)state;
	return 0;
}

static int no_teardown(void **state)
{
	(void)state;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(malloc_host_rounds_to_4kib_and_counts_against_the_host, host_of_64mib),
		SIM_TEST(malloc_host_beyond_the_capacity_fails, host_of_64mib),
		SIM_TEST(free_host_of_an_unknown_pointer_is_refused, host_of_64mib),
		SIM_TEST(an_injected_fault_fails_the_nth_host_malloc, host_of_64mib),
		SIM_TEST(host_pages_map_into_a_reservation_and_keep_their_bytes, host_of_64mib),
		SIM_TEST(host_pages_beyond_the_capacity_fail, host_of_64mib),
		SIM_TEST(freed_host_pages_apart_make_one_handle_of_them_all, host_of_64mib),
		SIM_TEST(an_h2d_copy_captured_from_pinned_memory_replays_its_bytes, host_of_64mib),
		cmocka_unit_test_setup_teardown(a_bad_host_capacity_is_refused, no_setup, no_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
