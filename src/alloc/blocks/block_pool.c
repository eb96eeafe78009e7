/*
 * block_pool.c - ordered sets of free blocks and of segments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"

static int npa_bin_cmp(const struct npa_block *a, const struct npa_block *b)
{
	if (npa_bin_key_before(a->size, a->ptr, b->size, b->ptr))
		return -1;
	return npa_bin_key_before(b->size, b->ptr, a->size, a->ptr);
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

RB_GENERATE(npa_bin_tree, npa_block, node, npa_bin_cmp)
RB_GENERATE(npa_unmapped_tree, npa_block, node, npa_unmapped_cmp)
RB_GENERATE(npa_segment_tree, npa_segment, node, npa_segment_cmp)

void npa_pool_init(struct npa_pool *pool, bool is_small)
{
	pool->streams = NULL;
	pool->nstreams = 0;
	RB_INIT(&pool->unmapped);
	pool->spare = (struct npa_handle_cache){ 0 };
	pool->is_small = is_small;
	pool->owner = NULL;
	pool->gc_calls = 0;
}

void npa_pool_fini(struct npa_pool *pool)
{
	for (size_t i = 0; i < pool->nstreams; i++)
		free(pool->streams[i]);
	free(pool->streams);
	pool->streams = NULL;
	pool->nstreams = 0;
}

int npa_pool_hold(struct npa_pool *pool, aclrtStream stream)
{
	size_t i = npa_pool_stream_index(pool, stream);

	if (i < pool->nstreams && pool->streams[i]->stream == stream) {
		pool->streams[i]->segments++;
		return 0;
	}
	struct npa_stream_bins **streams =
		realloc(pool->streams, (pool->nstreams + 1) * sizeof(*streams));
	if (streams == NULL)
		return -ENOMEM;
	pool->streams = streams;
	struct npa_stream_bins *sb = calloc(1, sizeof(*sb));
	if (sb == NULL)
		return -ENOMEM;
	sb->stream = stream;
	sb->segments = 1;
	memmove(&streams[i + 1], &streams[i], (pool->nstreams - i) * sizeof(*streams));
	streams[i] = sb;
	pool->nstreams++;
	return 0;
}

void npa_pool_drop(struct npa_pool *pool, aclrtStream stream)
{
	size_t i = npa_pool_stream_index(pool, stream);

	if (i == pool->nstreams || pool->streams[i]->stream != stream ||
	    --pool->streams[i]->segments > 0)
		return;
	free(pool->streams[i]);
	pool->nstreams--;
	memmove(&pool->streams[i], &pool->streams[i + 1],
		(pool->nstreams - i) * sizeof(*pool->streams));
}

/*
 * RB_INSERT with the (size, address) order tested in place: keys in a pool
 * are unique (addresses are), so the descent needs no equality case and
 * no three-way comparator call per level.
 */
static void bin_insert(struct npa_bin_tree *t, struct npa_block *b)
{
	struct npa_block *parent = NULL, *at = RB_ROOT(t);
	const size_t size = b->size;
	const char *ptr = b->ptr;
	bool left = false;

	while (at != NULL) {
		parent = at;
		left = npa_bin_key_before(size, ptr, at->size, at->ptr);
		at = left ? RB_LEFT(at, node) : RB_RIGHT(at, node);
	}
	RB_SET(b, parent, node);
	if (parent == NULL)
		RB_ROOT(t) = b;
	else if (left)
		RB_LEFT(parent, node) = b;
	else
		RB_RIGHT(parent, node) = b;
	npa_bin_tree_RB_INSERT_COLOR(t, b);
}

void npa_pool_insert(struct npa_pool *pool, struct npa_block *b)
{
	struct npa_stream_bins *sb = npa_pool_bins(pool, b->stream);
	unsigned i = npa_bin_of(b->size);

	b->gc_base = pool->gc_calls;
	if (RB_EMPTY(&sb->bin[i]))
		npa_bins_mark(sb, i);
	bin_insert(&sb->bin[i], b);
}

void npa_pool_remove(struct npa_pool *pool, struct npa_block *b)
{
	struct npa_stream_bins *sb = npa_pool_bins(pool, b->stream);
	unsigned i = npa_bin_of(b->size);

	RB_REMOVE(npa_bin_tree, &sb->bin[i], b);
	if (RB_EMPTY(&sb->bin[i]))
		npa_bins_unmark(sb, i);
}

/*
 * A block alone in its bin going to an empty one: the one-node tree moves
 * whole, its node (a black root) unchanged. Most remainders of a small
 * pool's split do this, bins there being one 512-byte size each.
 */
