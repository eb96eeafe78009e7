/*
 * test_op_launch.c - operator workspace through a stream's ACL allocator
 * (the runtime's side of aclrtAllocatorRegister), the torchair-style
 * adapter over the caching allocator, and torch_npu's block handles.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <npumemfs/block_handle.h>
#include <npumemfs/npusim.h>
#include "alloc/acl/acl_adapter.h"
#include "alloc/switch/allocator_switch.h"
#include "alloc/acl/block_handle.h"
#include "workload/op_launch.h"

#define MiB (1024 * 1024)
#define OP_NS 1000

static struct npa *npa;
static struct sw *sw;
static struct acl_adapters *adapters;
static struct op_launcher *ops;
static aclrtStream stream;
static char err[1024];

/* A framework's allocator as MindSpore registers one: blocks are device
 * addresses from aclrtMalloc, counted. */
static struct counting {
	int allocs, frees;
	bool crash;        /* alloc aborts */
	bool host;         /* alloc gives host memory */
	char host_block[4096];
} counting;

static void *counting_alloc(aclrtAllocator obj, size_t size)
{
	struct counting *c = obj;
	void *p = NULL;

	if (c->crash)
		abort();
	c->allocs++;
	if (c->host)
		return c->host_block;
	return aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : NULL;
}

static void counting_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	struct counting *c = obj;

	c->frees++;
	if (block != c->host_block)
		aclrtFree(block);
}

static void *identity(aclrtAllocatorBlock block)
{
	return block;
}

static void register_counting(void)
{
	aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();

	aclrtAllocatorSetObjToDesc(d, &counting);
	aclrtAllocatorSetAllocFuncToDesc(d, counting_alloc);
	aclrtAllocatorSetFreeFuncToDesc(d, counting_free);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, identity);
	assert_int_equal(aclrtAllocatorRegister(stream, d), ACL_SUCCESS);
	aclrtAllocatorDestroyDesc(d);
}

static int fb_malloc(void *ctx, int device, size_t size, aclrtStream s, void **ptr,
		     char *e, size_t elen)
{
	return sw_malloc(ctx, device, size, s, ptr, e, elen);
}

static int fb_free(void *ctx, void *ptr, char *e, size_t elen)
{
	return sw_free(ctx, ptr, e, elen);
}

static int setup(void **state)
{
	struct npusim_config cfg;
	struct npa_options opt = { .device_count = 1 };
	(void)state;

	memset(&counting, 0, sizeof(counting));
	npusim_config_default(&cfg, 1, 512ull * MiB);
	if (npusim_init(&cfg) || aclrtSetDevice(0) || aclrtCreateStream(&stream))
		return -1;
	npa_conf_default(&opt.conf, &npa_flavor_npu);
	struct sw_options so = { .caching = NULL, .device_count = 1, .plugin_dirs = "" };
	if (npa_create(&opt, &npa))
		return -1;
	so.caching = npa;
	if (sw_create(&so, &sw) || acl_adapters_create(sw, &adapters))
		return -1;
	struct op_fallback fb = { .malloc = fb_malloc, .free = fb_free, .ctx = sw };
	npa_block_handles_bind(sw);
	return op_launcher_create(&fb, &ops);
}

static int teardown(void **state)
{
	(void)state;
	op_launcher_destroy(ops);
	acl_adapters_destroy(adapters);
	npa_block_handles_bind(NULL);
	sw_destroy(sw);
	npa_destroy(npa, NULL);
	npusim_shutdown();
	return 0;
}

static struct npa_stats caching_stats(void)
{
	struct npa_stats s;

	assert_int_equal(npa_get_stats(npa, 0, &s), 0);
	return s;
}

static struct op_stream_counts counts(void)
{
	struct op_stream_counts c;

	op_counts(ops, stream, &c);
	return c;
}

static void sync_and_reap(void)
{
	assert_int_equal(aclrtSynchronizeStream(stream), ACL_SUCCESS);
	op_reap(ops);
}

static void without_a_registration_workspace_comes_from_the_caching_allocator(void **state)
{
	(void)state;
	assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), 0);
	assert_int_equal(op_fallback_allocs(ops), 1);
	/* 4096 + 32 rounded to 512: one small block, back in the pool at once. */
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].allocated, 4608);
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(caching_stats().reserved_bytes[NPA_STAT_ALL].current, 2 * MiB);
	assert_int_equal(counts().alloc_calls, 0);
}

static void workspace_is_drawn_through_the_registered_descriptor(void **state)
{
	(void)state;
	register_counting();
	for (int i = 0; i < 3; i++)
		assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), 0);
	assert_int_equal(counting.allocs, 3);
	assert_int_equal(counting.frees, 0);
	assert_int_equal(counts().alloc_calls, 3);
	assert_int_equal(counts().outstanding_blocks, 3);
	assert_int_equal(counts().outstanding_bytes, 3 * 4096);
	sync_and_reap();
	assert_int_equal(counting.frees, 3);
	assert_int_equal(counts().free_calls, 3);
	assert_int_equal(counts().outstanding_bytes, 0);
	assert_int_equal(op_fallback_allocs(ops), 0);
	assert_int_equal(caching_stats().allocation[NPA_STAT_ALL].allocated, 0);
}

static void workspace_waits_for_the_operator_to_complete(void **state)
{
	(void)state;
	register_counting();
	assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), 0);
	op_reap(ops);
	assert_int_equal(counting.frees, 0);
	npusim_advance_ns(OP_NS);
	op_reap(ops);
	assert_int_equal(counting.frees, 1);
}

