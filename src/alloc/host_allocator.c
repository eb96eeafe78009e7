/*
 * host_allocator.c - the default pinned host algorithm (ATen
 * CachingHostAllocatorImpl with torch_npu's runtime hooks), and the entry
 * points that send each call to the variant chosen at creation.
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
#include <string.h>
#include <time.h>

#include "host_impl.h"

#define RESERVE_ALIGN ((size_t)4096) /* PinnedReserveSegment rounds to 4 KiB */

uint64_t npa_host_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Log2_64_Ceil. */
unsigned npa_host_bucket(size_t size)
{
	return size <= 1 ? 0 : 64u - (unsigned)__builtin_clzll((unsigned long long)size - 1);
}

struct host_limits npa_host_limits_of(const struct npa_conf *conf)
{
	return (struct host_limits){
		.round_threshold = conf->pinned_max_round_threshold,
		.cached_max = conf->pinned_max_cached_size,
		.reserve_size = conf->pinned_reserve_segment_size,
	};
}

int npa_host_create(struct npa_host **out, enum npa_host_variant variant,
		    const struct host_limits *limits, uint64_t host_capacity)
{
	struct npa_host *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return -ENOMEM;
	h->variant = variant;
	h->host_capacity = host_capacity;
	h->limits = *limits;
	host_pools_init(h);
	TAILQ_INIT(&h->events);
	if (variant == NPA_HOST_EXPANDABLE && host_xp_create(h) < 0) {
		free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

static void free_host_memory(struct npa_host *h, struct host_block *b)
{
	uint64_t t0;

	if (b->reserved)
		return;
	t0 = npa_host_now_us();
	aclrtFreeHost(b->ptr);
	npa_duration_add(&h->free_time, (int64_t)(npa_host_now_us() - t0));
}

/* Process exit (CachingHostAllocator_emptyCache): every block goes. */
void npa_host_destroy(struct npa_host *h)
{
	struct host_block *b, *tmp;

	if (h == NULL)
		return;
	host_events_fini(h);
	HASH_ITER(hh, h->blocks, b, tmp) {
		HASH_DEL(h->blocks, b);
		free_host_memory(h, b);
		free(b->streams.s);
		free(b);
	}
	if (h->reserve.base != NULL)
		aclrtFreeHost(h->reserve.base);
	host_xp_destroy(h);
	host_pools_fini(h);
	free(h);
}

enum npa_host_variant npa_host_variant(const struct npa_host *h)
{
	return h->variant;
}

void npa_host_set_limits(struct npa_host *h, const struct host_limits *limits)
{
	npa_lock_acquire(&h->lock);
	h->limits = *limits;
	npa_lock_release(&h->lock);
}

bool npa_host_reserve_decided(struct npa_host *h)
{
	npa_lock_acquire(&h->lock);
	bool decided = h->reserve.decided;
	npa_lock_release(&h->lock);
	return decided;
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

static int caching_malloc(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
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

int npa_host_malloc(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen)
{
	int rc;

	*ptr = NULL;
	if (size == 0)
		return 0;
	if (size >= (size_t)1 << 60) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "NPU function error: aclrtMallocHost, error code is %d",
				 ACL_ERROR_RT_MEMORY_ALLOCATION);
		return -ENOMEM;
	}
	npa_lock_acquire(&h->lock);
	rc = h->variant == NPA_HOST_EXPANDABLE ? host_xp_malloc(h, size, ptr, err, errlen)
					       : caching_malloc(h, size, stream, ptr, err, errlen);
	npa_lock_release(&h->lock);
	return rc;
}

static struct host_block *find_block(struct npa_host *h, const void *ptr)
{
	struct host_block *b = NULL;

	HASH_FIND_PTR(h->blocks, &ptr, b);
	return b;
}

/* A block allocated during a capture and used by a stream gets no events:
 * its event count never drops to 0, so it is never recycled. */
static void caching_free(struct npa_host *h, struct host_block *b)
{
	b->allocated = false;
	if (b->streams.n == 0) {
		maybe_cache_block(h, b);
		return;
	}
	if (b->during_capture)
		b->event_count += b->streams.n;
	else
		b->event_count += host_record_events(h, &b->streams, b);
	host_streams_clear(&b->streams);
	if (b->event_count == 0)
		maybe_cache_block(h, b);
}

int npa_host_free(struct npa_host *h, void *ptr, char *err, size_t errlen)
{
	struct host_block *b;
	int rc = 0;

	if (ptr == NULL)
		return 0;
	npa_lock_acquire(&h->lock);
	if (h->variant == NPA_HOST_EXPANDABLE) {
		rc = host_xp_free(h, ptr);
	} else {
		b = find_block(h, ptr);
		if (b == NULL || !b->allocated)
			rc = -EINVAL;
		else
			caching_free(h, b);
	}
	npa_lock_release(&h->lock);
	if (rc && err != NULL && errlen > 0)
		snprintf(err, errlen, "invalid pinned pointer: %p", ptr);
	return rc;
}

int npa_host_record_event(struct npa_host *h, const void *ptr, aclrtStream stream)
{
	struct host_block *b;
	int rc = 0;

	npa_lock_acquire(&h->lock);
	if (h->variant == NPA_HOST_EXPANDABLE) {
		rc = host_xp_record_event(h, ptr, stream);
	} else {
		b = find_block(h, ptr);
		if (b != NULL && b->allocated)
			rc = host_streams_add(&b->streams, stream) == 0 ? 1 : -ENOMEM;
	}
	npa_lock_release(&h->lock);
	return rc;
}

size_t npa_host_block_size(struct npa_host *h, const void *ptr)
{
	struct host_block *b;
	size_t size = 0;

	npa_lock_acquire(&h->lock);
	if (h->variant == NPA_HOST_EXPANDABLE) {
		size = host_xp_block_size(h, ptr);
	} else {
		b = find_block(h, ptr);
		size = b != NULL && b->allocated ? b->size : 0;
	}
	npa_lock_release(&h->lock);
	return size;
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

void npa_host_empty_cache(struct npa_host *h)
{
	npa_lock_acquire(&h->lock);
	if (h->variant == NPA_HOST_EXPANDABLE)
		host_xp_empty_cache(h);
	else
		caching_empty_cache(h);
	npa_lock_release(&h->lock);
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

void npa_host_get_stats(struct npa_host *h, struct npa_host_stats *out)
{
	memset(out, 0, sizeof(*out));
	npa_lock_acquire(&h->lock);
	if (h->variant == NPA_HOST_EXPANDABLE) {
		host_xp_stats(h, out);
	} else {
		out->allocations = h->allocations;
		out->allocated_bytes = h->allocated_bytes;
		for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
			add_bucket(&out->active_requests, &h->active_requests[i]);
			add_bucket(&out->active_bytes, &h->active_bytes[i]);
		}
		out->num_host_alloc = h->allocations.allocated;
		out->num_host_free = h->allocations.freed;
	}
	out->host_alloc_time = h->alloc_time;
	out->host_free_time = h->free_time;
	npa_lock_release(&h->lock);
}

static void reset(struct npa_host *h, bool peak)
{
	void (*stat)(struct npa_stat *) = peak ? npa_stat_reset_peak : npa_stat_reset_accumulated;
	void (*dur)(struct npa_duration_stat *) =
		peak ? npa_duration_reset_peak : npa_duration_reset_accumulated;

	npa_lock_acquire(&h->lock);
	stat(&h->allocations);
	stat(&h->allocated_bytes);
	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++) {
		stat(&h->active_requests[i]);
		stat(&h->active_bytes[i]);
	}
	dur(&h->alloc_time);
	dur(&h->free_time);
	if (h->variant == NPA_HOST_EXPANDABLE)
		host_xp_reset(h, peak);
	npa_lock_release(&h->lock);
}

void npa_host_reset_peak_stats(struct npa_host *h)
{
	reset(h, true);
}

void npa_host_reset_accumulated_stats(struct npa_host *h)
{
	reset(h, false);
}

const char *npa_host_capture_refusal(const struct npa_host *h)
{
	if (h->variant != NPA_HOST_EXPANDABLE)
		return NULL;
	return "ACLGraph capture is not supported when pin_memory_expandable_segments=True. "
	       "NPUExpandableHostAllocatorImpl overrides allocate/free/empty_cache/record_event "
	       "and does not integrate with the base CachingHostAllocator's private pool "
	       "mechanism, which would cause capture-time pinned blocks to be incorrectly "
	       "recycled and lead to data corruption on graph replay. Please unset "
	       "pin_memory_expandable_segments in PYTORCH_NPU_ALLOC_CONF to use ACLGraph with "
	       "pin_memory, or avoid pin_memory calls inside capture regions.";
}
