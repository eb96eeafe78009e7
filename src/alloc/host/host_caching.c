/*
 * host_caching.c - the default pinned host algorithm: ATen's
 * CachingHostAllocatorImpl with torch_npu's runtime hooks.
 *
 * A request is rounded to a power of two (unless it is above
 * pinned_max_round_threshold or pinned_max_cached_size), looked for in its
 * pool's free list for that power (newest first), else allocated anew
 * from the reserve segment or aclrtMallocHost. Blocks are never split. A
 * freed block used by streams comes back once an event recorded on each
 * of them completes, and goes back to the OS instead of its free list if
 * it is bigger than pinned_max_cached_size.
 *
 * Event processing is skipped while a capture routes allocations: an
 * event query during a global capture would invalidate it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_impl.h"

#define RESERVE_ALIGN ((size_t)4096) /* PinnedReserveSegment rounds to 4 KiB */

static void free_host_memory(struct npa_host *h, struct host_block *b)
{
	uint64_t t0;

	if (b->reserved)
		return;
	t0 = npa_host_now_us();
	aclrtFreeHost(b->ptr);
	npa_duration_add(&h->free_time, (int64_t)(npa_host_now_us() - t0));
}

/* CachingHostAllocator_emptyCache at exit: every block goes, pending or not. */
static void caching_fini(struct npa_host *h)
{
	struct host_block *b, *tmp;

	HASH_ITER(hh, h->blocks, b, tmp) {
		HASH_DEL(h->blocks, b);
		free_host_memory(h, b);
		free(b->streams.s);
		free(b);
	}
	if (h->reserve.base != NULL)
		aclrtFreeHost(h->reserve.base);
}

/* ---- blocks in and out of the free lists ---- */

static void active_add(struct npa_host *h, const struct host_block *b)
{
	unsigned i = npa_host_bucket(b->size);

	npa_stat_increase(&h->active_requests[i], 1);
	npa_stat_increase(&h->active_bytes[i], (int64_t)b->size);
}

static void active_sub(struct npa_host *h, const struct host_block *b)
{
	unsigned i = npa_host_bucket(b->size);

	npa_stat_decrease(&h->active_requests[i], 1);
	npa_stat_decrease(&h->active_bytes[i], (int64_t)b->size);
}

/* A block leaves the allocator: its memory goes back to the OS. */
static void release_block(struct npa_host *h, struct host_block *b)
{
	HASH_DEL(h->blocks, b);
	npa_stat_decrease(&h->allocations, 1);
	npa_stat_decrease(&h->allocated_bytes, (int64_t)b->size);
	free_host_memory(h, b);
	b->pool->nblocks--;
	free(b->streams.s);
	free(b);
}

/* A block no stream still uses: cached, or released above the cap. */
static void maybe_cache_block(struct npa_host *h, struct host_block *b)
{
	active_sub(h, b);
	if (b->size > h->limits.cached_max) {
		release_block(h, b);
		return;
	}
	TAILQ_INSERT_TAIL(&b->pool->free[npa_host_bucket(b->size)], b, free_link);
}

/*
 * The newest free block of the size's list that is big enough: with
 * rounding every block of a list has the list's size; unrounded sizes
 * share lists, so the block is checked (the fix of pytorch#192722).
 */
static struct host_block *get_free_block(struct npa_host *h, struct host_pool *p, size_t size)
{
	struct host_free_list *list = &p->free[npa_host_bucket(size)];
	struct host_block *b;

	TAILQ_FOREACH_REVERSE(b, list, host_free_list, free_link)
		if (b->size >= size)
			break;
	if (b == NULL)
		return NULL;
	TAILQ_REMOVE(list, b, free_link);
	b->allocated = true;
	active_add(h, b);
	return b;
}

