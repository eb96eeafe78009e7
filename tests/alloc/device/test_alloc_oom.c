/*
 * The retry ladder and out-of-memory: releasing the cache and retrying,
 * upstream's messages, the memory fraction and throw_on_npumalloc_oom.
 */
#include <errno.h>
#include <string.h>

#include "alloc_fixture.h"

#define N64M (64 * MiB)

/* A cached 40 MiB segment stands in the way of 50 MiB: released, then retried. */
static void oom_retry_releases_the_cache_and_counts_one_retry(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N64M);
	void *p = fx_malloc(a, 40 * MiB, NULL);

	fx_free(a, p);
	void *q = fx_malloc(a, 50 * MiB, NULL);
	struct npa_stats st = fx_stats(a);
	if (fx_expandable()) {
		/*
		 * Expandable: the free 40 MiB grows by one more 20 MiB page
		 * (npu: 40 MiB + 512 had mapped three pages already), so
		 * nothing stands in the way and no retry happens.
		 */
		assert_int_equal(st.num_alloc_retries, 0);
		assert_int_equal(st.num_device_free, 0);
		assert_int_equal(st.num_device_alloc, FLAVOR(state) == &npa_flavor_npu ? 1 : 2);
		assert_int_equal(st.reserved_bytes[ALL].current, 60 * MiB);
		assert_int_equal(st.segment[ALL].current, 0);
		assert_int_equal(fx_device().physical_failures, 0);
		fx_free(a, q);
		fx_stop(a);
		return;
	}
	assert_int_equal(st.num_alloc_retries, 1);
	assert_int_equal(st.num_ooms, 0);
	assert_int_equal(st.num_device_free, 1);
	assert_int_equal(st.num_device_alloc, 2);
	assert_int_equal(st.num_sync_all_streams, 1);
	assert_int_equal(st.segment[ALL].current, 1);
	assert_int_equal(fx_device().malloc_failures, 1);
	fx_free(a, q);
	fx_stop(a);
}

static int oom_after_a_small_block(const struct npa_flavor *f, char *err, size_t errlen,
				   struct npa_stats *st)
{
	struct npa *a = fx_start(f, N64M);
	void *x = fx_malloc(a, 1000, NULL);
	void *y = NULL;
	int rc = npa_malloc(a, 0, 70 * MiB, NULL, &y, err, errlen);

	*st = fx_stats(a);
	assert_null(y);
	fx_free(a, x);
	fx_stop(a);
	return rc;
}

static void cuda_oom_message(void **state)
{
	(void)state;
	char err[NPA_ERRLEN];
	struct npa_stats st;

	assert_int_equal(oom_after_a_small_block(&npa_flavor_cuda, err, sizeof(err), &st),
			 -ENOMEM);
	assert_int_equal(st.num_ooms, 1);
	assert_int_equal(st.num_alloc_retries, 1);
	assert_string_equal(err,
		"CUDA out of memory. Tried to allocate 70.00 MiB. GPU 0 has a total capacity "
		"of 64.00 MiB of which 62.00 MiB is free. Of the allocated memory 1024 bytes "
		"is allocated by PyTorch, and 2.00 MiB is reserved by PyTorch but unallocated. "
		"If reserved but unallocated memory is large try setting "
		"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
		"See documentation for Memory Management  (https://docs.pytorch.org/docs/"
		"stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)");
}

/* 70 MiB + 32 needs a 72 MiB segment; 1000 + 32 bytes are a 1.50 KiB block. */
static void npu_oom_message(void **state)
{
	(void)state;
	char err[NPA_ERRLEN];
	struct npa_stats st;

	assert_int_equal(oom_after_a_small_block(&npa_flavor_npu, err, sizeof(err), &st),
			 -ENOMEM);
	assert_int_equal(st.num_ooms, 1);
	assert_int_equal(st.num_alloc_retries, 1);
	assert_string_equal(err,
		"NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 64.00 MiB total "
		"capacity; 1.50 KiB already allocated; 1.50 KiB current active; 62.00 MiB "
		"free; 2.00 MiB reserved in total by PyTorch).If reserved memory is >> "
		"allocated memory try setting max_split_size_mb to avoid fragmentation.");
}

/* Half of 64 MiB: a second segment that would pass 32 MiB never reaches the device. */
static void memory_fraction_refuses_without_calling_the_device(void **state)
{
	/* Counts device mallocs; the expandable fraction check is below. */
	struct npa *a = fx_start_device_segments(FLAVOR(state), N64M, NULL);
	char err[NPA_ERRLEN];
	void *q = NULL;

	assert_int_equal(npa_set_memory_fraction(a, 0, 0.5, NULL, 0), 0);
	assert_true(npa_get_memory_fraction(a, 0) == 0.5);
	void *p = fx_malloc(a, 20 * MiB, NULL);
	assert_int_equal(npa_malloc(a, 0, 14 * MiB, NULL, &q, err, sizeof(err)), -ENOMEM);
	const char *want = FLAVOR(state)->oom_style == NPA_OOM_CUDA
		? "is free. 32.00 MiB allowed; Of the allocated"
		: "free; 32.00 MiB allowed; 22.00 MiB reserved";
	assert_non_null(strstr(err, want));
	struct npusim_counters c = fx_device();
	assert_int_equal(c.malloc_calls, 1);
	assert_int_equal(c.malloc_failures, 0);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_ooms, 1);
	assert_int_equal(st.num_alloc_retries, 1);
	fx_free(a, p);
	fx_stop(a);
}

