/*
 * oom_why.c - the figures of alloc/core/oom_why.h, read off one device's
 * segments, private pools and event queues when its retry ladder gives up.
 * Reads only, under the device lock that the failed malloc holds.
 */
#include <string.h>

#include "alloc/core/stream_id.h"

#include "device.h"

/* Free and in its pool: not allocated, backed, and not waiting. */
static bool in_pool(const struct npa_block *b)
{
	return !b->allocated && b->mapped && b->event_count == 0 && b->nuses == 0;
}

/* The asked pool: its free bytes, segments, and the largest block the
 * request's stream may take. */
static void asked_pool(const struct npa_segment *seg, aclrtStream stream,
		       struct npa_oom_why *w)
{
	bool counted = false;

	for (const struct npa_block *b = seg->head; b != NULL; b = b->next) {
		if (!in_pool(b))
			continue;
		w->pool_free += b->size;
		if (!counted)
			w->pool_free_segments++;
		counted = true;
		if (b->stream == stream && b->size > w->largest_free_block)
			w->largest_free_block = b->size;
	}
}

/* The free blocks of a pool, as upstream's get_size_block sums pool.blocks. */
static uint64_t pool_blocks_bytes(const struct npa_pool *pool)
{
	uint64_t bytes = 0;

	for (const struct npa_block *b = npa_pool_first(pool); b != NULL;
	     b = npa_pool_next(pool, b))
		bytes += b->size;
	return bytes;
}

/* The private pools' free blocks but the asked pool's (upstream's graph_pools walk). */
static void private_pools(const struct npa_device *dev, const struct npa_pool *asked,
			  struct npa_oom_why *w)
{
	for (struct npa_private_pool *pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp)) {
		uint64_t bytes = (&pp->small != asked ? pool_blocks_bytes(&pp->small) : 0) +
				 (&pp->large != asked ? pool_blocks_bytes(&pp->large) : 0);

		w->private_free += bytes;
		w->private_pools += bytes > 0;
	}
}

static void add_pending(struct npa_oom_why *w, aclrtStream stream, uint64_t bytes)
{
	uint64_t id = npa_stream_id(stream);
	size_t i = 0;

	while (i < w->npending_streams && w->pending[i].stream < id)
		i++;
	if (i < w->npending_streams && w->pending[i].stream == id) {
		w->pending[i].bytes += bytes;
		return;
	}
	if (w->npending_streams == NPA_OOM_WHY_STREAMS) {
		/* Full: the highest stream of the list and this one compete. */
		struct npa_oom_stream_bytes *last = &w->pending[NPA_OOM_WHY_STREAMS - 1];

		if (i == NPA_OOM_WHY_STREAMS) {
			w->pending_other_streams += bytes;
			return;
		}
		w->pending_other_streams += last->bytes;
		w->npending_streams--;
	}
	memmove(&w->pending[i + 1], &w->pending[i],
		(w->npending_streams - i) * sizeof(w->pending[0]));
	w->pending[i] = (struct npa_oom_stream_bytes){ .stream = id, .bytes = bytes };
	w->npending_streams++;
}

/* Each stream's queue holds one event per block waiting on it; a block
 * freed during a capture waits on every stream it was used on. */
static void pending_by_stream(struct npa_device *dev, struct npa_oom_why *w)
{
	struct npa_stream_map *m = &dev->events.map;

	for (size_t i = 0; i < npa_stream_map_end(m); i++) {
		const struct npa_event_queue *q = npa_stream_map_at(m, i);

		for (const struct npa_pending *e = q != NULL ? q->head : NULL; e != NULL;
		     e = e->next)
			add_pending(w, q->stream, e->block->size);
	}
	for (const struct npa_block *b = dev->deferred; b != NULL; b = b->link)
		for (unsigned u = 0; u < b->nuses; u++)
			add_pending(w, b->uses[u], b->size);
}

static uint64_t headroom(const struct npa_device *dev, size_t dev_free)
{
	size_t held = dev->total_allocated_memory;

	if (!dev->set_fraction)
		return dev_free;
	size_t allowed = held < dev->allowed_memory_maximum
		? dev->allowed_memory_maximum - held : 0;
	return allowed < dev_free ? allowed : dev_free;
}

void npa_oom_why(struct npa_device *dev, const struct npa_alloc_params *p, size_t dev_free,
		 size_t dev_total, struct npa_oom_why *w)
{
	const struct npa_private_pool *owner = p->pool->owner;
	struct npa_segment *seg;

	*w = (struct npa_oom_why){
		.valid = true,
		.request = p->size,
		.alloc_size = p->alloc_size,
		.stream = npa_stream_id(p->stream),
		.small_pool = p->pool->is_small,
		.headroom = headroom(dev, dev_free),
	};
	if (owner != NULL) {
		w->pool_id[0] = owner->base.id.first;
		w->pool_id[1] = owner->base.id.second;
	}
	/* Only the asked pool's blocks are walked: an OOM-heavy trace pays
	 * for its segments, not for every block of the device. */
	RB_FOREACH(seg, npa_segment_tree, &dev->segments)
		if (seg->pool == p->pool)
			asked_pool(seg, p->stream, w);
	/* Active blocks are allocated or pending (freed, their events or the
	 * capture's end awaited), so upstream's stats count the pending ones. */
	w->pending_free = (uint64_t)(dev->stats.active_bytes[NPA_STAT_ALL].current -
				     dev->stats.allocated_bytes[NPA_STAT_ALL].current);
	private_pools(dev, p->pool, w);
	pending_by_stream(dev, w);
	size_t used = dev_total - dev_free;
	w->other_allocators = used > dev->total_allocated_memory
		? used - dev->total_allocated_memory : 0;
	w->verdict = npa_oom_verdict_of(w);
}
