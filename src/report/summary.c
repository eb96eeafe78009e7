/*
 * summary.c - memory_summary(device, abbreviated), byte for byte.
 *
 * Reproduces memory_summary() of torch/cuda/memory.py (PyTorch >= 2.0,
 * binary units) and of torch_npu/npu/memory.py (decimal-looking "KB/MB"
 * labels, 7-wide numbers, no "Requested memory" group); the table of
 * labels below holds everything that differs, one row per upstream. Upstream builds a list of 75-character
 * lines and joins them with "|\n|" between bars, so every line here is
 * written as "|" + line + "|\n".
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define LINE_WIDTH 75
#define CELL_LEN 32

enum cell_kind { CELL_SIZE, CELL_COUNT };

/* Where a group's label comes from: fixed text or the upstream's labels. */
enum label_src {
	LABEL_FIXED,
	LABEL_RESERVED_MEMORY,
	LABEL_RESERVED_SEGMENTS,
	LABEL_OVERSIZE_SEGMENTS,
};

struct group {
	size_t offset; /* of the stat (array) in struct npa_stats */
	enum cell_kind kind;
	enum label_src src;
	const char *label;
	bool requested_row; /* shown only when the upstream has that row */
};

#define GROUP(field, kind, src, label, req) \
	{ offsetof(struct npa_stats, field), kind, src, label, req }

/* The order of upstream's metrics_to_display. */
static const struct group pool_groups[] = {
	GROUP(allocated_bytes, CELL_SIZE, LABEL_FIXED, "Allocated memory", false),
	GROUP(active_bytes, CELL_SIZE, LABEL_FIXED, "Active memory", false),
	GROUP(requested_bytes, CELL_SIZE, LABEL_FIXED, "Requested memory", true),
	GROUP(reserved_bytes, CELL_SIZE, LABEL_RESERVED_MEMORY, NULL, false),
	GROUP(inactive_split_bytes, CELL_SIZE, LABEL_FIXED, "Non-releasable memory", false),
	GROUP(allocation, CELL_COUNT, LABEL_FIXED, "Allocations", false),
	GROUP(active, CELL_COUNT, LABEL_FIXED, "Active allocs", false),
	GROUP(segment, CELL_COUNT, LABEL_RESERVED_SEGMENTS, NULL, false),
	GROUP(inactive_split, CELL_COUNT, LABEL_FIXED, "Non-releasable allocs", false),
};

static const struct group oversize_groups[] = {
	GROUP(oversize_allocations, CELL_COUNT, LABEL_FIXED, "Oversize allocations", false),
	GROUP(oversize_segments, CELL_COUNT, LABEL_OVERSIZE_SEGMENTS, NULL, false),
};

/* Sub-rows in upstream's order: large pool before small. */
static const struct {
	enum npa_stat_type type;
	const char *label;
} pool_rows[] = {
	{ NPA_STAT_LARGE_POOL, "      from large pool" },
	{ NPA_STAT_SMALL_POOL, "      from small pool" },
};

struct size_units {
	const char *fmt;
	const char *prefix[6];
};

/* The texts and widths in which the upstreams' summaries differ. */
struct labels {
	struct size_units units;
	bool requested_memory_row;
	const char *summary_title;
	int device_id_width;         /* {device:<N d} */
	const char *ooms_label;
	int ooms_width;
	const char *retries_label;
	int retries_width;
	const char *reserved_memory_label;
	const char *reserved_segments_label;
	const char *oversize_segments_label;
};

static const struct labels labels_of[] = {
	/* "{:7d} {B /KB/MB/GB}" */
	[NPA_UPSTREAM_TORCH_NPU] = {
		.units = { "%7" PRId64 " %s", { "B ", "KB", "MB", "GB", "TB", "PB" } },
		.requested_memory_row = false,
		.summary_title = "PyTorch NPU memory summary, device ID ",
		.device_id_width = 18,
		.ooms_label = "NPU OOMs: ",
		.ooms_width = 13,
		.retries_label = "npuMalloc retries: ",
		.retries_width = 9,
		.reserved_memory_label = "NPU reserved memory",
		.reserved_segments_label = "NPU reserved segments",
		.oversize_segments_label = "Oversize NPU segments",
	},
	/* "{:6d} {B  /KiB/MiB/GiB}" (PyTorch >= 2.0) */
	[NPA_UPSTREAM_PYTORCH] = {
		.units = { "%6" PRId64 " %s", { "B  ", "KiB", "MiB", "GiB", "TiB", "PiB" } },
		.requested_memory_row = true,
		.summary_title = "PyTorch CUDA memory summary, device ID ",
		.device_id_width = 17,
		.ooms_label = "CUDA OOMs: ",
		.ooms_width = 12,
		.retries_label = "cudaMalloc retries: ",
		.retries_width = 8,
		.reserved_memory_label = "GPU reserved memory",
		.reserved_segments_label = "GPU reserved segments",
		.oversize_segments_label = "Oversize GPU segments",
	},
};

static const char *const count_prefix[] = { " ", "K", "M" };

/* Python's // : rounds toward minus infinity. */
static int64_t floor_div(int64_t v, int64_t d)
{
	int64_t q = v / d;
	return (v % d != 0 && v < 0) ? q - 1 : q;
}

