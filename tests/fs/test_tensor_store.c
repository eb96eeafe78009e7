/*
 * test_tensor_store.c - named allocations: sizes, bytes through device
 * memory, resize copies, and an OOM that leaves the tensor as it was.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/caching/caching_allocator.h"
#include <npumemfs/npusim.h>
#include "workload/tensor_store.h"

#define MiB (1u << 20)

struct fixture {
	struct npa *alloc;
	struct tensor_store *ts;
};

static int setup(void **state)
{
	static struct fixture fx;
	struct npusim_config sim;
	struct npa_options opt = { .flavor = &npa_flavor_npu, .device_count = 1 };

	npusim_config_default(&sim, 1, 64 * MiB);
	assert_int_equal(npusim_init(&sim), 0);
	npa_conf_default(&opt.conf, opt.flavor);
	assert_int_equal(npa_create(&opt, &fx.alloc), 0);
	assert_int_equal(ts_new(npa_allocator(fx.alloc), 0, NULL, &fx.ts), 0);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	ts_free(fx->ts);
	assert_int_equal(npa_destroy(fx->alloc, NULL), 0);
	npusim_shutdown();
	return 0;
}

static int64_t allocated(struct fixture *fx)
{
	struct npa_stats s;

	assert_int_equal(npa_get_stats(fx->alloc, 0, &s), 0);
	return s.allocated_bytes[NPA_STAT_ALL].current;
}

static void created_tensor_is_empty_and_allocates_nothing(void **state)
{
	struct fixture *fx = *state;
	uint64_t size = 99;

	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_size(fx->ts, "t", &size, NULL), 0);
	assert_int_equal(size, 0);
	assert_int_equal(allocated(fx), 0);
	assert_int_equal(ts_create(fx->ts, "t"), -EEXIST);
}

static void resize_allocates_the_padded_rounded_block(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_resize(fx->ts, "t", 4 * MiB, NULL, 0), 0);
	/* 4 MiB + 32 B pad, rounded to 512 B. */
	assert_int_equal(allocated(fx), 4 * MiB + 512);
	assert_int_equal(ts_resize(fx->ts, "t", 0, NULL, 0), 0);
	assert_int_equal(allocated(fx), 0);
}

static void bytes_written_come_back_after_growing_and_shrinking(void **state)
{
	struct fixture *fx = *state;
	char in[1000], out[1000];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7);
	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_write(fx->ts, "t", in, sizeof(in), 0, NULL, 0), 1000);
	assert_int_equal(ts_resize(fx->ts, "t", 3 * MiB, NULL, 0), 0);
	assert_int_equal(ts_resize(fx->ts, "t", 600, NULL, 0), 0);
	assert_int_equal(ts_read(fx->ts, "t", out, sizeof(out), 0, NULL, 0), 600);
	assert_memory_equal(in, out, 600);
	assert_int_equal(ts_read(fx->ts, "t", out, sizeof(out), 600, NULL, 0), 0);
}

static void write_past_the_end_grows_the_tensor(void **state)
{
	struct fixture *fx = *state;
	uint64_t size;
	char out[3];

	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_write(fx->ts, "t", "abc", 3, 10, NULL, 0), 3);
	assert_int_equal(ts_size(fx->ts, "t", &size, NULL), 0);
	assert_int_equal(size, 13);
	assert_int_equal(ts_read(fx->ts, "t", out, 3, 10, NULL, 0), 3);
	assert_memory_equal(out, "abc", 3);
}

static void oom_keeps_the_old_block_and_its_bytes(void **state)
{
	struct fixture *fx = *state;
	char err[NPA_ERRLEN] = "", out[4];
	uint64_t size;

	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_write(fx->ts, "t", "keep", 4, 0, NULL, 0), 4);
	int64_t before = allocated(fx);
	assert_int_equal(ts_resize(fx->ts, "t", 128 * MiB, err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "out of memory"));
	assert_int_equal(ts_size(fx->ts, "t", &size, NULL), 0);
	assert_int_equal(size, 4);
	assert_int_equal(allocated(fx), before);
	assert_int_equal(ts_read(fx->ts, "t", out, 4, 0, NULL, 0), 4);
	assert_memory_equal(out, "keep", 4);
}

static void unlink_frees_and_forgets(void **state)
{
	struct fixture *fx = *state;
	uint64_t size;

	assert_int_equal(ts_create(fx->ts, "t"), 0);
	assert_int_equal(ts_resize(fx->ts, "t", MiB, NULL, 0), 0);
	assert_int_equal(ts_unlink(fx->ts, "t"), 0);
	assert_int_equal(allocated(fx), 0);
	assert_int_equal(ts_size(fx->ts, "t", &size, NULL), -ENOENT);
	assert_int_equal(ts_unlink(fx->ts, "t"), -ENOENT);
}

