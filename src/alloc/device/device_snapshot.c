/*
 * device_snapshot.c - a copy of the segments and blocks (upstream snapshot()).
 *
 * Copied under the device lock in one pass; nothing is formatted here.
 */
#include <errno.h>
#include <stdlib.h>

#include "alloc/core/stream_id.h"

#include "device.h"

static enum npa_block_state block_state(const struct npa_device *dev,
					const struct npa_block *b)
{
	if (b->allocated)
		return NPA_BLOCK_ACTIVE_ALLOCATED;
	if (b->event_count > 0 || (!dev->flavor->pending_ignores_stream_uses && b->nuses > 0))
		return NPA_BLOCK_ACTIVE_PENDING_FREE;
	return NPA_BLOCK_INACTIVE;
}

/* The blocks from `head` up to the first unmapped one: a whole device
 * segment, or one mapped run of an expandable segment. */
static int copy_run(const struct npa_device *dev, const struct npa_segment *seg,
		    const struct npa_block *head, struct npa_segment_info *out)
{
	size_t n = 0;

	for (const struct npa_block *b = head; b != NULL && b->mapped; b = b->next)
		n++;
	*out = (struct npa_segment_info){
		.device = dev->id,
		.address = (uint64_t)(uintptr_t)head->ptr,
		.stream = npa_stream_id(seg->stream),
		.is_large = !seg->pool->is_small,
		.is_expandable = seg->kind == NPA_SEGMENT_EXPANDABLE,
		.frame = seg->frame,
		.blocks = calloc(n, sizeof(*out->blocks)),
	};
	if (seg->pool->owner != NULL) {
		out->pool_id[0] = seg->pool->owner->base.id.first;
		out->pool_id[1] = seg->pool->owner->base.id.second;
	}
	if (out->blocks == NULL)
		return -ENOMEM;
	for (const struct npa_block *b = head; b != NULL && b->mapped; b = b->next) {
		struct npa_block_info *bi = &out->blocks[out->nblocks++];

		bi->address = (uint64_t)(uintptr_t)b->ptr;
		bi->size = b->size;
		bi->requested_size = b->requested_size;
		bi->state = block_state(dev, b);
		bi->frame = b->frame;
		out->total_size += b->size;
		if (bi->state == NPA_BLOCK_ACTIVE_ALLOCATED)
			out->allocated_size += b->size;
		if (bi->state != NPA_BLOCK_INACTIVE) {
			out->active_size += b->size;
			out->requested_size += b->requested_size;
		}
	}
	return 0;
}

static bool starts_run(const struct npa_block *b)
{
	return b->mapped && (b->prev == NULL || !b->prev->mapped);
}

/* Whether a snapshot of `pool` (or of everything, when `all`) shows `seg`. */
static bool shows(const struct npa_segment *seg, bool all,
		  const struct npa_private_pool *pool)
{
	return all || (pool != NULL && seg->pool->owner == pool);
}

static int copy_segments(struct npa_device *dev, bool all,
			 const struct npa_private_pool *pool, struct npa_snapshot *out)
{
	struct npa_segment *seg;
	const struct npa_block *b;
	size_t n = 0;

	RB_FOREACH(seg, npa_segment_tree, &dev->segments)
		for (b = seg->head; b != NULL && shows(seg, all, pool); b = b->next)
			n += starts_run(b);
	if (n == 0)
		return 0;
	struct npa_segment_info *segs =
		realloc(out->segments, (out->nsegments + n) * sizeof(*segs));
	if (segs == NULL)
		return -ENOMEM;
	out->segments = segs;
	RB_FOREACH(seg, npa_segment_tree, &dev->segments) {
		for (b = seg->head; b != NULL && shows(seg, all, pool); b = b->next) {
			if (!starts_run(b))
				continue;
			int rc = copy_run(dev, seg, b, &out->segments[out->nsegments]);
			if (rc < 0)
				return rc;
			out->nsegments++;
		}
	}
	return 0;
}

/* Appends this device's segments (one per mapped run of an expandable
 * segment, as upstream reports them), in address order, to `out`; a
 * recording device notes the snapshot in its history, as upstream does. */
int npa_device_snapshot(struct npa_device *dev, struct npa_snapshot *out)
{
	npa_trace(dev, NPA_TRACE_SNAPSHOT, NULL,
		  (size_t)dev->stats.active_bytes[NPA_STAT_ALL].current, NULL, &dev->large, NULL);
	return copy_segments(dev, true, NULL, out);
}

/* upstream snapshot(mempool_id): only the segments of pool `id` (none if it
 * does not exist); the history notes the id asked for either way. */
int npa_device_snapshot_pool(struct npa_device *dev, struct npa_pool_id id,
			     struct npa_snapshot *out)
{
	if (npa_recording(dev))
		npa_history_add(dev, NPA_TRACE_SNAPSHOT, 0,
				(uint64_t)dev->stats.active_bytes[NPA_STAT_ALL].current, NULL, id,
				NULL);
	return copy_segments(dev, false, npa_private_pool_find(&dev->pools, id), out);
}
