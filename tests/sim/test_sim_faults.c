/*
 * test_sim_faults.c - injected device malloc failures.
 */
#include <errno.h>
#include <string.h>

#include "sim_fixture.h"

/* One malloc+free attempt: 'x' for a refused malloc, '.' for a good one. */
static char attempt(void)
{
	void *p;
	aclError rc = aclrtMallocAlign32(&p, 1, 0);

	if (rc == ACL_ERROR_RT_MEMORY_ALLOCATION)
		return 'x';
	assert_int_equal(rc, ACL_SUCCESS);
	aclrtFree(p);
	return '.';
}

static void pattern(char *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = attempt();
	out[n] = '\0';
}

static void the_3rd_malloc_from_now_fails_and_only_that_one(void **state)
{
	char got[6];
	struct npusim_counters c;

	(void)state;
	assert_int_equal(npusim_fail_nth_malloc(0, 3), 0);
	pattern(got, 5);
	assert_string_equal(got, "..x..");
	assert_int_equal(npusim_device_counters(0, &c), 0);
	assert_int_equal(c.malloc_failures, 1);
	assert_int_equal(c.malloc_calls, 4);
	assert_int_equal(c.used, 0);
}

static void nth_1_fails_the_next_malloc_and_0_disarms(void **state)
{
	char got[3];

	(void)state;
	npusim_fail_nth_malloc(0, 1);
	pattern(got, 2);
	assert_string_equal(got, "x.");
	npusim_fail_nth_malloc(0, 2);
	npusim_fail_nth_malloc(0, 0);
	pattern(got, 2);
	assert_string_equal(got, "..");
}

static void nth_counts_per_device(void **state)
{
	char got[3];

	(void)state;
	npusim_fail_nth_malloc(1, 1);
	pattern(got, 2);                  /* device 0: untouched */
	assert_string_equal(got, "..");
	aclrtSetDevice(1);
	pattern(got, 2);
	assert_string_equal(got, "x.");
}

static void the_same_seed_gives_the_same_failure_pattern(void **state)
{
	char first[65], second[65], other[65];
	int fails = 0;

	(void)state;
	assert_int_equal(npusim_fail_malloc_rate(0, 0.5, 42), 0);
	pattern(first, 64);
	assert_int_equal(npusim_fail_malloc_rate(0, 0.5, 42), 0);
	pattern(second, 64);
	assert_int_equal(npusim_fail_malloc_rate(0, 0.5, 43), 0);
	pattern(other, 64);
	assert_string_equal(first, second);
	assert_string_not_equal(first, other);
	for (int i = 0; i < 64; i++)
		fails += first[i] == 'x';
	/* 64 fair coin flips: fixed by the seed, and near half. */
	assert_in_range(fails, 20, 44);
}

static void rate_1_fails_everything_and_rate_0_nothing(void **state)
{
	char got[9];
	struct npusim_counters c;

	(void)state;
	npusim_fail_malloc_rate(0, 1.0, 7);
	pattern(got, 8);
	assert_string_equal(got, "xxxxxxxx");
	npusim_fail_malloc_rate(0, 0.0, 7);
	pattern(got, 8);
	assert_string_equal(got, "........");
	npusim_device_counters(0, &c);
	assert_int_equal(c.malloc_failures, 8);
}

static void bad_fault_arguments_are_refused(void **state)
{
	(void)state;
	assert_int_equal(npusim_fail_malloc_rate(0, 1.5, 1), -EINVAL);
	assert_int_equal(npusim_fail_malloc_rate(0, -0.1, 1), -EINVAL);
	assert_int_equal(npusim_fail_nth_malloc(2, 1), -EINVAL);
	assert_int_equal(npusim_fail_nth_malloc(-1, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(the_3rd_malloc_from_now_fails_and_only_that_one, two_8mib_devices),
		SIM_TEST(nth_1_fails_the_next_malloc_and_0_disarms, two_8mib_devices),
		SIM_TEST(nth_counts_per_device, two_8mib_devices),
		SIM_TEST(the_same_seed_gives_the_same_failure_pattern, two_8mib_devices),
		SIM_TEST(rate_1_fails_everything_and_rate_0_nothing, two_8mib_devices),
		SIM_TEST(bad_fault_arguments_are_refused, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
