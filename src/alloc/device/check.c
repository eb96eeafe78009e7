/*
 * check.c - every invariant of one device, recomputed from the blocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "device.h"
#include "alloc/blocks/ptr_map.h"
#include "alloc/core/invariant.h"

struct tally {
	struct npa_stats st;   /* only .current and the oversize singles are filled */
	size_t free_blocks;
	size_t unmapped_blocks;
	size_t pending_events;
};

static void add(struct npa_stat *arr, const struct npa_pool *pool, int64_t n)
{
	arr[NPA_STAT_ALL].current += n;
	arr[pool->is_small ? NPA_STAT_SMALL_POOL : NPA_STAT_LARGE_POOL].current += n;
}

static void tally_block(const struct npa_device *dev, const struct npa_block *b, bool split,
			struct tally *t)
{
	struct npa_stats *st = &t->st;
	/* nuses on a freed block: its events wait for the capture to end. */
	bool active = b->allocated || b->event_count > 0 || b->nuses > 0;

	t->pending_events += (size_t)b->event_count;
	if (b->allocated) {
		add(st->allocation, b->pool, 1);
		add(st->allocated_bytes, b->pool, (int64_t)b->size);
		if (b->size >= dev->conf->max_split_size)
			st->oversize_allocations.current++;
	}
	if (active) {
		add(st->active, b->pool, 1);
		add(st->active_bytes, b->pool, (int64_t)b->size);
		add(st->requested_bytes, b->pool, (int64_t)b->requested_size);
		return;
	}
	if (!b->mapped) {
		t->unmapped_blocks++;
		return;
	}
	t->free_blocks++;
	if (split && !npa_block_is_expandable(b)) {
		add(st->inactive_split, b->pool, 1);
		add(st->inactive_split_bytes, b->pool, (int64_t)b->size);
	}
}

/* Not allocated and waiting for nothing: neither events nor, after a free
 * during a capture, the end of the capture. */
static bool is_free(const struct npa_block *b)
{
	return b != NULL && !b->allocated && b->event_count == 0 && b->nuses == 0;
}

/* Whether the bin of b's stream and size in its pool holds it. */
static bool in_its_bin(const struct npa_block *b)
{
	struct npa_stream_bins *sb = npa_pool_bins(b->pool, b->stream);

	return sb != NULL &&
	       RB_FIND(npa_bin_tree, &sb->bin[npa_bin_of(b->size)], (struct npa_block *)b) == b;
}

static int check_block(const struct npa_segment *seg, const struct npa_block *b,
		       const char *expect_ptr, char *err, size_t errlen)
{
	if (b->ptr != expect_ptr)
		return npa_broken(err, errlen,
				  "block %p of segment %p does not follow its neighbour",
				  (void *)b->ptr, (void *)seg->ptr);
	if (b->seg != seg || b->pool != seg->pool || b->stream != seg->stream ||
	    b->expandable != (seg->kind == NPA_SEGMENT_EXPANDABLE))
		return npa_broken(err, errlen,
				  "block %p disagrees with its segment", (void *)b->ptr);
	if (b->next != NULL && b->next->prev != b)
		return npa_broken(err, errlen, "block %p: broken neighbour links", (void *)b->ptr);
	if (is_free(b) && is_free(b->next) && b->mapped == b->next->mapped)
		return npa_broken(err, errlen, "free blocks %p and %p were not merged",
				  (void *)b->ptr, (void *)b->next->ptr);
	if (!b->mapped && (b->allocated || seg->kind != NPA_SEGMENT_EXPANDABLE ||
			   RB_FIND(npa_unmapped_tree, &b->pool->unmapped, (struct npa_block *)b) != b))
		return npa_broken(err, errlen,
				  "unmapped block %p is not in its pool's unmapped set",
				  (void *)b->ptr);
	if (b->mapped && is_free(b) && !in_its_bin(b))
		return npa_broken(err, errlen, "free block %p is not in its pool", (void *)b->ptr);
	return 0;
}

static int check_segment(const struct npa_device *dev, const struct npa_segment *seg,
			 struct tally *t, char *err, size_t errlen)
{
	const char *p = seg->ptr;
	bool split = npa_block_is_split(seg->head);
	int rc;

