/*
 * test_sim_last_error.c - aclrtPeekAtLastError and aclrtGetLastError: the
 * code of the calling thread's latest failed runtime call.
 */
#include <pthread.h>

#include "sim_fixture.h"

static void no_failure_is_success(void **state)
{
	(void)state;
	assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
	assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
}

static void peek_keeps_the_last_error_and_get_clears_it(void **state)
{
	(void)state;
	assert_int_equal(aclrtSetDevice(5), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
}

static void a_later_failure_replaces_it_and_a_success_leaves_it(void **state)
{
	void *p;

	(void)state;
	assert_int_equal(aclrtSetDevice(5), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtMalloc(&p, 64 * MiB, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_MEMORY_ALLOCATION);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void *fail_once(void *arg)
{
	aclError *seen = arg;

	aclrtFree(NULL);
	*seen = aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL);
	return NULL;
}

static void each_thread_has_its_own(void **state)
{
	pthread_t t;
	aclError other = ACL_SUCCESS;

	(void)state;
	pthread_create(&t, NULL, fail_once, &other);
	pthread_join(t, NULL);
	assert_int_equal(other, ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
}

static void only_the_thread_level_is_known(void **state)
{
	(void)state;
	assert_int_equal(aclrtSetDevice(5), ACL_ERROR_INVALID_DEVICE);
	assert_int_equal(aclrtPeekAtLastError((aclrtLastErrLevel)1), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetLastError((aclrtLastErrLevel)1), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_INVALID_DEVICE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(no_failure_is_success, one_8mib_device),
		SIM_TEST(peek_keeps_the_last_error_and_get_clears_it, one_8mib_device),
		SIM_TEST(a_later_failure_replaces_it_and_a_success_leaves_it, one_8mib_device),
		SIM_TEST(each_thread_has_its_own, one_8mib_device),
		SIM_TEST(only_the_thread_level_is_known, one_8mib_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
