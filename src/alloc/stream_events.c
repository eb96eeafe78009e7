/*
 * stream_events.c - record_stream and the deferred free it causes.
 */
#include <errno.h>
#include <stdlib.h>

#include "device.h"

void npa_event_queues_fini(struct npa_event_queues *qs)
{
	for (size_t i = 0; i < qs->n; i++) {
		struct npa_pending *e = qs->q[i].head;

		while (e != NULL) {
			struct npa_pending *next = e->next;

			aclrtDestroyEvent(e->event);
			free(e);
			e = next;
		}
	}
	free(qs->q);
	*qs = (struct npa_event_queues){ 0 };
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
 * get events. */
static void drop_captured_uses(struct npa_block *b)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < b->nuses; i++)
		if (i >= 32 || !(b->captured_uses & (UINT32_C(1) << i)))
			b->uses[kept++] = b->uses[i];
	b->nuses = kept;
	b->captured_uses = 0;
}

static struct npa_event_queue *queue_for(struct npa_event_queues *qs, aclrtStream stream)
{
	for (size_t i = 0; i < qs->n; i++)
		if (qs->q[i].stream == stream)
			return &qs->q[i];
	if (qs->n == qs->cap) {
		size_t cap = qs->cap ? 2 * qs->cap : 4;
		struct npa_event_queue *q = realloc(qs->q, cap * sizeof(*q));

		if (q == NULL)
			return NULL;
		qs->q = q;
		qs->cap = cap;
	}
	qs->q[qs->n] = (struct npa_event_queue){ .stream = stream };
	return &qs->q[qs->n++];
}

static int record_one(struct npa_device *dev, struct npa_block *b, aclrtStream stream)
{
	struct npa_event_queue *q = queue_for(&dev->events, stream);
	struct npa_pending *e = malloc(sizeof(*e));

	if (q == NULL || e == NULL) {
		free(e);
		return -ENOMEM;
	}
	if (aclrtCreateEvent(&e->event) != ACL_SUCCESS) {
		free(e);
		return -ENODEV;
	}
	if (aclrtRecordEvent(e->event, stream) != ACL_SUCCESS) {
		aclrtDestroyEvent(e->event);
		free(e);
		return -ENODEV;
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

void npa_process_events(struct npa_device *dev)
{
	npa_insert_deferred_events(dev);
	if (dev->events.pending == 0)
		return;
	for (size_t i = 0; i < dev->events.n; i++) {
		struct npa_event_queue *q = &dev->events.q[i];

		while (q->head != NULL && event_done(q->head->event))
			complete(dev, q);
	}
}

/* Wait for and complete the events of `q` whose blocks are in `only`. */
static void synchronize_queue_of(struct npa_device *dev, struct npa_event_queue *q,
				 const struct npa_private_pool *only)
{
	struct npa_pending **link = &q->head, *last = NULL;

	while (*link != NULL) {
		struct npa_pending *e = *link;
		struct npa_block *b = e->block;

		if (b->pool->owner != only) {
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
	for (size_t i = 0; i < dev->events.n; i++) {
		struct npa_event_queue *q = &dev->events.q[i];

		if (only != NULL) {
			synchronize_queue_of(dev, q, only);
			continue;
		}
		while (q->head != NULL) {
			aclrtSynchronizeEvent(q->head->event);
			complete(dev, q);
		}
	}
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
		drop_captured_uses(b);
		npa_insert_events(dev, b);
	}
}