static void process_events(struct npa_host *h)
{
	struct host_block *b;

	if (h->pools.nscopes != 0)
		return;
	while ((b = host_next_completed(h)) != NULL)
		if (--b->event_count == 0 && !b->allocated)
			maybe_cache_block(h, b);
}

/* ---- memory from the runtime ---- */

static void decide_reserve(struct npa_host *h)
{
	struct host_reserve *r = &h->reserve;
	uint64_t t0;

	if (r->decided)
		return;
	r->decided = true;
	if (h->limits.reserve_size == 0)
		return;
	t0 = npa_host_now_us();
	if (aclrtMallocHost((void **)&r->base, h->limits.reserve_size) == ACL_SUCCESS)
		r->size = h->limits.reserve_size;
	else
		r->base = NULL;
	npa_duration_add(&h->alloc_time, (int64_t)(npa_host_now_us() - t0));
}

static char *from_reserve(struct host_reserve *r, size_t size)
{
	size_t rounded = (size + RESERVE_ALIGN - 1) & ~(RESERVE_ALIGN - 1);
	char *p;

	if (r->base == NULL || rounded < size || rounded > r->size - r->used)
		return NULL;
	p = r->base + r->used;
	r->used += rounded;
	return p;
}

static int allocate_host_memory(struct npa_host *h, size_t size, char **ptr, bool *reserved,
				char *err, size_t errlen)
{
	uint64_t t0;
	aclError e;

	decide_reserve(h);
	*ptr = from_reserve(&h->reserve, size);
	*reserved = *ptr != NULL;
	if (*reserved)
		return 0;
	t0 = npa_host_now_us();
	e = aclrtMallocHost((void **)ptr, size);
	/* Upstream throws before it counts a failed call. */
	if (e == ACL_SUCCESS) {
		npa_duration_add(&h->alloc_time, (int64_t)(npa_host_now_us() - t0));
		return 0;
	}
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "NPU function error: aclrtMallocHost, error code is %d", e);
	return -ENOMEM;
}

static int new_block(struct npa_host *h, struct host_pool *p, size_t size, aclrtStream stream,
		     struct host_block **out, char *err, size_t errlen)
{
	struct host_block *b = calloc(1, sizeof(*b));
	int rc;

	if (b == NULL)
		return -ENOMEM;
	rc = allocate_host_memory(h, size, &b->ptr, &b->reserved, err, errlen);
	if (rc < 0) {
		free(b);
		return rc;
	}
	b->size = size;
	b->allocated = true;
	b->pool = p;
	b->during_capture = host_stream_capturing(stream);
	b->serial = ++h->blocks_made;
	p->nblocks++;
	HASH_ADD_PTR(h->blocks, ptr, b);
	npa_stat_increase(&h->allocations, 1);
	npa_stat_increase(&h->allocated_bytes, (int64_t)size);
	active_add(h, b);
	*out = b;
	return 0;
}

/* PowerOf2Ceil, unless a threshold keeps the exact size (cached size first). */
static size_t round_size(const struct host_limits *l, size_t size)
{
	if (size > l->cached_max || size > l->round_threshold)
		return size;
	return size <= 1 ? 1 : (size_t)1 << npa_host_bucket(size);
}

static int caching_allocate(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
			    char *err, size_t errlen)
{
	struct host_pool *p = h->pools.nscopes ? host_pool_route(h, stream) : &h->dflt;
	size_t rounded;
	struct host_block *b;
	int rc = 0;

	process_events(h);
	rounded = round_size(&h->limits, size);
	b = get_free_block(h, p, rounded);
	if (b == NULL)
		rc = new_block(h, p, rounded, stream, &b, err, errlen);
	*ptr = rc == 0 ? b->ptr : NULL;
	return rc;
}

/* ---- the block behind a pointer ---- */

static struct host_block *find_allocated(struct npa_host *h, const void *ptr)
{
	struct host_block *b = NULL;

	HASH_FIND_PTR(h->blocks, &ptr, b);
	return b != NULL && b->allocated ? b : NULL;
}

