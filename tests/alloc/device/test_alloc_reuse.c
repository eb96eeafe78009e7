/*
 * Reuse of cached blocks: best fit, per-stream caching, merging on free,
 * empty_cache, and upstream's worked example with its snapshot.
 */
#include <errno.h>
#include <string.h>

#include "alloc_fixture.h"

#define N8G (8 * GiB)

/* Free 12 MiB and 14 MiB blocks: an 11 MiB request takes the 12 MiB one. */
static void best_fit_takes_the_smaller_of_two_free_blocks(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char *p12 = fx_malloc(a, 11 * MiB, NULL);
	char *p14 = fx_malloc(a, 13 * MiB, NULL);

	fx_free(a, p14);
	fx_free(a, p12);
	void *q = fx_malloc(a, 11 * MiB, NULL);
	assert_ptr_equal(q, p12);
	/* Expandable blocks split to the request: 11 MiB (npu + 512), not a 12 MiB segment. */
	assert_int_equal(fx_stats(a).allocated_bytes[ALL].current,
			 !fx_expandable() ? 12582912
			 : FLAVOR(state) == &npa_flavor_npu ? 11 * MiB + 512 : 11 * MiB);
	void *r = fx_malloc(a, 12 * MiB + 512 * KiB, NULL);
	assert_ptr_equal(r, p14);
	assert_int_equal(fx_stats(a).num_device_alloc, 2);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
}

/* A block freed by the default stream is not reused on another stream. */
static void free_blocks_stay_with_their_stream(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	aclrtStream s;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	void *p = fx_malloc(a, 4096, NULL);
	fx_free(a, p);
	void *q = fx_malloc(a, 4096, s);
	struct npa_stats st = fx_stats(a);
	assert_ptr_not_equal(q, p);
	/* Expandable: one range per stream, a 2 MiB page mapped in each. */
	assert_int_equal(st.segment[SMALL].current, fx_expandable() ? 0 : 2);
	assert_int_equal(st.reserved_bytes[SMALL].current, 4 * MiB);
	assert_int_equal(st.num_device_alloc, 2);
	/* Back on the default stream, the first segment serves again. */
	void *r = fx_malloc(a, 4096, NULL);
	assert_ptr_equal(r, p);
	fx_free(a, q);
	fx_free(a, r);
	fx_stop(a);
	/* fx_stop shut the device down, which destroys its streams. */
}

/* Freeing the middle of three blocks merges it with both free neighbours. */
static void free_merges_with_prev_and_next(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char *x = fx_malloc(a, 4096, NULL);
	char *y = fx_malloc(a, 4096, NULL);
	char *z = fx_malloc(a, 4096, NULL);
	int64_t b = npa_block_size(a, x);

	assert_ptr_equal(y, x + b);
	assert_ptr_equal(z, y + b);
	fx_free(a, x);
	fx_free(a, z);
	struct npa_stats st = fx_stats(a);
	/* x alone; z merged into the free tail (expandable blocks are not counted). */
	assert_int_equal(st.inactive_split[ALL].current, fx_expandable() ? 0 : 2);
	assert_int_equal(st.inactive_split_bytes[ALL].current,
			 fx_expandable() ? 0 : 2097152 - b);
	fx_free(a, y);
	st = fx_stats(a);
	assert_int_equal(st.inactive_split[ALL].current, 0);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 0);
	assert_int_equal(st.active[ALL].current, 0);

	struct npa_snapshot snap;
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	assert_int_equal(snap.nsegments, 1);
	assert_int_equal(snap.segments[0].nblocks, 1);
	assert_int_equal(snap.segments[0].blocks[0].size, 2097152);
	assert_int_equal(snap.segments[0].blocks[0].state, NPA_BLOCK_INACTIVE);
	npa_snapshot_release(&snap);
	fx_stop(a);
}

