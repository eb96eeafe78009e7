/*
 * test_sim_memcpy.c - aclrtMemcpy: data moves, and the checks a driver makes.
 */
#include <string.h>

#include "sim_fixture.h"

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 31 + seed);
}

static void bytes_round_trip_host_to_device_to_host(void **state)
{
	unsigned char in[4096], out[4096];
	void *dev;

	(void)state;
	fill(in, sizeof(in), 7);
	memset(out, 0, sizeof(out));
	assert_int_equal(aclrtMalloc(&dev, sizeof(in), 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 4096, in, 4096, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(out, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_memory_equal(in, out, 4096);
	aclrtFree(dev);
}

static void device_to_device_copies_between_blocks_and_devices(void **state)
{
	unsigned char in[1000], out[1000];
	void *a, *b, *c;

	(void)state;
	fill(in, sizeof(in), 3);
	assert_int_equal(aclrtMalloc(&a, 1000, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b, 1000, 0), ACL_SUCCESS);
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&c, 1000, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(a, 1000, in, 1000, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(b, 1000, a, 1000, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(c, 1000, b, 1000, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(out, 1000, c, 1000, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_memory_equal(in, out, 1000);
	aclrtFree(a);
	aclrtFree(b);
	aclrtFree(c);
}

static void host_to_host_is_a_plain_copy(void **state)
{
	char a[6] = "hello", b[6] = { 0 };

	(void)state;
	assert_int_equal(aclrtMemcpy(b, 6, a, 6, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
	assert_string_equal(b, "hello");
}

static void count_above_dest_max_is_invalid(void **state)
{
	char host[64] = { 1 };
	void *dev;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 64, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 32, host, 33, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(host, 32, dev, 33, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	aclrtFree(dev);
}

/* aclrtMallocAlign32(100) holds 128 bytes; the rest of its page is not
 * part of the allocation. */
static void align32_block_of_100_bytes_holds_exactly_128(void **state)
{
	unsigned char host[256] = { 0 };
	unsigned char *dev;

	(void)state;
	assert_int_equal(aclrtMallocAlign32((void **)&dev, 100, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 128, host, 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 129, host, 129, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(dev + 128, 1, host, 1, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(dev + 127, 1, host, 1, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	aclrtFree(dev);
}

/* aclrtMalloc(100) holds 128 + 32 = 160 bytes. */
static void malloc_block_of_100_bytes_holds_160(void **state)
{
	unsigned char host[256] = { 0 };
	void *dev;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 100, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(host, 256, dev, 160, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(host, 256, dev, 161, ACL_MEMCPY_DEVICE_TO_HOST),
			 ACL_ERROR_INVALID_PARAM);
	aclrtFree(dev);
}

static void a_range_across_two_adjacent_blocks_is_invalid(void **state)
{
	unsigned char host[64] = { 0 };
	char *a, *b;

	(void)state;
	assert_int_equal(aclrtMallocAlign32((void **)&a, 2 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMallocAlign32((void **)&b, 2 * MiB, 0), ACL_SUCCESS);
	assert_ptr_equal(b, a + 2 * MiB);
	assert_int_equal(aclrtMemcpy(a + 2 * MiB - 16, 32, host, 32, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(a + 2 * MiB - 16, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_SUCCESS);
	aclrtFree(a);
	aclrtFree(b);
}

static void host_pointer_where_the_kind_says_device_is_invalid(void **state)
{
	char h1[16] = { 0 }, h2[16] = { 0 };
	void *dev;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 16, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(h1, 16, h2, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(h1, 16, h2, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(dev, 16, h2, 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(h1, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
	aclrtFree(dev);
}

static void freed_device_memory_is_invalid(void **state)
{
	char host[16] = { 0 };
	void *dev;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 16, 0), ACL_SUCCESS);
	aclrtFree(dev);
	assert_int_equal(aclrtMemcpy(dev, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
}

static void null_pointers_and_unknown_kinds_are_invalid(void **state)
{
	char a[4] = { 0 }, b[4] = { 0 };

	(void)state;
	assert_int_equal(aclrtMemcpy(NULL, 4, a, 4, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(a, 4, NULL, 4, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpy(a, 4, b, 4, (aclrtMemcpyKind)7), ACL_ERROR_INVALID_PARAM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(bytes_round_trip_host_to_device_to_host, two_8mib_devices),
		SIM_TEST(device_to_device_copies_between_blocks_and_devices, two_8mib_devices),
		SIM_TEST(host_to_host_is_a_plain_copy, two_8mib_devices),
		SIM_TEST(count_above_dest_max_is_invalid, two_8mib_devices),
		SIM_TEST(align32_block_of_100_bytes_holds_exactly_128, two_8mib_devices),
		SIM_TEST(malloc_block_of_100_bytes_holds_160, two_8mib_devices),
		SIM_TEST(a_range_across_two_adjacent_blocks_is_invalid, two_8mib_devices),
		SIM_TEST(host_pointer_where_the_kind_says_device_is_invalid, two_8mib_devices),
		SIM_TEST(freed_device_memory_is_invalid, two_8mib_devices),
		SIM_TEST(null_pointers_and_unknown_kinds_are_invalid, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
