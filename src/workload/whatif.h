/*
 * whatif.h - one row of a what-if comparison: a whole trace replayed
 * against one allocator, with the figures a user compares settings by.
 *
 * The allocator is any target (alloc/allocator.h): the caching allocator
 * under some PYTORCH_NPU_ALLOC_CONF, or the switch with a plug-in current.
 * Figures are one device's (device 0 unless asked, as npumem-replay
 * reports device 0); OOMs are counted over every device, since any of
 * them stops a real run.
 */
#ifndef NPUMEMFS_WHATIF_H
#define NPUMEMFS_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/allocator.h"
#include "trace.h"

struct wl_whatif_row {
	uint64_t peak_reserved_bytes;
	uint64_t peak_allocated_bytes;
	uint64_t peak_active_bytes;
	/* Reserved minus allocated when reserved reached its peak: the
	 * memory the user pays for and no tensor uses. */
	uint64_t fragmentation_bytes;
	uint64_t peak_inactive_split_bytes;
	uint64_t num_device_alloc;
	uint64_t num_device_free;
	uint64_t num_alloc_retries;
	uint64_t num_sync_all_streams;
	uint64_t num_ooms;
	uint32_t first_oom_line;  /* the trace line of the first OOM, 0: none */
	uint64_t events;          /* events replayed */
	double seconds;           /* the replay's own time */
};

/*
 * Reserved bytes over the trace's events, for a picture: point k is the
 * most reserved during events [k * every, (k + 1) * every). The caller
 * sets `every`; the measure fills the rest (free(points)).
 */
struct wl_whatif_curve {
	size_t every;
	uint64_t *points;
	size_t npoints;
};

struct wl_whatif_opts {
	bool stop_at_oom;              /* a capacity probe: the first OOM decides */
	struct wl_whatif_curve *curve; /* or NULL */
	int device;                    /* whose figures */
};

/*
 * Replay all of `t` from a fresh start of `a` and fill *row. 0, or a
 * negative errno with "TRACE:LINE: reason" in err (a replay failure other
 * than OOM, or no memory for the replay itself). Leaves `a` holding
 * nothing the trace allocated.
 */
int wl_whatif_measure(struct allocator a, const struct wl_trace *t,
		      const struct wl_whatif_opts *opt, struct wl_whatif_row *row,
		      char *err, size_t errlen);

/* The largest single device request of the trace (alloc, launch_op
 * workspace) and its line: no capacity below it can run the trace. */
uint64_t wl_whatif_largest_request(const struct wl_trace *t, uint32_t *line);

#endif /* NPUMEMFS_WHATIF_H */
