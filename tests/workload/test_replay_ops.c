/*
 * test_replay_ops.c - launch_op lines: an operator's workspace drawn as
 * ctl/op draws it (the stream's registered ACL allocator, else the
 * allocator in use), freed once its work completes, seen at a sync. The
 * lines the parser refuses are in bad_traces.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "replay_fixture.h"
#include "workload/replay_ops.h"

#define MiB (1024ull * 1024)

/* A framework's allocator as MindSpore registers one: blocks are device
 * addresses from aclrtMalloc, counted. */
static struct counting {
	int allocs, frees;
} counting;

static void *counting_alloc(aclrtAllocator obj, size_t size)
{
	struct counting *c = obj;
	void *p = NULL;

	c->allocs++;
	return aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS ? p : NULL;
}

static void counting_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	struct counting *c = obj;

	c->frees++;
	aclrtFree(block);
}

static void *identity(aclrtAllocatorBlock block)
{
	return block;
}

/* The descriptor registered on stream 1, kept as a framework keeps it. */
static aclrtAllocatorDesc desc1;

static void register_counting(aclrtStream s)
{
	counting = (struct counting){ 0 };
	if (desc1)
		aclrtAllocatorDestroyDesc(desc1);
	desc1 = aclrtAllocatorCreateDesc();
	aclrtAllocatorSetObjToDesc(desc1, &counting);
	aclrtAllocatorSetAllocFuncToDesc(desc1, counting_alloc);
	aclrtAllocatorSetFreeFuncToDesc(desc1, counting_free);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc1, identity);
	assert_int_equal(aclrtAllocatorRegister(s, desc1), ACL_SUCCESS);
}

static struct fixture *start(void)
{
	desc1 = NULL;
	return start_flavor(&npa_flavor_npu, 1, 1024 * MiB);
}

static struct npa_stats stats(struct fixture *fx)
{
	struct npa_stats s;

	assert_int_equal(npa_get_stats(fx->a, 0, &s), 0);
	return s;
}

static void run(struct fixture *fx, size_t from, size_t to)
{
	if (wl_replay_run(fx->r, from, to, NULL, fx->err, sizeof(fx->err)) != 0)
		fail_msg("replay: %s", fx->err);
}

/* Events [0, n) run (the first makes stream 1 with an operator needing no
 * workspace), then an allocator is registered on the trace's stream 1. */
static void run_then_register(struct fixture *fx, size_t n)
{
	run(fx, 0, n);
	aclrtStream s = wl_replay_runtime_stream(fx->r, 0, 1);
	assert_non_null(s);
	register_counting(s);
}

static struct op_stream_counts counts_of_stream1(struct fixture *fx)
{
	struct op_stream_counts c;

	op_counts(wl_replay_launcher(fx->r), wl_replay_runtime_stream(fx->r, 0, 1), &c);
	return c;
}

