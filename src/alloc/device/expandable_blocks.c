/*
 * expandable_blocks.c - blocks of expandable segments (upstream
 * try_allocate_expandable_block, find_expandable_block, map_block,
 * unmap_block, release_expandable_segment).
 *
 * An expandable segment is a chain of blocks over its whole virtual range:
 * mapped ones (free or allocated) and unmapped ones, the latter in the
 * pool's unmapped tree. Mapping grows a free block at the expense of the
 * unmapped one after it; unmapping does the reverse.
 */
#include <errno.h>
#include <stdlib.h>

#include "device.h"

static bool allocatable(const struct npa_block *b)
{
	return b != NULL && !b->allocated && b->event_count == 0 && b->nuses == 0;
}

static bool has_room(const struct npa_block *b, size_t size)
{
	size_t bytes = 0;

	for (; bytes < size && allocatable(b); b = b->next)
		bytes += b->size;
	return bytes >= size;
}

static struct npa_block *new_expandable_segment(struct npa_device *dev, aclrtStream stream,
						struct npa_pool *pool)
{
	struct npa_segment *seg = calloc(1, sizeof(*seg));
	struct npa_block *b = npa_block_get(&dev->cache);
	char *va;
	bool held = seg != NULL && b != NULL && npa_pool_hold(pool, stream) == 0;

	if (!held || npa_expandable_create(dev, npa_expandable_page(dev, pool), &va, &seg->exp) < 0) {
		if (held)
			npa_pool_drop(pool, stream);
		free(seg);
		if (b != NULL)
			npa_block_put(&dev->cache, b);
		return NULL;
	}
	seg->ptr = va;
	seg->size = seg->exp->npages * seg->exp->page;
	seg->stream = stream;
	seg->pool = pool;
	seg->head = b;
	seg->kind = NPA_SEGMENT_EXPANDABLE;
	if (npa_recording(dev))
		seg->frame = npa_history_frame(dev, NULL);
	b->ptr = va;
	b->size = seg->size;
	b->stream = stream;
	b->pool = pool;
	b->seg = seg;
	b->mapped = false;
	b->expandable = true;
	RB_INSERT(npa_segment_tree, &dev->segments, seg);
	npa_device_note_segment(dev, seg->ptr, seg->size);
	RB_INSERT(npa_unmapped_tree, &pool->unmapped, b);
	return b;
}

/* The lowest-address place of this stream with room, or a new segment. */
static struct npa_block *find_expandable_block(struct npa_device *dev, aclrtStream stream,
					       struct npa_pool *pool, size_t size)
{
	struct npa_block key = { .stream = stream, .ptr = NULL };
	struct npa_block *c = RB_NFIND(npa_unmapped_tree, &pool->unmapped, &key);

	for (; c != NULL && c->stream == stream; c = RB_NEXT(npa_unmapped_tree, &pool->unmapped, c)) {
		struct npa_block *start = allocatable(c->prev) ? c->prev : c;

		if (has_room(start, size))
			return start;
	}
	return new_expandable_segment(dev, stream, pool);
}

/* Stats and trace of a map or unmap of `bytes` in `pool`. */
static void account(struct npa_device *dev, struct npa_block *b, int64_t bytes)
{
	dev->total_allocated_memory += (size_t)bytes;
	npa_stat_update(dev->stats.reserved_bytes, b->pool, bytes);
	if (bytes > 0)
		dev->stats.num_device_alloc += 1;
	else
		dev->stats.num_device_free += 1;
	npa_trace(dev, bytes > 0 ? NPA_TRACE_SEGMENT_MAP : NPA_TRACE_SEGMENT_UNMAP, b->ptr,
		  (size_t)(bytes > 0 ? bytes : -bytes), b->stream, b->pool, &b->seg->frame);
}

/* Map the front of unmapped `b` (at least `size` bytes); it joins the free pool. */
static bool map_block(struct npa_device *dev, struct npa_block *b, size_t size)
{
	struct npa_pool *pool = b->pool;
	size_t mapped = npa_expandable_map(dev, b->seg, b->ptr, size);

	if (mapped == 0)
		return false;
	if (mapped < b->size) {
		struct npa_block *rest = npa_block_get(&dev->cache);

		if (rest == NULL) {
			char *start;
			npa_expandable_unmap(dev, b->seg, b->ptr, mapped, false, &start);
			return false;
		}
		rest->ptr = b->ptr + mapped;
		rest->size = b->size - mapped;
		rest->stream = b->stream;
		rest->pool = pool;
		rest->seg = b->seg;
		rest->mapped = false;
		rest->expandable = true;
		npa_block_link_after(rest, b);
		b->size = mapped;
		RB_INSERT(npa_unmapped_tree, &pool->unmapped, rest);
	}
	RB_REMOVE(npa_unmapped_tree, &pool->unmapped, b);
	b->mapped = true;
	account(dev, b, (int64_t)mapped);
	npa_try_merge(dev, b, b->prev);
	npa_try_merge(dev, b, b->next);
	npa_pool_insert(pool, b);
	return true;
}

