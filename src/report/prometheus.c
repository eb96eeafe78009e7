/*
 * prometheus.c - every device's memory_stats() in the Prometheus text
 * exposition format, for node_exporter's textfile collector.
 *
 * Families follow the stats schema, so the metrics hold exactly the keys of
 * stats/deviceN: a stat array is one family labelled by device, pool and
 * stat; a single stat the same without pool; a plain counter one family
 * per name. All samples of a family are one group, as the format requires.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "report.h"

static const char *const pool_names[NPA_STAT_TYPES] = NPA_STAT_TYPE_NAMES;
static const char *const field_names[] = NPA_STAT_FIELD_NAMES;

#define PROM_PREFIX "npumemfs_"

static int64_t field_of(const struct npa_stat *st, int field)
{
	const int64_t v[] = { st->current, st->peak, st->allocated, st->freed };
	return v[field];
}

/*
 * current and peak are levels; allocated and freed are sums that
 * reset_accumulated_stats sets back to 0. One family holds all four, so it
 * is a gauge: a counter must never go down.
 */
static void family_head(struct sbuf *out, const char *name, const char *suffix,
			const char *type, const char *what)
{
	sbuf_printf(out, "# HELP " PROM_PREFIX "%s%s memory_stats() %s%s of each device\n",
		    name, suffix, name, what);
	sbuf_printf(out, "# TYPE " PROM_PREFIX "%s%s %s\n", name, suffix, type);
}

static void put_array(struct sbuf *out, const char *name, const struct npa_stats *stats,
		      size_t offset, int ndev)
{
	family_head(out, name, "", "gauge", ".POOL.STAT");
	for (int d = 0; d < ndev; d++) {
		const struct npa_stat *arr =
			(const struct npa_stat *)((const char *)&stats[d] + offset);
		for (int t = 0; t < NPA_STAT_TYPES; t++)
			for (int f = 0; f < 4; f++)
				sbuf_printf(out,
					    PROM_PREFIX "%s{device=\"%d\",pool=\"%s\",stat=\"%s\"} %" PRId64 "\n",
					    name, d, pool_names[t], field_names[f],
					    field_of(&arr[t], f));
	}
}

static void put_single(struct sbuf *out, const char *name, const struct npa_stats *stats,
		       size_t offset, int ndev)
{
	family_head(out, name, "", "gauge", ".STAT");
	for (int d = 0; d < ndev; d++) {
		const struct npa_stat *st =
			(const struct npa_stat *)((const char *)&stats[d] + offset);
		for (int f = 0; f < 4; f++)
			sbuf_printf(out, PROM_PREFIX "%s{device=\"%d\",stat=\"%s\"} %" PRId64 "\n",
				    name, d, field_names[f], field_of(st, f));
	}
}

/* max_split_size is a setting, a level; the other scalars count events. */
static void put_scalar(struct sbuf *out, const char *name, const struct npa_stats *stats,
		       size_t offset, int ndev, const struct npa_flavor *fl)
{
	bool gauge = strcmp(name, "max_split_size") == 0;
	const char *suffix = gauge ? "" : "_total";

	if (!fl->oom_rejections_stat && strcmp(name, "num_oom_rejections") == 0)
		return;
	family_head(out, name, suffix, gauge ? "gauge" : "counter", "");
	for (int d = 0; d < ndev; d++) {
		int64_t v = *(const int64_t *)((const char *)&stats[d] + offset);
		sbuf_printf(out, PROM_PREFIX "%s%s{device=\"%d\"} %" PRId64 "\n", name,
			    suffix, d, v);
	}
}

int report_prometheus(struct sbuf *out, const struct npa_stats *stats, int device_count,
		      const struct npa_flavor *fl)
{
#define NPA_X(name)                                                            \
	put_array(out, #name, stats, offsetof(struct npa_stats, name), device_count);
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_scalar(out, #name, stats, offsetof(struct npa_stats, name), device_count, fl);
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_single(out, #name, stats, offsetof(struct npa_stats, name), device_count);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
	return out->error;
}
