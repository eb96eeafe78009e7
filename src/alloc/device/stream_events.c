/*
 * stream_events.c - record_stream and the deferred free it causes.
 */
#include <errno.h>
#include <stdlib.h>

#include "device.h"

#include "alloc/core/stream_id.h"

static void free_queue(struct npa_event_queue *q)
{
	struct npa_pending *e = q->head;

	while (e != NULL) {
		struct npa_pending *next = e->next;

		aclrtDestroyEvent(e->event);
		free(e);
		e = next;
	}
}

void npa_event_queues_fini(struct npa_event_queues *qs)
{
	for (size_t i = 0; i < npa_stream_map_end(&qs->map); i++) {
		struct npa_event_queue *q = npa_stream_map_at(&qs->map, i);

		if (q != NULL)
			free_queue(q);
	}
	npa_stream_map_fini(&qs->map);
	free(qs->names);
	*qs = (struct npa_event_queues){ 0 };
}

static struct npa_stream_name *find_name(const struct npa_event_queues *qs,
					 aclrtStream stream)
{
	for (size_t i = 0; i < qs->nnames; i++)
		if (qs->names[i].stream == stream)
			return &qs->names[i];
	return NULL;
}

int npa_event_queues_name(struct npa_event_queues *qs, aclrtStream stream, int device,
			  long number)
{
	struct npa_stream_name *n = find_name(qs, stream);

	if (number < 0) {
		if (n != NULL)
			*n = qs->names[--qs->nnames];
		return 0;
	}
	if (n == NULL && qs->nnames == qs->names_cap) {
		size_t cap = qs->names_cap ? 2 * qs->names_cap : 8;
		struct npa_stream_name *v = realloc(qs->names, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		qs->names = v;
		qs->names_cap = cap;
	}
	if (n == NULL)
		n = &qs->names[qs->nnames++];
	*n = (struct npa_stream_name){ .stream = stream, .device = device, .number = number };
	return 0;
}

uint64_t npa_stream_key(const struct npa_device *dev, aclrtStream stream)
{
	const struct npa_flavor *f = dev->flavor;
	const struct npa_stream_name *n = find_name(&dev->events, stream);
	uint64_t device = (uint64_t)(n != NULL ? n->device : dev->id);
	uint64_t number = n != NULL ? (uint64_t)n->number : npa_stream_id(stream);
	uint64_t id = 0;

	if (stream != NULL && number != 0 && number != UINT64_MAX)
		id = (number - 1) % NPA_STREAMS_PER_POOL << f->pool_index_shift | f->pool_id_bits;
	return (uint64_t)f->c10_device_type << 56 | (device & 0xff) << 48 |
	       (id & ((UINT64_C(1) << 48) - 1));
}

/* Index of `stream` in the block's uses, or nuses. */
static unsigned use_index(const struct npa_block *b, aclrtStream stream)
{
	unsigned i = 0;

	while (i < b->nuses && b->uses[i] != stream)
		i++;
	return i;
}

/* A use recorded during a capture, even of a stream used before (upstream
 * adds it to the capture's set all the same). */
static void note_captured_use(struct npa_device *dev, struct npa_block *b, aclrtStream stream)
{
	unsigned i = use_index(b, stream);

	if (i < 32 && npa_capture_underway(dev, stream))
		b->captured_uses |= UINT32_C(1) << i;
}

int npa_record_stream_use(struct npa_device *dev, struct npa_block *b, aclrtStream stream)
{
	/* CUDA skips the allocation stream; torch_npu records it anyway. */
	if (stream == b->stream && !dev->flavor->record_stream_on_alloc_stream)
		return 0;
	if (use_index(b, stream) < b->nuses) {
		note_captured_use(dev, b, stream);
		return 0;
	}
	if (b->nuses == b->uses_cap) {
		unsigned cap = b->uses_cap ? 2 * b->uses_cap : 4;
		aclrtStream *uses = realloc(b->uses, cap * sizeof(*uses));

		if (uses == NULL)
			return -ENOMEM;
		b->uses = uses;
		b->uses_cap = cap;
	}
	b->uses[b->nuses++] = stream;
	note_captured_use(dev, b, stream);
	return 0;
}

/*
 * Put the block's uses in the order upstream's stream_set (a
 * ska::flat_hash_set filled in record order) holds them, keeping each
 * use's captured bit with it. Left as they are if memory runs out.
 */
static void order_uses(const struct npa_device *dev, struct npa_block *b)
{
	struct npa_stream_map set = { 0 };
	unsigned n = 0;
	uint32_t captured = 0;

	if (b->nuses < 2 || b->nuses > 32)
		return;
	for (unsigned i = 0; i < b->nuses; i++) {
		struct npa_event_queue *q =
			npa_stream_map_get(&set, b->uses[i], npa_stream_key(dev, b->uses[i]));

		if (q == NULL) {
			npa_stream_map_fini(&set);
			return;
		}
		/* the use's old index rides in head, which the set does not use */
		q->head = (struct npa_pending *)(uintptr_t)i;
	}
	for (size_t i = 0; i < npa_stream_map_end(&set); i++) {
		struct npa_event_queue *q = npa_stream_map_at(&set, i);
		unsigned old;

		if (q == NULL)
			continue;
		old = (unsigned)(uintptr_t)q->head;
		if (b->captured_uses & (UINT32_C(1) << old))
			captured |= UINT32_C(1) << n;
		b->uses[n++] = q->stream;
	}
	b->captured_uses = captured;
	npa_stream_map_fini(&set);
}

void npa_erase_stream_use(struct npa_block *b, aclrtStream stream)
{
	unsigned i = use_index(b, stream);

	if (i == b->nuses)
		return;
	/* The capture bits above i move down one with the uses they mark. */
	if (i < 32) {
		uint32_t low = b->captured_uses & ((UINT32_C(1) << i) - 1);
		uint32_t high = i < 31 ? b->captured_uses >> (i + 1) << i : 0;
		b->captured_uses = low | high;
	}
	b->nuses--;
	for (; i < b->nuses; i++)
		b->uses[i] = b->uses[i + 1];
}

/* upstream remove_npugraph_stream_uses: only uses from before the capture
 * get events; the set is refilled in the old set's order. */
static void drop_captured_uses(const struct npa_device *dev, struct npa_block *b)
{
	unsigned kept = 0;

	order_uses(dev, b);
	for (unsigned i = 0; i < b->nuses; i++)
		if (i >= 32 || !(b->captured_uses & (UINT32_C(1) << i)))
			b->uses[kept++] = b->uses[i];
	b->nuses = kept;
	b->captured_uses = 0;
}

static int record_one(struct npa_device *dev, struct npa_block *b, aclrtStream stream)
{
	struct npa_pending *e = malloc(sizeof(*e));
	struct npa_event_queue *q;

	if (e == NULL)
		return -ENOMEM;
	if (aclrtCreateEvent(&e->event) != ACL_SUCCESS) {
		free(e);
		return -ENODEV;
	}
	if (aclrtRecordEvent(e->event, stream) != ACL_SUCCESS) {
		aclrtDestroyEvent(e->event);
		free(e);
		return -ENODEV;
	}
	/* cuda_events[stream]: after the event exists, as upstream. */
	q = npa_stream_map_get(&dev->events.map, stream, npa_stream_key(dev, stream));
	if (q == NULL) {
		aclrtDestroyEvent(e->event);
		free(e);
		return -ENOMEM;
	}
	e->block = b;
	e->next = NULL;
	if (q->tail != NULL)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	b->event_count++;
	dev->events.pending++;
	return 0;
}

/*
 * A stream the device cannot record on is dropped (there is no work on it
 * to wait for); if no event could be recorded at all the block is freed now.
 */
int npa_insert_events(struct npa_device *dev, struct npa_block *b)
{
	int32_t saved;
	int rc = npa_device_enter(dev->id, &saved);

	order_uses(dev, b);
	for (unsigned i = 0; rc == 0 && i < b->nuses; i++)
		record_one(dev, b, b->uses[i]);
	npa_device_leave(saved);
	b->nuses = 0;
	b->captured_uses = 0;
	if (b->event_count == 0)
		npa_free_block(dev, b);
	return rc;
}

static void complete(struct npa_device *dev, struct npa_event_queue *q)
{
	struct npa_pending *e = q->head;
	struct npa_block *b = e->block;

	q->head = e->next;
	if (q->head == NULL)
		q->tail = NULL;
	aclrtDestroyEvent(e->event);
	free(e);
	dev->events.pending--;
	if (--b->event_count == 0)
		npa_free_block(dev, b);
}

static bool event_done(aclrtEvent event)
{
	aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;

	/* An event the device no longer knows cannot hold a block forever. */
	if (aclrtQueryEventStatus(event, &st) != ACL_SUCCESS)
		return true;
	return st == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}

/*
 * Drain each queue in the map's slot order; an emptied queue leaves the
 * map at once (erase shifts a later entry into its slot, which is walked
 * next), as upstream's `it = cuda_events.erase(it)` does. The walk ends
 * with the last entry rather than the last slot: draining adds none.
 * Inline, so that each walk calls its drain directly: malloc walks at
 * every call while events are pending.
 */
static inline __attribute__((always_inline)) void walk_queues(struct npa_device *dev,
			void (*drain)(struct npa_device *dev, struct npa_event_queue *q,
				      const struct npa_private_pool *only),
			const struct npa_private_pool *only)
{
	struct npa_stream_map *m = &dev->events.map;
	size_t kept = 0; /* entries walked and left in the map */
	/* A drain frees blocks but records no event: the slots stay where they are. */
	const size_t end = npa_stream_map_end(m);

	for (size_t i = 0; kept < m->n && i < end;) {
		struct npa_event_queue *q = npa_stream_map_at(m, i);

		if (q != NULL)
			drain(dev, q, only);
		if (q != NULL && q->head == NULL) {
			npa_stream_map_erase(m, i);
		} else {
			kept += q != NULL;
			i++;
		}
	}
}

/* Complete the queue's finished events, oldest first, up to the first not. */
static void drain_done(struct npa_device *dev, struct npa_event_queue *q,
		       const struct npa_private_pool *unused)
{
	(void)unused;
	while (q->head != NULL && event_done(q->head->event))
		complete(dev, q);
}

void npa_process_events(struct npa_device *dev)
{
	if (dev->deferred != NULL)
		npa_insert_deferred_events(dev);
	if (dev->events.pending != 0)
		walk_queues(dev, drain_done, NULL);
}

/* Wait for and complete the events of `q` whose blocks are in `only`
 * (every event when NULL). */
static void synchronize_queue_of(struct npa_device *dev, struct npa_event_queue *q,
				 const struct npa_private_pool *only)
{
	struct npa_pending **link = &q->head, *last = NULL;

	while (*link != NULL) {
		struct npa_pending *e = *link;
		struct npa_block *b = e->block;

		if (only != NULL && b->pool->owner != only) {
			last = e;
			link = &e->next;
			continue;
		}
		*link = e->next;
		aclrtSynchronizeEvent(e->event);
		aclrtDestroyEvent(e->event);
		free(e);
		dev->events.pending--;
		if (--b->event_count == 0)
			npa_free_block(dev, b);
	}
	q->tail = last;
}

void npa_synchronize_and_free_events(struct npa_device *dev,
				     const struct npa_private_pool *only)
{
	dev->stats.num_sync_all_streams += 1;
	npa_insert_deferred_events(dev);
	walk_queues(dev, synchronize_queue_of, only);
}

void npa_defer_events(struct npa_device *dev, struct npa_block *b)
{
	b->link = dev->deferred;
	dev->deferred = b;
}

/* Oldest first, as upstream walks needs_events_deferred_until_no_capture. */
void npa_insert_deferred_events(struct npa_device *dev)
{
	struct npa_block *b = dev->deferred, *rev = NULL;

	if (b == NULL)
		return;
	dev->deferred = NULL;
	while (b != NULL) {
		struct npa_block *next = b->link;

		b->link = rev;
		rev = b;
		b = next;
	}
	for (b = rev; b != NULL; b = rev) {
		rev = b->link;
		drop_captured_uses(dev, b);
		npa_insert_events(dev, b);
	}
}
