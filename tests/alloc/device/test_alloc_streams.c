/*
 * record_stream: a freed block used on other streams stays active
 * (active_pending_free) until events on those streams complete, and the
 * allocator notices at its next malloc, empty_cache or OOM retry.
 */
#include "alloc_fixture.h"

#define N8G (8 * GiB)

static enum npa_block_state state_of(struct npa *a, const void *ptr)
{
	struct npa_snapshot snap;
	enum npa_block_state st = NPA_BLOCK_INACTIVE;
	bool found = false;

	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	for (size_t i = 0; i < snap.nsegments; i++)
		for (size_t j = 0; j < snap.segments[i].nblocks; j++)
			if (snap.segments[i].blocks[j].address == (uint64_t)(uintptr_t)ptr) {
				st = snap.segments[i].blocks[j].state;
				found = true;
			}
	npa_snapshot_release(&snap);
	assert_true(found);
	return st;
}

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

static void block_waits_for_the_recorded_stream_then_returns_at_next_malloc(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	char *p = fx_malloc(a, 4096, NULL);
	int64_t b = npa_block_size(a, p);

	assert_int_equal(npa_record_stream(a, p, s), 0);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	fx_free(a, p);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.allocation[ALL].current, 0);
	assert_int_equal(st.active[ALL].current, 1);
	assert_int_equal(st.active_bytes[ALL].current, b);
	assert_int_equal(st.requested_bytes[ALL].current, 4096);
	assert_int_equal(state_of(a, p), NPA_BLOCK_ACTIVE_PENDING_FREE);

	/* The stream's work is still running: the next malloc cannot have it. */
	char *q = fx_malloc(a, 4096, NULL);
	assert_ptr_equal(q, p + b);
	assert_int_equal(state_of(a, p), NPA_BLOCK_ACTIVE_PENDING_FREE);

	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	st = fx_stats(a);
	assert_int_equal(st.active[ALL].current, 2);
	assert_int_equal(state_of(a, p), NPA_BLOCK_ACTIVE_PENDING_FREE);

	/* The next malloc processes the completed event first and reuses p. */
	char *r = fx_malloc(a, 4096, NULL);
	assert_ptr_equal(r, p);
	st = fx_stats(a);
	assert_int_equal(st.active[ALL].current, 2);
	assert_int_equal(st.active_bytes[ALL].current, 2 * b);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
}

static void every_recorded_stream_must_finish(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s1 = new_stream(), s2 = new_stream();
	char *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_record_stream(a, p, s1), 0);
	assert_int_equal(npa_record_stream(a, p, s2), 0);
	assert_int_equal(npusim_launch_open(s1), ACL_SUCCESS);
	assert_int_equal(npusim_launch_open(s2), ACL_SUCCESS);
	fx_free(a, p);
	assert_int_equal(aclrtSynchronizeStream(s1), ACL_SUCCESS);
	void *q = fx_malloc(a, 4096, NULL);
	assert_int_equal(state_of(a, p), NPA_BLOCK_ACTIVE_PENDING_FREE);
	assert_int_equal(aclrtSynchronizeStream(s2), ACL_SUCCESS);
	void *r = fx_malloc(a, 4096, NULL);
	assert_ptr_equal(r, p);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
}

/* CUDA's recordStream ignores the allocation stream: the free is immediate. */
static void cuda_record_on_allocation_stream_is_ignored(void **state)
{
	(void)state;
	struct npa *a = fx_start(&npa_flavor_cuda, N8G);
	void *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_record_stream(a, p, NULL), 0);
	fx_free(a, p);
	assert_int_equal(fx_stats(a).active[ALL].current, 0);
	assert_int_equal(state_of(a, p), NPA_BLOCK_INACTIVE);
	fx_stop(a);
}

/* torch_npu records it anyway: pending until the next malloc polls the event. */
static void npu_record_on_allocation_stream_defers_the_free(void **state)
{
	(void)state;
	struct npa *a = fx_start(&npa_flavor_npu, N8G);
	void *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_record_stream(a, p, NULL), 0);
	fx_free(a, p);
	assert_int_equal(fx_stats(a).active[ALL].current, 1);
	assert_int_equal(state_of(a, p), NPA_BLOCK_ACTIVE_PENDING_FREE);
	void *q = fx_malloc(a, 4096, NULL);
	assert_ptr_equal(q, p);
	assert_int_equal(fx_stats(a).active[ALL].current, 1);
	fx_free(a, q);
	fx_stop(a);
}

/* empty_cache waits for the events, frees the block and then its segment. */
static void empty_cache_waits_for_pending_frees(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_record_stream(a, p, s), 0);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	fx_free(a, p);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.active[ALL].current, 0);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.num_sync_all_streams, 1);
	assert_int_equal(st.num_device_free, 1);
	fx_stop(a);
}

/*
 * torch_npu's emptyCache synchronizes the whole device before releasing
 * (npuSynchronizeDevice); PyTorch waits only for the pending events. So
 * work launched on stream s before empty_cache has ended for npu and not
 * for cuda: a block freed afterwards with its use on s comes back at the
 * next malloc in npu only (4096 B: npu pads to 4608, cuda keeps 4096).
 */
static void npu_empty_cache_synchronizes_the_device_first(void **state)
{
	bool npu = FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU;
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	void *q = fx_malloc(a, 4096, NULL);

	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(npa_record_stream(a, q, s), 0);
	fx_free(a, q);
	void *r = fx_malloc(a, 4096, NULL);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.active[ALL].current, npu ? 1 : 2);
	assert_int_equal(st.active_bytes[ALL].current, npu ? 4608 : 2 * 4096);
	assert_true(npu ? r == q : r != q);
	fx_free(a, r);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	fx_stop(a);
}

/* A pending block does not merge; its free neighbours wait for it. */
static void pending_block_does_not_merge(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s = new_stream();
	char *x = fx_malloc(a, 4096, NULL);
	char *y = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_record_stream(a, y, s), 0);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	fx_free(a, y);
	fx_free(a, x);
	struct npa_stats st = fx_stats(a);
	/* x and the tail are free and split; y between them is pending
	 * (expandable blocks are never counted as inactive_split). */
	assert_int_equal(st.inactive_split[ALL].current, fx_expandable() ? 0 : 2);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	void *z = fx_malloc(a, 4096, NULL);
	st = fx_stats(a);
	assert_ptr_equal(z, x);
	assert_int_equal(st.inactive_split[ALL].current, fx_expandable() ? 0 : 1);
	fx_free(a, z);
	assert_int_equal(fx_stats(a).inactive_split[ALL].current, 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(block_waits_for_the_recorded_stream_then_returns_at_next_malloc),
		BOTH_FLAVORS(every_recorded_stream_must_finish),
		cmocka_unit_test(cuda_record_on_allocation_stream_is_ignored),
		cmocka_unit_test(npu_record_on_allocation_stream_defers_the_free),
		BOTH_FLAVORS(empty_cache_waits_for_pending_frees),
		BOTH_FLAVORS(pending_block_does_not_merge),
		BOTH_FLAVORS(npu_empty_cache_synchronizes_the_device_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
