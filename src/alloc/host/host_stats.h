/*
 * host_stats.h - host_memory_stats(): the counters of the pinned host
 * allocator (ATen HostStats as torch_npu reports them, Module.cpp).
 *
 * Four count-or-bytes stats {current, peak, allocated, freed}, two timing
 * stats {total, max, min, count, avg} in microseconds, and two scalars:
 * 28 keys when flattened. One list names them, so every view (flat, JSON,
 * Prometheus) is made from it.
 */
#ifndef NPUMEMFS_HOST_STATS_H
#define NPUMEMFS_HOST_STATS_H

#include <stdint.h>

#include "alloc/core/stats.h"

/* c10's DurationStat: a sample each time, min 0 until the first. */
struct npa_duration_stat {
	int64_t total;
	int64_t max;
	int64_t min;
	int64_t count;
};

/* Stats in host_memory_stats_as_nested_dict() order. */
#define NPA_HOST_STATS(X)                                                      \
	X(allocations)                                                         \
	X(active_requests)                                                     \
	X(allocated_bytes)                                                     \
	X(active_bytes)

#define NPA_HOST_DURATIONS(X)                                                  \
	X(host_alloc_time)                                                     \
	X(host_free_time)

#define NPA_HOST_SCALARS(X)                                                    \
	X(num_host_alloc)                                                      \
	X(num_host_free)

struct npa_host_stats {
#define NPA_X(name) struct npa_stat name;
	NPA_HOST_STATS(NPA_X)
#undef NPA_X
#define NPA_X(name) struct npa_duration_stat name;
	NPA_HOST_DURATIONS(NPA_X)
#undef NPA_X
#define NPA_X(name) int64_t name;
	NPA_HOST_SCALARS(NPA_X)
#undef NPA_X
};

static inline void npa_duration_add(struct npa_duration_stat *d, int64_t us)
{
	d->total += us;
	d->count++;
	if (us > d->max)
		d->max = us;
	if (d->min == 0 || us < d->min)
		d->min = us;
}

/* avg as Module.cpp gives it: total / count, 0 without samples. */
static inline int64_t npa_duration_avg(const struct npa_duration_stat *d)
{
	return d->count ? d->total / d->count : 0;
}

static inline void npa_duration_reset_accumulated(struct npa_duration_stat *d)
{
	d->total = 0;
	d->count = 0;
}

static inline void npa_duration_reset_peak(struct npa_duration_stat *d)
{
	d->max = 0;
	d->min = 0;
}

#endif /* NPUMEMFS_HOST_STATS_H */
