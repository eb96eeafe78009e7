/*
 * test_sim_pointer.c - aclrtPointerGetAttributes and aclrtMemGetAddressRange:
 * only memory held now is a block; a freed device address is an error.
 */
#include <stdlib.h>

#include <acl/acl_rt.h>
#include "sim_fixture.h"

static void a_live_block_gives_its_device_start_and_rounded_size(void **state)
{
	aclrtPtrAttributes attr;
	void *p, *base;
	size_t size;
	(void)state;

	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(aclrtPointerGetAttributes((char *)p + 999, &attr), ACL_SUCCESS);
	assert_int_equal(attr.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
	assert_int_equal(attr.location.id, 1);
	assert_int_equal(attr.pageSize, 2 * MiB);
	assert_int_equal(aclrtMemGetAddressRange((char *)p + 999, &base, &size), ACL_SUCCESS);
	assert_ptr_equal(base, p);
	assert_int_equal(size, 1056); /* ALIGN_UP(1000, 32) + 32 */
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void a_freed_device_pointer_is_invalid(void **state)
{
	aclrtPtrAttributes attr;
	void *p, *base;
	size_t size;
	(void)state;

	assert_int_equal(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
	assert_int_equal(aclrtPointerGetAttributes(p, &attr), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemGetAddressRange(p, &base, &size), ACL_ERROR_INVALID_PARAM);
}

static void past_the_rounded_size_is_no_block(void **state)
{
	void *p, *base;
	size_t size;
	(void)state;

	assert_int_equal(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
	assert_int_equal(aclrtMemGetAddressRange((char *)p + 1056, &base, &size),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void host_memory_reads_as_host_and_only_pinned_blocks_have_a_range(void **state)
{
	aclrtPtrAttributes attr;
	void *pinned, *base, *heap = malloc(64);
	size_t size;
	(void)state;

	assert_int_equal(aclrtMallocHost(&pinned, 5000), ACL_SUCCESS);
	assert_int_equal(aclrtPointerGetAttributes(pinned, &attr), ACL_SUCCESS);
	assert_int_equal(attr.location.type, ACL_MEM_LOCATION_TYPE_HOST);
	assert_int_equal(aclrtMemGetAddressRange((char *)pinned + 10, &base, &size), ACL_SUCCESS);
	assert_ptr_equal(base, pinned);
	assert_int_equal(size, 8192);
	assert_int_equal(aclrtPointerGetAttributes(heap, &attr), ACL_SUCCESS);
	assert_int_equal(attr.location.type, ACL_MEM_LOCATION_TYPE_HOST);
	assert_int_equal(aclrtMemGetAddressRange(heap, &base, &size), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFreeHost(pinned), ACL_SUCCESS);
	free(heap);
}

static void a_mapping_is_a_block_and_an_unmapped_page_is_invalid(void **state)
{
	aclrtPhysicalMemProp prop = {
		.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .id = 0, .type = ACL_MEM_LOCATION_TYPE_DEVICE },
	};
	aclrtPtrAttributes attr;
	aclrtDrvMemHandle h;
	void *va, *base;
	size_t size;
	(void)state;

	assert_int_equal(aclrtReserveMemAddress(&va, 4 * MiB, 0, NULL, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocPhysical(&h, 2 * MiB, &prop, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMapMem(va, 2 * MiB, 0, h, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemGetAddressRange((char *)va + 100, &base, &size), ACL_SUCCESS);
	assert_ptr_equal(base, va);
	assert_int_equal(size, 2 * MiB);
	assert_int_equal(aclrtPointerGetAttributes((char *)va + 2 * MiB, &attr),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtUnmapMem(va), ACL_SUCCESS);
	assert_int_equal(aclrtPointerGetAttributes(va, &attr), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFreePhysical(h), ACL_SUCCESS);
	assert_int_equal(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(a_live_block_gives_its_device_start_and_rounded_size,
			 two_8mib_devices),
		SIM_TEST(a_freed_device_pointer_is_invalid,
			 one_8mib_device),
		SIM_TEST(past_the_rounded_size_is_no_block,
			 one_8mib_device),
		SIM_TEST(host_memory_reads_as_host_and_only_pinned_blocks_have_a_range,
			 one_8mib_device),
		SIM_TEST(a_mapping_is_a_block_and_an_unmapped_page_is_invalid,
			 one_8mib_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