/*
 * Upstream's unit loop: move to the next prefix while the row's reference
 * value is >= threshold, dividing the value with // and the reference with
 * true division. Python's first true division of an int rounds once, the
 * same as converting to double and dividing by 1024; for 1000 the two agree
 * for every reference below 2^53.
 */
static int pick_unit(int64_t *v, int64_t pref, int64_t base, double threshold,
		     int nprefix)
{
	double p = (double)pref;
	int i = 0;
	while (i + 1 < nprefix && !(p < threshold)) {
		*v = floor_div(*v, base);
		p /= (double)base;
		i++;
	}
	return i;
}

/* _format_size(sz, pref_sz) */
static void size_cell(char *buf, int64_t v, int64_t pref,
		      const struct size_units *u)
{
	int i = pick_unit(&v, pref, 1024, 768.0 * 1024, 6);
	snprintf(buf, CELL_LEN, u->fmt, v, u->prefix[i]);
}

/* _format_count(cnt, pref_cnt) */
static void count_cell(char *buf, int64_t v, int64_t pref)
{
	int i = pick_unit(&v, pref, 1000, 750.0 * 1000, 3);
	snprintf(buf, CELL_LEN, "%7" PRId64 " %s ", v, count_prefix[i]);
}

static void cell(char *buf, const struct group *g, int64_t v, int64_t pref,
		 const struct labels *lb)
{
	if (g->kind == CELL_SIZE)
		size_cell(buf, v, pref, &lb->units);
	else
		count_cell(buf, v, pref);
}

static const char *group_label(const struct group *g,
			       const struct labels *lb)
{
	switch (g->src) {
	case LABEL_RESERVED_MEMORY:
		return lb->reserved_memory_label;
	case LABEL_RESERVED_SEGMENTS:
		return lb->reserved_segments_label;
	case LABEL_OVERSIZE_SEGMENTS:
		return lb->oversize_segments_label;
	default:
		return g->label;
	}
}

/* " {name:<21} | {cur} | {peak} | {alloc} | {freed} ", units from `ref`. */
static void stat_row(struct sbuf *out, const char *name,
		     const struct npa_stat *st, const struct npa_stat *ref,
		     const struct group *g, const struct labels *lb)
{
	char c[4][CELL_LEN];
	cell(c[0], g, st->current, ref->current, lb);
	cell(c[1], g, st->peak, ref->peak, lb);
	cell(c[2], g, st->allocated, ref->allocated, lb);
	cell(c[3], g, st->freed, ref->freed, lb);
	sbuf_printf(out, "| %-21s | %s | %s | %s | %s |\n", name, c[0], c[1],
		    c[2], c[3]);
}

static void rule(struct sbuf *out, char c)
{
	char line[LINE_WIDTH + 1];
	memset(line, c, LINE_WIDTH);
	line[LINE_WIDTH] = '\0';
	sbuf_printf(out, "|%s|\n", line);
}

static void header(struct sbuf *out, const struct npa_stats *s,
		   const struct labels *lb, int device)
{
	rule(out, '=');
	sbuf_printf(out, "| %16s %s%-*d |\n", "", lb->summary_title,
		    lb->device_id_width, device);
	rule(out, '-');
	sbuf_printf(out, "|  %9s %s%-*" PRId64 " | %6s %s%-*" PRId64 "  |\n",
		    "", lb->ooms_label, lb->ooms_width, s->num_ooms, "",
		    lb->retries_label, lb->retries_width, s->num_alloc_retries);
	rule(out, '=');
	sbuf_puts(out, "|        Metric         | Cur Usage  | Peak Usage |"
		       " Tot Alloc  | Tot Freed  |\n");
}

static void pool_group(struct sbuf *out, const struct npa_stats *s,
		       const struct group *g, const struct labels *lb,
		       bool abbreviated)
{
	const struct npa_stat *arr =
		(const struct npa_stat *)((const char *)s + g->offset);
	rule(out, '-');
	stat_row(out, group_label(g, lb), &arr[NPA_STAT_ALL], &arr[NPA_STAT_ALL],
		 g, lb);
	if (abbreviated)
		return;
	for (size_t i = 0; i < sizeof(pool_rows) / sizeof(pool_rows[0]); i++)
		stat_row(out, pool_rows[i].label, &arr[pool_rows[i].type],
			 &arr[NPA_STAT_ALL], g, lb);
}

/* Oversize rows have no pool split; each cell is its own unit reference. */
static void single_group(struct sbuf *out, const struct npa_stats *s,
			 const struct group *g, const struct labels *lb)
{
	const struct npa_stat *st =
		(const struct npa_stat *)((const char *)s + g->offset);
	rule(out, '-');
	stat_row(out, group_label(g, lb), st, st, g, lb);
}

int report_summary(struct sbuf *out, const struct npa_stats *s,
		   const struct npa_flavor *fl, int device, bool abbreviated)
{
	const struct labels *lb = &labels_of[fl->upstream];

	header(out, s, lb, device);
	for (size_t i = 0; i < sizeof(pool_groups) / sizeof(pool_groups[0]); i++) {
		const struct group *g = &pool_groups[i];
		if (!g->requested_row || lb->requested_memory_row)
			pool_group(out, s, g, lb, abbreviated);
	}
	for (size_t i = 0; i < sizeof(oversize_groups) / sizeof(oversize_groups[0]); i++)
		single_group(out, s, &oversize_groups[i], lb);
	rule(out, '=');
	return out->error;
}
