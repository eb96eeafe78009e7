/*
 * test_summary.c - memory_summary() text, byte for byte.
 *
 * The golden tables are what upstream's memory_summary() prints for the
 * same numbers: torch/cuda/memory.py memory_summary (PyTorch >= 2.0:
 * _format_size with "B  /KiB/MiB" 6 wide, a "Requested memory" group) and
 * torch_npu/npu/memory.py memory_summary (_format_size with "B /KB/MB"
 * 7 wide, NPU labels, no "Requested memory"). Both print the header, the
 * nine (eight) pool groups with large pool before small pool, then the two
 * oversize groups, as 75-character lines framed by "|".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#include "fixtures.h"

/* The cell widths of every flavor add up to the same 75 columns. */
#define CELL_WIDTH 10
#define FIRST_CELL 26 /* "| " + 21 + " | " */
#define CELL_STEP 13  /* CELL_WIDTH + " | " */

static const char one_mib_cuda[] =
	"|===========================================================================|\n"
	"|                  PyTorch CUDA memory summary, device ID 0                 |\n"
	"|---------------------------------------------------------------------------|\n"
	"|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"
	"|===========================================================================|\n"
	"|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocated memory      |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active memory         |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Requested memory      |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved memory   |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable memory |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocations           |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active allocs         |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved segments |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable allocs |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize GPU segments |       0    |       0    |       0    |       0    |\n"
	"|===========================================================================|\n";

/* The same numbers as torch_npu prints them (torch_npu itself would pad
 * the request by 32 bytes and use the large pool; these are the same
 * stats rendered, not the same workload). */
static const char one_mib_npu[] =
	"|===========================================================================|\n"
	"|                  PyTorch NPU memory summary, device ID 0                  |\n"
	"|---------------------------------------------------------------------------|\n"
	"|            NPU OOMs: 0             |        npuMalloc retries: 0          |\n"
	"|===========================================================================|\n"
	"|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocated memory      |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|       from large pool |       0 KB |       0 KB |       0 KB |       0 B  |\n"
	"|       from small pool |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active memory         |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|       from large pool |       0 KB |       0 KB |       0 KB |       0 B  |\n"
	"|       from small pool |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| NPU reserved memory   |    2048 KB |    2048 KB |    2048 KB |       0 B  |\n"
	"|       from large pool |       0 KB |       0 KB |       0 KB |       0 B  |\n"
	"|       from small pool |    2048 KB |    2048 KB |    2048 KB |       0 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable memory |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|       from large pool |       0 KB |       0 KB |       0 KB |       0 B  |\n"
	"|       from small pool |    1024 KB |    1024 KB |    1024 KB |       0 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocations           |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active allocs         |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| NPU reserved segments |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable allocs |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize NPU segments |       0    |       0    |       0    |       0    |\n"
	"|===========================================================================|\n";

static const char worked_example_cuda[] =
	"|===========================================================================|\n"
	"|                  PyTorch CUDA memory summary, device ID 0                 |\n"
	"|---------------------------------------------------------------------------|\n"
	"|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"
	"|===========================================================================|\n"
	"|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocated memory      |   3072 B   |   4096 B   |   4096 B   |   1024 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |   3072 B   |   4096 B   |   4096 B   |   1024 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active memory         |   3072 B   |   4096 B   |   4096 B   |   1024 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |   3072 B   |   4096 B   |   4096 B   |   1024 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Requested memory      |   3000 B   |   4000 B   |   4000 B   |   1000 B   |\n"
	"|       from large pool |      0 B   |      0 B   |      0 B   |      0 B   |\n"
	"|       from small pool |   3000 B   |   4000 B   |   4000 B   |   1000 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved memory   |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable memory |   2045 KiB |   2047 KiB |   2048 KiB |   3072 B   |\n"
	"|       from large pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n"
	"|       from small pool |   2045 KiB |   2047 KiB |   2048 KiB |   3072 B   |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocations           |       1    |       2    |       2    |       1    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       2    |       2    |       1    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active allocs         |       1    |       2    |       2    |       1    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       2    |       2    |       1    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| GPU reserved segments |       1    |       1    |       1    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable allocs |       2    |       2    |       2    |       0    |\n"
	"|       from large pool |       0    |       0    |       0    |       0    |\n"
	"|       from small pool |       2    |       2    |       2    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize GPU segments |       0    |       0    |       0    |       0    |\n"
	"|===========================================================================|\n";

/* abbreviated=True on device 2: only the "all" row of each group. */
static const char worked_example_npu_abbreviated[] =
	"|===========================================================================|\n"
	"|                  PyTorch NPU memory summary, device ID 2                  |\n"
	"|---------------------------------------------------------------------------|\n"
	"|            NPU OOMs: 0             |        npuMalloc retries: 0          |\n"
	"|===========================================================================|\n"
	"|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocated memory      |    3072 B  |    4096 B  |    4096 B  |    1024 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active memory         |    3072 B  |    4096 B  |    4096 B  |    1024 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| NPU reserved memory   |    2048 KB |    2048 KB |    2048 KB |       0 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable memory |    2045 KB |    2047 KB |    2048 KB |    3072 B  |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Allocations           |       1    |       2    |       2    |       1    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Active allocs         |       1    |       2    |       2    |       1    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| NPU reserved segments |       1    |       1    |       1    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Non-releasable allocs |       2    |       2    |       2    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
	"|---------------------------------------------------------------------------|\n"
	"| Oversize NPU segments |       0    |       0    |       0    |       0    |\n"
	"|===========================================================================|\n";