	if (seg->head == NULL || seg->head->prev != NULL)
		return npa_broken(err, errlen, "segment %p: bad head block", (void *)seg->ptr);
	if (npa_pool_bins(seg->pool, seg->stream) == NULL)
		return npa_broken(err, errlen, "segment %p: its pool has no bins for its stream",
				  (void *)seg->ptr);
	for (const struct npa_block *b = seg->head; b != NULL; b = b->next) {
		if ((rc = check_block(seg, b, p, err, errlen)) < 0)
			return rc;
		tally_block(dev, b, split, t);
		p += b->size;
	}
	if (p != seg->ptr + seg->size)
		return npa_broken(err, errlen, "segment %p: blocks cover %td of %zu bytes",
				  (void *)seg->ptr, p - seg->ptr, seg->size);
	if (seg->kind == NPA_SEGMENT_EXPANDABLE) {
		/* Mapping changes reserved bytes only, never segment counts. */
		for (const struct npa_block *b = seg->head; b != NULL; b = b->next)
			if (b->mapped)
				add(t->st.reserved_bytes, seg->pool, (int64_t)b->size);
		return 0;
	}
	add(t->st.segment, seg->pool, 1);
	add(t->st.reserved_bytes, seg->pool, (int64_t)seg->size);
	if (seg->size >= dev->conf->max_split_size)
		t->st.oversize_segments.current++;
	return 0;
}

static int check_segments(const struct npa_device *dev, struct tally *t, char *err,
			  size_t errlen)
{
	struct npa_segment *seg;
	const char *end = NULL;
	int rc;

	RB_FOREACH(seg, npa_segment_tree, (struct npa_segment_tree *)&dev->segments) {
		if (end != NULL && seg->ptr < end)
			return npa_broken(err, errlen, "segment %p overlaps the one before",
					  (void *)seg->ptr);
		if ((rc = check_segment(dev, seg, t, err, errlen)) < 0)
			return rc;
		end = seg->ptr + seg->size;
	}
	return 0;
}

/* Segments of `stream` in `pool`: its bins count them, and go with the last. */
static size_t segments_of(const struct npa_device *dev, const struct npa_pool *pool,
			  aclrtStream stream)
{
	struct npa_segment *seg;
	size_t n = 0;

	RB_FOREACH(seg, npa_segment_tree, &((struct npa_device *)dev)->segments)
		n += seg->pool == pool && seg->stream == stream;
	return n;
}

/* The bitmap names exactly the bins that hold blocks, each of its own size. */
static int check_bin(const struct npa_pool *pool, const struct npa_stream_bins *sb,
		     unsigned i, size_t *count, char *err, size_t errlen)
{
	struct npa_block *b, *prev = NULL;
	bool marked = (sb->map[i / 64] >> (i % 64)) & 1;

	if (marked == RB_EMPTY(&sb->bin[i]))
		return npa_broken(err, errlen, "bin %u of stream %p is %s but marked %s", i,
				  sb->stream, marked ? "empty" : "not empty",
				  marked ? "full" : "empty");
	RB_FOREACH(b, npa_bin_tree, (struct npa_bin_tree *)&sb->bin[i]) {
		if (!is_free(b) || !b->mapped || b->pool != pool)
			return npa_broken(err, errlen, "pool holds block %p that is not free there",
					  (void *)b->ptr);
		if (b->stream != sb->stream || npa_bin_of(b->size) != i)
			return npa_broken(err, errlen, "block %p of %zu bytes is in bin %u of "
					  "stream %p", (void *)b->ptr, b->size, i, sb->stream);
		/* Blocks whose key changed in place must still be in order. */
		if (prev != NULL && !npa_bin_key_before(prev->size, prev->ptr, b->size, b->ptr))
			return npa_broken(err, errlen, "pool holds block %p after %p out of order",
					  (void *)b->ptr, (void *)prev->ptr);
		prev = b;
		(*count)++;
	}
	return 0;
}

static int check_stream_bins(const struct npa_device *dev, const struct npa_pool *pool,
			     const struct npa_stream_bins *sb, size_t *count, char *err,
			     size_t errlen)
{
	size_t segments = segments_of(dev, pool, sb->stream);
	int rc;

	if (sb->segments != segments)
		return npa_broken(err, errlen, "bins of stream %p count %zu segments, the pool "
				  "has %zu", sb->stream, sb->segments, segments);
	for (unsigned w = 0; w < NPA_BIN_WORDS; w++)
		if (((sb->summary >> w) & 1) != (sb->map[w] != 0))
			return npa_broken(err, errlen, "bins of stream %p: summary bit %u is wrong",
					  sb->stream, w);
	for (unsigned i = 0; i < NPA_BINS; i++)
		if ((rc = check_bin(pool, sb, i, count, err, errlen)) < 0)
			return rc;
	return 0;
}

