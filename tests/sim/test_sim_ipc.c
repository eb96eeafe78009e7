/*
 * test_sim_ipc.c - device memory shared by key (aclrtIpcMem*) and physical
 * handles shared by number (aclrtMem*ShareableHandle); in one process an
 * import is the memory exported.
 */
#include <string.h>

#include "sim_fixture.h"

static aclrtDrvMemHandle physical(size_t size)
{
	aclrtPhysicalMemProp prop = {
		.handleType = ACL_MEM_HANDLE_TYPE_NONE,
		.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
		.memAttr = ACL_HBM_MEM_HUGE,
		.location = { .id = 0, .type = ACL_MEM_LOCATION_TYPE_DEVICE },
	};
	aclrtDrvMemHandle h = NULL;

	assert_int_equal(aclrtMallocPhysical(&h, size, &prop, 0), ACL_SUCCESS);
	return h;
}

/* The number h is shared by. */
static uint64_t exported(aclrtDrvMemHandle h)
{
	uint64_t n = 0;

	assert_int_equal(aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &n),
			 ACL_SUCCESS);
	return n;
}

static uint64_t physical_used(void)
{
	struct npusim_counters c;

	assert_int_equal(npusim_device_counters(0, &c), 0);
	return c.physical_used;
}

static void a_blocks_key_is_the_same_each_time_and_imports_the_block(void **state)
{
	char k1[ACL_IPC_HANDLE_SIZE], k2[ACL_IPC_HANDLE_SIZE];
	void *p, *q = NULL;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 3 * MiB, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 3 * MiB, k1, sizeof(k1), 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 1, k2, sizeof(k2),
						 ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
			 ACL_SUCCESS);
	assert_string_equal(k1, k2);
	assert_int_equal(aclrtIpcMemImportByKey(&q, k1, 0), ACL_SUCCESS);
	assert_ptr_equal(q, p);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void close_undoes_an_import_then_withdraws_the_key(void **state)
{
	char key[ACL_IPC_HANDLE_SIZE];
	void *p, *q;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 1, key, sizeof(key), 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemImportByKey(&q, key, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemClose(key), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemImportByKey(&q, key, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemClose(key), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemClose(key), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemImportByKey(&q, key, 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemClose(key), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void freeing_the_block_withdraws_its_key(void **state)
{
	char key[ACL_IPC_HANDLE_SIZE];
	void *p, *q = NULL;

	(void)state;
	assert_int_equal(aclrtMalloc(&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 1, key, sizeof(key), 0), ACL_SUCCESS);
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemImportByKey(&q, key, 0), ACL_ERROR_INVALID_PARAM);
	assert_null(q);
}

static void export_refuses_what_is_no_blocks_start_or_too_much(void **state)
{
	char key[ACL_IPC_HANDLE_SIZE] = "";
	char *p;

	(void)state;
	assert_int_equal(aclrtMalloc((void **)&p, 1, 0), ACL_SUCCESS);
	assert_int_equal(aclrtIpcMemGetExportKey(p + 4096, 1, key, sizeof(key), 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 2 * MiB + 1, key, sizeof(key), 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 0, key, sizeof(key), 0), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 1, key, ACL_IPC_HANDLE_SIZE - 1, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemGetExportKey(p, 1, key, sizeof(key), 2), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtIpcMemGetExportKey(NULL, 1, key, sizeof(key), 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_string_equal(key, "");
	assert_int_equal(aclrtFree(p), ACL_SUCCESS);
}

static void a_handles_number_is_the_same_each_time_and_never_0(void **state)
{
	aclrtDrvMemHandle a = physical(2 * MiB), b = physical(2 * MiB);
	uint64_t na = 0, again = 0, nb = 0;

	(void)state;
	assert_int_equal(aclrtMemExportToShareableHandle(a, ACL_MEM_HANDLE_TYPE_NONE, 0, &na),
			 ACL_SUCCESS);
	assert_int_equal(aclrtMemExportToShareableHandle(a, ACL_MEM_HANDLE_TYPE_NONE,
							 ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
							 &again),
			 ACL_SUCCESS);
	assert_int_equal(aclrtMemExportToShareableHandle(b, ACL_MEM_HANDLE_TYPE_NONE, 0, &nb),
			 ACL_SUCCESS);
	assert_int_not_equal(na, 0);
	assert_int_equal(again, na);
	assert_int_not_equal(nb, na);
	assert_int_equal(aclrtMemExportToShareableHandle(a, ACL_MEM_HANDLE_TYPE_NONE, 2, &na),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemExportToShareableHandle(&na, ACL_MEM_HANDLE_TYPE_NONE, 0, &na),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtFreePhysical(a), ACL_SUCCESS);
	assert_int_equal(aclrtFreePhysical(b), ACL_SUCCESS);
}

static void each_import_holds_the_pages_until_its_free(void **state)
{
	aclrtDrvMemHandle h = physical(2 * MiB), imported = NULL;
	uint64_t n = exported(h);

	(void)state;
	assert_int_equal(aclrtMemImportFromShareableHandle(n, 0, &imported), ACL_SUCCESS);
	assert_ptr_equal(imported, h);
	assert_int_equal(aclrtFreePhysical(h), ACL_SUCCESS);
	assert_int_equal(physical_used(), 2 * MiB);
	assert_int_equal(aclrtFreePhysical(imported), ACL_SUCCESS);
	assert_int_equal(physical_used(), 0);
	assert_int_equal(aclrtMemImportFromShareableHandle(n, 0, &imported), ACL_ERROR_INVALID_PARAM);
}

static void import_refuses_an_unknown_number_or_another_device(void **state)
{
	aclrtDrvMemHandle h = physical(2 * MiB), imported = NULL;
	uint64_t n = exported(h);

	(void)state;
	assert_int_equal(aclrtMemImportFromShareableHandle(n, 1, &imported), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemImportFromShareableHandle(n + 1, 0, &imported),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemImportFromShareableHandle(0, 0, &imported), ACL_ERROR_INVALID_PARAM);
	assert_null(imported);
	assert_int_equal(aclrtFreePhysical(h), ACL_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(a_blocks_key_is_the_same_each_time_and_imports_the_block, one_8mib_device),
		SIM_TEST(close_undoes_an_import_then_withdraws_the_key, one_8mib_device),
		SIM_TEST(freeing_the_block_withdraws_its_key, one_8mib_device),
		SIM_TEST(export_refuses_what_is_no_blocks_start_or_too_much, one_8mib_device),
		SIM_TEST(a_handles_number_is_the_same_each_time_and_never_0, two_8mib_devices),
		SIM_TEST(each_import_holds_the_pages_until_its_free, one_8mib_device),
		SIM_TEST(import_refuses_an_unknown_number_or_another_device, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