static void memory_fraction_outside_0_1_is_invalid(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N64M);
	char err[NPA_ERRLEN];

	assert_int_equal(npa_set_memory_fraction(a, 0, 1.5, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Invalid fraction value: 1.5. Allowed range: 0~1");
	assert_true(npa_get_memory_fraction(a, 0) == 1.0);
	fx_stop(a);
}

static void half_and_reject(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.5;
	c->throw_on_npumalloc_oom = true;
}

/* Rejected up front: no retry, no OOM count, num_oom_rejections instead. */
static void npu_throw_on_npumalloc_oom_rejects_preemptively(void **state)
{
	(void)state;
	/* Counts device mallocs; the expandable case is below. */
	struct npa *a = fx_start_device_segments(&npa_flavor_npu, N64M, half_and_reject);
	char err[NPA_ERRLEN];
	void *q = NULL;
	void *p = fx_malloc(a, 20 * MiB, NULL);

	assert_int_equal(npa_malloc(a, 0, 14 * MiB, NULL, &q, err, sizeof(err)), -ENOMEM);
	assert_string_equal(err,
		"NPU out of memory. Allocation was preemptively rejected because it would "
		"exceed per_process_memory_fraction limit. Requested size: 16.00 MiB");
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.num_oom_rejections, 1);
	assert_int_equal(st.num_ooms, 0);
	assert_int_equal(st.num_alloc_retries, 0);
	assert_int_equal(st.num_sync_all_streams, 0);
	fx_free(a, p);
	fx_stop(a);
}

static void half(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.5;
}

/* per_process_memory_fraction in the settings is the initial fraction. */
static void conf_fraction_is_the_initial_limit(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), N64M, half);
	void *p = NULL;

	assert_true(npa_get_memory_fraction(a, 0) == 0.5);
	assert_int_equal(npa_malloc(a, 0, 40 * MiB, NULL, &p, NULL, 0), -ENOMEM);
	assert_int_equal(fx_device().malloc_calls, 0);
	assert_int_equal(fx_device().physical_calls, 0);
	fx_stop(a);
}

static void expandable_half(struct npa_conf *c)
{
	c->expandable_segments = true;
	c->per_process_memory_fraction = 0.5;
}

/*
 * Expandable segments keep the fraction check on the request's segment
 * size: 20 MiB maps one page, then 14 MiB would pass 32 MiB (cuda); on npu
 * 20 MiB + 512 maps two pages and 14 MiB fits in the second.
 */
static void memory_fraction_limits_expandable_segments(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), N64M, expandable_half);
	bool npu = FLAVOR(state) == &npa_flavor_npu;
	char err[NPA_ERRLEN] = "";
	void *q = NULL;
	void *p = fx_malloc(a, 20 * MiB, NULL);

	assert_int_equal(fx_stats(a).reserved_bytes[ALL].current, npu ? 40 * MiB : 20 * MiB);
	assert_int_equal(npa_malloc(a, 0, 14 * MiB, NULL, &q, err, sizeof(err)),
			 npu ? 0 : -ENOMEM);
	assert_int_equal(fx_device().physical_calls, npu ? 2 : 1);
	assert_int_equal(fx_device().physical_failures, 0);
	if (!npu)
		assert_non_null(strstr(err, "is free. 32.00 MiB allowed; Of the allocated"));
	fx_free(a, q);
	fx_free(a, p);
	fx_stop(a);
}

static void more_than_1eb_is_refused(void **state)
{
	struct npa *a = fx_start(FLAVOR(state), N64M);
	char err[NPA_ERRLEN];
	void *p = NULL;

	assert_int_equal(npa_malloc(a, 0, (size_t)1 << 60, NULL, &p, err, sizeof(err)),
			 -ENOMEM);
	assert_string_equal(err, FLAVOR(state)->oom_style == NPA_OOM_CUDA
		? "CUDA out of memory. Tried to allocate more than 1EB memory."
		: "NPU out of memory. Tried to allocate more than 1EB memory.");
	assert_int_equal(fx_stats(a).num_ooms, 0);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(oom_retry_releases_the_cache_and_counts_one_retry),
		cmocka_unit_test(cuda_oom_message),
		cmocka_unit_test(npu_oom_message),
		BOTH_FLAVORS(memory_fraction_refuses_without_calling_the_device),
		BOTH_FLAVORS(memory_fraction_limits_expandable_segments),
		BOTH_FLAVORS(memory_fraction_outside_0_1_is_invalid),
		cmocka_unit_test(npu_throw_on_npumalloc_oom_rejects_preemptively),
		BOTH_FLAVORS(conf_fraction_is_the_initial_limit),
		BOTH_FLAVORS(more_than_1eb_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