static void without_a_registration_workspace_comes_from_the_allocator_and_goes_back_at_once(
	void **state)
{
	struct fixture *fx = start();
	(void)state;

	load(fx, "launch_op 1 4096 ns=1000\n");
	run_all(fx);
	/* 4096 + 32 rounded to 512: one small block, back in the pool at once. */
	assert_int_equal(stats(fx).allocation[NPA_STAT_ALL].allocated, 1);
	assert_int_equal(stats(fx).allocated_bytes[NPA_STAT_ALL].allocated, 4608);
	assert_int_equal(stats(fx).allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(op_fallback_allocs(wl_replay_launcher(fx->r)), 1);
}

static void a_registered_descriptor_gives_the_workspace_until_a_sync_completes_the_operator(
	void **state)
{
	struct fixture *fx = start();
	(void)state;

	load(fx, "launch_op 1 0 ns=0\n"
		 "launch_op 1 3MiB\n"
		 "launch_op 1 1MiB\n"
		 "sync 1\n");
	run_then_register(fx, 1);
	run(fx, 1, 3);
	assert_int_equal(counting.allocs, 2);
	assert_int_equal(counting.frees, 0);
	assert_int_equal(counts_of_stream1(fx).outstanding_bytes, 4 * MiB);
	run(fx, 3, 4);
	assert_int_equal(counting.frees, 2);
	assert_int_equal(counts_of_stream1(fx).outstanding_blocks, 0);
	assert_int_equal(stats(fx).allocation[NPA_STAT_ALL].allocated, 0);
}

static void a_timed_operator_gives_its_workspace_back_at_the_next_launch_after_it_ends(
	void **state)
{
	struct fixture *fx = start();
	(void)state;

	load(fx, "launch_op 1 0 ns=0\n"
		 "launch_op 1 4096 ns=0\n"
		 "launch_op 1 4096 ns=0\n");
	run_then_register(fx, 1);
	run(fx, 1, 3);
	assert_int_equal(counting.allocs, 2);
	assert_int_equal(counting.frees, 1);
}

static void workspace_the_device_cannot_give_is_an_oom_and_the_replay_goes_on(void **state)
{
	struct fixture *fx = start();
	struct wl_replay_counters c;
	(void)state;

	load(fx, "launch_op 1 2GiB\n"
		 "alloc a 1MiB\n");
	run_all(fx);
	wl_replay_counters(fx->r, &c);
	assert_int_equal(c.ooms, 1);
	assert_int_equal(c.allocs, 1);
	assert_int_equal(stats(fx).num_ooms, 1);
}

static void a_shared_launcher_counts_the_replay_and_gets_its_workspace_back_at_the_end(
	void **state)
{
	struct fixture *fx = start();
	struct allocator tg = npa_allocator(fx->a);
	struct op_fallback fb = { .malloc = tg.ops->malloc, .free = tg.ops->free,
				  .ctx = tg.self };
	struct op_launcher *shared;
	(void)state;

	assert_int_equal(op_launcher_create(&fb, &shared), 0);
	load(fx, "launch_op 1 0 ns=0\n"
		 "launch_op 1 1MiB\n"
		 "launch_op 2 4096\n");
	wl_replay_set_launcher(fx->r, shared);
	run_then_register(fx, 1);
	run(fx, 1, 3);
	/* Stream 2 has no registration; the 0-byte operator took nothing. */
	assert_int_equal(op_fallback_allocs(shared), 1);
	assert_int_equal(counting.allocs, 1);
	assert_int_equal(counting.frees, 0);
	wl_replay_release_all(fx->r);
	assert_int_equal(counting.frees, 1);
	assert_ptr_equal(wl_replay_launcher(fx->r), shared);
	wl_replay_free(fx->r);
	fx->r = NULL;
	op_launcher_destroy(shared);
}

/*
 * A global capture on stream 2 while stream 1's operator holds workspace
 * from its registered allocator: launching more must not query that
 * operator's event (the capture would be invalidated and capture_end
 * fail), and the operator captured on stream 2 takes its workspace from
 * the graph's private pool. Stream 1's block goes back at the sync after.
 */
static void operators_during_a_global_capture_leave_it_valid(void **state)
{
	struct fixture *fx = start();
	(void)state;

	load(fx, "launch_op 1 0 ns=0\n"
		 "launch_op 2 0 ns=0\n"
		 "launch_op 1 4096\n"
		 "capture_begin 2\n"
		 "launch_op 1 4096\n"
		 "launch_op 2 1MiB\n"
		 "capture_end 2\n"
		 "sync\n");
	run_then_register(fx, 2);
	/* The same allocator on stream 2, which the capture passes by. */
	assert_int_equal(aclrtAllocatorRegister(wl_replay_runtime_stream(fx->r, 0, 2), desc1),
			 ACL_SUCCESS);
	run(fx, 2, 6);
	assert_int_equal(counting.allocs, 2);
	assert_int_equal(counting.frees, 0);
	/* 1 MiB + 32 rounded to 512: a large block of a 20 MiB segment of the
	 * graph's private pool, back in that pool at once. */
	assert_int_equal(stats(fx).allocated_bytes[NPA_STAT_ALL].allocated, MiB + 512);
	assert_int_equal(stats(fx).allocated_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(stats(fx).reserved_bytes[NPA_STAT_ALL].current, 20 * MiB);
	run(fx, 6, 8);
	assert_int_equal(counting.frees, 2);
}

static int teardown_ops(void **state)
{
	if (desc1)
		aclrtAllocatorDestroyDesc(desc1);
	desc1 = NULL;
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_teardown(name, teardown_ops)
		T(without_a_registration_workspace_comes_from_the_allocator_and_goes_back_at_once),
		T(a_registered_descriptor_gives_the_workspace_until_a_sync_completes_the_operator),
		T(a_timed_operator_gives_its_workspace_back_at_the_next_launch_after_it_ends),
		T(workspace_the_device_cannot_give_is_an_oom_and_the_replay_goes_on),
		T(a_shared_launcher_counts_the_replay_and_gets_its_workspace_back_at_the_end),
		T(operators_during_a_global_capture_leave_it_valid),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
