/*
 * block_pool.c - ordered sets of free blocks and of segments.
 */
#include <stdlib.h>

#include "block.h"

/* Upstream's BlockComparatorSize: stream, then size, then address. */
static int npa_block_cmp(const struct npa_block *a, const struct npa_block *b)
{
	uintptr_t sa = (uintptr_t)a->stream, sb = (uintptr_t)b->stream;
	uintptr_t pa = (uintptr_t)a->ptr, pb = (uintptr_t)b->ptr;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return 0;
}

static int npa_segment_cmp(const struct npa_segment *a, const struct npa_segment *b)
{
	uintptr_t pa = (uintptr_t)a->ptr, pb = (uintptr_t)b->ptr;

	return pa < pb ? -1 : pa > pb;
}

/* Upstream's BlockComparatorAddress: stream, then address. */
static int npa_unmapped_cmp(const struct npa_block *a, const struct npa_block *b)
{
	uintptr_t sa = (uintptr_t)a->stream, sb = (uintptr_t)b->stream;
	uintptr_t pa = (uintptr_t)a->ptr, pb = (uintptr_t)b->ptr;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return pa < pb ? -1 : pa > pb;
}

RB_GENERATE(npa_block_tree, npa_block, node, npa_block_cmp)
RB_GENERATE(npa_unmapped_tree, npa_block, node, npa_unmapped_cmp)
RB_GENERATE(npa_segment_tree, npa_segment, node, npa_segment_cmp)

void npa_pool_init(struct npa_pool *pool, bool is_small)
{
	RB_INIT(&pool->blocks);
	RB_INIT(&pool->unmapped);
	pool->spare = (struct npa_handle_cache){ 0 };
	pool->is_small = is_small;
	pool->owner = NULL;
	pool->gc_calls = 0;
}

/*
 * RB_INSERT with the (stream, size, address) order tested in place: keys in
 * a pool are unique (addresses are), so the descent needs no equality case
 * and no three-way comparator call per level.
 */
void npa_pool_insert(struct npa_pool *pool, struct npa_block *b)
{
	struct npa_block *parent = NULL, *t = RB_ROOT(&pool->blocks);
	const uintptr_t s = (uintptr_t)b->stream;
	const size_t size = b->size;
	const char *ptr = b->ptr;
	bool left = false;

	b->gc_base = pool->gc_calls;
	while (t != NULL) {
		uintptr_t ts = (uintptr_t)t->stream;

		parent = t;
		left = s != ts ? s < ts : size != t->size ? size < t->size : ptr < t->ptr;
		t = left ? RB_LEFT(t, node) : RB_RIGHT(t, node);
	}
	RB_SET(b, parent, node);
	if (parent == NULL)
		RB_ROOT(&pool->blocks) = b;
	else if (left)
		RB_LEFT(parent, node) = b;
	else
		RB_RIGHT(parent, node) = b;
	npa_block_tree_RB_INSERT_COLOR(&pool->blocks, b);
}

void npa_pool_remove(struct npa_pool *pool, struct npa_block *b)
{
	RB_REMOVE(npa_block_tree, &pool->blocks, b);
}

/* RB_NFIND with the key (stream, size, 0) compared in place: no key block to build. */
struct npa_block *npa_pool_nfind(struct npa_pool *pool, aclrtStream stream,
				 size_t size, struct npa_block **pred)
{
	struct npa_block *b = RB_ROOT(&pool->blocks), *found = NULL, *before = NULL;
	uintptr_t s = (uintptr_t)stream;

	while (b != NULL) {
		uintptr_t bs = (uintptr_t)b->stream;

		if (s < bs || (s == bs && size <= b->size)) {
			found = b;
			b = RB_LEFT(b, node);
		} else {
			before = b;
			b = RB_RIGHT(b, node);
		}
	}
	if (pred != NULL)
		*pred = before;
	return found;
}

struct npa_block *npa_block_new(void)
{
	struct npa_block *b = malloc(sizeof(*b));

	if (b != NULL) {
		npa_block_reset(b);
		/* Recycled blocks are inactive, so their frames are empty already. */
		b->frame = (struct npa_frame){ 0 };
	}
	return b;
}

void npa_block_free_uses(struct npa_block *b)
{
	free(b->uses);
	b->uses = NULL;
}

void npa_block_cache_drain(struct npa_block_cache *c)
{
	while (c->spare != NULL) {
		struct npa_block *b = c->spare;

		c->spare = b->next;
		free(b);
	}
}
