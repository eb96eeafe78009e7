/*
 * stream_events.h - deferred frees of blocks used on other streams.
 *
 * record_stream marks a block as used on a stream; freeing it records one
 * event per such stream and the block stays active until all of them have
 * completed (upstream insert_events / process_events /
 * synchronize_and_free_events). Queues are FIFO per stream.
 */
#ifndef NPA_STREAM_EVENTS_H
#define NPA_STREAM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include <acl/acl_rt.h>

struct npa_device;
struct npa_block;
struct npa_private_pool;

struct npa_pending {
	struct npa_pending *next;
	aclrtEvent event;
	struct npa_block *block;
};

struct npa_event_queue {
	aclrtStream stream;
	struct npa_pending *head;
	struct npa_pending *tail;
};

struct npa_event_queues {
	struct npa_event_queue *q; /* one per stream seen, in first-use order */
	size_t n;
	size_t cap;
	size_t pending;            /* events outstanding on all streams */
};

void npa_event_queues_fini(struct npa_event_queues *qs);
/* Add `stream` to the block's uses (flavor decides about its own stream). */
int npa_record_stream_use(struct npa_device *dev, struct npa_block *b, aclrtStream stream);
/*
 * torch_npu's eraseStream of a live block: `stream` is no longer among its
 * uses, so its free records no event there. Nothing if it was not one.
 */
void npa_erase_stream_use(struct npa_block *b, aclrtStream stream);
/* One event per used stream; the block waits for all of them. */
int npa_insert_events(struct npa_device *dev, struct npa_block *b);
/* Free the blocks whose events have completed, FIFO per stream. */
void npa_process_events(struct npa_device *dev);
/*
 * Wait for every event (only those of blocks in pool `only`, unless NULL)
 * and free their blocks; counts num_sync_all_streams. Blocks freed during
 * a capture get their events first.
 */
void npa_synchronize_and_free_events(struct npa_device *dev,
				     const struct npa_private_pool *only);
/* A block freed during a capture waits to get its events until none is. */
void npa_defer_events(struct npa_device *dev, struct npa_block *b);

#endif /* NPA_STREAM_EVENTS_H */
