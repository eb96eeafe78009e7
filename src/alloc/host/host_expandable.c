/*
 * host_expandable.c - torch_npu's NPUExpandableHostAllocatorImpl
 * (pin_memory_expandable_segments:True, CachingHostAllocator.cpp).
 *
 * One pool of blocks over reserved ranges backed by 20 MiB host pages
 * (aclrtMallocPhysical with a host location, aclrtMapMem). A request is
 * size + 32 rounded to 512; it takes the best-fitting mapped free block,
 * counting a block followed by unmapped space as able to grow into it,
 * else the lowest unmapped range (with the free block before it) that has
 * room, mapping only the pages it needs, else a new range. A block with
 * 512 bytes or more left over is split; free blocks merge with free
 * neighbours. host_empty_cache unmaps every whole page inside free blocks
 * and releases a range left with nothing mapped.
 *
 * Stats: only allocated_bytes (mapped bytes), active_bytes and the two
 * timings move, as upstream's. Upstream reserves 1 1/8 of a 64 GiB device
 * per range; here 1 1/8 of the host memory the allocator was given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bsd/sys/tree.h>

#include "host_impl.h"
#include "alloc/core/invariant.h"

#define XP_PAGE ((size_t)20 << 20)  /* segmentSize */
#define XP_MIN_BLOCK ((size_t)512)   /* kMinBlockSize */

struct xsegment {
	char *va;
	size_t npages;
	aclrtDrvMemHandle *handle;   /* one per page, NULL where unmapped */
	struct xsegment *next;
};

struct xblock {
	char *ptr;
	size_t size;
	size_t requested;
	bool allocated;
	bool mapped;
	size_t event_count;
	struct host_streams streams;
	struct xblock *prev, *next;  /* neighbours in the range */
	struct xsegment *seg;
	RB_ENTRY(xblock) link;       /* in `blocks` (mapped, free) or `unmapped` */
	UT_hash_handle hh;           /* ptr_to_block_: allocated or pending */
};

RB_HEAD(xsize_tree, xblock);
RB_HEAD(xaddr_tree, xblock);

struct host_expandable {
	struct xsize_tree blocks;
	struct xaddr_tree unmapped;
	struct xblock *active;
	struct xsegment *segs;
	size_t seg_pages;
	struct npa_stat allocated_bytes;
	struct npa_stat active_bytes;
};