static bool move_alone(struct npa_pool *pool, struct npa_block *b, unsigned from, unsigned to)
{
	struct npa_stream_bins *sb = npa_pool_bins(pool, b->stream);

	if (RB_ROOT(&sb->bin[from]) != b || RB_LEFT(b, node) != NULL ||
	    RB_RIGHT(b, node) != NULL || !RB_EMPTY(&sb->bin[to]))
		return false;
	RB_ROOT(&sb->bin[from]) = NULL;
	npa_bins_unmark(sb, from);
	RB_ROOT(&sb->bin[to]) = b;
	npa_bins_mark(sb, to);
	return true;
}

/*
 * A split leaves the remainder's key smaller, so it still sorts before the
 * block after it; when it stays in its bin and still sorts after the block
 * before it, it keeps its node (upstream erases and re-inserts it).
 */
void npa_pool_rekey(struct npa_pool *pool, struct npa_block *b, char *ptr, size_t size)
{
	const unsigned from = npa_bin_of(b->size), to = npa_bin_of(size);

	if (from == to) {
		const struct npa_block *prev = RB_PREV(npa_bin_tree, NULL, b);

		if (prev == NULL || npa_bin_key_before(prev->size, prev->ptr, size, ptr)) {
			b->ptr = ptr;
			b->size = size;
			b->gc_base = pool->gc_calls;
			return;
		}
	} else if (move_alone(pool, b, from, to)) {
		b->ptr = ptr;
		b->size = size;
		b->gc_base = pool->gc_calls;
		return;
	}
	npa_pool_remove(pool, b);
	b->ptr = ptr;
	b->size = size;
	npa_pool_insert(pool, b);
}

bool npa_pool_empty(const struct npa_pool *pool)
{
	for (size_t i = 0; i < pool->nstreams; i++)
		if (pool->streams[i]->summary != 0)
			return false;
	return true;
}

static struct npa_block *bin_last(const struct npa_bin_tree *t)
{
	struct npa_block *b = RB_ROOT(t);

	while (b != NULL && RB_RIGHT(b, node) != NULL)
		b = RB_RIGHT(b, node);
	return b;
}

/* The first block of a stream's bins from bin `i` on, or NULL. */
static struct npa_block *first_from(const struct npa_stream_bins *sb, unsigned i)
{
	i = npa_bins_next(sb, i);
	return i < NPA_BINS ? npa_bin_first(&sb->bin[i]) : NULL;
}

struct npa_block *npa_pool_first(const struct npa_pool *pool)
{
	for (size_t i = 0; i < pool->nstreams; i++) {
		struct npa_block *b = first_from(pool->streams[i], 0);

		if (b != NULL)
			return b;
	}
	return NULL;
}

struct npa_block *npa_pool_next_in_stream(const struct npa_pool *pool,
					  const struct npa_block *b)
{
	struct npa_block *next = RB_NEXT(npa_bin_tree, NULL, (struct npa_block *)b);

	if (next != NULL)
		return next;
	return first_from(npa_pool_bins(pool, b->stream), npa_bin_of(b->size) + 1);
}

struct npa_block *npa_pool_next(const struct npa_pool *pool, const struct npa_block *b)
{
	struct npa_block *next = npa_pool_next_in_stream(pool, b);

	for (size_t i = npa_pool_stream_index(pool, b->stream) + 1; next == NULL && i < pool->nstreams; i++)
		next = first_from(pool->streams[i], 0);
	return next;
}

/* The last block of a stream's bins before bin `i`, or NULL. */
static struct npa_block *last_before(const struct npa_stream_bins *sb, unsigned i)
{
	i = npa_bins_prev(sb, i);
	return i < NPA_BINS ? bin_last(&sb->bin[i]) : NULL;
}

struct npa_block *npa_pool_last_below(const struct npa_pool *pool, aclrtStream stream,
				      size_t size)
{
	const struct npa_stream_bins *sb = npa_pool_bins(pool, stream);

	if (sb == NULL)
		return NULL;
	unsigned i = npa_bin_of(size);
	struct npa_block *b = RB_ROOT(&sb->bin[i]), *found = NULL;

	while (b != NULL) {
		if (b->size < size) {
			found = b;
			b = RB_RIGHT(b, node);
		} else {
			b = RB_LEFT(b, node);
		}
	}
	return found != NULL ? found : last_before(sb, i);
}

struct npa_block *npa_pool_prev_in_stream(const struct npa_pool *pool,
					  const struct npa_block *b)
{
	struct npa_block *prev = RB_PREV(npa_bin_tree, NULL, (struct npa_block *)b);

	if (prev != NULL)
		return prev;
	return last_before(npa_pool_bins(pool, b->stream), npa_bin_of(b->size));
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
