/*
 * test_sim_vm.c - reservations, physical handles and mappings: the device
 * side of expandable segments.
 */
#include <string.h>

#include "sim_fixture.h"

static aclrtPhysicalMemProp on_device(uint32_t id)
{
	aclrtPhysicalMemProp prop = {
		.handleType = ACL_MEM_HANDLE_TYPE_NONE,
		.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
		.memAttr = ACL_HBM_MEM_HUGE,
		.location = { .id = id, .type = ACL_MEM_LOCATION_TYPE_DEVICE },
	};
	return prop;
}

static aclrtDrvMemHandle physical(size_t size, uint32_t device)
{
	aclrtPhysicalMemProp prop = on_device(device);
	aclrtDrvMemHandle h = NULL;

	assert_int_equal(aclrtMallocPhysical(&h, size, &prop, 0), ACL_SUCCESS);
	return h;
}

static char *reserve(size_t size)
{
	void *p = NULL;

	assert_int_equal(aclrtReserveMemAddress(&p, size, 0, NULL, 0), ACL_SUCCESS);
	return p;
}

static void granularity_is_the_device_page_size(void **state)
{
	aclrtPhysicalMemProp prop = on_device(0);
	size_t g = 0;

	(void)state;
	assert_int_equal(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_SUCCESS);
	assert_int_equal(g, 2 * MiB);
	prop.location.id = 2;
	assert_int_equal(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g),
			 ACL_ERROR_INVALID_DEVICE);
}

