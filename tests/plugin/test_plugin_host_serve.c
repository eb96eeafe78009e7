/*
 * test_plugin_host_serve.c - the daemon's side of a plug-in host's ACL
 * calls, given messages as a host would send them: what one host shares
 * stays out of another's reach, and a message that does not hold what
 * its op says is refused with nothing done.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <acl/acl_rt.h>
#include <npumemfs/npusim.h>

#include "alloc/plugin/plugin_host_impl.h"

#define MiB (1024ull * 1024)

struct fixture {
	struct plugin_host a, b; /* two hosts of the daemon */
	struct pw_msg *m;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct npusim_config cfg;

	npusim_config_default(&cfg, 2, 64 * MiB);
	if (!f || npusim_init(&cfg) != 0 || !(f->m = calloc(1, PW_MSG_MAX)))
		return -1;
	pthread_mutex_init(&f->a.lock, NULL);
	pthread_mutex_init(&f->b.lock, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ph_release_all(&f->a);
	ph_release_all(&f->b);
	pthread_mutex_destroy(&f->a.lock);
	pthread_mutex_destroy(&f->b.lock);
	npusim_shutdown();
	free(f->m);
	free(f);
	return 0;
}

/* op from host h with v[0..3] and `len` bytes of data, answered. */
static aclError serve(struct plugin_host *h, struct pw_msg *m, enum pw_acl_op op,
		      const void *data, uint32_t len, uint64_t v0, uint64_t v1, uint64_t v2,
		      uint64_t v3)
{
	memset(m, 0, PW_MSG_MAX);
	m->kind = PW_ACL;
	m->op = op;
	m->v[0] = v0, m->v[1] = v1, m->v[2] = v2, m->v[3] = v3;
	if (len)
		memcpy(m->data, data, len);
	m->len = len;
	ph_serve(h, m);
	return m->rc;
}

static uint64_t device_used(void)
{
	struct npusim_counters c;

	return npusim_device_counters(0, &c) == 0 ? c.used : UINT64_MAX;
}

/* Host a's 2 MiB block, exported; its key in `key`. */
static uint64_t exported_block(struct fixture *f, char key[ACL_IPC_HANDLE_SIZE])
{
	uint64_t p;

	assert_int_equal(serve(&f->a, f->m, PW_ACL_Malloc, NULL, 0, 2 * MiB, 0, 0, 0), ACL_SUCCESS);
	p = f->m->v[0];
	assert_int_equal(serve(&f->a, f->m, PW_ACL_IpcMemGetExportKey, NULL, 0, p, 2 * MiB,
			       ACL_IPC_HANDLE_SIZE, 0),
			 ACL_SUCCESS);
	assert_int_equal(f->m->len, ACL_IPC_HANDLE_SIZE);
	memcpy(key, f->m->data, ACL_IPC_HANDLE_SIZE);
	return p;
}

static aclError by_key(struct plugin_host *h, struct pw_msg *m, enum pw_acl_op op,
		       const char *key)
{
	return serve(h, m, op, key, (uint32_t)strlen(key) + 1, 0, 0, 0, 0);
}

/* Host b can neither import host a's key nor close it: afterwards a's one
 * import is undone by one close and the next withdraws the key, as if b
 * had never tried. */
