/*
 * test_snapshot_json.c - memory_snapshot() segments as JSON, keys in
 * upstream's order (torch/csrc/cuda/Module.cpp: device, address,
 * total_size, allocated_size, active_size, requested_size, stream,
 * segment_type, segment_pool_id, is_expandable, frames, blocks; a block:
 * address, size, requested_size, state, frames). A frame is a list of one
 * {name, filename, line} dict; a segment with one has it after its blocks,
 * where upstream adds it once symbolized.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"

#include "jansson_budget.h"

#define S1 0x7f3a40000000ull /* 139888158572544 */
#define S2 0x7f3a60000000ull /* 139888695443456 */

#define NO_FRAME { NULL, NULL, 0 }
#define TRACE_LINE_7 { "/work/run.trace", "alloc", 7 }
#define TENSOR_T { "/mnt/tensors/device0/t", "truncate", 0 }

/* Worked example, step 4: x freed, y (3000 bytes, trace line 7) live, rest
 * inactive; the segment was made before recording began. */
static struct npa_block_info small_blocks[] = {
	{ S1, 1024, 1000, NPA_BLOCK_INACTIVE, NO_FRAME },
	{ S1 + 1024, 3072, 3000, NPA_BLOCK_ACTIVE_ALLOCATED, TRACE_LINE_7 },
	{ S1 + 4096, 2093056, 0, NPA_BLOCK_INACTIVE, NO_FRAME },
};

/* A 1048577-byte tensor freed while stream 1 still uses it; its truncate
 * made the segment too. */
static struct npa_block_info large_blocks[] = {
	{ S2, 1049088, 1048577, NPA_BLOCK_ACTIVE_PENDING_FREE, TENSOR_T },
	{ S2 + 1049088, 19922432, 0, NPA_BLOCK_INACTIVE, NO_FRAME },
};

static struct npa_segment_info segments[] = {
	{ .device = 0, .address = S1, .total_size = 2097152,
	  .allocated_size = 3072, .active_size = 3072, .requested_size = 3000,
	  .stream = 0, .is_large = false, .is_expandable = false,
	  .pool_id = { 0, 0 }, .nblocks = 3, .blocks = small_blocks },
	{ .device = 0, .address = S2, .total_size = 20971520,
	  .allocated_size = 0, .active_size = 1049088,
	  .requested_size = 1048577, .stream = 1, .is_large = true,
	  .is_expandable = true, .pool_id = { 0, 1 }, .frame = TENSOR_T, .nblocks = 2,
	  .blocks = large_blocks },
};

static const char two_segments[] =
	"[\n"
	"  {\n"
	"    \"device\": 0,\n"
	"    \"address\": 139888158572544,\n"
	"    \"total_size\": 2097152,\n"
	"    \"allocated_size\": 3072,\n"
	"    \"active_size\": 3072,\n"
	"    \"requested_size\": 3000,\n"
	"    \"stream\": 0,\n"
	"    \"segment_type\": \"small\",\n"
	"    \"segment_pool_id\": [\n"
	"      0,\n"
	"      0\n"
	"    ],\n"
	"    \"is_expandable\": false,\n"
	"    \"frames\": [],\n"
	"    \"blocks\": [\n"
	"      {\n"
	"        \"address\": 139888158572544,\n"
	"        \"size\": 1024,\n"
	"        \"requested_size\": 1000,\n"
	"        \"state\": \"inactive\",\n"
	"        \"frames\": []\n"
	"      },\n"
	"      {\n"
	"        \"address\": 139888158573568,\n"
	"        \"size\": 3072,\n"
	"        \"requested_size\": 3000,\n"
	"        \"state\": \"active_allocated\",\n"
	"        \"frames\": [\n"
	"          {\n"
	"            \"name\": \"alloc\",\n"
	"            \"filename\": \"/work/run.trace\",\n"
	"            \"line\": 7\n"
	"          }\n"
	"        ]\n"
	"      },\n"
	"      {\n"
	"        \"address\": 139888158576640,\n"
	"        \"size\": 2093056,\n"
	"        \"requested_size\": 0,\n"
	"        \"state\": \"inactive\",\n"
	"        \"frames\": []\n"
	"      }\n"
	"    ]\n"
	"  },\n"
	"  {\n"
	"    \"device\": 0,\n"
	"    \"address\": 139888695443456,\n"
	"    \"total_size\": 20971520,\n"
	"    \"allocated_size\": 0,\n"
	"    \"active_size\": 1049088,\n"
	"    \"requested_size\": 1048577,\n"
	"    \"stream\": 1,\n"
	"    \"segment_type\": \"large\",\n"
	"    \"segment_pool_id\": [\n"
	"      0,\n"
	"      1\n"
	"    ],\n"
	"    \"is_expandable\": true,\n"
	"    \"blocks\": [\n"
	"      {\n"
	"        \"address\": 139888695443456,\n"
	"        \"size\": 1049088,\n"
	"        \"requested_size\": 1048577,\n"
	"        \"state\": \"active_pending_free\",\n"
	"        \"frames\": [\n"
	"          {\n"
	"            \"name\": \"truncate\",\n"
	"            \"filename\": \"/mnt/tensors/device0/t\",\n"
	"            \"line\": 0\n"
	"          }\n"
	"        ]\n"
	"      },\n"
	"      {\n"
	"        \"address\": 139888696492544,\n"
	"        \"size\": 19922432,\n"
	"        \"requested_size\": 0,\n"
	"        \"state\": \"inactive\",\n"
	"        \"frames\": []\n"
	"      }\n"
	"    ],\n"
	"    \"frames\": [\n"
	"      {\n"
	"        \"name\": \"truncate\",\n"
	"        \"filename\": \"/mnt/tensors/device0/t\",\n"
	"        \"line\": 0\n"
	"      }\n"
	"    ]\n"
	"  }\n"
	"]\n";

static void two_segments_print_in_upstream_key_order_with_their_frames(void **state)
{
	(void)state;
	struct npa_snapshot snap = { .nsegments = 2, .segments = segments };
	struct sbuf b;
	sbuf_init(&b);
	assert_int_equal(report_snapshot_json(&b, &snap), 0);
	assert_string_equal(b.data, two_segments);
	sbuf_release(&b);
}

static void no_segments_is_an_empty_list(void **state)
{
	(void)state;
	struct npa_snapshot snap = { 0 };
	struct sbuf b;
	sbuf_init(&b);
	assert_int_equal(report_snapshot_json(&b, &snap), 0);
	assert_string_equal(b.data, "[]\n");
	sbuf_release(&b);
}

/* Every allocation that can fail on the way is one of these budgets. */
static void enomem_at_any_point_is_reported_and_leaks_nothing(void **state)
{
	(void)state;
	struct npa_snapshot snap = { .nsegments = 2, .segments = segments };
	struct sbuf b;
	sbuf_init(&b);
	int failures = 0;
	for (int budget = 0; budget < 200; budget++) {
		jansson_budget_set(budget);
		sbuf_reset(&b);
		int rc = report_snapshot_json(&b, &snap);
		if (rc != 0) {
			assert_int_equal(rc, -ENOMEM);
			failures++;
		} else {
			assert_string_equal(b.data, two_segments);
		}
	}
	assert_true(failures > 20);
	assert_true(failures < 200); /* a large enough budget succeeds */
	sbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_segments_print_in_upstream_key_order_with_their_frames),
		cmocka_unit_test(no_segments_is_an_empty_list),
		cmocka_unit_test_teardown(
			enomem_at_any_point_is_reported_and_leaks_nothing,
			jansson_budget_restore),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