static void a_reservation_is_page_aligned_and_not_device_memory_until_mapped(void **state)
{
	char host[16] = { 0 };
	char *va;

	(void)state;
	va = reserve(8 * MiB);
	assert_int_equal((uintptr_t)va % (2 * MiB), 0);
	assert_int_equal(npusim_device_of(va), -1);
	assert_int_equal(aclrtMemcpy(va, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(used_bytes(0), 0);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

static void physical_memory_rounds_to_pages_and_counts_against_capacity(void **state)
{
	aclrtPhysicalMemProp prop = on_device(0);
	aclrtDrvMemHandle h[4], extra;
	size_t free_b, total;
	void *p;
	struct npusim_counters c;

	(void)state;
	h[0] = physical(1, 0);
	assert_int_equal(used_bytes(0), 2 * MiB);
	for (int i = 1; i < 4; i++)
		h[i] = physical(2 * MiB, 0);
	assert_int_equal(aclrtMallocPhysical(&extra, 2 * MiB, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(free_b, 0);
	assert_int_equal(aclrtFreePhysical(h[0]), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	npusim_device_counters(0, &c);
	assert_int_equal(c.physical_calls, 4);
	assert_int_equal(c.physical_frees, 1);
	assert_int_equal(c.physical_failures, 1);
	assert_int_equal(c.physical_used, 6 * MiB);
	assert_int_equal(c.used, 8 * MiB);
	aclrtFree(p);
	for (int i = 1; i < 4; i++)
		aclrtFreePhysical(h[i]);
	assert_int_equal(used_bytes(0), 0);
}

/* Free pages apart from each other make a handle of them all, mapped
 * whole, every byte of it usable: pages decide, not a free run. */
static void free_pages_apart_make_one_physical_handle_of_them_all(void **state)
{
	aclrtDrvMemHandle h[4], two;
	unsigned char in[4096], out[4096];
	char *va;

	(void)state;
	for (int i = 0; i < 4; i++)
		h[i] = physical(2 * MiB, 0);
	assert_int_equal(aclrtFreePhysical(h[0]), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h[2]), ACL_SUCCESS);
	two = physical(4 * MiB, 0);
	assert_int_equal(used_bytes(0), 8 * MiB);
	va = reserve(4 * MiB);
	assert_int_equal(aclrtMapMem(va, 4 * MiB, 0, two, 0), ACL_SUCCESS);
	memset(in, 0xa5, sizeof(in));
	assert_int_equal(aclrtMemcpy(va + 4 * MiB - 4096, 4096, in, 4096,
				     ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(out, 4096, va + 4 * MiB - 4096, 4096,
				     ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_memory_equal(in, out, 4096);
	aclrtUnmapMem(va);
	aclrtReleaseMemAddress(va);
	aclrtFreePhysical(two);
	aclrtFreePhysical(h[1]);
	aclrtFreePhysical(h[3]);
}

static void bytes_survive_unmap_and_reappear_where_the_handle_is_mapped_next(void **state)
{
	unsigned char in[4096], out[4096];
	aclrtDrvMemHandle h;
	char *va;

	(void)state;
	for (int i = 0; i < 4096; i++)
		in[i] = (unsigned char)(i * 7 + 1);
	va = reserve(8 * MiB);
	h = physical(2 * MiB, 0);
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(va + 1000, 4096, in, 4096, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtUnmapMem(va), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(out, 4096, va + 1000, 4096, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMapMem(va + 4 * MiB, 2 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(out, 4096, va + 4 * MiB + 1000, 4096, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_SUCCESS);
	assert_memory_equal(in, out, 4096);
	aclrtUnmapMem(va + 4 * MiB);
	aclrtFreePhysical(h);
	aclrtReleaseMemAddress(va);
}

static void the_offset_selects_which_part_of_a_handle_is_mapped(void **state)
{
	aclrtDrvMemHandle h;
	char *va;

	(void)state;
	va = reserve(8 * MiB);
	h = physical(4 * MiB, 0);
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 2 * MiB, h, 0), ACL_SUCCESS);
	va[5] = 'B';
	assert_int_equal(aclrtMapMem(va + 4 * MiB, 4 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_int_equal(va[4 * MiB + 2 * MiB + 5], 'B');
	assert_int_equal(va[4 * MiB + 5], 0);
	aclrtUnmapMem(va);
	aclrtUnmapMem(va + 4 * MiB);
	aclrtFreePhysical(h);
	aclrtReleaseMemAddress(va);
}

static void adjacent_mappings_form_one_device_range_and_a_gap_breaks_it(void **state)
{
	unsigned char buf[64] = { 0 };
	aclrtDrvMemHandle a, b, c;
	char *va;

	(void)state;
	va = reserve(8 * MiB);
	a = physical(2 * MiB, 0);
	b = physical(2 * MiB, 0);
	c = physical(2 * MiB, 0);
	aclrtMapMem(va, 2 * MiB, 0, a, 0);
	aclrtMapMem(va + 2 * MiB, 2 * MiB, 0, b, 0);
	aclrtMapMem(va + 6 * MiB, 2 * MiB, 0, c, 0);
	assert_int_equal(aclrtMemcpy(va + 2 * MiB - 32, 64, buf, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(va + 4 * MiB - 32, 64, buf, 64, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(va + 8 * MiB - 32, 64, buf, 64, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	aclrtUnmapMem(va);
	aclrtUnmapMem(va + 2 * MiB);
	aclrtUnmapMem(va + 6 * MiB);
	aclrtFreePhysical(a);
	aclrtFreePhysical(b);
	aclrtFreePhysical(c);
	aclrtReleaseMemAddress(va);
}

static void map_refuses_overlap_misalignment_and_out_of_range(void **state)
{
	aclrtDrvMemHandle h, g;
	char *va;
	int not_a_handle;

	(void)state;
	va = reserve(8 * MiB);
	h = physical(4 * MiB, 0);
	g = physical(2 * MiB, 0);
	assert_int_equal(aclrtMapMem(va + 2 * MiB, 4 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMapMem(va, 4 * MiB, 0, g, 0), ACL_ERROR_INVALID_PARAM);      /* overlaps */
	assert_int_equal(aclrtMapMem(va + 4 * MiB, 2 * MiB, 0, g, 0), ACL_ERROR_INVALID_PARAM); /* inside */
	assert_int_equal(aclrtMapMem(va + 4096, 2 * MiB, 0, g, 0), ACL_ERROR_INVALID_PARAM); /* misaligned */
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 2 * MiB, g, 0), ACL_ERROR_INVALID_PARAM);  /* offset past g */
	assert_int_equal(aclrtMapMem(va, 1 * MiB, 0, g, 0), ACL_ERROR_INVALID_PARAM);        /* part page */
	assert_int_equal(aclrtMapMem(va + 8 * MiB, 2 * MiB, 0, g, 0), ACL_ERROR_INVALID_PARAM); /* outside */
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 0, &not_a_handle, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 0, g, 0), ACL_SUCCESS);
	assert_int_equal(aclrtUnmapMem(va + 4 * MiB), ACL_ERROR_INVALID_PARAM);  /* not a start */
	aclrtUnmapMem(va);
	aclrtUnmapMem(va + 2 * MiB);
	aclrtFreePhysical(h);
	aclrtFreePhysical(g);
	aclrtReleaseMemAddress(va);
}

static void a_mapped_handle_cannot_be_freed_nor_its_reservation_released(void **state)
{
	aclrtDrvMemHandle h;
	char *va;

	(void)state;
	va = reserve(4 * MiB);
	h = physical(2 * MiB, 0);
	aclrtMapMem(va, 2 * MiB, 0, h, 0);
	assert_int_equal(aclrtFreePhysical(h), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtUnmapMem(va), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h), ACL_SUCCESS);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(h), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(used_bytes(0), 0);
}

static void a_mapped_address_belongs_to_the_handles_device(void **state)
{
	aclrtDrvMemHandle h;
	char *va;

	(void)state;
	va = reserve(4 * MiB);
	h = physical(2 * MiB, 1);
	aclrtMapMem(va + 2 * MiB, 2 * MiB, 0, h, 0);
	assert_int_equal(npusim_device_of(va + 2 * MiB + 100), 1);
	assert_int_equal(npusim_device_of(va + 100), -1);
	assert_int_equal(used_bytes(1), 2 * MiB);
	assert_int_equal(used_bytes(0), 0);
	aclrtUnmapMem(va + 2 * MiB);
	aclrtFreePhysical(h);
	aclrtReleaseMemAddress(va);
}

static void the_nth_physical_allocation_can_be_made_to_fail(void **state)
{
	aclrtPhysicalMemProp prop = on_device(0);
	aclrtDrvMemHandle h1, h2, h3;
	struct npusim_counters c;

	(void)state;
	assert_int_equal(npusim_fail_nth_physical(0, 2), 0);
	assert_int_equal(aclrtMallocPhysical(&h1, 2 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocPhysical(&h2, 2 * MiB, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtMallocPhysical(&h3, 2 * MiB, &prop, 0), ACL_SUCCESS);
	npusim_device_counters(0, &c);
	assert_int_equal(c.physical_failures, 1);
	assert_int_equal(c.malloc_failures, 0);
	assert_int_equal(c.used, 4 * MiB);
	aclrtFreePhysical(h1);
	aclrtFreePhysical(h3);
}

static void bad_physical_requests_are_refused(void **state)
{
	aclrtPhysicalMemProp prop = on_device(0);
	aclrtDrvMemHandle h;

	(void)state;
	assert_int_equal(aclrtMallocPhysical(&h, 0, &prop, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMallocPhysical(&h, 2 * MiB, NULL, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMallocPhysical(NULL, 2 * MiB, &prop, 0), ACL_ERROR_INVALID_PARAM);
	/* The host is one location, id 0 (test_sim_host.c uses it). */
	prop.location.type = ACL_MEM_LOCATION_TYPE_HOST;
	prop.location.id = 1;
	assert_int_equal(aclrtMallocPhysical(&h, 2 * MiB, &prop, 0), ACL_ERROR_INVALID_PARAM);
	prop.location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
	prop.location.id = 0;
	assert_int_equal(aclrtMallocPhysical(&h, 2 * MiB, &prop, 0), ACL_ERROR_INVALID_PARAM);
	prop = on_device(9);
	assert_int_equal(aclrtMallocPhysical(&h, 2 * MiB, &prop, 0), ACL_ERROR_INVALID_DEVICE);
	prop = on_device(0);
	assert_int_equal(aclrtMallocPhysical(&h, 10 * MiB, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
}

static void an_expected_address_is_honoured_when_free(void **state)
{
	void *first, *again = NULL;

	(void)state;
	first = reserve(4 * MiB);
	assert_int_equal(aclrtReleaseMemAddress(first), ACL_SUCCESS);
	assert_int_equal(aclrtReserveMemAddress(&again, 4 * MiB, 0, first, 0), ACL_SUCCESS);
	assert_ptr_equal(again, first);
	assert_int_equal(aclrtReserveMemAddress(&again, 4 * MiB, 3, NULL, 0), ACL_ERROR_INVALID_PARAM);
	aclrtReleaseMemAddress(first);
}

static void shutdown_reclaims_reservations_mappings_and_handles(void **state)
{
	aclrtDrvMemHandle h;
	char *va;

	(void)state;
	va = reserve(4 * MiB);
	h = physical(2 * MiB, 0);
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 0, h, 0), ACL_SUCCESS);
	npusim_shutdown();
	assert_int_equal(npusim_last_leaked_bytes(), 2 * MiB);
	start_sim(2, 8 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(granularity_is_the_device_page_size, two_8mib_devices),
		SIM_TEST(a_reservation_is_page_aligned_and_not_device_memory_until_mapped, two_8mib_devices),
		SIM_TEST(physical_memory_rounds_to_pages_and_counts_against_capacity, two_8mib_devices),
		SIM_TEST(free_pages_apart_make_one_physical_handle_of_them_all, two_8mib_devices),
		SIM_TEST(bytes_survive_unmap_and_reappear_where_the_handle_is_mapped_next, two_8mib_devices),
		SIM_TEST(the_offset_selects_which_part_of_a_handle_is_mapped, two_8mib_devices),
		SIM_TEST(adjacent_mappings_form_one_device_range_and_a_gap_breaks_it, two_8mib_devices),
		SIM_TEST(map_refuses_overlap_misalignment_and_out_of_range, two_8mib_devices),
		SIM_TEST(a_mapped_handle_cannot_be_freed_nor_its_reservation_released, two_8mib_devices),
		SIM_TEST(a_mapped_address_belongs_to_the_handles_device, two_8mib_devices),
		SIM_TEST(the_nth_physical_allocation_can_be_made_to_fail, two_8mib_devices),
		SIM_TEST(bad_physical_requests_are_refused, two_8mib_devices),
		SIM_TEST(an_expected_address_is_honoured_when_free, two_8mib_devices),
		SIM_TEST(shutdown_reclaims_reservations_mappings_and_handles, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