/*
 * upstream try_allocate_expandable_block: map pages (of the rounded
 * request, not a segment size) until a free block holds `p->size`.
 * 1: p->block is out of the pool; 0: no memory.
 */
int npa_alloc_expandable(struct npa_device *dev, struct npa_alloc_params *p)
{
	struct npa_block *c = find_expandable_block(dev, p->stream, p->pool, p->size);

	if (c == NULL)
		return 0;
	if (!c->mapped && !map_block(dev, c, c->size < p->size ? c->size : p->size))
		return 0;
	while (c->size < p->size) {
		struct npa_block *next = c->next;
		size_t remaining = p->size - c->size;

		if (!map_block(dev, next, remaining < next->size ? remaining : next->size))
			return 0;
		c = next;
	}
	npa_pool_remove(p->pool, c);
	p->block = c;
	return 1;
}

static struct npa_block *free_piece(struct npa_device *dev, struct npa_block *like, char *ptr,
				    size_t size)
{
	struct npa_block *f = npa_block_get(&dev->cache);

	if (f == NULL)
		return NULL;
	f->ptr = ptr;
	f->size = size;
	f->stream = like->stream;
	f->pool = like->pool;
	f->seg = like->seg;
	f->expandable = true;
	return f;
}

/* Unmap the whole pages inside free block `b`; partial pages stay free blocks. */
void npa_unmap_block(struct npa_device *dev, struct npa_block *b, bool keep_handles)
{
	struct npa_pool *pool = b->pool;
	char *start;
	/* Pieces are made first: a failure then leaves everything mapped. */
	struct npa_block *before = free_piece(dev, b, NULL, 0);
	struct npa_block *after = free_piece(dev, b, NULL, 0);
	size_t n = 0;

	if (before != NULL && after != NULL)
		n = npa_expandable_unmap(dev, b->seg, b->ptr, b->size, keep_handles, &start);
	if (n == 0) {
		if (before != NULL)
			npa_block_put(&dev->cache, before);
		if (after != NULL)
			npa_block_put(&dev->cache, after);
		return;
	}
	npa_pool_remove(pool, b);
	size_t before_size = (size_t)(start - b->ptr);
	size_t after_size = b->size - before_size - n;
	if (before_size > 0) {
		before->ptr = b->ptr;
		before->size = before_size;
		npa_block_link_before(before, b);
		npa_pool_insert(pool, before);
	} else {
		npa_block_put(&dev->cache, before);
	}
	if (after_size > 0) {
		after->ptr = start + n;
		after->size = after_size;
		npa_block_link_after(after, b);
		npa_pool_insert(pool, after);
	} else {
		npa_block_put(&dev->cache, after);
	}
	b->ptr = start;
	b->size = n;
	b->mapped = false;
	account(dev, b, -(int64_t)n);
	if (pool->owner != NULL)
		pool->owner->malloc_count--;
	npa_try_merge(dev, b, b->prev);
	npa_try_merge(dev, b, b->next);
	RB_INSERT(npa_unmapped_tree, &pool->unmapped, b);
}

/* A segment that is one unmapped block gives its range back. */
void npa_release_expandable_segment(struct npa_device *dev, struct npa_block *b)
{
	struct npa_segment *seg = b->seg;
	int32_t saved;

	if (b->prev != NULL || b->next != NULL || b->mapped)
		return;
	RB_REMOVE(npa_unmapped_tree, &b->pool->unmapped, b);
	npa_pool_drop(b->pool, b->stream);
	RB_REMOVE(npa_segment_tree, &dev->segments, seg);
	if (npa_device_enter(dev->id, &saved) == 0)
		npa_expandable_destroy(seg);
	npa_device_leave(saved);
	if (seg->exp != NULL)
		free(seg->exp->handles);
	free(seg->exp);
	free(seg);
	npa_block_put(&dev->cache, b);
}