static char *render(const struct npa_stats *s, const struct npa_flavor *fl,
		    int device, bool abbreviated, struct sbuf *b)
{
	sbuf_init(b);
	assert_int_equal(report_summary(b, s, fl, device, abbreviated), 0);
	return b->data;
}

static void assert_summary(const struct npa_stats *s,
			   const struct npa_flavor *fl, int device,
			   bool abbreviated, const char *expected)
{
	struct sbuf b;
	assert_string_equal(render(s, fl, device, abbreviated, &b), expected);
	assert_int_equal(b.len, strlen(expected));
	sbuf_release(&b);
}

/* Cell `k` (0 = Cur Usage .. 3 = Tot Freed) of the row named `label`. */
static void row_cell(const struct npa_stats *s, const struct npa_flavor *fl,
		     const char *label, int k, char cell[CELL_WIDTH + 1])
{
	struct sbuf b;
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "| %-21s |", label);
	const char *row = strstr(render(s, fl, 0, false, &b), prefix);
	assert_non_null(row);
	memcpy(cell, row + FIRST_CELL + k * CELL_STEP, CELL_WIDTH);
	cell[CELL_WIDTH] = '\0';
	sbuf_release(&b);
}

static void allocated_cell(const struct npa_flavor *fl, int64_t bytes,
			   const char *expected)
{
	struct npa_stats s = { 0 };
	char cell[CELL_WIDTH + 1];
	s.allocated_bytes[NPA_STAT_ALL].current = bytes;
	row_cell(&s, fl, "Allocated memory", 0, cell);
	assert_string_equal(cell, expected);
}

static void allocations_cell(int64_t count, const char *expected)
{
	struct npa_stats s = { 0 };
	char cell[CELL_WIDTH + 1];
	s.allocation[NPA_STAT_ALL].current = count;
	row_cell(&s, &npa_flavor_cuda, "Allocations", 0, cell);
	assert_string_equal(cell, expected);
}

static void cuda_one_mib_tensor_matches_upstream(void **state)
{
	(void)state;
	struct npa_stats s;
	fixture_one_mib_tensor(&s);
	assert_summary(&s, &npa_flavor_cuda, 0, false, one_mib_cuda);
}

static void npu_one_mib_tensor_matches_torch_npu(void **state)
{
	(void)state;
	struct npa_stats s;
	fixture_one_mib_tensor(&s);
	assert_summary(&s, &npa_flavor_npu, 0, false, one_mib_npu);
}

static void cuda_worked_example_matches_upstream(void **state)
{
	(void)state;
	struct npa_stats s;
	fixture_worked_example(&s);
	assert_summary(&s, &npa_flavor_cuda, 0, false, worked_example_cuda);
}

static void abbreviated_keeps_only_the_all_rows(void **state)
{
	(void)state;
	struct npa_stats s;
	fixture_worked_example(&s);
	assert_summary(&s, &npa_flavor_npu, 2, true,
		       worked_example_npu_abbreviated);
}

static void every_line_is_77_columns(void **state)
{
	(void)state;
	const struct npa_flavor *flavors[] = { &npa_flavor_cuda, &npa_flavor_npu };
	struct npa_stats s;
	fixture_distinct(&s);
	for (int f = 0; f < 2; f++) {
		struct sbuf b;
		int lines = 0;
		for (const char *p = render(&s, flavors[f], 1, false, &b); *p;
		     lines++) {
			const char *nl = strchr(p, '\n');
			assert_non_null(nl);
			assert_int_equal(nl - p, 77);
			p = nl + 1;
		}
		/* 6 header + 9 or 8 groups of 4 + 2 oversize groups of 2 + 1 */
		assert_int_equal(lines, f == 0 ? 47 : 43);
		sbuf_release(&b);
	}
}

static void cuda_786431_bytes_stay_bytes(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_cuda, 786431, "786431 B  ");
}

static void cuda_786432_bytes_are_768_kib(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_cuda, 786432, "   768 KiB");
}

static void cuda_1048576_bytes_are_1024_kib(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_cuda, 1048576, "  1024 KiB");
}

static void cuda_805306368_bytes_are_768_mib(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_cuda, 805306368, "   768 MiB");
}

static void npu_786431_bytes_stay_bytes(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_npu, 786431, " 786431 B ");
}

static void npu_786432_bytes_are_768_kb(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_npu, 786432, "    768 KB");
}

static void npu_1048576_bytes_are_1024_kb(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_npu, 1048576, "   1024 KB");
}

