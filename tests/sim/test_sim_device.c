/*
 * test_sim_device.c - device selection is per thread; memory is per device.
 */
#include <pthread.h>

#include "sim_fixture.h"

static void the_current_device_starts_at_0(void **state)
{
	int32_t dev = -1;
	uint32_t n = 0;

	(void)state;
	assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
	assert_int_equal(dev, 0);
	assert_int_equal(aclrtGetDeviceCount(&n), ACL_SUCCESS);
	assert_int_equal(n, 2);
}

static void set_device_refuses_ids_out_of_range(void **state)
{
	int32_t dev;

	(void)state;
	assert_int_equal(aclrtSetDevice(2), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtSetDevice(-1), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
	assert_int_equal(dev, 0);
}

static void *report_device(void *arg)
{
	int32_t *dev = arg;

	aclrtGetDevice(dev);
	return NULL;
}

static void each_thread_has_its_own_current_device(void **state)
{
	pthread_t t;
	int32_t other = -1, mine = -1;

	(void)state;
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	pthread_create(&t, NULL, report_device, &other);
	pthread_join(t, NULL);
	assert_int_equal(aclrtGetDevice(&mine), ACL_SUCCESS);
	assert_int_equal(mine, 1);
	assert_int_equal(other, 0);
}

static void malloc_takes_memory_from_the_current_device(void **state)
{
	void *a, *b;
	size_t free_b, total;

	(void)state;
	assert_int_equal(aclrtMalloc(&a, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b, 3 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 2 * MiB);
	assert_int_equal(used_bytes(1), 4 * MiB);
	assert_int_equal(npusim_device_of(a), 0);
	assert_int_equal(npusim_device_of(b), 1);
	assert_int_equal(npusim_device_of(&free_b), -1);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(free_b, 4 * MiB);
	/* Free finds the block's device from its address. */
	assert_int_equal(aclrtFree(a), ACL_SUCCESS);
	assert_int_equal(aclrtFree(b), ACL_SUCCESS);
	assert_int_equal(used_bytes(0), 0);
}

static void a_new_init_starts_every_thread_at_device_0_again(void **state)
{
	int32_t dev = -1;

	(void)state;
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	npusim_shutdown();
	start_sim(2, 8 * MiB);
	assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
	assert_int_equal(dev, 0);
}

static void devices_may_differ_in_capacity_and_page_size(void **state)
{
	struct npusim_config cfg;
	void *p;
	size_t free_b, total;

	(void)state;
	npusim_config_default(&cfg, 2, 8 * MiB);
	cfg.device[1].capacity = 1 * MiB;
	cfg.device[1].page_size = 64 * KiB;
	assert_int_equal(npusim_init(&cfg), 0);
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
	assert_int_equal(total, 1 * MiB);
	assert_int_equal(free_b, 1 * MiB - 64 * KiB);
	assert_int_equal((uintptr_t)p % (64 * KiB), 0);
	aclrtFree(p);
}

static int nothing(void **state)
{
	(void)state;
	return 0;
}

static void each_device_has_one_context_the_current_device_gives(void **state)
{
	aclrtContext c0, c1, again;

	(void)state;
	assert_int_equal(aclrtGetCurrentContext(&c0), ACL_SUCCESS);
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
	assert_ptr_not_equal(c0, c1);
	assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
	assert_int_equal(aclrtGetCurrentContext(&again), ACL_SUCCESS);
	assert_ptr_equal(again, c0);
}

static void setting_a_context_makes_its_device_current(void **state)
{
	aclrtContext c1;
	int32_t dev = -1;

	(void)state;
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtGetCurrentContext(&c1), ACL_SUCCESS);
	assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
	assert_int_equal(aclrtSetCurrentContext(c1), ACL_SUCCESS);
	assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
	assert_int_equal(dev, 1);
}

static void a_handle_that_is_no_context_is_refused_and_changes_nothing(void **state)
{
	int not_a_context;
	int32_t dev = -1;

	(void)state;
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtSetCurrentContext(&not_a_context), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetDevice(&dev), ACL_SUCCESS);
	assert_int_equal(dev, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(the_current_device_starts_at_0, two_8mib_devices),
		SIM_TEST(set_device_refuses_ids_out_of_range, two_8mib_devices),
		SIM_TEST(each_thread_has_its_own_current_device, two_8mib_devices),
		SIM_TEST(malloc_takes_memory_from_the_current_device, two_8mib_devices),
		SIM_TEST(a_new_init_starts_every_thread_at_device_0_again, two_8mib_devices),
		SIM_TEST(devices_may_differ_in_capacity_and_page_size, nothing),
		SIM_TEST(each_device_has_one_context_the_current_device_gives, two_8mib_devices),
		SIM_TEST(setting_a_context_makes_its_device_current, two_8mib_devices),
		SIM_TEST(a_handle_that_is_no_context_is_refused_and_changes_nothing,
			 two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