static int by_size(const struct xblock *a, const struct xblock *b)
{
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

static int by_addr(const struct xblock *a, const struct xblock *b)
{
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

#define XP_TREE_ATTR __attribute__((unused)) static
RB_GENERATE_INTERNAL(xsize_tree, xblock, link, by_size, XP_TREE_ATTR)
RB_GENERATE_INTERNAL(xaddr_tree, xblock, link, by_addr, XP_TREE_ATTR)

static int xp_init(struct npa_host *h)
{
	struct host_expandable *xp = calloc(1, sizeof(*xp));

	if (xp == NULL)
		return -ENOMEM;
	RB_INIT(&xp->blocks);
	RB_INIT(&xp->unmapped);
	/* deviceTotalSize + deviceTotalSize / 8, in pages, of the host memory. */
	xp->seg_pages = (h->host_capacity + h->host_capacity / 8 + XP_PAGE - 1) / XP_PAGE;
	h->xp = xp;
	return 0;
}

static struct xblock *new_block(size_t size, char *ptr, struct xsegment *seg, bool mapped)
{
	struct xblock *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->ptr = ptr;
	b->size = size;
	b->seg = seg;
	b->mapped = mapped;
	return b;
}

static void drop_block(struct xblock *b)
{
	free(b->streams.s);
	free(b);
}

/* ---- pages ---- */

static const aclrtPhysicalMemProp host_prop = {
	.handleType = ACL_MEM_HANDLE_TYPE_NONE,
	.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED,
	.memAttr = ACL_HBM_MEM_HUGE,
	.location = { .id = 0, .type = ACL_MEM_LOCATION_TYPE_HOST },
};

static void unmap_pages(struct xsegment *s, size_t begin, size_t end)
{
	for (size_t i = begin; i < end; i++) {
		aclrtUnmapMem(s->va + i * XP_PAGE);
		aclrtFreePhysical(s->handle[i]);
		s->handle[i] = NULL;
	}
}

/* Pages [begin, end) mapped, or none of them (false) if memory ran out. */
static bool map_pages(struct xsegment *s, size_t begin, size_t end)
{
	for (size_t i = begin; i < end; i++) {
		if (aclrtMallocPhysical(&s->handle[i], XP_PAGE, &host_prop, 0) != ACL_SUCCESS ||
		    aclrtMapMem(s->va + i * XP_PAGE, XP_PAGE, 0, s->handle[i], 0) != ACL_SUCCESS) {
			if (s->handle[i] != NULL)
				aclrtFreePhysical(s->handle[i]);
			s->handle[i] = NULL;
			unmap_pages(s, begin, i);
			return false;
		}
	}
	return true;
}

static size_t page_left(const struct xsegment *s, const char *p)
{
	return (size_t)(p - s->va) / XP_PAGE;
}

static size_t page_right(const struct xsegment *s, const char *p)
{
	return ((size_t)(p - s->va) + XP_PAGE - 1) / XP_PAGE;
}

static struct xsegment *new_segment(struct host_expandable *xp)
{
	struct xsegment *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->npages = xp->seg_pages;
	s->handle = calloc(s->npages, sizeof(*s->handle));
	if (s->handle == NULL ||
	    aclrtReserveMemAddress((void **)&s->va, s->npages * XP_PAGE, 0, NULL, 1) != ACL_SUCCESS) {
		free(s->handle);
		free(s);
		return NULL;
	}
	s->next = xp->segs;
	xp->segs = s;
	return s;
}

static void destroy_segment(struct host_expandable *xp, struct xsegment *s)
{
	for (struct xsegment **at = &xp->segs; *at != NULL; at = &(*at)->next) {
		if (*at == s) {
			*at = s->next;
			break;
		}
	}
	unmap_pages(s, 0, s->npages);
	aclrtReleaseMemAddress(s->va);
	free(s->handle);
	free(s);
}

/* ---- merging, mapping, unmapping ---- */

static void tree_remove(struct host_expandable *xp, struct xblock *b)
{
	if (b->mapped)
		RB_REMOVE(xsize_tree, &xp->blocks, b);
	else
		RB_REMOVE(xaddr_tree, &xp->unmapped, b);
}

/* try_merge_blocks: src (a free neighbour in the same state) joins dst. */
static void try_merge(struct host_expandable *xp, struct xblock *dst, struct xblock *src)
{
	if (src == NULL || src->allocated || src->event_count > 0 || src->streams.n > 0 ||
	    dst->mapped != src->mapped)
		return;
	if (dst->prev == src) {
		dst->ptr = src->ptr;
		dst->prev = src->prev;
		if (dst->prev != NULL)
			dst->prev->next = dst;
	} else {
		dst->next = src->next;
		if (dst->next != NULL)
			dst->next->prev = dst;
	}
	dst->size += src->size;
	tree_remove(xp, src);
	drop_block(src);
}

/* Insert `b` between before and after (either may be NULL). */
static void splice(struct xblock *b, struct xblock *before, struct xblock *after)
{
	if (before != NULL)
		before->next = b;
	b->prev = before;
	if (after != NULL)
		after->prev = b;
	b->next = after;
}

static bool map_block(struct host_expandable *xp, struct xblock *b, size_t size)
{
	struct xsegment *s = b->seg;
	size_t begin = page_left(s, b->ptr), end = page_right(s, b->ptr + size);
	size_t mapped = (end - begin) * XP_PAGE;
	struct xblock *rest;

	if (begin == end || !map_pages(s, begin, end))
		return false;
	if (mapped < b->size) {
		rest = new_block(b->size - mapped, b->ptr + mapped, s, false);
		if (rest == NULL) {
			unmap_pages(s, begin, end);
			return false;
		}
		splice(rest, b, b->next);
		RB_INSERT(xaddr_tree, &xp->unmapped, rest);
	}
	RB_REMOVE(xaddr_tree, &xp->unmapped, b);
	b->mapped = true;
	b->size = mapped < b->size ? mapped : b->size;
	try_merge(xp, b, b->prev);
	try_merge(xp, b, b->next);
	npa_stat_increase(&xp->allocated_bytes, (int64_t)mapped);
	RB_INSERT(xsize_tree, &xp->blocks, b);
	return true;
}

/* A free mapped block of b's range, made for the part of b before (or
 * after) its unmapped pages. */
static void carve(struct host_expandable *xp, struct xblock *b, char *ptr, size_t size,
		  bool before)
{
	struct xblock *f = new_block(size, ptr, b->seg, true);

	if (f == NULL)
		return;
	if (before)
		splice(f, b->prev, b);
	else
		splice(f, b, b->next);
	RB_INSERT(xsize_tree, &xp->blocks, f);
}

static void unmap_block(struct npa_host *h, struct xblock *b)
{
	struct host_expandable *xp = h->xp;
	struct xsegment *s = b->seg;
	size_t begin = page_right(s, b->ptr), end = page_left(s, b->ptr + b->size);
	uint64_t t0 = npa_host_now_us();
	size_t before, after, size;

	if (begin < end)
		unmap_pages(s, begin, end);
	npa_duration_add(&h->free_time, (int64_t)(npa_host_now_us() - t0));
	if (begin >= end)
		return;
	size = (end - begin) * XP_PAGE;
	before = (size_t)(s->va + begin * XP_PAGE - b->ptr);
	after = b->size - before - size;
	RB_REMOVE(xsize_tree, &xp->blocks, b);
	if (before > 0)
		carve(xp, b, b->ptr, before, true);
	if (after > 0)
		carve(xp, b, s->va + end * XP_PAGE, after, false);
	b->ptr = s->va + begin * XP_PAGE;
	b->size = size;
	b->mapped = false;
	npa_stat_decrease(&xp->allocated_bytes, (int64_t)size);
	try_merge(xp, b, b->prev);
	try_merge(xp, b, b->next);
	RB_INSERT(xaddr_tree, &xp->unmapped, b);
}

/* ---- finding a block ---- */

static size_t expandable_size(const struct xblock *b)
{
	return b->size + (b->next != NULL && !b->next->mapped ? b->next->size : 0);
}

/* Best fit among mapped free blocks, by what each could grow to. */
static struct xblock *get_free_block(struct host_expandable *xp, size_t size)
{
	struct xblock key = { .size = size, .ptr = NULL };
	struct xblock *it = RB_NFIND(xsize_tree, &xp->blocks, &key), *next;

	if (it == NULL)
		return NULL;
	for (next = RB_NEXT(xsize_tree, &xp->blocks, it);
	     next != NULL && expandable_size(next) < expandable_size(it);
	     next = RB_NEXT(xsize_tree, &xp->blocks, it))
		it = next;
	RB_REMOVE(xsize_tree, &xp->blocks, it);
	return it;
}

static bool allocatable(const struct xblock *b)
{
	return b != NULL && !b->allocated && b->event_count == 0 && b->streams.n == 0;
}

static bool has_room(const struct xblock *b, size_t size)
{
	size_t bytes = 0;

	for (; bytes < size && allocatable(b); b = b->next)
		bytes += b->size;
	return bytes >= size;
}

/* The lowest unmapped space (with the free block before it) with room,
 * else a new range. */
static struct xblock *find_expandable_block(struct host_expandable *xp, size_t size)
{
	struct xblock *c, *u;
	struct xsegment *s;

	RB_FOREACH(u, xaddr_tree, &xp->unmapped) {
		c = allocatable(u->prev) ? u->prev : u;
		if (has_room(c, size))
			return c;
	}
	s = new_segment(xp);
	if (s == NULL)
		return NULL;
	c = new_block(s->npages * XP_PAGE, s->va, s, false);
	if (c == NULL) {
		destroy_segment(xp, s);
		return NULL;
	}
	RB_INSERT(xaddr_tree, &xp->unmapped, c);
	return c;
}

static struct xblock *try_allocate(struct npa_host *h, size_t size)
{
	struct host_expandable *xp = h->xp;
	struct xblock *c = find_expandable_block(xp, size);
	uint64_t t0 = npa_host_now_us();

	if (c == NULL)
		return NULL;
	if (!c->mapped && !map_block(xp, c, c->size < size ? c->size : size))
		return NULL;
	while (c->size < size) {
		struct xblock *nc = c->next;
		size_t remaining = size - c->size;

		if (nc == NULL || !map_block(xp, nc, remaining < nc->size ? remaining : nc->size))
			return NULL;
		c = nc;
	}
	RB_REMOVE(xsize_tree, &xp->blocks, c);
	npa_duration_add(&h->alloc_time, (int64_t)(npa_host_now_us() - t0));
	return c;
}

/* alloc_found_block: split off what is left if it is a block's worth. */
static struct xblock *hand_out(struct host_expandable *xp, struct xblock *b, size_t size,
			       size_t orig)
{
	struct xblock *front;

	if (b->size - size >= XP_MIN_BLOCK && (front = new_block(size, b->ptr, b->seg, true))) {
		splice(front, b->prev, b);
		b->ptr += size;
		b->size -= size;
		RB_INSERT(xsize_tree, &xp->blocks, b);
		b = front;
	}
	b->allocated = true;
	b->requested = orig;
	HASH_ADD_PTR(xp->active, ptr, b);
	npa_stat_increase(&xp->active_bytes, (int64_t)b->size);
	return b;
}

/* ---- freeing and events ---- */

static void free_block(struct host_expandable *xp, struct xblock *b)
{
	npa_stat_decrease(&xp->active_bytes, (int64_t)b->size);
	HASH_DEL(xp->active, b);
	try_merge(xp, b, b->prev);
	try_merge(xp, b, b->next);
	RB_INSERT(xsize_tree, &xp->blocks, b);
}

static void process_events(struct npa_host *h)
{
	struct xblock *b;

	while ((b = host_next_completed(h)) != NULL)
		if (--b->event_count == 0 && !b->allocated)
			free_block(h->xp, b);
}

/* Free all non-split cached blocks' pages: a range left whole and
 * unmapped goes. */
static void release_blocks(struct npa_host *h)
{
	struct host_expandable *xp = h->xp;
	size_t n = 0, i = 0;
	struct xblock *b, **all;

	RB_FOREACH(b, xsize_tree, &xp->blocks)
		n++;
	all = n ? malloc(n * sizeof(*all)) : NULL;
	if (all == NULL)
		return;
	RB_FOREACH(b, xsize_tree, &xp->blocks)
		all[i++] = b;
	for (i = 0; i < n; i++) {
		b = all[i];
		unmap_block(h, b);
		if (b->prev == NULL && b->next == NULL && !b->mapped) {
			RB_REMOVE(xaddr_tree, &xp->unmapped, b);
			destroy_segment(xp, b->seg);
			drop_block(b);
		}
	}
	free(all);
}

static void release_cached(struct npa_host *h)
{
	process_events(h);
	release_blocks(h);
}

static int xp_allocate(struct npa_host *h, size_t orig, aclrtStream stream, void **ptr, char *err,
		       size_t errlen)
{
	struct host_expandable *xp = h->xp;
	size_t size = orig + 32 < XP_MIN_BLOCK ? XP_MIN_BLOCK
		      : (orig + 32 + XP_MIN_BLOCK - 1) / XP_MIN_BLOCK * XP_MIN_BLOCK;
	struct xblock *b;

	(void)stream; /* one pool: no scope routes a stream elsewhere */
	process_events(h);
	b = get_free_block(xp, size);
	if (b == NULL)
		b = try_allocate(h, size);
	if (b == NULL) {
		release_cached(h);
		b = try_allocate(h, size);
	}
	if (b == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "Malloc pin memory failed, host out of memory, Rried to "
				 "allocate size: %zu, total_allocated_memory: %lld, "
				 "total_reserved_memory: %lld. You might be able to retry after "
				 "freeing up memory using torch_npu.npu.host_empty_cache().", orig,
				 (long long)xp->active_bytes.current,
				 (long long)xp->allocated_bytes.current);
		return -ENOMEM;
	}
	*ptr = hand_out(xp, b, size, orig)->ptr;
	return 0;
}

static struct xblock *find_active(struct host_expandable *xp, const void *ptr)
{
	struct xblock *b = NULL;

	HASH_FIND_PTR(xp->active, &ptr, b);
	return b;
}

static int xp_free(struct npa_host *h, void *ptr)
{
	struct xblock *b = find_active(h->xp, ptr);

	if (b == NULL || !b->allocated)
		return -EINVAL;
	b->allocated = false;
	if (b->streams.n == 0) {
		free_block(h->xp, b);
		return 0;
	}
	b->event_count += host_record_events(h, &b->streams, b);
	host_streams_clear(&b->streams);
	if (b->event_count == 0)
		free_block(h->xp, b);
	return 0;
}

static int xp_record_event(struct npa_host *h, const void *ptr, aclrtStream stream)
{
	struct xblock *b = find_active(h->xp, ptr);

	if (b == NULL || !b->allocated)
		return 0;
	return host_streams_add(&b->streams, stream) == 0 ? 1 : -ENOMEM;
}

static size_t xp_block_size(struct npa_host *h, const void *ptr)
{
	struct xblock *b = find_active(h->xp, ptr);

	return b != NULL && b->allocated ? b->size : 0;
}

static void xp_stats(struct npa_host *h, struct npa_host_stats *out)
{
	out->allocated_bytes = h->xp->allocated_bytes;
	out->active_bytes = h->xp->active_bytes;
}

static void xp_reset(struct npa_host *h, bool peak)
{
	void (*stat)(struct npa_stat *) = peak ? npa_stat_reset_peak : npa_stat_reset_accumulated;

	stat(&h->xp->allocated_bytes);
	stat(&h->xp->active_bytes);
}

/* ---- views ---- */

/* Every block once: the range heads (no prev) lead to all of them. */
static size_t heads(struct host_expandable *xp, struct xblock **out, size_t max)
{
	struct xblock *b, *tmp;
	size_t n = 0;

	RB_FOREACH(b, xsize_tree, &xp->blocks)
		if (b->prev == NULL && n < max)
			out[n++] = b;
	RB_FOREACH(b, xaddr_tree, &xp->unmapped)
		if (b->prev == NULL && n < max)
			out[n++] = b;
	HASH_ITER(hh, xp->active, b, tmp)
		if (b->prev == NULL && n < max)
			out[n++] = b;
	return n;
}

static size_t count_segments(const struct host_expandable *xp)
{
	size_t n = 0;

	for (const struct xsegment *s = xp->segs; s != NULL; s = s->next)
		n++;
	return n;
}

static void fill(const struct xblock *b, struct npa_host_block_info *out)
{
	*out = (struct npa_host_block_info){
		.address = (uint64_t)(uintptr_t)b->ptr, .size = b->size,
		.requested = b->allocated ? b->requested : 0,
		.allocated = b->allocated, .mapped = b->mapped,
		.pending_events = b->event_count, .nstreams = b->streams.n,
	};
	host_stream_ids(&b->streams, out->streams);
}

static int xp_blocks(struct npa_host *h, struct npa_host_block_info **out, size_t *n)
{
	struct host_expandable *xp = h->xp;
	size_t nseg = count_segments(xp), count = 0, i = 0;
	struct xblock **head = nseg ? calloc(nseg, sizeof(*head)) : NULL;
	size_t nh = head ? heads(xp, head, nseg) : 0;

	for (size_t k = 0; k < nh; k++)
		for (struct xblock *b = head[k]; b != NULL; b = b->next)
			count++;
	*out = count ? calloc(count, sizeof(**out)) : NULL;
	for (size_t k = 0; *out != NULL && k < nh; k++)
		for (struct xblock *b = head[k]; b != NULL; b = b->next)
			fill(b, &(*out)[i++]);
	free(head);
	if ((nseg && head == NULL) || (count && *out == NULL))
		return -ENOMEM;
	*n = count;
	if (count)
		qsort(*out, count, sizeof(**out), host_info_by_address);
	return 0;
}

/* Each range: blocks tile it, no two free mapped neighbours, mapped pages
 * where mapped blocks are; the sums are the stats. */
static int check_range(struct xsegment *s, struct xblock *head, int64_t *mapped,
		       int64_t *active, char *err, size_t errlen)
{
	char *at = s->va;

	for (struct xblock *b = head; b != NULL; b = b->next) {
		bool free_mapped = b->mapped && allocatable(b);

		if (b->ptr != at || b->seg != s || (b->next && b->next->prev != b))
			return npa_broken(err, errlen, "expandable host block %p does not follow "
					  "its neighbour", (void *)b->ptr);
		if (free_mapped && b->next && b->next->mapped && allocatable(b->next))
			return npa_broken(err, errlen, "free host blocks %p and %p were not merged",
					  (void *)b->ptr, (void *)b->next->ptr);
		if (b->mapped && s->handle[page_left(s, b->ptr)] == NULL)
			return npa_broken(err, errlen, "host block %p is mapped without a page",
					  (void *)b->ptr);
		if (b->allocated || b->event_count > 0)
			*active += (int64_t)b->size;
		at += b->size;
	}
	for (size_t i = 0; i < s->npages; i++)
		*mapped += s->handle[i] != NULL ? (int64_t)XP_PAGE : 0;
	if (at != s->va + s->npages * XP_PAGE)
		return npa_broken(err, errlen, "host blocks of range %p cover %zu of %zu bytes",
				  (void *)s->va, (size_t)(at - s->va), s->npages * XP_PAGE);
	return 0;
}

static int xp_check(struct npa_host *h, char *err, size_t errlen)
{
	struct host_expandable *xp = h->xp;
	size_t nseg = count_segments(xp);
	struct xblock **head = nseg ? calloc(nseg, sizeof(*head)) : NULL;
	size_t nh = head ? heads(xp, head, nseg) : 0;
	int64_t mapped = 0, active = 0;
	int rc = nh == nseg ? 0 : npa_broken(err, errlen, "%zu host ranges, %zu first blocks",
					      nseg, nh);

	for (size_t k = 0; rc == 0 && k < nh; k++)
		rc = check_range(head[k]->seg, head[k], &mapped, &active, err, errlen);
	free(head);
	if (rc == 0 && (mapped != xp->allocated_bytes.current ||
			active != xp->active_bytes.current))
		rc = npa_broken(err, errlen, "host allocated_bytes %lld / active_bytes %lld, but "
				 "%lld mapped, %lld in use", (long long)xp->allocated_bytes.current,
				 (long long)xp->active_bytes.current, (long long)mapped,
				 (long long)active);
	return rc;
}

static void xp_fini(struct npa_host *h)
{
	struct host_expandable *xp = h->xp;
	struct xblock *b, *next, *tmp;

	RB_FOREACH_SAFE(b, xsize_tree, &xp->blocks, next)
		drop_block(b);
	RB_FOREACH_SAFE(b, xaddr_tree, &xp->unmapped, next)
		drop_block(b);
	HASH_ITER(hh, xp->active, b, tmp) {
		HASH_DEL(xp->active, b);
		drop_block(b);
	}
	while (xp->segs != NULL)
		destroy_segment(xp, xp->segs);
	free(xp);
	h->xp = NULL;
}

const struct host_algo_ops host_expandable_ops = {
	.variant = NPA_HOST_EXPANDABLE,
	.capture_refusal =
		"ACLGraph capture is not supported when pin_memory_expandable_segments=True. "
		"NPUExpandableHostAllocatorImpl overrides allocate/free/empty_cache/record_event "
		"and does not integrate with the base CachingHostAllocator's private pool "
		"mechanism, which would cause capture-time pinned blocks to be incorrectly "
		"recycled and lead to data corruption on graph replay. Please unset "
		"pin_memory_expandable_segments in PYTORCH_NPU_ALLOC_CONF to use ACLGraph with "
		"pin_memory, or avoid pin_memory calls inside capture regions.",
	.init = xp_init,
	.fini = xp_fini,
	.allocate = xp_allocate,
	.free = xp_free,
	.record_event = xp_record_event,
	.block_size = xp_block_size,
	.empty_cache = release_cached,
	.stats = xp_stats,
	.reset = xp_reset,
	.blocks = xp_blocks,
	.check = xp_check,
};