/* A 12 MiB segment with nothing live goes; the small one holding a block stays. */
static void empty_cache_releases_only_whole_free_segments(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *small = fx_malloc(a, 4096, NULL);
	void *large = fx_malloc(a, 11 * MiB, NULL);

	fx_free(a, large);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_device_free, 1);
	/* Expandable: the 20 MiB page is unmapped; mapping never counts segments. */
	assert_int_equal(st.segment[ALL].current, fx_expandable() ? 0 : 1);
	assert_int_equal(st.segment[LARGE].current, 0);
	assert_int_equal(st.reserved_bytes[ALL].current, 2097152);
	assert_int_equal(st.num_sync_all_streams, 1);
	assert_int_equal(fx_device().used, 2097152);
	fx_free(a, small);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	st = fx_stats(a);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.num_device_free, 2);
	assert_int_equal(fx_device().used, 0);
	fx_stop(a);
}

static void expect_block(const struct npa_block_info *b, uint64_t address, uint64_t size,
			 uint64_t requested, enum npa_block_state state)
{
	assert_int_equal(b->address, address);
	assert_int_equal(b->size, size);
	assert_int_equal(b->requested_size, requested);
	assert_int_equal(b->state, state);
}

/* Reference §4.4, CUDA rules, step by step. */
static void cuda_worked_example(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_cuda, N8G, NULL);
	char *x = fx_malloc(a, 1000, NULL);                          /* step 1 */
	struct npa_stats st = fx_stats(a);
	uint64_t S = (uint64_t)(uintptr_t)x;

	assert_int_equal(st.allocation[ALL].current, 1);
	assert_int_equal(st.allocated_bytes[ALL].current, 1024);
	assert_int_equal(st.requested_bytes[ALL].current, 1000);
	assert_int_equal(st.segment[ALL].current, 1);
	assert_int_equal(st.reserved_bytes[ALL].current, 2097152);
	assert_int_equal(st.inactive_split[ALL].current, 1);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 2096128);
	assert_int_equal(st.num_device_alloc, 1);

	char *y = fx_malloc(a, 3000, NULL);                          /* step 2 */
	st = fx_stats(a);
	assert_ptr_equal(y, x + 1024);
	assert_int_equal(st.allocation[ALL].current, 2);
	assert_int_equal(st.allocated_bytes[ALL].current, 4096);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 2093056);

	fx_free(a, x);                                               /* step 3 */
	st = fx_stats(a);
	assert_int_equal(st.allocation[ALL].current, 1);
	assert_int_equal(st.allocated_bytes[ALL].current, 3072);
	assert_int_equal(st.active[ALL].current, 1);
	assert_int_equal(st.active_bytes[ALL].current, 3072);
	assert_int_equal(st.requested_bytes[ALL].current, 3000);
	assert_int_equal(st.inactive_split[ALL].current, 2);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 2094080);

	struct npa_snapshot snap;                                    /* step 4 */
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	assert_int_equal(snap.nsegments, 1);
	struct npa_segment_info *seg = &snap.segments[0];
	assert_int_equal(seg->address, S);
	assert_int_equal(seg->total_size, 2097152);
	assert_int_equal(seg->allocated_size, 3072);
	assert_int_equal(seg->active_size, 3072);
	assert_int_equal(seg->requested_size, 3000);
	assert_int_equal(seg->stream, 0);
	assert_false(seg->is_large);
	assert_int_equal(seg->nblocks, 3);
	expect_block(&seg->blocks[0], S, 1024, 1000, NPA_BLOCK_INACTIVE);
	expect_block(&seg->blocks[1], S + 1024, 3072, 3000, NPA_BLOCK_ACTIVE_ALLOCATED);
	expect_block(&seg->blocks[2], S + 4096, 2093056, 0, NPA_BLOCK_INACTIVE);
	npa_snapshot_release(&snap);

	assert_int_equal(npa_empty_cache(a, 0), 0);                  /* step 5 */
	st = fx_stats(a);
	assert_int_equal(st.num_sync_all_streams, 1);
	assert_int_equal(st.reserved_bytes[ALL].current, 2097152);

	fx_free(a, y);                                               /* step 6 */
	st = fx_stats(a);
	assert_int_equal(st.inactive_split[ALL].current, 0);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 0);
	assert_int_equal(st.active[ALL].current, 0);

	assert_int_equal(npa_empty_cache(a, 0), 0);                  /* step 7 */
	st = fx_stats(a);
	assert_int_equal(st.segment[ALL].current, 0);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.num_sync_all_streams, 2);
	fx_stop(a);
}

