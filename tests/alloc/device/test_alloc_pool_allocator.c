/*
 * MemPool(allocator=...): a private pool whose segments come from its own
 * allocator (upstream PrivatePool::allocator(): raw_alloc for each device
 * malloc of the pool, raw_delete when the segment is released), here a
 * segment source that counts its calls and takes its memory from the
 * device as torch_npu's example plug-in does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/device/mempool.h"
#include "alloc_fixture.h"

struct counting_source {
	int allocs, frees, forgets, drops;
	size_t last_size;
	void *last_ptr;
	void *hand_out;      /* returned instead of device memory when set */
	bool give_null;
	int fail_with;       /* returned (with a reason) when not 0 */
};

static int src_alloc(void *ctx, int device, size_t size, aclrtStream stream, void **ptr,
		     char *err, size_t errlen)
{
	struct counting_source *s = ctx;

	(void)device, (void)stream;
	s->allocs++;
	s->last_size = size;
	if (s->fail_with) {
		snprintf(err, errlen, "the allocator broke");
		return s->fail_with;
	}
	*ptr = NULL;
	if (s->hand_out)
		*ptr = s->hand_out;
	else if (!s->give_null &&
		 aclrtMallocAlign32(ptr, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
		*ptr = NULL;
	s->last_ptr = *ptr;
	return 0;
}

static void src_free(void *ctx, void *ptr)
{
	struct counting_source *s = ctx;

	s->frees++;
	s->last_ptr = ptr;
	assert_int_equal(aclrtFree(ptr), ACL_SUCCESS);
}

static void src_forget(void *ctx, void *ptr)
{
	struct counting_source *s = ctx;

	s->forgets++;
	s->last_ptr = ptr;
}

static void src_drop(void *ctx)
{
	((struct counting_source *)ctx)->drops++;
}

static struct npa_segment_source source_of(struct counting_source *s)
{
	struct npa_segment_source src = { .alloc = src_alloc, .free = src_free,
					  .forget = src_forget, .drop = src_drop, .ctx = s };

	snprintf(src.name, sizeof(src.name), "counting");
	return src;
}

/* Device-malloc segments: the only ones a pool's allocator makes. */
static struct npa *start(const struct npa_flavor *flavor)
{
	return fx_start_device_segments(flavor, 8 * GiB, NULL);
}

static void expandable(struct npa_conf *conf)
{
	conf->expandable_segments = true;
}

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

/* MemPool(allocator) and use_mem_pool entered for stream `s`. */
static struct npa_pool_id pool_with(struct npa *a, struct counting_source *cs, aclrtStream s)
{
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	struct npa_segment_source src = source_of(cs);
	char err[256] = "";

	assert_int_equal(npa_mempool_create_from(a, 0, id, false, false, &src), 0);
	assert_int_equal(npa_mempool_begin_stream(a, 0, id, s, err, sizeof(err)), 0);
	return id;
}

/* The MemPool's exit and destructor (end, release, emptyCache(id)). */
static void pool_gone(struct npa *a, struct npa_pool_id id)
{
	char err[256] = "";

	assert_int_equal(npa_mempool_end(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(npa_mempool_destroy(a, 0, id, err, sizeof(err)), 0);
}

/* test_custom_allocator_alloc_free_paired: one 4 MiB tensor, freed after
 * the scope; the pool's one 20 MiB segment goes back to its allocator. */
static void each_segment_is_asked_of_the_pool_allocator_at_its_rounded_size(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { 0 };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);
	uint64_t device_mallocs = fx_device().malloc_calls;

	void *x = fx_malloc(a, 4 * MiB, s);
	assert_int_equal(cs.allocs, 1);
	assert_int_equal(cs.last_size, 20 * MiB);
	assert_ptr_equal(cs.last_ptr, x);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.segment[ALL].current, 1);
	assert_int_equal(st.reserved_bytes[ALL].current, 20 * MiB);
	assert_int_equal(st.num_device_alloc, 1);

	fx_free(a, x);
	pool_gone(a, id);
	assert_int_equal(cs.frees, 1);
	assert_ptr_equal(cs.last_ptr, x);
	assert_int_equal(cs.drops, 1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	/* The source's own aclrtMallocAlign32, not the caching allocator's. */
	assert_int_equal(fx_device().malloc_calls, device_mallocs + 1);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/* Small requests share one 2 MiB segment of the pool: asked once. */
static void small_blocks_of_the_pool_share_one_asked_segment(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { 0 };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);

	void *x = fx_malloc(a, 1000, s), *y = fx_malloc(a, 70000, s);
	assert_int_equal(cs.allocs, 1);
	assert_int_equal(cs.last_size, 2 * MiB);
	fx_free(a, x);
	fx_free(a, y);
	pool_gone(a, id);
	assert_int_equal(cs.frees, 1);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/* Allocations outside the scope never reach the pool's allocator. */
static void allocations_outside_the_scope_use_the_device(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { 0 };
	aclrtStream s = new_stream(), other = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);

	void *x = fx_malloc(a, 4 * MiB, other);
	assert_int_equal(cs.allocs, 0);
	fx_free(a, x);
	pool_gone(a, id);
	assert_int_equal(cs.frees, 0);
	assert_int_equal(cs.drops, 1);
	fx_stop(a);
	aclrtDestroyStream(s);
	aclrtDestroyStream(other);
}

/* NULL from raw_alloc is upstream's cudaErrorMemoryAllocation: an OOM. */
static void a_null_segment_is_an_out_of_memory(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { .give_null = true };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);
	char err[512] = "";
	void *x = NULL;

	assert_int_equal(npa_malloc(a, 0, 4 * MiB, s, &x, err, sizeof(err)), -ENOMEM);
	assert_null(x);
	assert_int_equal(fx_stats(a).num_ooms, 1);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, 0);
	pool_gone(a, id);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/* Any other failure stops the allocation with the allocator's reason. */
static void a_failing_allocator_fails_the_allocation_with_its_reason(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { .fail_with = -EFAULT };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);
	char err[512] = "";
	void *x = NULL;

	assert_int_equal(npa_malloc(a, 0, 4 * MiB, s, &x, err, sizeof(err)), -EFAULT);
	assert_non_null(strstr(err, "the allocator broke"));
	assert_int_equal(fx_stats(a).num_ooms, 0);
	assert_int_equal(fx_stats(a).segment[ALL].current, 0);
	pool_gone(a, id);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/*
 * Memory inside a segment the caching allocator already holds would give
 * two blocks one address: refused, and forgotten rather than given back
 * (its free would release that segment). Nothing else changes.
 */
static void a_segment_inside_another_is_refused_and_not_given_back(void **state)
{
	struct npa *a = start(FLAVOR(state));
	aclrtStream s = new_stream();
	void *outside = fx_malloc(a, 4 * MiB, NULL);
	struct counting_source cs = { .hand_out = (char *)outside + 2 * MiB };
	struct npa_pool_id id = pool_with(a, &cs, s);
	struct npa_stats before = fx_stats(a);
	char err[512] = "", want[512];
	void *x = NULL;

	assert_int_equal(npa_malloc(a, 0, 4 * MiB, s, &x, err, sizeof(err)), -EFAULT);
	snprintf(want, sizeof(want), "MemPool allocator counting returned %p for 20971520 "
		 "bytes, inside a segment the caching allocator holds: not given back, "
		 "allocation refused", cs.hand_out);
	assert_string_equal(err, want);
	assert_int_equal(cs.forgets, 1);
	assert_int_equal(cs.frees, 0);
	assert_int_equal(fx_stats(a).segment[ALL].current, before.segment[ALL].current);
	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current,
			 before.reserved_bytes[ALL].current);
	fx_check(a);
	fx_free(a, outside);
	pool_gone(a, id);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/* A pool's allocator comes with its creation only (upstream asserts). */
static void an_existing_pool_takes_no_allocator(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { 0 };
	struct npa_segment_source src = source_of(&cs);
	struct npa_pool_id id = npa_graph_pool_handle(a, true);
	char err[256] = "";

	assert_int_equal(npa_mempool_create(a, 0, id, false, false), 0);
	assert_int_equal(npa_mempool_create_from(a, 0, id, false, false, &src), -EEXIST);
	assert_int_equal(npa_mempool_destroy(a, 0, id, err, sizeof(err)), 0);
	assert_int_equal(cs.drops, 0);
	fx_stop(a);
}

/* The pool lists its allocator's name; a pool of device memory none. */
static void the_pool_list_names_the_allocator(void **state)
{
	struct npa *a = start(FLAVOR(state));
	struct counting_source cs = { 0 };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);
	struct npa_pool_info *all;
	size_t n;

	assert_int_equal(npa_pool_list(a, 0, &all, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(all[0].allocator, "counting");
	free(all);
	pool_gone(a, id);
	fx_stop(a);
	aclrtDestroyStream(s);
}

/* With expandable segments the pool maps pages like any other (upstream
 * takes the expandable path before it looks at the pool's allocator). */
static void expandable_segments_do_not_ask_the_pool_allocator(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), 8 * GiB, expandable);
	struct counting_source cs = { 0 };
	aclrtStream s = new_stream();
	struct npa_pool_id id = pool_with(a, &cs, s);

	fx_free(a, fx_malloc(a, 4 * MiB, s));
	assert_int_equal(cs.allocs, 0);
	pool_gone(a, id);
	fx_stop(a);
	aclrtDestroyStream(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(each_segment_is_asked_of_the_pool_allocator_at_its_rounded_size),
		BOTH_FLAVORS(small_blocks_of_the_pool_share_one_asked_segment),
		BOTH_FLAVORS(allocations_outside_the_scope_use_the_device),
		BOTH_FLAVORS(a_null_segment_is_an_out_of_memory),
		BOTH_FLAVORS(a_failing_allocator_fails_the_allocation_with_its_reason),
		BOTH_FLAVORS(a_segment_inside_another_is_refused_and_not_given_back),
		BOTH_FLAVORS(an_existing_pool_takes_no_allocator),
		BOTH_FLAVORS(the_pool_list_names_the_allocator),
		BOTH_FLAVORS(expandable_segments_do_not_ask_the_pool_allocator),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
