/*
 * oom_why.c - the figures of an OOM (alloc/core/oom_why.h) as the lines
 * that follow upstream's message: one a figure, exact bytes first, then
 * the verdict. A pure function of the copy.
 */
#include <inttypes.h>
#include <stdio.h>

#include "alloc/core/format_size.h"
#include "report.h"

/* "N bytes", then upstream's format_size above 1 KiB: "N bytes (20.00 MiB)". */
static const char *exact(char buf[64], uint64_t v)
{
	char fs[32];

	npa_format_size(fs, sizeof(fs), v);
	if (v <= 1024)
		snprintf(buf, 64, "%s", fs);
	else
		snprintf(buf, 64, "%" PRIu64 " bytes (%s)", v, fs);
	return buf;
}

/* The plural's "s", none for one. */
static const char *s_of(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static const char *human(char buf[32], uint64_t v)
{
	npa_format_size(buf, 32, v);
	return buf;
}

/* "large_pool", or "small_pool of private pool 1_0". */
static void pool_name(char *buf, size_t len, const struct npa_oom_why *w)
{
	const char *kind = w->small_pool ? "small_pool" : "large_pool";

	if (w->pool_id[0] == 0 && w->pool_id[1] == 0)
		snprintf(buf, len, "%s", kind);
	else
		snprintf(buf, len, "%s of private pool %" PRIu64 "_%" PRIu64, kind, w->pool_id[0],
			 w->pool_id[1]);
}

static void pending_line(struct sbuf *out, const struct npa_oom_why *w)
{
	char b[64];

	sbuf_printf(out, "pending_frees %s", exact(b, w->pending_free));
	for (size_t i = 0; i < w->npending_streams; i++)
		sbuf_printf(out, "%s stream %" PRIu64 " %s", i == 0 ? ":" : ",",
			    w->pending[i].stream, exact(b, w->pending[i].bytes));
	if (w->pending_other_streams > 0)
		sbuf_printf(out, ", other streams %s", exact(b, w->pending_other_streams));
	sbuf_puts(out, "\n");
}

static void verdict_line(struct sbuf *out, const struct npa_oom_why *w, const char *pool)
{
	char r[32], a[32], f[32], h[32], l[32], p[32], q[32], o[32];

	human(r, w->request);
	human(f, w->pool_free);
	human(h, w->headroom);
	human(p, w->private_free);
	human(q, w->pending_free);
	sbuf_printf(out, "verdict: %s: ", npa_oom_verdict_name(w->verdict));
	switch (w->verdict) {
	case NPA_OOM_FRAGMENTATION:
		sbuf_printf(out, "%s would fit in the free bytes (%s in %" PRIu64
			    " segment%s of %s, %s on the device) ",
			    r, f, w->pool_free_segments, s_of(w->pool_free_segments), pool, h);
		human(l, w->largest_free_block);
		/* A block large enough that best fit passed over: the oversize rules. */
		if (w->largest_free_block >= w->request)
			sbuf_printf(out, "and its largest block on stream %" PRIu64 " is %s, but "
				    "max_split_size_mb keeps oversize blocks from it\n",
				    w->stream, l);
		else
			sbuf_printf(out, "but in no one block (the largest on stream %" PRIu64
				    " is %s)\n", w->stream, l);
		return;
	case NPA_OOM_PRIVATE_POOLS:
		sbuf_printf(out, "%s free in %" PRIu64 " private pool%s (graphs, MemPools), "
			    "which this request may not use, would make room for %s\n",
			    p, w->private_pools, s_of(w->private_pools), r);
		return;
	case NPA_OOM_PENDING_FREES:
		sbuf_printf(out, "%s of blocks freed but waiting on stream events would make "
			    "room for %s\n", q, r);
		return;
	case NPA_OOM_OUT_OF_MEMORY:
		break;
	}
	sbuf_printf(out, "%s (a new segment of %s) is more than the %s free in %s, %s on the "
		    "device, %s in private pools and %s pending together; %s held by other "
		    "allocators\n",
		    r, human(a, w->alloc_size), f, pool, h, p, q, human(o, w->other_allocators));
}

int report_oom_why(struct sbuf *out, const struct npa_oom_why *w)
{
	char pool[96], b1[64], b2[64];

	if (!w->valid)
		return out->error;
	pool_name(pool, sizeof(pool), w);
	sbuf_printf(out, "request %s from %s on stream %" PRIu64 "; a new segment %s\n",
		    exact(b1, w->request), pool, w->stream, exact(b2, w->alloc_size));
	sbuf_printf(out, "largest_free_block %s on stream %" PRIu64 "\n",
		    exact(b1, w->largest_free_block), w->stream);
	sbuf_printf(out, "pool_free %s in %" PRIu64 " segment%s\n", exact(b1, w->pool_free),
		    w->pool_free_segments, s_of(w->pool_free_segments));
	sbuf_printf(out, "headroom %s\n", exact(b1, w->headroom));
	sbuf_printf(out, "private_pools %s in %" PRIu64 " pool%s\n", exact(b1, w->private_free),
		    w->private_pools, s_of(w->private_pools));
	pending_line(out, w);
	sbuf_printf(out, "other_allocators %s\n", exact(b1, w->other_allocators));
	verdict_line(out, w, pool);
	return out->error;
}
