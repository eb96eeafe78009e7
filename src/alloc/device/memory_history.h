/*
 * memory_history.h - upstream's _record_memory_history: each device's
 * ring of trace entries, the frames they point to, and the calling
 * thread's origin (memory_history.c, frames.c).
 */
#ifndef NPUMEMFS_MEMORY_HISTORY_H
#define NPUMEMFS_MEMORY_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/core/snapshot.h"

struct npa;

/*
 * upstream _record_memory_history(enabled, max_entries=..., device=...):
 * enabled "all" keeps the last max_entries trace entries of each device in
 * a ring, "state" keeps 1 (upstream: blocks' context only), NULL turns
 * recording off and clears the ring. device -1: every device. Off by
 * default. -EINVAL for another `enabled` or max_entries 0, -ENOMEM.
 */
int npa_record_memory_history(struct npa *a, int device, const char *enabled,
			      size_t max_entries);

/*
 * Where the calling thread's allocator calls come from, until the next
 * call of this: the memory history keeps this frame with each entry it
 * records and with each block and segment made meanwhile (upstream gathers
 * a Python stack per call; here the caller names one frame: a trace file
 * and line, a tensor file, a control file). *o stays the caller's and may
 * change between calls; its filename need live only until each call
 * returns (the history keeps a copy), its name must live as long as the
 * allocator (a string literal). NULL, or a NULL filename: no frame, and a
 * free or a segment's release shows the frame of the allocation instead,
 * as upstream does. Costs nothing while no history is recorded.
 */
void npa_set_origin(const struct npa_frame *o);
const struct npa_frame *npa_origin(void);

struct npa_history_state {
	const char *enabled;   /* "all", "state" or NULL (off) */
	size_t max_entries;    /* ring size in force (0 when off) */
	uint64_t recorded;     /* entries recorded since turned on */
	size_t kept;           /* entries in the ring now */
};
int npa_history_state(struct npa *a, int device, struct npa_history_state *out);
/* Entries recorded so far on `device`, read without the lock (for waiting). */
uint64_t npa_history_recorded(struct npa *a, int device);
/*
 * Copy the device's trace entries numbered `since` and later (those still
 * in the ring: entries overwritten are skipped) under the lock; format the
 * copy without it. 0, -ENODEV or -ENOMEM; release with npa_trace_release.
 */
int npa_history_copy(struct npa *a, int device, uint64_t since, struct npa_trace *out);

/*
 * Segment events of the history (segment_alloc/free/map/unmap only), kept
 * for callers that want no more than these.
 */
enum npa_segment_action {
	NPA_SEG_EV_ALLOC,  /* "segment_alloc": a device malloc */
	NPA_SEG_EV_FREE,   /* "segment_free" */
	NPA_SEG_EV_MAP,    /* "segment_map": pages mapped into an expandable segment */
	NPA_SEG_EV_UNMAP,  /* "segment_unmap" */
};

struct npa_segment_event {
	enum npa_segment_action action;
	uint64_t address;
	uint64_t size;
	uint64_t stream;   /* stream number, 0 for the default stream */
};

const char *npa_segment_action_name(enum npa_segment_action action);
/* Copy up to `max` of the device's latest segment events from the history
 * ring (nothing unless recording is on), oldest first; returns how many
 * were copied, or -ENODEV / -ENOMEM. */
int npa_segment_events(struct npa *a, int device, struct npa_segment_event *out,
		       size_t max);

#endif /* NPUMEMFS_MEMORY_HISTORY_H */