/* The same steps on npu: 1000 + 32 -> 1536, 3000 + 32 -> 3072. */
static void npu_worked_example(void **state)
{
	(void)state;
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N8G, NULL);
	char *x = fx_malloc(a, 1000, NULL);
	char *y = fx_malloc(a, 3000, NULL);
	struct npa_stats st = fx_stats(a);

	assert_ptr_equal(y, x + 1536);
	assert_int_equal(st.allocated_bytes[ALL].current, 4608);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 2097152 - 4608);
	fx_free(a, x);
	st = fx_stats(a);
	assert_int_equal(st.allocated_bytes[ALL].current, 3072);
	assert_int_equal(st.requested_bytes[ALL].current, 3000);
	assert_int_equal(st.inactive_split[ALL].current, 2);
	assert_int_equal(st.inactive_split_bytes[ALL].current, 2097152 - 3072);

	struct npa_snapshot snap;
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	uint64_t S = (uint64_t)(uintptr_t)x;
	assert_int_equal(snap.segments[0].nblocks, 3);
	expect_block(&snap.segments[0].blocks[0], S, 1536, 1000, NPA_BLOCK_INACTIVE);
	expect_block(&snap.segments[0].blocks[1], S + 1536, 3072, 3000,
		     NPA_BLOCK_ACTIVE_ALLOCATED);
	expect_block(&snap.segments[0].blocks[2], S + 4608, 2092544, 0, NPA_BLOCK_INACTIVE);
	npa_snapshot_release(&snap);

	assert_int_equal(npa_empty_cache(a, 0), 0);
	fx_free(a, y);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	st = fx_stats(a);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.num_sync_all_streams, 2);
	fx_stop(a);
}

/* A reused block's remainder keeps the old requested_size; the front gets the new one. */
static void split_front_is_the_new_block(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char *x = fx_malloc(a, 8000, NULL);
	fx_free(a, x);
	/* x merged back into the whole segment, which keeps requested 8000. */
	char *y = fx_malloc(a, 100, NULL);
	struct npa_snapshot snap;

	assert_ptr_equal(y, x);
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	assert_int_equal(snap.segments[0].nblocks, 2);
	assert_int_equal(snap.segments[0].blocks[0].requested_size, 100);
	assert_int_equal(snap.segments[0].blocks[1].requested_size, 8000);
	npa_snapshot_release(&snap);
	fx_free(a, y);
	fx_stop(a);
}

static void unknown_pointer_is_an_invalid_device_pointer(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	char err[NPA_ERRLEN];
	char *p = fx_malloc(a, 4096, NULL);

	assert_int_equal(npa_free(a, p + 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid device pointer: 0x"));
	fx_free(a, p);
	assert_int_equal(npa_free(a, p, err, sizeof(err)), -EINVAL);
	fx_stop(a);
}

static void size_0_gives_null_and_no_stats(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N8G);
	void *p = (void *)1;

	assert_int_equal(npa_malloc(a, 0, 0, NULL, &p, NULL, 0), 0);
	assert_null(p);
	assert_int_equal(fx_stats(a).allocation[ALL].allocated, 0);
	assert_int_equal(fx_stats(a).num_device_alloc, 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(best_fit_takes_the_smaller_of_two_free_blocks),
		BOTH_FLAVORS(free_blocks_stay_with_their_stream),
		BOTH_FLAVORS(free_merges_with_prev_and_next),
		BOTH_FLAVORS(empty_cache_releases_only_whole_free_segments),
		cmocka_unit_test(cuda_worked_example),
		cmocka_unit_test(npu_worked_example),
		BOTH_FLAVORS(split_front_is_the_new_block),
		BOTH_FLAVORS(unknown_pointer_is_an_invalid_device_pointer),
		BOTH_FLAVORS(size_0_gives_null_and_no_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
