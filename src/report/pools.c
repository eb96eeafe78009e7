/*
 * pools.c - the private pools of a device (npa_pool_list) as a table, as
 * JSON and as Prometheus gauges for the mount, and as the graph-pool lines
 * npumem-replay adds to its report. Pure functions of the list.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

#include "json_sbuf.h"

int report_pool_name(char *buf, size_t len, struct npa_pool_id id)
{
	return snprintf(buf, len, "%" PRIu64 "_%" PRIu64, id.first, id.second);
}

/* The columns in order: the header names them, each row fills them. */
enum { COL_POOL, COL_USE, COL_FREEABLE, COL_MALLOCS, COL_SEGMENTS, COL_RESERVED,
       COL_ALLOCATED, COL_ACTIVE, COL_OOM, COL_NO_SPLIT, COL_ROUTING, COL_ALLOCATOR,
       NCOLS };

static const char *const header[NCOLS] = {
	"pool", "use_count", "freeable", "device_mallocs", "segments", "reserved_bytes",
	"allocated_bytes", "active_bytes", "use_on_oom", "no_split", "routing", "allocator",
};

/* Numbers right-aligned under their column's name; ids up to 12 wide. */
static void put_row(struct sbuf *out, char cells[NCOLS][32])
{
	sbuf_printf(out, "%-12s", cells[COL_POOL]);
	for (int c = COL_POOL + 1; c < NCOLS; c++)
		sbuf_printf(out, " %*s", (int)strlen(header[c]), cells[c]);
	sbuf_puts(out, "\n");
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* MemPool(allocator=...)'s plug-in, or the caching allocator's device memory. */
static const char *pool_allocator(const struct npa_pool_info *p)
{
	return p->allocator[0] ? p->allocator : "caching";
}

static void pool_cells(const struct npa_pool_info *p, char cells[NCOLS][32])
{
	report_pool_name(cells[COL_POOL], 32, p->id);
	snprintf(cells[COL_USE], 32, "%d", p->use_count);
	snprintf(cells[COL_FREEABLE], 32, "%s", yes_no(p->freeable));
	snprintf(cells[COL_MALLOCS], 32, "%ld", p->device_mallocs);
	snprintf(cells[COL_SEGMENTS], 32, "%zu", p->segments);
	snprintf(cells[COL_RESERVED], 32, "%" PRIu64, p->reserved_bytes);
	snprintf(cells[COL_ALLOCATED], 32, "%" PRIu64, p->allocated_bytes);
	snprintf(cells[COL_ACTIVE], 32, "%" PRIu64, p->active_bytes);
	snprintf(cells[COL_OOM], 32, "%s", yes_no(p->use_on_oom));
	snprintf(cells[COL_NO_SPLIT], 32, "%s", yes_no(p->no_split));
	snprintf(cells[COL_ROUTING], 32, "%s", yes_no(p->routing));
	snprintf(cells[COL_ALLOCATOR], 32, "%s", pool_allocator(p));
}

int report_pools_text(struct sbuf *out, const struct npa_pool_info *pools, size_t n)
{
	char cells[NCOLS][32];

	for (int c = 0; c < NCOLS; c++)
		snprintf(cells[c], sizeof(cells[c]), "%s", header[c]);
	put_row(out, cells);
	for (size_t i = 0; i < n; i++) {
		pool_cells(&pools[i], cells);
		put_row(out, cells);
	}
	return out->error;
}

static json_t *pool_json(const struct npa_pool_info *p)
{
	char name[48];

	report_pool_name(name, sizeof(name), p->id);
	return json_pack("{s:s, s:[I,I], s:i, s:b, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:s}",
			 "pool", name,
			 "id", (json_int_t)p->id.first, (json_int_t)p->id.second,
			 "use_count", p->use_count,
			 "freeable", p->freeable,
			 "device_mallocs", (json_int_t)p->device_mallocs,
			 "segments", (json_int_t)p->segments,
			 "reserved_bytes", (json_int_t)p->reserved_bytes,
			 "allocated_bytes", (json_int_t)p->allocated_bytes,
			 "active_bytes", (json_int_t)p->active_bytes,
			 "use_on_oom", p->use_on_oom,
			 "no_split", p->no_split,
			 "routing", p->routing,
			 "allocator", pool_allocator(p));
}

int report_pools_json(struct sbuf *out, const struct npa_pool_info *pools, size_t n)
{
	json_t *list = json_array();
	int rc = list == NULL ? -ENOMEM : 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		if (json_array_append_new(list, pool_json(&pools[i])))
			rc = -ENOMEM;
	if (rc == 0)
		rc = json_to_sbuf(out, list, REPORT_JSON_FLAGS);
	json_decref(list);
	return rc;
}

/* One gauge family: a sample per pool of each device. */
struct pool_gauge {
	const char *name;
	const char *help;
	uint64_t (*value)(const struct npa_pool_info *p);
};

static uint64_t reserved_of(const struct npa_pool_info *p) { return p->reserved_bytes; }
static uint64_t allocated_of(const struct npa_pool_info *p) { return p->allocated_bytes; }
static uint64_t active_of(const struct npa_pool_info *p) { return p->active_bytes; }
static uint64_t segments_of(const struct npa_pool_info *p) { return p->segments; }
static uint64_t use_count_of(const struct npa_pool_info *p) { return (uint64_t)p->use_count; }

static const struct pool_gauge gauges[] = {
	{ "pool_reserved_bytes", "bytes of device memory the pool holds", reserved_of },
	{ "pool_allocated_bytes", "bytes of the pool's blocks in use", allocated_of },
	{ "pool_active_bytes", "bytes of the pool's active blocks", active_of },
	{ "pool_segments", "segments the pool holds", segments_of },
	/* Not pool_use_count: Prometheus keeps _count for a histogram's or a
	 * summary's count of observations. */
	{ "pool_uses",
	  "uses of the pool (graphs, MemPools, routing scopes), use_count of pools/deviceN",
	  use_count_of },
};

static void put_gauge(struct sbuf *out, const struct pool_gauge *g,
		      const struct npa_pool_info *const *pools, const size_t *npools,
		      int ndev)
{
	sbuf_printf(out, "# HELP npumemfs_%s private memory pool: %s\n", g->name, g->help);
	sbuf_printf(out, "# TYPE npumemfs_%s gauge\n", g->name);
	for (int d = 0; d < ndev; d++) {
		for (size_t i = 0; i < npools[d]; i++) {
			char name[48];
			report_pool_name(name, sizeof(name), pools[d][i].id);
			sbuf_printf(out, "npumemfs_%s{device=\"%d\",pool=\"%s\"} %" PRIu64 "\n",
				    g->name, d, name, g->value(&pools[d][i]));
		}
	}
}

int report_prometheus_pools(struct sbuf *out, const struct npa_pool_info *const *pools,
			    const size_t *npools, int device_count)
{
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
		put_gauge(out, &gauges[i], pools, npools, device_count);
	return out->error;
}

static uint64_t reserved_total(const struct npa_pool_info *pools, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += pools[i].reserved_bytes;
	return total;
}

int report_graph_pools_text(struct sbuf *out, const struct npa_pool_info *pools, size_t n,
			    int device)
{
	sbuf_printf(out, "Graph pools of device %d:\n", device);
	for (size_t i = 0; i < n; i++) {
		const struct npa_pool_info *p = &pools[i];
		sbuf_printf(out, "  pool (%" PRIu64 ",%" PRIu64 "): %" PRIu64 " bytes reserved in "
			    "%zu segment%s, %" PRIu64 " allocated, use_count %d\n", p->id.first,
			    p->id.second, p->reserved_bytes, p->segments,
			    p->segments == 1 ? "" : "s", p->allocated_bytes, p->use_count);
	}
	sbuf_printf(out, "graph pools hold %" PRIu64 " bytes\n", reserved_total(pools, n));
	return out->error;
}

int report_graph_pools_flat(struct sbuf *out, const struct npa_pool_info *pools, size_t n)
{
	char name[48];

	for (size_t i = 0; i < n; i++) {
		const struct npa_pool_info *p = &pools[i];
		report_pool_name(name, sizeof(name), p->id);
		sbuf_printf(out, "graph_pools.%s.allocated_bytes %" PRIu64 "\n"
			    "graph_pools.%s.reserved_bytes %" PRIu64 "\n"
			    "graph_pools.%s.segments %zu\n"
			    "graph_pools.%s.use_count %d\n",
			    name, p->allocated_bytes, name, p->reserved_bytes,
			    name, p->segments, name, p->use_count);
	}
	sbuf_printf(out, "graph_pools.reserved_bytes %" PRIu64 "\n", reserved_total(pools, n));
	return out->error;
}

/* Written by hand, not by jansson: the member sits at the second level of
 * an object jansson has already written. */
int report_graph_pools_json(struct sbuf *out, const struct npa_pool_info *pools, size_t n)
{
	char tail[8], name[48];

	json_open_last_member(out, "graph_pools", tail, sizeof(tail));
	sbuf_puts(out, "{\n");
	for (size_t i = 0; i < n; i++) {
		const struct npa_pool_info *p = &pools[i];
		report_pool_name(name, sizeof(name), p->id);
		sbuf_printf(out, "    \"%s\": {\n      \"allocated_bytes\": %" PRIu64 ",\n"
			    "      \"reserved_bytes\": %" PRIu64 ",\n      \"segments\": %zu,\n"
			    "      \"use_count\": %d\n    },\n", name, p->allocated_bytes,
			    p->reserved_bytes, p->segments, p->use_count);
	}
	sbuf_printf(out, "    \"reserved_bytes\": %" PRIu64 "\n  }", reserved_total(pools, n));
	json_close_last_member(out, tail);
	return out->error;
}
