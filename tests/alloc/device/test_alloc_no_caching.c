/*
 * PYTORCH_NO_NPU_MEMORY_CACHING=1: torch_npu's NpuCachingAllocator::allocate
 * takes AclrtMallocAlign32(size + 32) itself and frees with a device
 * synchronization and aclrtFree (uncached_delete), so the caching
 * allocator never sees the memory and memory_stats() stay 0.
 */
#include "alloc_fixture.h"

static struct npa *start_uncached(void)
{
	struct npusim_config cfg;
	struct npa_options opt = { .flavor = &npa_flavor_npu, .device_count = 1,
				   .host_capacity = FX_HOST_CAPACITY, .no_caching = true };
	struct npa *a = NULL;

	if (npusim_initialized())
		npusim_shutdown();
	npusim_config_default(&cfg, 1, 8 * GiB);
	cfg.host.capacity = FX_HOST_CAPACITY;
	assert_int_equal(npusim_init(&cfg), 0);
	npa_conf_default(&opt.conf, &npa_flavor_npu);
	assert_int_equal(npa_create(&opt, &a), 0);
	return a;
}

static void assert_stats_zero(struct npa *a)
{
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.allocated_bytes[ALL].current, 0);
	assert_int_equal(st.allocated_bytes[ALL].allocated, 0);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.active_bytes[ALL].peak, 0);
	assert_int_equal(st.allocation[ALL].allocated, 0);
	assert_int_equal(st.segment[ALL].allocated, 0);
	assert_int_equal(st.num_device_alloc, 0);
	assert_int_equal(st.num_device_free, 0);
}

/* 1 MiB takes 1 MiB + 32 bytes, one 2 MiB huge page, not a 20 MiB
 * segment, and the page goes back to the device on free. */
static void uncached_1mib_returns_to_the_device_at_once_stats_stay_zero(void **state)
{
	(void)state;
	struct npa *a = start_uncached();
	struct npusim_counters before = fx_device();
	void *p = fx_malloc(a, 1 * MiB, NULL);
	struct npusim_counters held = fx_device();

	assert_int_equal(held.malloc_calls, before.malloc_calls + 1);
	assert_int_equal(held.malloc_bytes - before.malloc_bytes, 2 * MiB);
	assert_int_equal(held.live_allocations, before.live_allocations + 1);
	assert_stats_zero(a);
	fx_free(a, p);
	struct npusim_counters after = fx_device();
	assert_int_equal(after.used, before.used);
	assert_int_equal(after.live_allocations, before.live_allocations);
	assert_int_equal(after.free_calls, before.free_calls + 1);
	assert_stats_zero(a);
	fx_stop(a);
}

/* Nothing is cached, so the next allocation is a new device malloc. */
static void uncached_malloc_after_free_goes_to_the_device_again(void **state)
{
	(void)state;
	struct npa *a = start_uncached();
	struct npusim_counters before = fx_device();

	fx_free(a, fx_malloc(a, 4 * MiB, NULL));
	fx_free(a, fx_malloc(a, 4 * MiB, NULL));
	assert_int_equal(fx_device().malloc_calls, before.malloc_calls + 2);
	assert_int_equal(fx_device().free_calls, before.free_calls + 2);
	fx_stop(a);
}

/* recordStream and eraseStream skip a tensor whose deleter is uncached_delete. */
static void uncached_record_and_erase_stream_are_skipped(void **state)
{
	(void)state;
	struct npa *a = start_uncached();
	aclrtStream s;
	void *p = fx_malloc(a, 1 * MiB, NULL);

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(npa_record_stream(a, p, s), 0);
	assert_int_equal(npa_erase_stream(a, p, s), 0);
	fx_free(a, p);
	aclrtDestroyStream(s);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uncached_1mib_returns_to_the_device_at_once_stats_stay_zero),
		cmocka_unit_test(uncached_malloc_after_free_goes_to_the_device_again),
		cmocka_unit_test(uncached_record_and_erase_stream_are_skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
