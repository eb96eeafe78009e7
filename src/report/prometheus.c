/*
 * prometheus.c - every device's memory_stats(), and the pinned host
 * allocator's host_memory_stats(), in the Prometheus text exposition
 * format, for node_exporter's textfile collector.
 *
 * Families follow the stats schemas, so the metrics hold exactly the keys
 * of stats/deviceN and host/stats: a stat's current and peak are one gauge
 * family labelled by stat (and by device and pool for a device's), its
 * allocated and freed totals two counters (NAME_allocated_total,
 * NAME_freed_total); a plain counter one family per name. Host families
 * are named host_*, so they never meet a device family of the same key.
 * All samples of a family are one group, as the format requires.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "alloc/caching/caching_allocator.h"
#include "report.h"

static const char *const pool_names[NPA_STAT_TYPES] = NPA_STAT_TYPE_NAMES;
static const char *const field_names[] = NPA_STAT_FIELD_NAMES;

#define PROM_PREFIX "npumemfs_"
#define LABEL_MAX 64

static int64_t field_of(const struct npa_stat *st, int field)
{
	const int64_t v[] = { st->current, st->peak, st->allocated, st->freed };
	return v[field];
}

/* current and peak are levels; allocated and freed are running totals. */
enum { LEVELS = 2, FIELDS = 4 };

/* One family of samples: what its HELP says and its rows, each a stat
 * with the labels that tell it from the others ("" for none). */
struct family {
	const char *call;   /* "memory_stats()" or "host_memory_stats()" */
	const char *whose;  /* " of each device", or "" */
	const char *name;   /* after the prefix */
	const char *key;    /* the stats key */
	const char *pools;  /* ".POOL" or "" */
	const struct npa_stat *row[NPA_MAX_DEVICES * NPA_STAT_TYPES];
	char label[NPA_MAX_DEVICES * NPA_STAT_TYPES][LABEL_MAX];
	int nrows;
};

/* field NULL: a scalar, whose key is the whole name. */
static void family_head(struct sbuf *out, const struct family *f, const char *suffix,
			const char *type, const char *field)
{
	sbuf_printf(out, "# HELP " PROM_PREFIX "%s%s %s %s%s%s%s%s\n", f->name, suffix, f->call,
		    f->key, f->pools, field ? "." : "", field ? field : "", f->whose);
	sbuf_printf(out, "# TYPE " PROM_PREFIX "%s%s %s\n", f->name, suffix, type);
}

/* name{LABELS,stat="S"}, or name{LABELS}, or name: a sample before its value. */
static void sample_name(struct sbuf *out, const char *name, const char *suffix,
			const char *label, const char *stat)
{
	const char *sep = label[0] && stat ? "," : "";

	sbuf_printf(out, PROM_PREFIX "%s%s", name, suffix);
	if (label[0] || stat)
		sbuf_printf(out, "{%s%s%s%s%s}", label, sep, stat ? "stat=\"" : "",
			    stat ? stat : "", stat ? "\"" : "");
}

static void sample(struct sbuf *out, const char *name, const char *suffix, const char *label,
		   const char *stat, int64_t v)
{
	sample_name(out, name, suffix, label, stat);
	sbuf_printf(out, " %" PRId64 "\n", v);
}

/* Prometheus' unit of time is the second; a duration in microseconds
 * (never negative) is written as exact decimal seconds, 13 as 0.000013. */
static void sample_seconds(struct sbuf *out, const char *name, const char *suffix,
			   const char *stat, int64_t us)
{
	sample_name(out, name, suffix, "", stat);
	sbuf_printf(out, " %" PRId64 ".%06" PRId64 "\n", us / 1000000, us % 1000000);
}

/* The levels as one gauge family labelled by stat; each running total as
 * a counter of its own (a counter only goes down when a reset of the
 * accumulated stats restarts it, which Prometheus reads as a reset). */
static void put_stats(struct sbuf *out, const struct family *f)
{
	family_head(out, f, "", "gauge", "STAT");
	for (int r = 0; r < f->nrows; r++)
		for (int i = 0; i < LEVELS; i++)
			sample(out, f->name, "", f->label[r], field_names[i], field_of(f->row[r], i));
	for (int i = LEVELS; i < FIELDS; i++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "_%s_total", field_names[i]);
		family_head(out, f, suffix, "counter", field_names[i]);
		for (int r = 0; r < f->nrows; r++)
			sample(out, f->name, suffix, f->label[r], NULL, field_of(f->row[r], i));
	}
}

