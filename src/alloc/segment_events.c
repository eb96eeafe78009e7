/*
 * segment_events.c - the recent segment_alloc/free/map/unmap events of a
 * device, kept in a fixed ring so recording never allocates.
 */
#include <errno.h>

#include <npumemfs/npusim.h>

#include "caching_allocator_impl.h"

void npa_segment_event_add(struct npa_device *dev, enum npa_segment_action action,
			   const void *ptr, size_t size, aclrtStream stream)
{
	struct npa_segment_event *e = &dev->seg_events[dev->seg_events_n % NPA_SEGMENT_EVENTS];

	*e = (struct npa_segment_event){ .action = action, .address = (uint64_t)(uintptr_t)ptr,
					 .size = size, .stream = npusim_stream_id(stream) };
	dev->seg_events_n++;
}

const char *npa_segment_action_name(enum npa_segment_action action)
{
	switch (action) {
	case NPA_SEG_EV_ALLOC:
		return "segment_alloc";
	case NPA_SEG_EV_FREE:
		return "segment_free";
	case NPA_SEG_EV_MAP:
		return "segment_map";
	case NPA_SEG_EV_UNMAP:
		break;
	}
	return "segment_unmap";
}

int npa_segment_events(struct npa *a, int device, struct npa_segment_event *out, size_t max)
{
	if (device < 0 || device >= a->ndev)
		return -ENODEV;
	struct npa_device *dev = &a->dev[device];

	npa_lock_acquire(&dev->lock);
	uint64_t n = dev->seg_events_n;
	uint64_t kept = n < NPA_SEGMENT_EVENTS ? n : NPA_SEGMENT_EVENTS;
	uint64_t take = kept < max ? kept : max;
	for (uint64_t i = 0; i < take; i++)
		out[i] = dev->seg_events[(n - take + i) % NPA_SEGMENT_EVENTS];
	npa_lock_release(&dev->lock);
	return (int)take;
}
