/*
 * host_streams.c - what the host allocator asks of the runtime: the set of
 * streams that used a block, events recorded on them when it is freed,
 * and whether a stream captures.
 *
 * Events are kept for reuse (torch_npu's EventPool). The queue is ATen's:
 * a free puts its events at the head, processing takes them from the tail
 * and stops at the first one not complete. A stream that captures cannot
 * record an event, so the event of a block freed then waits in the queue
 * unrecorded until the capture ends.
 */
#include <stdlib.h>

#include "host_impl.h"

int host_streams_add(struct host_streams *set, aclrtStream s)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->s[i] == s)
			return 0;
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 2;
		aclrtStream *grown = realloc(set->s, cap * sizeof(*grown));

		if (grown == NULL)
			return -1;
		set->s = grown;
		set->cap = cap;
	}
	set->s[set->n++] = s;
	return 0;
}

void host_streams_clear(struct host_streams *set)
{
	set->n = 0;
}

aclrtEvent host_event_get(struct npa_host *h)
{
	aclrtEvent e = NULL;

	if (h->nspare > 0)
		return h->spare[--h->nspare];
	return aclrtCreateEvent(&e) == ACL_SUCCESS ? e : NULL;
}

void host_event_put(struct npa_host *h, aclrtEvent e)
{
	if (h->nspare == h->spare_cap) {
		size_t cap = h->spare_cap ? 2 * h->spare_cap : 8;
		aclrtEvent *grown = realloc(h->spare, cap * sizeof(*grown));

		if (grown == NULL) {
			aclrtDestroyEvent(e);
			return;
		}
		h->spare = grown;
		h->spare_cap = cap;
	}
	h->spare[h->nspare++] = e;
}

bool host_stream_capturing(aclrtStream s)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI model = NULL;

	if (aclmdlRICaptureGetInfo(s, &status, &model) != ACL_SUCCESS)
		return false;
	return status != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

/* Record now if the stream allows it; else leave the event for later. */
static void try_record(struct npa_host *h, struct host_event *ev)
{
	if (ev->event != NULL || host_stream_capturing(ev->stream))
		return;
	ev->event = host_event_get(h);
	if (ev->event != NULL && aclrtRecordEvent(ev->event, ev->stream) != ACL_SUCCESS) {
		host_event_put(h, ev->event);
		ev->event = NULL;
	}
}

size_t host_record_events(struct npa_host *h, const struct host_streams *set, void *block)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct host_event *ev = calloc(1, sizeof(*ev));

		/* Without room for the record the block waits for nothing:
		 * better than never coming back. */
		if (ev == NULL)
			continue;
		ev->stream = set->s[i];
		ev->block = block;
		try_record(h, ev);
		TAILQ_INSERT_HEAD(&h->events, ev, link);
		n++;
	}
	return n;
}

static bool completed(struct host_event *ev)
{
	aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;

	if (ev->event == NULL)
		return false;
	/* A query that fails counts as complete, as torch_npu's query_event. */
	if (aclrtQueryEventStatus(ev->event, &st) != ACL_SUCCESS)
		return true;
	return st == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}

void *host_next_completed(struct npa_host *h)
{
	struct host_event *ev = TAILQ_LAST(&h->events, host_event_queue);
	void *block;

	if (ev == NULL)
		return NULL;
	try_record(h, ev);
	if (!completed(ev))
		return NULL;
	TAILQ_REMOVE(&h->events, ev, link);
	host_event_put(h, ev->event);
	block = ev->block;
	free(ev);
	return block;
}

void host_events_fini(struct npa_host *h)
{
	struct host_event *ev;

	while ((ev = TAILQ_FIRST(&h->events)) != NULL) {
		TAILQ_REMOVE(&h->events, ev, link);
		if (ev->event != NULL)
			aclrtDestroyEvent(ev->event);
		free(ev);
	}
	for (size_t i = 0; i < h->nspare; i++)
		aclrtDestroyEvent(h->spare[i]);
	free(h->spare);
	h->spare = NULL;
	h->nspare = h->spare_cap = 0;
}

void host_stream_ids(const struct host_streams *set, uint64_t out[4])
{
	for (size_t i = 0; i < set->n && i < 4; i++) {
		int32_t id = 0;

		aclrtStreamGetId(set->s[i], &id);
		out[i] = (uint64_t)id;
	}
}

int host_info_by_address(const void *a, const void *b)
{
	uint64_t x = ((const struct npa_host_block_info *)a)->address;
	uint64_t y = ((const struct npa_host_block_info *)b)->address;

	return x < y ? -1 : x > y;
}