static int check_pool(const struct npa_device *dev, const struct npa_pool *pool,
		      size_t *count, size_t *unmapped, char *err, size_t errlen)
{
	struct npa_block *b;
	int rc;

	RB_FOREACH(b, npa_unmapped_tree, (struct npa_unmapped_tree *)&pool->unmapped) {
		if (b->mapped || b->allocated || b->pool != pool)
			return npa_broken(err, errlen, "unmapped set holds block %p that is not "
					  "unmapped there", (void *)b->ptr);
		(*unmapped)++;
	}
	for (size_t i = 0; i < pool->nstreams; i++) {
		const struct npa_stream_bins *sb = pool->streams[i];

		if (i > 0 && (uintptr_t)pool->streams[i - 1]->stream >= (uintptr_t)sb->stream)
			return npa_broken(err, errlen, "pool streams are out of order at %p",
					  sb->stream);
		if ((rc = check_stream_bins(dev, pool, sb, count, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

#define NPA_CHECK_ARRAY(name)                                                  \
	for (int i = 0; i < NPA_STAT_TYPES; i++)                               \
		if (t->st.name[i].current != st->name[i].current)              \
			return npa_broken(err, errlen,                               \
					  #name ".%s.current is %" PRId64            \
					  ", blocks say %" PRId64,                   \
					  types[i], st->name[i].current,             \
					  t->st.name[i].current);

static int compare_stats(const struct npa_device *dev, const struct tally *t, char *err,
			 size_t errlen)
{
	static const char *const types[] = NPA_STAT_TYPE_NAMES;
	const struct npa_stats *st = &dev->stats;

	NPA_STAT_ARRAYS(NPA_CHECK_ARRAY)
	if (dev->oversize_exact &&
	    (t->st.oversize_allocations.current != st->oversize_allocations.current ||
	     t->st.oversize_segments.current != st->oversize_segments.current))
		return npa_broken(err, errlen, "oversize counters disagree with the blocks");
	if ((int64_t)dev->total_allocated_memory != st->reserved_bytes[NPA_STAT_ALL].current)
		return npa_broken(err, errlen,
				  "total_allocated_memory %zu != reserved_bytes %" PRId64,
				  dev->total_allocated_memory, st->reserved_bytes[NPA_STAT_ALL].current);
	return 0;
}

/* Device mallocs a private pool still owes, from its device-malloc segments. */
static long device_segments_of(const struct npa_device *dev,
			       const struct npa_private_pool *pp)
{
	struct npa_segment *seg;
	long n = 0;

	RB_FOREACH(seg, npa_segment_tree, &((struct npa_device *)dev)->segments)
		n += seg->pool->owner == pp && seg->kind == NPA_SEGMENT_DEVICE_MALLOC;
	return n;
}

/*
 * Each private pool's trees, and its npuMalloc_count against its segments
 * (expandable pages are counted per map call and unmap call, as upstream,
 * so only device-malloc segments can be checked).
 */
static int check_private_pools(const struct npa_device *dev, size_t *pooled,
			       size_t *unmapped, char *err, size_t errlen)
{
	for (const struct npa_private_pool *pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp)) {
		const struct private_pool *base = &pp->base;
		int rc = check_pool(dev, &pp->small, pooled, unmapped, err, errlen);

		if (rc == 0)
			rc = check_pool(dev, &pp->large, pooled, unmapped, err, errlen);
		if (rc < 0)
			return rc;
		if (base->use_count < 0 || base->freeable != (base->use_count == 0))
			return npa_broken(err, errlen,
					  "pool (%" PRIu64 ",%" PRIu64 "): use_count %d, %s",
					  base->id.first, base->id.second, base->use_count,
					  base->freeable ? "freeable" : "not freeable");
		long segments = pp->mapped_pages ? pp->malloc_count : device_segments_of(dev, pp);
		if (pp->malloc_count != segments)
			return npa_broken(err, errlen,
					  "pool (%" PRIu64 ",%" PRIu64 "): npuMalloc_count %ld, %ld segments",
					  base->id.first, base->id.second, pp->malloc_count, segments);
	}
	return 0;
}

int npa_device_check(struct npa_device *dev, char *err, size_t errlen)
{
	struct tally t = { 0 };
	size_t pooled = 0, unmapped = 0;
	int rc;

	if ((rc = check_segments(dev, &t, err, errlen)) < 0 ||
	    (rc = check_pool(dev, &dev->small, &pooled, &unmapped, err, errlen)) < 0 ||
	    (rc = check_pool(dev, &dev->large, &pooled, &unmapped, err, errlen)) < 0 ||
	    (rc = check_private_pools(dev, &pooled, &unmapped, err, errlen)) < 0 ||
	    (rc = compare_stats(dev, &t, err, errlen)) < 0)
		return rc;
	if (pooled != t.free_blocks)
		return npa_broken(err, errlen, "pools hold %zu blocks, segments have %zu free",
				  pooled, t.free_blocks);
	if (unmapped != t.unmapped_blocks)
		return npa_broken(err, errlen, "unmapped sets hold %zu blocks, segments have %zu",
				  unmapped, t.unmapped_blocks);
	if (dev->allocated.count != (size_t)t.st.allocation[NPA_STAT_ALL].current)
		return npa_broken(err, errlen,
				  "pointer map holds %zu blocks, %" PRId64 " allocated",
				  dev->allocated.count, t.st.allocation[NPA_STAT_ALL].current);
	if (t.pending_events != dev->events.pending)
		return npa_broken(err, errlen, "%zu events queued, blocks wait for %zu",
				  dev->events.pending, t.pending_events);
	return 0;
}
