/*
 * host.c - host_memory_stats() flat and nested, the host blocks view, and
 * the pinned-memory lines npumem-replay adds to its report.
 *
 * The keys come from the list in alloc/host_stats.h: four stats with
 * allocated/current/freed/peak, two timings with avg/count/max/min/total,
 * two scalars; 28 flat keys, sorted as torch_npu's OrderedDict sorts them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

#include "json_sbuf.h"
#include "stat_keys.h"

static size_t put(struct stat_kv *kv, size_t n, const char *stat, const char *field,
		  int64_t value)
{
	if (field != NULL)
		snprintf(kv[n].key, STAT_KEY_LEN, "%s.%s", stat, field);
	else
		snprintf(kv[n].key, STAT_KEY_LEN, "%s", stat);
	kv[n].value = value;
	return n + 1;
}

static size_t collect(struct stat_kv *kv, const struct npa_host_stats *s)
{
	size_t n = 0;

#define NPA_X(name)                                                            \
	n = put(kv, n, #name, "allocated", s->name.allocated);                 \
	n = put(kv, n, #name, "current", s->name.current);                     \
	n = put(kv, n, #name, "freed", s->name.freed);                         \
	n = put(kv, n, #name, "peak", s->name.peak);
	NPA_HOST_STATS(NPA_X)
#undef NPA_X
#define NPA_X(name)                                                            \
	n = put(kv, n, #name, "avg", npa_duration_avg(&s->name));              \
	n = put(kv, n, #name, "count", s->name.count);                         \
	n = put(kv, n, #name, "max", s->name.max);                             \
	n = put(kv, n, #name, "min", s->name.min);                             \
	n = put(kv, n, #name, "total", s->name.total);
	NPA_HOST_DURATIONS(NPA_X)
#undef NPA_X
#define NPA_X(name) n = put(kv, n, #name, NULL, s->name);
	NPA_HOST_SCALARS(NPA_X)
#undef NPA_X
	stat_keys_sort(kv, n);
	return n;
}

#define HOST_KEYS 28

int report_host_stats_flat(struct sbuf *out, const struct npa_host_stats *s)
{
	struct stat_kv kv[HOST_KEYS];

	return stat_kv_flat(out, kv, collect(kv, s));
}

int report_host_stats_json(struct sbuf *out, const struct npa_host_stats *s)
{
	struct stat_kv kv[HOST_KEYS];

	return stat_kv_json(out, kv, collect(kv, s));
}

static void put_streams(struct sbuf *out, const struct npa_host_block_info *b)
{
	if (b->nstreams == 0) {
		sbuf_puts(out, "-");
		return;
	}
	for (size_t i = 0; i < b->nstreams && i < 4; i++)
		sbuf_printf(out, "%s%llu", i ? "," : "", (unsigned long long)b->streams[i]);
	if (b->nstreams > 4)
		sbuf_printf(out, ",+%zu", b->nstreams - 4);
}

static const char *state_of(const struct npa_host_block_info *b)
{
	if (b->allocated)
		return "allocated";
	if (b->pending_events > 0)
		return "pending";
	return b->mapped ? "free" : "unmapped";
}

int report_host_blocks(struct sbuf *out, const struct npa_host_block_info *b, size_t n)
{
	char pool[48];

	sbuf_puts(out, "address size requested pool state pending_events streams "
		       "during_capture\n");
	for (size_t i = 0; i < n; i++) {
		report_pool_name(pool, sizeof(pool), b[i].pool);
		sbuf_printf(out, "0x%llx %llu %llu %s %s %llu ", (unsigned long long)b[i].address,
			    (unsigned long long)b[i].size, (unsigned long long)b[i].requested,
			    pool, state_of(&b[i]), (unsigned long long)b[i].pending_events);
		put_streams(out, &b[i]);
		sbuf_printf(out, " %s\n", b[i].during_capture ? "yes" : "no");
	}
	return out->error;
}

int report_host_pools(struct sbuf *out, const struct npa_host_pool_info *p, size_t n)
{
	char pool[48];

	sbuf_puts(out, "pool use_count freeable routing blocks bytes free_bytes\n");
	for (size_t i = 0; i < n; i++) {
		report_pool_name(pool, sizeof(pool), p[i].id);
		sbuf_printf(out, "%s %d %s %s %zu %llu %llu\n", pool, p[i].use_count,
			    p[i].freeable ? "yes" : "no", p[i].routing ? "yes" : "no",
			    p[i].blocks, (unsigned long long)p[i].bytes,
			    (unsigned long long)p[i].free_bytes);
	}
	return out->error;
}

int report_pinned_text(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p)
{
	sbuf_printf(out, "Pinned host memory:\n"
		    "  held (allocated_bytes): %" PRId64 ", peak %" PRId64 "\n"
		    "  in use or pending (active_bytes): %" PRId64 ", peak %" PRId64 "\n"
		    "  asked for by live pins: %" PRIu64 ", peak %" PRIu64 "\n"
		    "  blocks: %" PRId64 ", peak %" PRId64 "; %" PRIu64 " pins, %" PRIu64
		    " copies, %" PRIu64 " pins refused\n",
		    h->allocated_bytes.current, h->allocated_bytes.peak,
		    h->active_bytes.current, h->active_bytes.peak,
		    p->requested, p->requested_peak,
		    h->allocations.current, h->allocations.peak,
		    p->pins, p->copies, p->refused);
	sbuf_printf(out, "pinned memory holds %" PRId64 " bytes (peak %" PRId64 ") for requests "
		    "of %" PRIu64 " (peak %" PRIu64 ")\n", h->allocated_bytes.current,
		    h->allocated_bytes.peak, p->requested, p->requested_peak);
	return out->error;
}

int report_pinned_flat(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p)
{
	struct stat_kv kv[HOST_KEYS];
	size_t n = collect(kv, h);

	for (size_t i = 0; i < n; i++)
		sbuf_printf(out, "host_memory_stats.%s %" PRId64 "\n", kv[i].key, kv[i].value);
	sbuf_printf(out, "pinned_requested_bytes.current %" PRIu64 "\n"
		    "pinned_requested_bytes.peak %" PRIu64 "\n", p->requested, p->requested_peak);
	return out->error;
}

/* host_memory_stats' JSON goes in as report_host_stats_json writes it, at
 * the top level's indent, as npumem-replay has always printed it. */
int report_pinned_json(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p)
{
	char tail[8];
	int rc;

	json_open_last_member(out, "host_memory_stats", tail, sizeof(tail));
	rc = report_host_stats_json(out, h);
	while (out->len > 0 && out->data[out->len - 1] == '\n')
		out->len--;
	sbuf_printf(out, ",\n  \"pinned_requested_bytes\": {\"current\": %" PRIu64
		    ", \"peak\": %" PRIu64 "}", p->requested, p->requested_peak);
	json_close_last_member(out, tail);
	return rc ? rc : out->error;
}
