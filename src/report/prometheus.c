/*
 * prometheus.c - every device's memory_stats() in the Prometheus text
 * exposition format, for node_exporter's textfile collector.
 *
 * Families follow the stats schema, so the metrics hold exactly the keys of
 * stats/deviceN: a stat array's current and peak are one gauge family
 * labelled by device, pool and stat, its allocated and freed totals two
 * counters (NAME_allocated_total, NAME_freed_total) labelled by device and
 * pool; a single stat the same without pool; a plain counter one family
 * per name. All samples of a family are one group, as the format requires.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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

/* current and peak are levels; allocated and freed are running totals. */
enum { LEVELS = 2, FIELDS = 4 };

static void family_head(struct sbuf *out, const char *name, const char *suffix,
			const char *type, const char *what)
{
	sbuf_printf(out, "# HELP " PROM_PREFIX "%s%s memory_stats() %s%s of each device\n",
		    name, suffix, name, what);
	sbuf_printf(out, "# TYPE " PROM_PREFIX "%s%s %s\n", name, suffix, type);
}

static const struct npa_stat *stat_at(const struct npa_stats *stats, int d, size_t offset)
{
	return (const struct npa_stat *)((const char *)&stats[d] + offset);
}

/* Labels of one sample: the device, and the pool of an array's element. */
static void labels(char *buf, size_t len, int d, int pool)
{
	if (pool < 0)
		snprintf(buf, len, "device=\"%d\"", d);
	else
		snprintf(buf, len, "device=\"%d\",pool=\"%s\"", d, pool_names[pool]);
}

/* The levels as one gauge family labelled by stat; each running total as
 * a counter of its own (a counter only goes down when
 * reset_accumulated_stats restarts it, which Prometheus reads as a reset). */
static void put_stats(struct sbuf *out, const char *name, const struct npa_stats *stats,
		      size_t offset, int ndev, int npools)
{
	char lab[64];

	family_head(out, name, "", "gauge", npools ? ".POOL.STAT" : ".STAT");
	for (int d = 0; d < ndev; d++)
		for (int t = 0; t < (npools ? npools : 1); t++)
			for (int f = 0; f < LEVELS; f++) {
				labels(lab, sizeof(lab), d, npools ? t : -1);
				sbuf_printf(out, PROM_PREFIX "%s{%s,stat=\"%s\"} %" PRId64 "\n",
					    name, lab, field_names[f],
					    field_of(&stat_at(stats, d, offset)[t], f));
			}
	for (int f = LEVELS; f < FIELDS; f++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "_%s_total", field_names[f]);
		family_head(out, name, suffix, "counter", npools ? ".POOL." : ".");
		for (int d = 0; d < ndev; d++)
			for (int t = 0; t < (npools ? npools : 1); t++) {
				labels(lab, sizeof(lab), d, npools ? t : -1);
				sbuf_printf(out, PROM_PREFIX "%s%s{%s} %" PRId64 "\n", name, suffix,
					    lab, field_of(&stat_at(stats, d, offset)[t], f));
			}
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
	put_stats(out, #name, stats, offsetof(struct npa_stats, name), device_count,  \
		  NPA_STAT_TYPES);
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_scalar(out, #name, stats, offsetof(struct npa_stats, name), device_count, fl);
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_stats(out, #name, stats, offsetof(struct npa_stats, name), device_count, 0);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
	return out->error;
}