static const struct npa_stat *stat_at(const struct npa_stats *stats, int d, size_t offset)
{
	return (const struct npa_stat *)((const char *)&stats[d] + offset);
}

/* A device stat: a row per device, and per pool of a stat array. */
static void put_device_stats(struct sbuf *out, const char *name, const struct npa_stats *stats,
			     size_t offset, int ndev, int npools)
{
	struct family f = { .call = "memory_stats()", .whose = " of each device",
			     .name = name, .key = name, .pools = npools ? ".POOL" : "" };

	for (int d = 0; d < ndev && d < NPA_MAX_DEVICES; d++)
		for (int t = 0; t < (npools ? npools : 1); t++, f.nrows++) {
			f.row[f.nrows] = &stat_at(stats, d, offset)[t];
			if (npools)
				snprintf(f.label[f.nrows], LABEL_MAX, "device=\"%d\",pool=\"%s\"", d,
					 pool_names[t]);
			else
				snprintf(f.label[f.nrows], LABEL_MAX, "device=\"%d\"", d);
		}
	put_stats(out, &f);
}

/* max_split_size is a setting, a level; the other scalars count events. */
static void put_scalar(struct sbuf *out, const char *name, const struct npa_stats *stats,
		       size_t offset, int ndev, const struct npa_flavor *fl)
{
	bool gauge = strcmp(name, "max_split_size") == 0;
	const char *suffix = gauge ? "" : "_total";
	const struct family f = { .call = "memory_stats()", .whose = " of each device",
				  .name = name, .key = name, .pools = "" };

	if (!fl->oom_rejections_stat && strcmp(name, "num_oom_rejections") == 0)
		return;
	family_head(out, &f, suffix, gauge ? "gauge" : "counter", NULL);
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
	put_device_stats(out, #name, stats, offsetof(struct npa_stats, name), device_count, \
			 NPA_STAT_TYPES);
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_scalar(out, #name, stats, offsetof(struct npa_stats, name), device_count, fl);
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	put_device_stats(out, #name, stats, offsetof(struct npa_stats, name), device_count, 0);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
	return out->error;
}

static const struct family host_family = { .call = "host_memory_stats()", .whose = "",
					   .pools = "", .nrows = 1 };

static void put_host_stat(struct sbuf *out, const char *key, const struct npa_stat *st)
{
	struct family f = host_family;
	char name[64];

	snprintf(name, sizeof(name), "host_%s", key);
	f.name = name;
	f.key = key;
	f.row[0] = st;
	put_stats(out, &f);
}

/* A timing, kept in microseconds, shown in seconds: avg, max and min are
 * levels; the total and the count only grow until
 * reset_accumulated_host_memory_stats. */
static void put_host_duration(struct sbuf *out, const char *key,
			      const struct npa_duration_stat *d)
{
	struct family f = host_family;
	char name[64];

	snprintf(name, sizeof(name), "%s_seconds", key);
	f.name = name;
	f.key = key;
	f.whose = ", in seconds (microseconds in host/stats)";
	family_head(out, &f, "", "gauge", "STAT");
	sample_seconds(out, name, "", "avg", npa_duration_avg(d));
	sample_seconds(out, name, "", "max", d->max);
	sample_seconds(out, name, "", "min", d->min);
	family_head(out, &f, "_total", "counter", "total");
	sample_seconds(out, name, "_total", NULL, d->total);
	f.name = key;
	f.whose = "";
	family_head(out, &f, "_count_total", "counter", "count");
	sample(out, key, "_count_total", "", NULL, d->count);
}

static void put_host_scalar(struct sbuf *out, const char *key, int64_t v)
{
	struct family f = host_family;

	f.name = f.key = key;
	family_head(out, &f, "_total", "counter", NULL);
	sample(out, key, "_total", "", NULL, v);
}

int report_prometheus_host(struct sbuf *out, const struct npa_host_stats *s)
{
#define NPA_X(name) put_host_stat(out, #name, &s->name);
	NPA_HOST_STATS(NPA_X)
#undef NPA_X
#define NPA_X(name) put_host_duration(out, #name, &s->name);
	NPA_HOST_DURATIONS(NPA_X)
#undef NPA_X
#define NPA_X(name) put_host_scalar(out, #name, s->name);
	NPA_HOST_SCALARS(NPA_X)
#undef NPA_X
	return out->error;
}
