/*
 * test_trace_jsonl.c - memory history entries as JSON lines: one compact
 * object a line, upstream's TraceEntry keys in its order, frames last.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#include "history_fixture.h"

static void each_entry_is_one_compact_line_with_its_frame(void **state)
{
	struct npa_trace t;
	struct sbuf out;

	(void)state;
	hf_trace(&t);
	sbuf_init(&out);
	assert_int_equal(report_trace_jsonl(&out, &t), 0);
	assert_string_equal(out.data,
		"{\"action\":\"segment_alloc\",\"addr\":139888158572544,\"size\":2097152,"
		"\"stream\":0,\"pool_id\":[0,0],\"time_us\":1700000000000000,"
		"\"frames\":[{\"name\":\"alloc\",\"filename\":\"/work/run.trace\",\"line\":3}]}\n"
		"{\"action\":\"alloc\",\"addr\":139888158572544,\"size\":1000,"
		"\"stream\":0,\"pool_id\":[0,0],\"time_us\":1700000000000001,"
		"\"frames\":[{\"name\":\"alloc\",\"filename\":\"/work/run.trace\",\"line\":3}]}\n"
		"{\"action\":\"oom\",\"device_free\":1048576,\"size\":67109376,"
		"\"stream\":0,\"pool_id\":[0,1],\"time_us\":1700000000000002,"
		"\"frames\":[{\"name\":\"truncate\",\"filename\":\"/mnt/tensors/device0/big\","
		"\"line\":0}]}\n");
	sbuf_release(&out);
}

static void an_entry_without_a_frame_has_empty_frames(void **state)
{
	struct npa_trace_entry e = { .action = NPA_TRACE_SNAPSHOT, .size = 4096, .time_us = 5 };
	struct npa_trace t = { .n = 1, .recorded = 1, .entries = &e };
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_trace_jsonl(&out, &t), 0);
	assert_string_equal(out.data, "{\"action\":\"snapshot\",\"addr\":0,\"size\":4096,"
				      "\"stream\":0,\"pool_id\":[0,0],\"time_us\":5,"
				      "\"frames\":[]}\n");
	sbuf_release(&out);
}

static void no_entries_append_nothing(void **state)
{
	struct npa_trace t = { 0 };
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	sbuf_puts(&out, "kept");
	assert_int_equal(report_trace_jsonl(&out, &t), 0);
	assert_int_equal(out.len, 4);
	sbuf_release(&out);
}

static void every_action_has_upstreams_name(void **state)
{
	const char *want[] = { "alloc", "free_requested", "free_completed",
			       "segment_alloc", "segment_free", "segment_map",
			       "segment_unmap", "snapshot", "oom" };

	(void)state;
	for (int a = NPA_TRACE_ALLOC; a <= NPA_TRACE_OOM; a++)
		assert_string_equal(npa_trace_action_name(a), want[a]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_entry_is_one_compact_line_with_its_frame),
		cmocka_unit_test(an_entry_without_a_frame_has_empty_frames),
		cmocka_unit_test(no_entries_append_nothing),
		cmocka_unit_test(every_action_has_upstreams_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
