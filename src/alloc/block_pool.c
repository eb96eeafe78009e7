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
	npa_size_runs_init(&pool->runs);
	pool->run_max = is_small ? NPA_POOL_SMALL_REQUEST_MAX : SIZE_MAX;
	pool->spare = (struct npa_handle_cache){ 0 };
	pool->is_small = is_small;
	pool->owner = NULL;
	pool->gc_calls = 0;
}

void npa_pool_fini(struct npa_pool *pool)
{
	npa_size_runs_fini(&pool->runs);
}

/* Same stream and size: the same run. */
static bool same_run(const struct npa_block *a, const struct npa_block *b)
{
	return a != NULL && a->stream == b->stream && a->size == b->size;
}

/* `b` (in the tree) joins its run, first if it precedes the run's first block. */
static void join_run(struct npa_pool *pool, struct npa_block *b, struct npa_block *first)
{
	if (first == NULL)
		npa_size_runs_add(&pool->runs, b);
	else if (b->ptr < first->ptr)
		npa_size_runs_replace(&pool->runs, first, b);
}

/* `b` (still in the tree) leaves its run; `next` is its successor there. */
static void leave_run(struct npa_pool *pool, struct npa_block *b, struct npa_block *next)
{
	if (!b->run_first)
		return;
	if (same_run(next, b))
		npa_size_runs_replace(&pool->runs, b, next);
	else
		npa_size_runs_remove(&pool->runs, b);
}

/* `b` goes into the order between `prev` and `next` (either may be NULL). */
static void thread(struct npa_block *b, struct npa_block *prev, struct npa_block *next)
{
	b->pool_prev = prev;
	b->pool_next = next;
	if (prev != NULL)
		prev->pool_next = b;
	if (next != NULL)
		next->pool_prev = b;
}

static void unthread(struct npa_block *b)
{
	if (b->pool_prev != NULL)
		b->pool_prev->pool_next = b->pool_next;
	if (b->pool_next != NULL)
		b->pool_next->pool_prev = b->pool_prev;
}

/* A new leaf: a left child comes right before its parent, a right child right after. */
static void link_child(struct npa_pool *pool, struct npa_block *b, struct npa_block *parent,
		       bool left)
{
	RB_SET(b, parent, node);
	if (parent == NULL) {
		RB_ROOT(&pool->blocks) = b;
		thread(b, NULL, NULL);
	} else if (left) {
		RB_LEFT(parent, node) = b;
		thread(b, parent->pool_prev, parent);
	} else {
		RB_RIGHT(parent, node) = b;
		thread(b, parent, parent->pool_next);
	}
	npa_block_tree_RB_INSERT_COLOR(&pool->blocks, b);
}

/*
 * RB_INSERT with the (stream, size, address) order tested in place: keys in
 * a pool are unique (addresses are), so the descent needs no equality case
 * and no three-way comparator call per level.
 */
static void insert_descending(struct npa_pool *pool, struct npa_block *b)
{
	struct npa_block *parent = NULL, *t = RB_ROOT(&pool->blocks);
	const uintptr_t s = (uintptr_t)b->stream;
	const size_t size = b->size;
	const char *ptr = b->ptr;
	bool left = false;

	while (t != NULL) {
		uintptr_t ts = (uintptr_t)t->stream;

		parent = t;
		left = s != ts ? s < ts : size != t->size ? size < t->size : ptr < t->ptr;
		t = left ? RB_LEFT(t, node) : RB_RIGHT(t, node);
	}
	link_child(pool, b, parent, left);
}

/*
 * `b` goes right before `next`, as a leaf there without a descent from
 * the root: next's left child if it has none, else the right child of
 * next's predecessor, the largest of that left subtree, which has none.
 */
static void insert_before(struct npa_pool *pool, struct npa_block *b, struct npa_block *next)
{
	if (RB_LEFT(next, node) == NULL)
		link_child(pool, b, next, true);
	else
		link_child(pool, b, next->pool_prev, false);
}

void npa_pool_insert(struct npa_pool *pool, struct npa_block *b)
{
	struct npa_block *first = NULL;

	b->gc_base = pool->gc_calls;
	if (b->size <= pool->run_max) {
		first = npa_size_runs_find(&pool->runs, b->stream, b->size);
		if (first != NULL && b->ptr < first->ptr) {
			insert_before(pool, b, first);
			npa_size_runs_replace(&pool->runs, first, b);
			return;
		}
	}
	insert_descending(pool, b);
	if (first == NULL && b->size <= pool->run_max)
		npa_size_runs_add(&pool->runs, b);
}

void npa_pool_remove(struct npa_pool *pool, struct npa_block *b)
{
	leave_run(pool, b, b->pool_next);
	unthread(b);
	RB_REMOVE(npa_block_tree, &pool->blocks, b);
}

void npa_pool_rekey_run(struct npa_pool *pool, struct npa_block *b, char *ptr, size_t size)
{
	leave_run(pool, b, b->pool_next);
	npa_pool_set_key(pool, b, ptr, size);
	if (size <= pool->run_max)
		join_run(pool, b, npa_size_runs_find(&pool->runs, b->stream, size));
}

/* Whether key (stream, size, ptr) of `b` sorts before `next`'s. */
static bool sorts_before(const struct npa_block *b, const struct npa_block *next)
{
	if (next == NULL || next->stream != b->stream)
		return true;
	return next->size != b->size ? b->size < next->size : b->ptr < next->ptr;
}

/* `b` takes over old's node: links, colour and the neighbours' links to it. */
static void take_node(struct npa_pool *pool, struct npa_block *old, struct npa_block *b)
{
	struct npa_block *parent = RB_PARENT(old, node);

	b->node = old->node;
	thread(b, old->pool_prev, old->pool_next);
	if (parent == NULL)
		RB_ROOT(&pool->blocks) = b;
	else if (RB_LEFT(parent, node) == old)
		RB_LEFT(parent, node) = b;
	else
		RB_RIGHT(parent, node) = b;
	if (RB_LEFT(b, node) != NULL)
		RB_PARENT(RB_LEFT(b, node), node) = b;
	if (RB_RIGHT(b, node) != NULL)
		RB_PARENT(RB_RIGHT(b, node), node) = b;
}

/*
 * A merge: `b` has grown over `old`, so its key is larger than old's and
 * still sorts after old's predecessor; if it also sorts before old's
 * successor it is in order in old's node, and no rebalancing is needed
 * (upstream erases both and inserts the merged block).
 */
void npa_pool_replace(struct npa_pool *pool, struct npa_block *old, struct npa_block *b)
{
	struct npa_block *next = old->pool_next;

	if (!sorts_before(b, next)) {
		npa_pool_remove(pool, old);
		npa_pool_insert(pool, b);
		return;
	}
	leave_run(pool, old, next);
	take_node(pool, old, b);
	b->gc_base = pool->gc_calls;
	if (b->size <= pool->run_max)
		join_run(pool, b, npa_size_runs_find(&pool->runs, b->stream, b->size));
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
