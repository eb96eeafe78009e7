/*
 * block.h - blocks, segments and the free-block pools of one device.
 *
 * A segment is one device allocation; its blocks tile it in address order
 * through prev/next. Free blocks live in their pool ordered by (stream,
 * size, address), so best fit is a lower bound (upstream's
 * BlockPool::blocks), kept in bins of sizes (size_bins.h). Allocated
 * blocks are in the device's pointer map; blocks waiting for stream
 * events are in neither.
 */
#ifndef NPA_BLOCK_H
#define NPA_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bsd/sys/tree.h>

#include <acl/acl_rt.h>

#include "size_bins.h"
#include "alloc/core/snapshot.h"

struct npa_segment;
struct npa_pool;
struct npa_private_pool;

struct npa_block {
	RB_ENTRY(npa_block) node; /* in its bin of the pool while free */
	char *ptr;
	size_t size;
	size_t requested_size;    /* last request served, kept when freed */
	aclrtStream stream;       /* allocation stream */
	struct npa_pool *pool;
	struct npa_segment *seg;
	struct npa_block *prev;   /* neighbours inside the segment */
	struct npa_block *next;
	struct npa_block *link;    /* a scratch list while the cache is released */
	aclrtStream *uses;        /* streams from record_stream */
	unsigned nuses;
	unsigned uses_cap;
	/* Bit i: uses[i] was recorded during a capture; its work is part of
	 * the graph, so the deferred free waits for none of it (upstream
	 * block_to_npugraph_stream_uses). */
	uint32_t captured_uses;
	int event_count;          /* outstanding events of a deferred free */
	uint64_t gc_base;         /* pool->gc_calls when it entered the pool */
	/* Of the allocation, kept while recording and until the free completes
	 * (upstream context_when_allocated); empty on every inactive block. */
	struct npa_frame frame;
	bool allocated;
	bool mapped;              /* backed by memory (false only in expandable segments) */
	bool expandable;          /* seg->kind == NPA_SEGMENT_EXPANDABLE, kept here for the hot path */
};

RB_PROTOTYPE(npa_bin_tree, npa_block, node, npa_bin_cmp)
/* Unmapped tails of expandable segments by (stream, address); a block is in
 * this tree or in a bin, never both, so they share `node`. */
RB_HEAD(npa_unmapped_tree, npa_block);
RB_PROTOTYPE(npa_unmapped_tree, npa_block, node, npa_unmapped_cmp)

/* Physical pages unmapped by empty_virt_addr_cache, kept for the next map. */
struct npa_handle_cache {
	aclrtDrvMemHandle *h;
	size_t n, cap;
	size_t page;               /* every handle here is one page of this size */
};

struct npa_pool {
	/* Each stream's free blocks, in the order of the streams' addresses:
	 * the pool's order is (stream, size, address). */
	struct npa_stream_bins **streams;
	size_t nstreams;
	struct npa_unmapped_tree unmapped;
	struct npa_handle_cache spare;
	bool is_small;
	struct npa_private_pool *owner; /* NULL: a default pool */
	/* get_free_block calls while GC is on: a block's age is the count since
	 * it entered the pool (upstream's gc_count, kept without a pool walk). */
	uint64_t gc_calls;
};

/* Where a segment's memory came from. */
enum npa_segment_kind {
	NPA_SEGMENT_DEVICE_MALLOC,
	NPA_SEGMENT_EXPANDABLE,    /* a virtual range mapped page by page */
};

/* The virtual reservation behind an expandable segment (upstream
 * ExpandableSegment): one physical handle per mapped page. */
struct npa_expandable {
	size_t page;
	size_t npages;
	aclrtDrvMemHandle *handles; /* NULL where the page is unmapped */
};

struct npa_segment {
	RB_ENTRY(npa_segment) node; /* in the device's segment tree, by address */
	char *ptr;
	size_t size;
	aclrtStream stream;
	struct npa_pool *pool;
	struct npa_block *head;     /* the block at ptr */
	enum npa_segment_kind kind;
	struct npa_expandable *exp; /* NPA_SEGMENT_EXPANDABLE only */
	struct npa_frame frame;     /* context_when_segment_allocated, while recording */
};

RB_HEAD(npa_segment_tree, npa_segment);
RB_PROTOTYPE(npa_segment_tree, npa_segment, node, npa_segment_cmp)

static inline bool npa_block_is_expandable(const struct npa_block *b)
{
	return b->expandable;
}

static inline bool npa_block_is_split(const struct npa_block *b)
{
	return b->prev != NULL || b->next != NULL;
}

/* Put `nb` into b's segment chain right before `b` (the new head if b was). */
static inline void npa_block_link_before(struct npa_block *nb, struct npa_block *b)
{
	nb->prev = b->prev;
	nb->next = b;
	if (nb->prev != NULL)
		nb->prev->next = nb;
	else
		b->seg->head = nb;
	b->prev = nb;
}

/* Put `nb` into b's segment chain right after `b`. */
static inline void npa_block_link_after(struct npa_block *nb, struct npa_block *b)
{
	nb->prev = b;
	nb->next = b->next;
	if (nb->next != NULL)
		nb->next->prev = nb;
	b->next = nb;
}

