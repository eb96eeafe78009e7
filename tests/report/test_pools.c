/*
 * test_pools.c - pools/deviceN, its JSON and the per-pool gauges, from a
 * list of npa_pool_info: the exact table, the same values in JSON, one
 * sample a pool and device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"

static const struct npa_pool_info graph_pool = {
	.id = { 1, 0 }, .use_count = 1, .device_mallocs = 1, .segments = 1,
	.reserved_bytes = 2097152, .allocated_bytes = 4096, .active_bytes = 4096,
};

static const struct npa_pool_info mempool = {
	.id = { 0, 12 }, .use_count = 2, .use_on_oom = true, .no_split = true,
	.routing = true, .device_mallocs = 2, .segments = 2,
	.reserved_bytes = 23068672, .allocated_bytes = 3146240, .active_bytes = 3146240,
	.allocator = "plugin2",
};

static const struct npa_pool_info freeable = {
	.id = { 3, 0 }, .freeable = true,
};

static void table_has_a_header_and_a_line_per_pool(void **state)
{
	struct npa_pool_info pools[] = { graph_pool, mempool, freeable };
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_pools_text(&out, pools, 3), 0);
	assert_string_equal(out.data,
		"pool         use_count freeable device_mallocs segments reserved_bytes allocated_bytes active_bytes use_on_oom no_split routing allocator\n"
		"1_0                  1       no              1        1        2097152            4096         4096         no       no      no   caching\n"
		"0_12                 2       no              2        2       23068672         3146240      3146240        yes      yes     yes   plugin2\n"
		"3_0                  0      yes              0        0              0               0            0         no       no      no   caching\n");
	sbuf_release(&out);
}

static void no_pools_is_the_header_alone(void **state)
{
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_pools_text(&out, NULL, 0), 0);
	assert_non_null(strstr(out.data, "pool "));
	assert_ptr_equal(strchr(out.data, '\n') + 1, out.data + out.len);
	sbuf_release(&out);
	sbuf_init(&out);
	assert_int_equal(report_pools_json(&out, NULL, 0), 0);
	assert_string_equal(out.data, "[]\n");
	sbuf_release(&out);
}

static void json_has_the_table_values(void **state)
{
	struct npa_pool_info pools[] = { mempool };
	struct sbuf out;
	json_error_t e;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_pools_json(&out, pools, 1), 0);
	json_t *list = json_loads(out.data, 0, &e);
	assert_non_null(list);
	json_t *p = json_array_get(list, 0);
	assert_string_equal(json_string_value(json_object_get(p, "pool")), "0_12");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(p, "id"), 1)), 12);
	assert_int_equal(json_integer_value(json_object_get(p, "use_count")), 2);
	assert_int_equal(json_integer_value(json_object_get(p, "reserved_bytes")), 23068672);
	assert_true(json_is_true(json_object_get(p, "use_on_oom")));
	assert_true(json_is_true(json_object_get(p, "routing")));
	assert_true(json_is_false(json_object_get(p, "freeable")));
	assert_string_equal(json_string_value(json_object_get(p, "allocator")), "plugin2");
	json_decref(list);
	sbuf_release(&out);
}

static void gauges_label_each_pool_with_its_device(void **state)
{
	const struct npa_pool_info dev0[] = { graph_pool }, dev1[] = { mempool, freeable };
	const struct npa_pool_info *const lists[] = { dev0, dev1 };
	const size_t counts[] = { 1, 2 };
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_prometheus_pools(&out, lists, counts, 2), 0);
	assert_non_null(strstr(out.data,
		"# TYPE npumemfs_pool_reserved_bytes gauge\n"
		"npumemfs_pool_reserved_bytes{device=\"0\",pool=\"1_0\"} 2097152\n"
		"npumemfs_pool_reserved_bytes{device=\"1\",pool=\"0_12\"} 23068672\n"
		"npumemfs_pool_reserved_bytes{device=\"1\",pool=\"3_0\"} 0\n"));
	assert_non_null(strstr(out.data, "npumemfs_pool_uses{device=\"1\",pool=\"0_12\"} 2\n"));
	assert_non_null(strstr(out.data, "npumemfs_pool_segments{device=\"0\",pool=\"1_0\"} 1\n"));
	assert_non_null(strstr(out.data, "npumemfs_pool_allocated_bytes{device=\"0\",pool=\"1_0\"} 4096\n"));
	assert_non_null(strstr(out.data, "npumemfs_pool_active_bytes{device=\"1\",pool=\"0_12\"} 3146240\n"));
	sbuf_release(&out);
}

/* npumem-replay's lines: the summary's, the flat keys, and a member added
 * to a stats object that still parses. */
static void replay_lines_sum_the_pools(void **state)
{
	struct npa_pool_info pools[] = { graph_pool, mempool };
	struct sbuf out;

	(void)state;
	sbuf_init(&out);
	assert_int_equal(report_graph_pools_text(&out, pools, 2, 0), 0);
	assert_string_equal(out.data,
		"Graph pools of device 0:\n"
		"  pool (1,0): 2097152 bytes reserved in 1 segment, 4096 allocated, use_count 1\n"
		"  pool (0,12): 23068672 bytes reserved in 2 segments, 3146240 allocated, use_count 2\n"
		"graph pools hold 25165824 bytes\n");
	out.len = 0;
	assert_int_equal(report_graph_pools_flat(&out, pools, 1), 0);
	assert_string_equal(out.data,
		"graph_pools.1_0.allocated_bytes 4096\n"
		"graph_pools.1_0.reserved_bytes 2097152\n"
		"graph_pools.1_0.segments 1\n"
		"graph_pools.1_0.use_count 1\n"
		"graph_pools.reserved_bytes 2097152\n");
	sbuf_release(&out);
}

static void replay_json_is_the_last_member(void **state)
{
	struct npa_pool_info pools[] = { mempool };
	struct sbuf out;
	json_t *root;

	(void)state;
	sbuf_init(&out);
	sbuf_puts(&out, "{\n  \"num_ooms\": 0\n}\n");
	assert_int_equal(report_graph_pools_json(&out, pools, 1), 0);
	root = json_loads(out.data, 0, NULL);
	assert_non_null(root);
	assert_int_equal(json_integer_value(json_object_get(root, "num_ooms")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "graph_pools"),
							    "reserved_bytes")), 23068672);
	assert_string_equal(out.data + out.len - 6, "  }\n}\n");
	json_decref(root);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_has_a_header_and_a_line_per_pool),
		cmocka_unit_test(no_pools_is_the_header_alone),
		cmocka_unit_test(json_has_the_table_values),
		cmocka_unit_test(gauges_label_each_pool_with_its_device),
		cmocka_unit_test(replay_lines_sum_the_pools),
		cmocka_unit_test(replay_json_is_the_last_member),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