static void another_hosts_key_is_neither_imported_nor_closed(void **state)
{
	struct fixture *f = *state;
	char key[ACL_IPC_HANDLE_SIZE];
	uint64_t p = exported_block(f, key);

	assert_int_equal(by_key(&f->b, f->m, PW_ACL_IpcMemImportByKey, key),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(f->m->v[0], 0);
	assert_int_equal(by_key(&f->b, f->m, PW_ACL_IpcMemClose, key), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(by_key(&f->a, f->m, PW_ACL_IpcMemImportByKey, key), ACL_SUCCESS);
	assert_int_equal(f->m->v[0], p);
	assert_int_equal(by_key(&f->a, f->m, PW_ACL_IpcMemClose, key), ACL_SUCCESS);
	assert_int_equal(by_key(&f->a, f->m, PW_ACL_IpcMemClose, key), ACL_SUCCESS);
	assert_int_equal(by_key(&f->a, f->m, PW_ACL_IpcMemClose, key), ACL_ERROR_INVALID_PARAM);
}

static void a_block_not_its_own_is_not_exported(void **state)
{
	struct fixture *f = *state;
	char key[ACL_IPC_HANDLE_SIZE];
	uint64_t p = exported_block(f, key);

	assert_int_equal(serve(&f->b, f->m, PW_ACL_IpcMemGetExportKey, NULL, 0, p, 2 * MiB,
			       ACL_IPC_HANDLE_SIZE, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(f->m->len, 0);
}

/* Host b's import of a's number is refused and leaves no reference: a's
 * one free gives the pages back. */
static void another_hosts_number_is_not_imported(void **state)
{
	struct fixture *f = *state;
	aclrtPhysicalMemProp prop = { .location = { 0, ACL_MEM_LOCATION_TYPE_DEVICE } };
	uint64_t h, number;

	assert_int_equal(serve(&f->a, f->m, PW_ACL_MallocPhysical, &prop, sizeof(prop), 2 * MiB,
			       0, 0, 0),
			 ACL_SUCCESS);
	h = f->m->v[0];
	assert_int_equal(serve(&f->b, f->m, PW_ACL_MemExportToShareableHandle, NULL, 0, h, 0, 0,
			       0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_MemExportToShareableHandle, NULL, 0, h, 0, 0,
			       0),
			 ACL_SUCCESS);
	number = f->m->v[0];
	assert_int_equal(serve(&f->b, f->m, PW_ACL_MemImportFromShareableHandle, NULL, 0, number,
			       0, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_FreePhysical, NULL, 0, h, 0, 0, 0), ACL_SUCCESS);
	assert_int_equal(device_used(), 0);
}

/* A key sent without its NUL is refused even when the byte after it
 * happens to be one. */
static void a_key_without_its_nul_is_refused(void **state)
{
	struct fixture *f = *state;
	char key[ACL_IPC_HANDLE_SIZE];

	exported_block(f, key);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_IpcMemImportByKey, key, (uint32_t)strlen(key),
			       0, 0, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_IpcMemClose, key, 0, 0, 0, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
}

/* A log line is three strings, each with its NUL, and nothing after. */
static void a_log_line_that_is_not_three_strings_is_refused(void **state)
{
	struct fixture *f = *state;
	static const char whole[] = "func\0file.c\0text";

	assert_int_equal(serve(&f->a, f->m, PW_ACL_AppLog, whole, sizeof(whole) - 1, 0, 1, 0, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_AppLog, "func\0file.c\0text\0x", 19, 0, 1, 0,
			       0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_AppLog, whole, sizeof(whole), 0, 1, 0, 0),
			 ACL_SUCCESS);
}

/* More entries than a message holds, or a device number past 32 bits
 * (which would name device 0 once cut), are refused. */
static void a_usage_query_past_the_message_is_refused(void **state)
{
	struct fixture *f = *state;
	uint64_t fits = PW_MAX_DATA / sizeof(aclrtMemUsageInfo);

	assert_int_equal(serve(&f->a, f->m, PW_ACL_GetMemUsageInfo, NULL, 0, 0, fits, 1, 0),
			 ACL_SUCCESS);
	assert_int_equal(f->m->v[0], 1);
	assert_int_equal(f->m->len, sizeof(aclrtMemUsageInfo));
	assert_int_equal(serve(&f->a, f->m, PW_ACL_GetMemUsageInfo, NULL, 0, 0, fits + 1, 1, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(serve(&f->a, f->m, PW_ACL_GetMemUsageInfo, NULL, 0, 1ull << 32, 1, 1, 0),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(f->m->len, 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(another_hosts_key_is_neither_imported_nor_closed),
		T(a_block_not_its_own_is_not_exported),
		T(another_hosts_number_is_not_imported),
		T(a_key_without_its_nul_is_refused),
		T(a_log_line_that_is_not_three_strings_is_refused),
		T(a_usage_query_past_the_message_is_refused),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