static void npu_805306368_bytes_are_768_mb(void **state)
{
	(void)state;
	allocated_cell(&npa_flavor_npu, 805306368, "    768 MB");
}

static void count_749999_stays_plain(void **state)
{
	(void)state;
	allocations_cell(749999, " 749999   ");
}

static void count_750000_is_750_k(void **state)
{
	(void)state;
	allocations_cell(750000, "    750 K ");
}

/* Sub-rows take the unit of the "all" row and are floor-divided by it. */
static void pool_rows_use_the_unit_of_the_all_row(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	char cell[CELL_WIDTH + 1];
	s.allocated_bytes[NPA_STAT_ALL].current = 1048576;
	s.allocated_bytes[NPA_STAT_LARGE_POOL].current = 1048575;
	s.allocation[NPA_STAT_ALL].current = 750000;
	s.allocation[NPA_STAT_SMALL_POOL].current = 999;
	row_cell(&s, &npa_flavor_cuda, "      from large pool", 0, cell);
	assert_string_equal(cell, "  1023 KiB");
	struct sbuf b;
	assert_non_null(strstr(render(&s, &npa_flavor_cuda, 0, false, &b),
			       "| Allocations           |     750 K  |       0    |"
			       "       0    |       0    |\n"
			       "|       from large pool |       0 K  |       0    |"
			       "       0    |       0    |\n"
			       "|       from small pool |       0 K  |       0    |"
			       "       0    |       0    |\n"));
	sbuf_release(&b);
}

/* Python's // floors: a counter that went below zero by one byte still
 * reads -1 KiB, not 0. */
static void negative_values_floor_like_python(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	char cell[CELL_WIDTH + 1];
	s.allocated_bytes[NPA_STAT_ALL].current = 1048576;
	s.allocated_bytes[NPA_STAT_LARGE_POOL].current = -1;
	row_cell(&s, &npa_flavor_cuda, "      from large pool", 0, cell);
	assert_string_equal(cell, "    -1 KiB");
}

/* Oversize rows: every cell picks its unit from its own value. */
static void oversize_cells_scale_on_their_own(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	s.oversize_segments.peak = 750000;
	s.oversize_segments.allocated = 749999;
	struct sbuf b;
	assert_non_null(strstr(render(&s, &npa_flavor_npu, 0, false, &b),
			       "| Oversize NPU segments |       0    |     750 K  |"
			       "  749999    |       0    |\n"));
	sbuf_release(&b);
}

static void header_shows_device_ooms_and_retries(void **state)
{
	(void)state;
	struct npa_stats s = { 0 };
	s.num_ooms = 2;
	s.num_alloc_retries = 15;
	struct sbuf b;
	const char *text = render(&s, &npa_flavor_cuda, 3, false, &b);
	assert_non_null(strstr(text, "|                  PyTorch CUDA memory summary,"
				     " device ID 3                 |\n"));
	assert_non_null(strstr(text, "|            CUDA OOMs: 2            |"
				     "        cudaMalloc retries: 15        |\n"));
	sbuf_release(&b);
}

static void summary_appends_to_what_the_buffer_holds(void **state)
{
	(void)state;
	struct npa_stats s;
	struct sbuf b;
	fixture_one_mib_tensor(&s);
	sbuf_init(&b);
	sbuf_puts(&b, "device 0\n");
	assert_int_equal(report_summary(&b, &s, &npa_flavor_cuda, 0, false), 0);
	assert_int_equal(strncmp(b.data, "device 0\n", 9), 0);
	assert_string_equal(b.data + 9, one_mib_cuda);
	sbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda_one_mib_tensor_matches_upstream),
		cmocka_unit_test(npu_one_mib_tensor_matches_torch_npu),
		cmocka_unit_test(cuda_worked_example_matches_upstream),
		cmocka_unit_test(abbreviated_keeps_only_the_all_rows),
		cmocka_unit_test(every_line_is_77_columns),
		cmocka_unit_test(cuda_786431_bytes_stay_bytes),
		cmocka_unit_test(cuda_786432_bytes_are_768_kib),
		cmocka_unit_test(cuda_1048576_bytes_are_1024_kib),
		cmocka_unit_test(cuda_805306368_bytes_are_768_mib),
		cmocka_unit_test(npu_786431_bytes_stay_bytes),
		cmocka_unit_test(npu_786432_bytes_are_768_kb),
		cmocka_unit_test(npu_1048576_bytes_are_1024_kb),
		cmocka_unit_test(npu_805306368_bytes_are_768_mb),
		cmocka_unit_test(count_749999_stays_plain),
		cmocka_unit_test(count_750000_is_750_k),
		cmocka_unit_test(pool_rows_use_the_unit_of_the_all_row),
		cmocka_unit_test(negative_values_floor_like_python),
		cmocka_unit_test(oversize_cells_scale_on_their_own),
		cmocka_unit_test(header_shows_device_ooms_and_retries),
		cmocka_unit_test(summary_appends_to_what_the_buffer_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