static void the_caching_adapter_serves_workspace_as_block_handles(void **state)
{
	(void)state;
	assert_int_equal(acl_adapters_register(adapters, "caching", 0, stream, err,
					       sizeof(err)), 0);
	assert_int_equal(op_launch(ops, 0, stream, 3 * MiB, OP_NS, err, sizeof(err)), 0);
	/* 3 MiB + 32 rounded to 512, from a 20 MiB segment, held until completion. */
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 3 * MiB + 512);
	assert_int_equal(caching_stats().reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	assert_int_equal(op_fallback_allocs(ops), 0);
	sync_and_reap();
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(counts().free_calls, 1);
}

static void swapping_allocators_with_workspace_outstanding_loses_nothing(void **state)
{
	(void)state;
	assert_int_equal(acl_adapters_register(adapters, "caching", 0, stream, err,
					       sizeof(err)), 0);
	assert_int_equal(op_launch(ops, 0, stream, 3 * MiB, OP_NS, err, sizeof(err)), 0);
	register_counting(); /* the last registration wins */
	assert_int_equal(op_launch(ops, 0, stream, 3 * MiB, OP_NS, err, sizeof(err)), 0);
	assert_int_equal(counting.allocs, 1);
	assert_int_equal(aclrtAllocatorUnregister(stream), ACL_SUCCESS);
	assert_int_equal(counts().outstanding_blocks, 2);
	sync_and_reap();
	assert_int_equal(counting.frees, 1);
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(caching_stats().allocation[NPA_STAT_ALL].freed, 1);
	assert_int_equal(counts().alloc_calls, 2);
	assert_int_equal(counts().free_calls, 2);
	assert_int_equal(counts().outstanding_bytes, 0);
}

/* An operator may be calling an adapter read from the registration just
 * as ctl/acl_allocator unregisters it: a pin keeps it until let go. */
static void an_adapter_unregistered_while_pinned_lives_until_the_last_unpin(void **state)
{
	aclrtAllocatorDesc d;
	aclrtAllocator obj;
	aclrtAllocatorAllocFunc alloc;
	aclrtAllocatorFreeFunc free_fn;
	char name[32];
	(void)state;

	assert_int_equal(acl_adapters_register(adapters, "caching", 0, stream, err,
					       sizeof(err)), 0);
	assert_int_equal(aclrtAllocatorGetByStream(stream, &d, &obj, &alloc, &free_fn, NULL,
						   NULL), ACL_SUCCESS);
	assert_true(acl_adapters_pin(adapters, obj));
	assert_int_equal(acl_adapters_unregister(adapters, stream, err, sizeof(err)), 0);
	assert_string_equal(acl_adapters_owner(adapters, obj, name, sizeof(name)), "caching");
	aclrtAllocatorBlock b = alloc(obj, MiB);
	assert_non_null(b);
	/* 1 MiB + 32 rounded to 512 */
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, MiB + 512);
	free_fn(obj, b);
	assert_true(acl_adapters_unpin(adapters, obj));
	assert_null(acl_adapters_owner(adapters, obj, name, sizeof(name)));
	assert_false(acl_adapters_unpin(adapters, obj));
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 0);
}

static void a_descriptor_that_crashes_is_unregistered_and_never_called_again(void **state)
{
	aclrtAllocatorDesc d;
	(void)state;
	register_counting();
	counting.crash = true;
	assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "faulted in its alloc function: signal 6"));
	assert_int_equal(aclrtAllocatorGetByStream(stream, &d, NULL, NULL, NULL, NULL, NULL),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), 0);
	assert_int_equal(op_fallback_allocs(ops), 1);
}

static void an_address_outside_device_memory_is_given_back_and_refused(void **state)
{
	(void)state;
	register_counting();
	counting.host = true;
	assert_int_equal(op_launch(ops, 0, stream, 4096, OP_NS, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "not memory of device 0: block given back"));
	assert_int_equal(counting.frees, 1);
	assert_int_equal(counts().outstanding_blocks, 0);
}

static void malloc_block_is_torch_npu_block_handle_over_the_caching_allocator(void **state)
{
	(void)state;
	void *h = MallocBlock(1000, stream, -1);
	assert_non_null(h);
	assert_int_equal(GetBlockSize(h), 1536); /* 1000 + 32, rounded to 512 */
	assert_int_equal(npusim_device_of(GetBlockPtr(h)), 0);
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 1536);
	FreeBlock(h);
	assert_int_equal(caching_stats().allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_null(MallocBlock(1000, NULL, 0));
	assert_null(MallocBlock(1000, stream, 1));
}

static void registering_on_the_default_stream_names_cann_error(void **state)
{
	(void)state;
	assert_int_equal(acl_adapters_register(adapters, "caching", 0, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "aclrtAllocatorRegister: ACL_ERROR_INVALID_PARAM (100000): "
				 "the stream must not be NULL (the default stream)");
	assert_int_equal(acl_adapters_register(adapters, "plugin1", 0, stream, err, sizeof(err)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(without_a_registration_workspace_comes_from_the_caching_allocator),
		T(workspace_is_drawn_through_the_registered_descriptor),
		T(workspace_waits_for_the_operator_to_complete),
		T(the_caching_adapter_serves_workspace_as_block_handles),
		T(swapping_allocators_with_workspace_outstanding_loses_nothing),
		T(an_adapter_unregistered_while_pinned_lives_until_the_last_unpin),
		T(a_descriptor_that_crashes_is_unregistered_and_never_called_again),
		T(an_address_outside_device_memory_is_given_back_and_refused),
		T(malloc_block_is_torch_npu_block_handle_over_the_caching_allocator),
		T(registering_on_the_default_stream_names_cann_error),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