/* A block allocated during a capture and used by a stream gets no events:
 * its event count never drops to 0, so it is never recycled. */
static int caching_free(struct npa_host *h, void *ptr)
{
	struct host_block *b = find_allocated(h, ptr);

	if (b == NULL)
		return -EINVAL;
	b->allocated = false;
	if (b->streams.n == 0) {
		maybe_cache_block(h, b);
		return 0;
	}
	if (b->during_capture)
		b->event_count += b->streams.n;
	else
		b->event_count += host_record_events(h, &b->streams, b);
	host_streams_clear(&b->streams);
	if (b->event_count == 0)
		maybe_cache_block(h, b);
	return 0;
}

static int caching_record_event(struct npa_host *h, const void *ptr, aclrtStream stream)
{
	struct host_block *b = find_allocated(h, ptr);

	if (b == NULL)
		return 0;
	return host_streams_add(&b->streams, stream) == 0 ? 1 : -ENOMEM;
}

static size_t caching_block_size(struct npa_host *h, const void *ptr)
{
	struct host_block *b = find_allocated(h, ptr);

	return b != NULL ? b->size : 0;
}

static uint64_t caching_block_serial(struct npa_host *h, const void *ptr)
{
	struct host_block *b = find_allocated(h, ptr);

	return b != NULL ? b->serial : 0;
}

/* ---- host_empty_cache ---- */

static void free_lists(struct npa_host *h, struct host_pool *p)
{
	struct host_block *b;

	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
		while ((b = TAILQ_FIRST(&p->free[i])) != NULL) {
			TAILQ_REMOVE(&p->free[i], b, free_link);
			release_block(h, b);
		}
	}
}

/* The default pool, then each freeable private pool, deleted once empty. */
static void caching_empty_cache(struct npa_host *h)
{
	struct host_pool *p, *next;

	process_events(h);
	free_lists(h, &h->dflt);
	for (p = host_pool_first(h); p != NULL; p = next) {
		next = host_pool_next(p);
		if (!p->base.freeable)
			continue;
		free_lists(h, p);
		/* A scope routing to a pool released too often still uses it. */
		if (p->nblocks == 0 && !host_pool_routed(h, p))
			host_pool_delete(h, p);
	}
}

/* ---- stats ---- */

/* Bucket stats summed; peaks too, upstream's "best-effort approximation". */
static void add_bucket(struct npa_stat *sum, const struct npa_stat *b)
{
	sum->current += b->current;
	sum->peak += b->peak;
	sum->allocated += b->allocated;
	sum->freed += b->freed;
}

static void caching_stats(struct npa_host *h, struct npa_host_stats *out)
{
	out->allocations = h->allocations;
	out->allocated_bytes = h->allocated_bytes;
	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
		add_bucket(&out->active_requests, &h->active_requests[i]);
		add_bucket(&out->active_bytes, &h->active_bytes[i]);
	}
	out->num_host_alloc = h->allocations.allocated;
	out->num_host_free = h->allocations.freed;
}

static void caching_reset(struct npa_host *h, bool peak)
{
	void (*stat)(struct npa_stat *) = peak ? npa_stat_reset_peak : npa_stat_reset_accumulated;

	stat(&h->allocations);
	stat(&h->allocated_bytes);
	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
		stat(&h->active_requests[i]);
		stat(&h->active_bytes[i]);
	}
}

const struct host_algo_ops host_caching_ops = {
	.variant = NPA_HOST_CACHING,
	.pools = true,
	.fini = caching_fini,
	.allocate = caching_allocate,
	.free = caching_free,
	.record_event = caching_record_event,
	.block_size = caching_block_size,
	.block_serial = caching_block_serial,
	.empty_cache = caching_empty_cache,
	.stats = caching_stats,
	.reset = caching_reset,
	.blocks = host_caching_blocks,
	.check = host_caching_check,
};
