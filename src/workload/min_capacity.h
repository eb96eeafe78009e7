/*
 * min_capacity.h - the smallest device capacity on which a trace runs with
 * no OOM, by bisection over capacity in whole device pages.
 *
 * The search asks a probe whether the trace runs at a capacity; each
 * answer costs a replay, so failing probes should stop at the first OOM.
 * OOM is not always monotonic in capacity (a different capacity changes
 * which segments the allocator frees before retrying), so after the
 * bisection a few smaller capacities are tried too, and one that runs is
 * reported beside the answer rather than hidden.
 */
#ifndef NPUMEMFS_MIN_CAPACITY_H
#define NPUMEMFS_MIN_CAPACITY_H

#include <stddef.h>
#include <stdint.h>

struct wl_capacity_probe {
	/* 1: the trace runs with no OOM on `capacity` bytes a device; 0: it
	 * does not; or a negative errno with the reason in err. */
	int (*runs)(void *ctx, uint64_t capacity, char *err, size_t errlen);
	void *ctx;
};

enum wl_start_result {
	WL_START_UNKNOWN = 0,
	WL_START_RUNS,     /* no OOM at the start */
	WL_START_OOMS,
};

struct wl_capacity_search {
	uint64_t floor;  /* no capacity below it can run (the largest request) */
	uint64_t start;  /* the first capacity tried: the configured one */
	uint64_t limit;  /* the search doubles up to this, no further */
	uint64_t page;   /* capacities are multiples of it */
	/* What a replay the caller ran at `start` gave, so that the search
	 * does not replay it again (a start off the page grid is run anyway). */
	enum wl_start_result start_result;
	/* A capacity likely just above the answer, tried first below the
	 * start (the most device memory a replay that ran used); 0: none.
	 * It only orders the probes: a wrong one costs a probe, not the answer. */
	uint64_t hint;
};

struct wl_min_capacity {
	uint64_t bytes;    /* the answer, verified by a run at it; 0: none up to the limit */
	uint64_t smaller;  /* a smaller capacity that also runs, 0: none found */
	unsigned probes;   /* replays run (a start_result given is none) */
};

/* 0 with *out filled, or the probe's error. */
int wl_min_capacity_find(const struct wl_capacity_probe *p,
			 const struct wl_capacity_search *s, struct wl_min_capacity *out,
			 char *err, size_t errlen);

#endif /* NPUMEMFS_MIN_CAPACITY_H */
