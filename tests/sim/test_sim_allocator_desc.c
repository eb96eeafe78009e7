/*
 * test_sim_allocator_desc.c - aclrtAllocator* as CANN's runtime unit tests
 * run them (aclrtAllocatorCreateDescTest,
 * aclrtAllocatorGetByStream_Fail_StreamNotRegistered) and as its
 * documentation states them.
 */
#include "sim_fixture.h"

static int obj_storage;
static aclrtAllocator obj = &obj_storage;

static void *alloc_fn(aclrtAllocator a, size_t size) { (void)a; return (void *)size; }
static void free_fn(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a, (void)b; }
static void *advise_fn(aclrtAllocator a, size_t size, aclrtAllocatorAddr addr)
{
	(void)a, (void)size;
	return addr;
}
static void *addr_fn(aclrtAllocatorBlock b) { return b; }

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

static aclrtAllocatorDesc full_desc(void)
{
	aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();

	assert_non_null(d);
	assert_int_equal(aclrtAllocatorSetObjToDesc(d, obj), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorSetAllocFuncToDesc(d, alloc_fn), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorSetFreeFuncToDesc(d, free_fn), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorSetAllocAdviseFuncToDesc(d, advise_fn), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, addr_fn), ACL_SUCCESS);
	return d;
}

static int setup(void **state)
{
	(void)state;
	start_sim(1, 64 * MiB);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	npusim_shutdown();
	return 0;
}

static void register_fails_until_get_addr_from_block_is_set(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
	(void)state;

	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorSetObjToDesc(d, obj);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorSetAllocFuncToDesc(d, alloc_fn);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorSetFreeFuncToDesc(d, free_fn);
	aclrtAllocatorSetAllocAdviseFuncToDesc(d, advise_fn);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, addr_fn);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorUnregister(s), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
}

static void alloc_advise_is_optional(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
	aclrtAllocatorAllocAdviseFunc advise = advise_fn;
	aclrtAllocatorDesc got;
	(void)state;

	aclrtAllocatorSetObjToDesc(d, obj);
	aclrtAllocatorSetAllocFuncToDesc(d, alloc_fn);
	aclrtAllocatorSetFreeFuncToDesc(d, free_fn);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, addr_fn);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, &got, NULL, NULL, NULL, &advise, NULL),
			 ACL_SUCCESS);
	assert_null(advise);
	aclrtAllocatorDestroyDesc(d);
}

static void null_stream_and_null_arguments_are_invalid_params(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = full_desc();
	aclrtAllocatorDesc got;
	(void)state;

	assert_int_equal(aclrtAllocatorRegister(NULL, d), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorRegister(s, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorUnregister(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorDestroyDesc(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorSetObjToDesc(NULL, obj), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorSetObjToDesc(d, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorSetFreeFuncToDesc(d, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorGetByStream(NULL, &got, NULL, NULL, NULL, NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, NULL, NULL, NULL, NULL, NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorDestroyDesc(d);
}

static void the_copy_kept_at_registration_survives_destroy_desc(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = full_desc(), got = NULL;
	aclrtAllocator got_obj = NULL;
	aclrtAllocatorAllocFunc a = NULL;
	aclrtAllocatorFreeFunc f = NULL;
	aclrtAllocatorAllocAdviseFunc adv = NULL;
	aclrtAllocatorGetAddrFromBlockFunc ga = NULL;
	(void)state;

	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorDestroyDesc(d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, &got, &got_obj, &a, &f, &adv, &ga),
			 ACL_SUCCESS);
	assert_ptr_equal(got, d);
	assert_ptr_equal(got_obj, obj);
	assert_true(a == alloc_fn && f == free_fn && adv == advise_fn && ga == addr_fn);
}

static void get_by_stream_fails_once_the_stream_is_unregistered(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = full_desc(), got;
	(void)state;

	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, &got, NULL, NULL, NULL, NULL, NULL),
			 ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorUnregister(s), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, &got, NULL, NULL, NULL, NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	aclrtAllocatorDestroyDesc(d);
}

static void unregister_of_an_unknown_stream_or_twice_succeeds(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc d = full_desc();
	(void)state;

	assert_int_equal(aclrtAllocatorUnregister(s), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorRegister(s, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorUnregister(s), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorUnregister(s), ACL_SUCCESS);
	aclrtAllocatorDestroyDesc(d);
}

static void the_last_registration_of_a_stream_wins(void **state)
{
	aclrtStream s = new_stream();
	aclrtAllocatorDesc first = full_desc(), second = full_desc(), got;
	aclrtAllocatorFreeFunc f = NULL;
	struct npusim_allocator_reg regs[4];
	(void)state;

	aclrtAllocatorSetAllocAdviseFuncToDesc(second, advise_fn);
	assert_int_equal(aclrtAllocatorRegister(s, first), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorRegister(s, second), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorGetByStream(s, &got, NULL, NULL, &f, NULL, NULL),
			 ACL_SUCCESS);
	assert_ptr_equal(got, second);
	assert_int_equal(npusim_allocator_registrations(regs, 4), 1);
	assert_ptr_equal(regs[0].desc, second);
	assert_ptr_equal(regs[0].stream, s);
	assert_int_equal(regs[0].stream_id, 1);
	assert_int_equal(regs[0].device, 0);
	aclrtAllocatorDestroyDesc(first);
	aclrtAllocatorDestroyDesc(second);
}

static void registrations_are_listed_in_stream_order_and_end_with_the_runtime(void **state)
{
	aclrtStream a = new_stream(), b = new_stream();
	aclrtAllocatorDesc d = full_desc();
	struct npusim_allocator_reg regs[4];
	(void)state;

	assert_int_equal(aclrtAllocatorRegister(b, d), ACL_SUCCESS);
	assert_int_equal(aclrtAllocatorRegister(a, d), ACL_SUCCESS);
	assert_int_equal(npusim_allocator_registrations(regs, 1), 2);
	assert_int_equal(npusim_allocator_registrations(regs, 4), 2);
	assert_int_equal(regs[0].stream_id, 1);
	assert_int_equal(regs[1].stream_id, 2);
	npusim_shutdown();
	start_sim(1, 64 * MiB);
	assert_int_equal(npusim_allocator_registrations(regs, 4), 0);
	aclrtAllocatorDestroyDesc(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(register_fails_until_get_addr_from_block_is_set),
		T(alloc_advise_is_optional),
		T(null_stream_and_null_arguments_are_invalid_params),
		T(the_copy_kept_at_registration_survives_destroy_desc),
		T(get_by_stream_fails_once_the_stream_is_unregistered),
		T(unregister_of_an_unknown_stream_or_twice_succeeds),
		T(the_last_registration_of_a_stream_wins),
		T(registrations_are_listed_in_stream_order_and_end_with_the_runtime),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
