/*
 * summary.c - memory_summary(device, abbreviated), byte for byte.
 *
 * Reproduces memory_summary() of torch/cuda/memory.py (PyTorch >= 2.0,
 * binary units) and of torch_npu/npu/memory.py (decimal-looking "KB/MB"
 * labels, 7-wide numbers, no "Requested memory" group); the flavor table
 * holds everything that differs. Upstream builds a list of 75-character
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

/* Where a group's label comes from: fixed text or the flavor table. */
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
	bool requested_row; /* shown only when the flavor has that row */
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

static const struct size_units units_table[] = {
	[NPA_UNITS_DECIMAL_LABELS] = { "%7" PRId64 " %s",
				       { "B ", "KB", "MB", "GB", "TB", "PB" } },
	[NPA_UNITS_BINARY_LABELS] = { "%6" PRId64 " %s",
				      { "B  ", "KiB", "MiB", "GiB", "TiB", "PiB" } },
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
		 const struct npa_flavor *fl)
{
	if (g->kind == CELL_SIZE)
		size_cell(buf, v, pref, &units_table[fl->units]);
	else
		count_cell(buf, v, pref);
}

static const char *group_label(const struct group *g,
			       const struct npa_flavor *fl)
{
	switch (g->src) {
	case LABEL_RESERVED_MEMORY:
		return fl->reserved_memory_label;
	case LABEL_RESERVED_SEGMENTS:
		return fl->reserved_segments_label;
	case LABEL_OVERSIZE_SEGMENTS:
		return fl->oversize_segments_label;
	default:
		return g->label;
	}
}

/* " {name:<21} | {cur} | {peak} | {alloc} | {freed} ", units from `ref`. */
static void stat_row(struct sbuf *out, const char *name,
		     const struct npa_stat *st, const struct npa_stat *ref,
		     const struct group *g, const struct npa_flavor *fl)
{
	char c[4][CELL_LEN];
	cell(c[0], g, st->current, ref->current, fl);
	cell(c[1], g, st->peak, ref->peak, fl);
	cell(c[2], g, st->allocated, ref->allocated, fl);
	cell(c[3], g, st->freed, ref->freed, fl);
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
		   const struct npa_flavor *fl, int device)
{
	rule(out, '=');
	sbuf_printf(out, "| %16s %s%-*d |\n", "", fl->summary_title,
		    fl->device_id_width, device);
	rule(out, '-');
	sbuf_printf(out, "|  %9s %s%-*" PRId64 " | %6s %s%-*" PRId64 "  |\n",
		    "", fl->ooms_label, fl->ooms_width, s->num_ooms, "",
		    fl->retries_label, fl->retries_width, s->num_alloc_retries);
	rule(out, '=');
	sbuf_puts(out, "|        Metric         | Cur Usage  | Peak Usage |"
		       " Tot Alloc  | Tot Freed  |\n");
}

static void pool_group(struct sbuf *out, const struct npa_stats *s,
		       const struct group *g, const struct npa_flavor *fl,
		       bool abbreviated)
{
	const struct npa_stat *arr =
		(const struct npa_stat *)((const char *)s + g->offset);
	rule(out, '-');
	stat_row(out, group_label(g, fl), &arr[NPA_STAT_ALL], &arr[NPA_STAT_ALL],
		 g, fl);
	if (abbreviated)
		return;
	for (size_t i = 0; i < sizeof(pool_rows) / sizeof(pool_rows[0]); i++)
		stat_row(out, pool_rows[i].label, &arr[pool_rows[i].type],
			 &arr[NPA_STAT_ALL], g, fl);
}

/* Oversize rows have no pool split; each cell is its own unit reference. */
static void single_group(struct sbuf *out, const struct npa_stats *s,
			 const struct group *g, const struct npa_flavor *fl)
{
	const struct npa_stat *st =
		(const struct npa_stat *)((const char *)s + g->offset);
	rule(out, '-');
	stat_row(out, group_label(g, fl), st, st, g, fl);
}

int report_summary(struct sbuf *out, const struct npa_stats *s,
		   const struct npa_flavor *fl, int device, bool abbreviated)
{
	header(out, s, fl, device);
	for (size_t i = 0; i < sizeof(pool_groups) / sizeof(pool_groups[0]); i++) {
		const struct group *g = &pool_groups[i];
		if (!g->requested_row || fl->requested_memory_row)
			pool_group(out, s, g, fl, abbreviated);
	}
	for (size_t i = 0; i < sizeof(oversize_groups) / sizeof(oversize_groups[0]); i++)
		single_group(out, s, &oversize_groups[i], fl);
	rule(out, '=');
	return out->error;
}
