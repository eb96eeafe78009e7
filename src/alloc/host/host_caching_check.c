/*
 * host_caching_check.c - what ATen's algorithm holds, block by block, and
 * its invariants recomputed from its blocks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_impl.h"
#include "alloc/core/invariant.h"

static void fill_info(const struct host_block *b, struct npa_host_block_info *out)
{
	*out = (struct npa_host_block_info){
		.address = (uint64_t)(uintptr_t)b->ptr,
		.size = b->size,
		.requested = b->size,
		.pool = b->pool->base.id,
		.allocated = b->allocated,
		.mapped = true,
		.during_capture = b->during_capture,
		.pending_events = b->event_count,
		.nstreams = b->streams.n,
	};
	host_stream_ids(&b->streams, out->streams);
}

int host_caching_blocks(struct npa_host *h, struct npa_host_block_info **out, size_t *n)
{
	struct host_block *b, *tmp;
	size_t count = HASH_COUNT(h->blocks), i = 0;

	*out = count ? calloc(count, sizeof(**out)) : NULL;
	if (count && *out == NULL)
		return -ENOMEM;
	HASH_ITER(hh, h->blocks, b, tmp)
		fill_info(b, &(*out)[i++]);
	*n = count;
	if (count)
		qsort(*out, count, sizeof(**out), host_info_by_address);
	return 0;
}

/* What the blocks say the counters must be. */
struct host_totals {
	int64_t blocks, bytes, active, active_bytes, free_listed;
};

static int check_free_lists(const struct host_pool *p, struct host_totals *t, char *err,
			    size_t errlen)
{
	const struct host_block *b;

	for (unsigned i = 0; i < NPA_HOST_BUCKETS; i++) {
		TAILQ_FOREACH(b, &p->free[i], free_link) {
			if (b->allocated || b->event_count != 0 || b->pool != p)
				return npa_broken(err, errlen,
						  "host block %p is in a free list but "
						  "allocated, pending or of another pool", (void *)b->ptr);
			if (npa_host_bucket(b->size) != i)
				return npa_broken(err, errlen,
						  "host block %p of %zu bytes is in free "
						  "list %u", (void *)b->ptr, b->size, i);
			t->free_listed++;
		}
	}
	return 0;
}

static int check_blocks(struct npa_host *h, struct host_totals *t, char *err, size_t errlen)
{
	struct host_block *b, *tmp;
	struct npa_host_block_info *sorted = NULL;
	size_t n = 0;

	HASH_ITER(hh, h->blocks, b, tmp) {
		t->blocks++;
		t->bytes += (int64_t)b->size;
		if (b->allocated || b->event_count > 0) {
			t->active++;
			t->active_bytes += (int64_t)b->size;
		}
		if (b->allocated && b->event_count > 0)
			return npa_broken(err, errlen,
					  "host block %p is allocated with events pending",
					  (void *)b->ptr);
	}
	/* No two blocks overlap. */
	int rc = host_caching_blocks(h, &sorted, &n);

	for (size_t i = 1; rc == 0 && i < n; i++)
		if (sorted[i - 1].address + sorted[i - 1].size > sorted[i].address)
			rc = npa_broken(err, errlen, "host blocks at 0x%llx and 0x%llx overlap",
					(unsigned long long)sorted[i - 1].address,
					(unsigned long long)sorted[i].address);
	free(sorted);
	return rc;
}

static int check_counters(struct npa_host *h, const struct host_totals *t, char *err,
			  size_t errlen)
{
	int64_t requests = 0, bytes = 0;

	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
		requests += h->active_requests[i].current;
		bytes += h->active_bytes[i].current;
	}
	if (h->allocations.current != t->blocks || h->allocated_bytes.current != t->bytes)
		return npa_broken(err, errlen,
				  "host allocations %lld / %lld bytes, but %lld blocks "
				  "of %lld bytes", (long long)h->allocations.current,
				  (long long)h->allocated_bytes.current, (long long)t->blocks,
				  (long long)t->bytes);
	if (requests != t->active || bytes != t->active_bytes)
		return npa_broken(err, errlen, "host active_requests %lld / %lld bytes, but %lld "
				  "blocks in use of %lld bytes", (long long)requests, (long long)bytes,
				  (long long)t->active, (long long)t->active_bytes);
	if (t->free_listed != t->blocks - t->active)
		return npa_broken(err, errlen, "host free lists hold %lld blocks, %lld are free",
				  (long long)t->free_listed, (long long)(t->blocks - t->active));
	return 0;
}

int host_caching_check(struct npa_host *h, char *err, size_t errlen)
{
	struct host_totals t = { 0 };
	size_t owned = h->dflt.nblocks;
	int rc = check_free_lists(&h->dflt, &t, err, errlen);

	for (struct host_pool *p = host_pool_first(h); rc == 0 && p != NULL;
	     p = host_pool_next(p)) {
		rc = check_free_lists(p, &t, err, errlen);
		owned += p->nblocks;
	}
	if (rc == 0)
		rc = check_blocks(h, &t, err, errlen);
	if (rc == 0 && owned != (size_t)t.blocks)
		rc = npa_broken(err, errlen, "host pools own %zu blocks, %lld exist", owned,
				(long long)t.blocks);
	return rc ? rc : check_counters(h, &t, err, errlen);
}
