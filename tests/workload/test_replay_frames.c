/*
 * test_replay_frames.c - a replay names the trace line behind each of its
 * allocator calls, so a recorded history says which line made, freed or
 * released each block: the trace's name, the line number and the line's
 * command, as a frame of upstream's memory_viz.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <npumemfs/npusim.h>
#include "workload/replay.h"

#include "replay_fixture.h"

#define GiB (1ULL << 30)

static struct npa_trace recorded(struct fixture *fx)
{
	struct npa_trace t;

	assert_int_equal(npa_history_copy(fx->a, 0, 0, &t), 0);
	return t;
}

static void assert_entry(const struct npa_trace_entry *e, const char *action,
			 uint32_t line, const char *name)
{
	assert_string_equal(npa_trace_action_name(e->action), action);
	assert_non_null(e->frame.filename);
	assert_string_equal(e->frame.filename, "t");
	assert_int_equal(e->frame.line, line);
	assert_string_equal(e->frame.name, name);
}

static void each_entry_names_the_trace_line_that_made_it(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_npu, 1, 8 * GiB);

	(void)state;
	assert_int_equal(npa_record_memory_history(fx->a, 0, "all", 100), 0);
	load(fx, "# weights\n"
		 "alloc w 4096\n"
		 "alloc x 1000\n"
		 "\n"
		 "free x\n"
		 "free w\n"
		 "empty_cache\n"
		 "alloc y 1000\n");
	run_all(fx);
	wl_replay_release_all(fx->r);
	struct npa_trace t = recorded(fx);
	assert_int_equal(t.n, 12);
	assert_entry(&t.entries[0], "segment_alloc", 2, "alloc");
	assert_entry(&t.entries[1], "alloc", 2, "alloc");
	assert_entry(&t.entries[2], "alloc", 3, "alloc");
	assert_entry(&t.entries[3], "free_requested", 5, "free");
	assert_entry(&t.entries[4], "free_completed", 5, "free");
	assert_entry(&t.entries[5], "free_requested", 6, "free");
	assert_entry(&t.entries[6], "free_completed", 6, "free");
	assert_entry(&t.entries[7], "segment_free", 7, "empty_cache");
	assert_entry(&t.entries[8], "segment_alloc", 8, "alloc");
	assert_entry(&t.entries[9], "alloc", 8, "alloc");
	/* What the trace leaves live is freed by its end, line 0. */
	assert_entry(&t.entries[10], "free_requested", 0, "end_of_trace");
	assert_entry(&t.entries[11], "free_completed", 0, "end_of_trace");
	npa_trace_release(&t);
	stop_fixture(fx);
}

/* A replay leaves the caller's origin as it found it. */
static void a_replay_restores_the_callers_origin(void **state)
{
	struct fixture *fx = start_flavor(&npa_flavor_npu, 1, 8 * GiB);
	const struct npa_frame mine = { "/mnt/ctl/empty_cache", "write", 0 };

	(void)state;
	npa_set_origin(&mine);
	load(fx, "alloc a 4096\n");
	run_all(fx);
	assert_ptr_equal(npa_origin(), &mine);
	wl_replay_release_all(fx->r);
	assert_ptr_equal(npa_origin(), &mine);
	npa_set_origin(NULL);
	stop_fixture(fx);
}

/* Every command's name, as frames and messages spell it. */
static void op_names_are_the_trace_commands(void **state)
{
	const char *want[] = {
		"alloc", "free", "record_stream", "erase_stream", "sync", "empty_cache",
		"reset_peak", "reset_accumulated", "fraction", "capture_begin",
		"capture_end", "graph_replay", "graph_reset", "mempool_create",
		"mempool_begin", "mempool_end", "mempool_release", "complete", "launch_op",
		"pin", "unpin", "copy", "host_empty_cache", "empty_virt_addr_cache",
	};

	(void)state;
	assert_int_equal(WL_NOPS, sizeof(want) / sizeof(want[0]));
	for (int op = WL_ALLOC; op < WL_NOPS; op++)
		assert_string_equal(wl_op_name(op), want[op]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(each_entry_names_the_trace_line_that_made_it, teardown),
		cmocka_unit_test_teardown(a_replay_restores_the_callers_origin, teardown),
		cmocka_unit_test(op_names_are_the_trace_commands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