static void release_all_counts_tensors_and_bytes(void **state)
{
	struct fixture *fx = *state;
	uint64_t bytes = 0;

	assert_int_equal(ts_create(fx->ts, "a"), 0);
	assert_int_equal(ts_create(fx->ts, "b"), 0);
	assert_int_equal(ts_create(fx->ts, "empty"), 0);
	assert_int_equal(ts_resize(fx->ts, "a", 2 * MiB, NULL, 0), 0);
	assert_int_equal(ts_resize(fx->ts, "b", 100, NULL, 0), 0);
	assert_int_equal(ts_release_all(fx->ts, &bytes), 3);
	assert_int_equal(bytes, 2 * MiB + 100);
	assert_int_equal(allocated(fx), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/*
 * On a capturing stream a write is a copy the capture records: it is not
 * made at once, and every replay makes it again from the bytes written
 * then; so is a resize's copy into the new block. A read is a synchronous
 * copy, which a global capture refuses.
 */
static void writes_on_a_capturing_stream_are_made_by_each_replay(void **state)
{
	struct fixture *fx = *state;
	struct tensor_store *ts;
	aclrtStream s;
	aclmdlRI model;
	char out[4], big[8], err[NPA_ERRLEN] = "";

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(ts_new(npa_allocator(fx->alloc), 0, s, &ts), 0);
	assert_int_equal(ts_create(ts, "t"), 0);
	assert_int_equal(ts_write(ts, "t", "AAAA", 4, 0, NULL, 0), 4);
	assert_int_equal(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
	assert_int_equal(ts_write(ts, "t", "XXXX", 4, 0, NULL, 0), 4);
	assert_int_equal(ts_resize(ts, "t", 8, NULL, 0), 0);
	assert_int_equal(ts_write(ts, "t", "ZZZZ", 4, 4, NULL, 0), 4);
	assert_int_equal(ts_read(ts, "t", out, 4, 0, err, sizeof(err)), -EBUSY);
	assert_string_equal(err, "aclrtMemcpy refused while a graph captures on this "
				 "device (error 107030)");
	assert_int_equal(aclmdlRICaptureEnd(s, &model), ACL_SUCCESS);
	for (int replay = 0; replay < 2; replay++) {
		assert_int_equal(ts_write(ts, "t", "YYYYYYYY", 8, 0, NULL, 0), 8);
		assert_int_equal(aclmdlRIExecuteAsync(model, s), ACL_SUCCESS);
		assert_int_equal(ts_read(ts, "t", big, 8, 0, NULL, 0), 8);
		assert_memory_equal(big, "XXXXZZZZ", 8);
	}
	assert_int_equal(aclmdlRIDestroy(model), ACL_SUCCESS);
	ts_free(ts);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* The host bytes a captured write keeps live as long as the model that
 * replays them, and go when the runtime destroys it. */
static void captured_bytes_are_kept_until_the_model_is_destroyed(void **state)
{
	struct fixture *fx = *state;
	struct tensor_store *ts;
	aclrtStream s;
	aclmdlRI model;
	static const char kib[1024];

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(ts_new(npa_allocator(fx->alloc), 0, s, &ts), 0);
	assert_int_equal(ts_create(ts, "t"), 0);
	assert_int_equal(ts_resize(ts, "t", 4096, NULL, 0), 0);
	assert_int_equal(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ts_write(ts, "t", kib, 1024, 1024 * i, NULL, 0), 1024);
	assert_int_equal(aclmdlRICaptureEnd(s, &model), ACL_SUCCESS);
	assert_int_equal(ts_release_staging(ts), 4096);
	assert_int_equal(aclmdlRIDestroy(model), ACL_SUCCESS);
	assert_int_equal(ts_release_staging(ts), 0);
	ts_free(ts);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(created_tensor_is_empty_and_allocates_nothing),
		T(resize_allocates_the_padded_rounded_block),
		T(bytes_written_come_back_after_growing_and_shrinking),
		T(write_past_the_end_grows_the_tensor),
		T(oom_keeps_the_old_block_and_its_bytes),
		T(unlink_frees_and_forgets),
		T(release_all_counts_tensors_and_bytes),
		T(writes_on_a_capturing_stream_are_made_by_each_replay),
		T(captured_bytes_are_kept_until_the_model_is_destroyed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