/* Block structs are recycled through a free list, never malloc'd on a cache hit. */
struct npa_block_cache {
	struct npa_block *spare;
};

/* Fields a block starts with; tree links and the segment are set by the caller. */
static inline void npa_block_reset(struct npa_block *b)
{
	b->requested_size = 0;
	b->prev = b->next = NULL;
	b->uses = NULL;
	b->nuses = b->uses_cap = 0;
	b->captured_uses = 0;
	b->event_count = 0;
	b->gc_base = 0;
	b->allocated = false;
	b->mapped = true;
	b->expandable = false;
}

/* The cache was empty: a fresh block from malloc, reset, or NULL. */
struct npa_block *npa_block_new(void);
void npa_block_free_uses(struct npa_block *b);

static inline struct npa_block *npa_block_get(struct npa_block_cache *c)
{
	struct npa_block *b = c->spare;

	if (b == NULL)
		return npa_block_new();
	c->spare = b->next;
	npa_block_reset(b);
	return b;
}

static inline void npa_block_put(struct npa_block_cache *c, struct npa_block *b)
{
	if (b->uses != NULL)
		npa_block_free_uses(b);
	b->next = c->spare;
	c->spare = b;
}

void npa_block_cache_drain(struct npa_block_cache *c);

void npa_pool_init(struct npa_pool *pool, bool is_small);
void npa_pool_fini(struct npa_pool *pool);
/* A segment of `stream` joins the pool (its bins are made with the first:
 * 0 or -ENOMEM), or leaves it (with the last, its bins go, empty). */
int npa_pool_hold(struct npa_pool *pool, aclrtStream stream);
void npa_pool_drop(struct npa_pool *pool, aclrtStream stream);
/* `b`, of a stream the pool holds, goes in; `b` leaves with its key unchanged. */
void npa_pool_insert(struct npa_pool *pool, struct npa_block *b);
void npa_pool_remove(struct npa_pool *pool, struct npa_block *b);
/* `b`, in the pool, now starts at `ptr` with `size`: a key that only shrank. */
void npa_pool_rekey(struct npa_pool *pool, struct npa_block *b, char *ptr, size_t size);
bool npa_pool_empty(const struct npa_pool *pool);
/* The pool in order: its first block, the one after `b`, or NULL. */
struct npa_block *npa_pool_first(const struct npa_pool *pool);
struct npa_block *npa_pool_next(const struct npa_pool *pool, const struct npa_block *b);
/* Backwards through one stream: its last block below (size, 0), the one
 * before `b` in its stream, or NULL. */
struct npa_block *npa_pool_last_below(const struct npa_pool *pool, aclrtStream stream,
				      size_t size);
struct npa_block *npa_pool_prev_in_stream(const struct npa_pool *pool,
					  const struct npa_block *b);
/* The one after `b` in its stream, or NULL. */
struct npa_block *npa_pool_next_in_stream(const struct npa_pool *pool,
					  const struct npa_block *b);

/* Where `stream` is or would go in the pool's streams, by address: a
 * binary search, as a pool may have a great many streams. */
static inline size_t npa_pool_stream_index(const struct npa_pool *pool, aclrtStream stream)
{
	size_t lo = 0, hi = pool->nstreams;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)pool->streams[mid]->stream < (uintptr_t)stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A stream's bins; it has them while the pool holds a segment of it. The
 * first stream is tried first: most pools have one. */
static inline struct npa_stream_bins *npa_pool_bins(const struct npa_pool *pool,
						     aclrtStream stream)
{
	if (pool->nstreams == 0)
		return NULL;
	if (pool->streams[0]->stream == stream)
		return pool->streams[0];
	size_t i = npa_pool_stream_index(pool, stream);
	return i < pool->nstreams && pool->streams[i]->stream == stream ? pool->streams[i] : NULL;
}

static inline struct npa_block *npa_bin_first(const struct npa_bin_tree *t)
{
	struct npa_block *b = RB_ROOT(t);

	while (b != NULL && RB_LEFT(b, node) != NULL)
		b = RB_LEFT(b, node);
	return b;
}

/*
 * The first free block of `stream` at or above `size`, lowest address
 * first, or NULL: the lower bound of (stream, size, 0), which either lies
 * in size's own bin or is the first block of the next bin holding any.
 */
static inline struct npa_block *npa_pool_nfind(const struct npa_pool *pool, aclrtStream stream,
					       size_t size)
{
	const struct npa_stream_bins *sb = npa_pool_bins(pool, stream);

	if (sb == NULL || sb->summary == 0)
		return NULL;
	unsigned i = npa_bin_of(size);
	struct npa_block *b = RB_ROOT(&sb->bin[i]), *found = NULL;

	while (b != NULL) {
		if (size <= b->size) {
			found = b;
			b = RB_LEFT(b, node);
		} else {
			b = RB_RIGHT(b, node);
		}
	}
	if (found != NULL)
		return found;
	i = npa_bins_next(sb, i + 1);
	return i < NPA_BINS ? npa_bin_first(&sb->bin[i]) : NULL;
}

#endif /* NPA_BLOCK_H */
