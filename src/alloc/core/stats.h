/*
 * stats.h - the schema of the allocator's statistics.
 *
 * One list of names drives the counters, the flat "key value" view, the
 * nested JSON, the summary table and every other view, so they cannot drift
 * apart (the way jemalloc's ctl tree drives its exported names). Names and
 * meanings are upstream's memory_stats() keys.
 */
#ifndef NPUMEMFS_STATS_H
#define NPUMEMFS_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* Stat arrays: "<name>.<all|small_pool|large_pool>.<current|peak|allocated|freed>". */
#define NPA_STAT_ARRAYS(X)                                                     \
	X(allocation)                                                          \
	X(segment)                                                             \
	X(active)                                                              \
	X(inactive_split)                                                      \
	X(allocated_bytes)                                                     \
	X(reserved_bytes)                                                      \
	X(active_bytes)                                                        \
	X(inactive_split_bytes)                                                \
	X(requested_bytes)

/* Plain counters: "<name>". num_oom_rejections exists in the npu flavor only. */
#define NPA_STAT_SCALARS(X)                                                    \
	X(num_alloc_retries)                                                   \
	X(num_ooms)                                                            \
	X(max_split_size)                                                      \
	X(num_sync_all_streams)                                                \
	X(num_device_alloc)                                                    \
	X(num_device_free)                                                     \
	X(num_oom_rejections)

/* Single stats: "<name>.<current|peak|allocated|freed>". */
#define NPA_STAT_SINGLES(X)                                                    \
	X(oversize_allocations)                                                \
	X(oversize_segments)

/* The pools a stat array is kept for, in upstream's StatType order. */
enum npa_stat_type {
	NPA_STAT_ALL = 0,       /* "all" (upstream AGGREGATE) */
	NPA_STAT_SMALL_POOL = 1,
	NPA_STAT_LARGE_POOL = 2,
	NPA_STAT_TYPES = 3,
};

#define NPA_STAT_TYPE_NAMES { "all", "small_pool", "large_pool" }
#define NPA_STAT_FIELD_NAMES { "current", "peak", "allocated", "freed" }

struct npa_stat {
	int64_t current;
	int64_t peak;
	int64_t allocated; /* sum of all increases */
	int64_t freed;     /* sum of all decreases */
};

struct npa_stats {
#define NPA_X(name) struct npa_stat name[NPA_STAT_TYPES];
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name) int64_t name;
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name) struct npa_stat name;
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
};

static inline void npa_stat_increase(struct npa_stat *s, int64_t n)
{
	s->current += n;
	if (s->current > s->peak)
		s->peak = s->current;
	s->allocated += n;
}

static inline void npa_stat_decrease(struct npa_stat *s, int64_t n)
{
	s->current -= n;
	s->freed += n;
}

static inline void npa_stat_reset_accumulated(struct npa_stat *s)
{
	s->allocated = 0;
	s->freed = 0;
}

static inline void npa_stat_reset_peak(struct npa_stat *s)
{
	s->peak = s->current;
}

#endif /* NPUMEMFS_STATS_H */
