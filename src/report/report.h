/*
 * report.h - the text and JSON views of an allocator's state.
 *
 * Pure functions of a copy (npa_get_stats, npa_snapshot): no locks, no
 * allocator calls. Each appends to `out` (so several devices can share one
 * buffer) and returns 0 or -ENOMEM; after -ENOMEM what was appended is
 * partial and should be dropped. JSON is indented by 2 and ends in "\n".
 */
#ifndef NPUMEMFS_REPORT_H
#define NPUMEMFS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/conf/alloc_conf.h"
#include "alloc/conf/flavor.h"
#include "alloc/host/host_allocator.h"
#include "alloc/device/mempool.h"
#include "base/sbuf.h"
#include "alloc/core/oom_why.h"
#include "alloc/core/snapshot.h"
#include "alloc/core/stats.h"

struct sw_info;

/*
 * memory_stats(): "key value\n" lines sorted by key in byte order, the
 * flavor's key set (123 keys npu, 122 cuda: no num_oom_rejections).
 */
int report_stats_flat(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl);
/* memory_stats_as_nested_dict() as JSON: the same keys split at their
 * dots into nested objects, keys sorted, values JSON integers. */
int report_stats_json(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl);
/*
 * memory_summary(device, abbreviated): upstream's text, byte for byte
 * (torch/cuda/memory.py or torch_npu/npu/memory.py, per the flavor's
 * upstream). abbreviated drops the large/small pool rows.
 */
int report_summary(struct sbuf *out, const struct npa_stats *s,
		   const struct npa_flavor *fl, int device, bool abbreviated);
/* memory_snapshot() segments as a JSON list, keys in upstream's order;
 * a block's "frames" is its allocation's frame, a segment's the frame of
 * the call that made it (after "blocks", as upstream), each [] if none. */
int report_snapshot_json(struct sbuf *out, const struct npa_snapshot *snap);

/*
 * The segments of snapshot `snap` (one device's) as an SVG picture: a row
 * a segment drawn to one scale, each block a <rect class="block"> with
 * data-bytes and data-state ("allocated", "pending free", "inactive split"
 * or "free", coloured so), labelled by size where it is wide enough, inside
 * a <g class="segment"> with the segment's data-bytes.
 */
int report_snapshot_svg(struct sbuf *out, const struct npa_snapshot *snap, int device);

/* One reading of a device's byte stats (all pools, current). */
struct report_sample {
	int64_t time_ms;    /* any clock, increasing */
	int64_t allocated, reserved, active;
};

/*
 * Readings s[0..n-1], oldest first, as an SVG chart of allocated, active
 * and reserved bytes over time (the x axis in seconds before the last
 * reading): one <polyline class="SERIES"> a series.
 */
int report_history_svg(struct sbuf *out, const struct report_sample *s, size_t n,
		       int device);

/*
 * Every device's memory_stats() in Prometheus text format (stats[0..n-1]
 * are devices 0..n-1): per stat, "# HELP" and "# TYPE" then one sample a
 * device, pool and field, e.g.
 *   npumemfs_allocated_bytes{device="0",pool="all",stat="current"} 1024
 * The current and peak of stat arrays and single stats are gauges; their
 * allocated and freed totals are counters NAME_allocated_total and
 * NAME_freed_total (labelled by device and pool); the num_* counters are
 * counters named ..._total; max_split_size is a gauge. Keys are the flavor's, as report_stats_flat's.
 */
int report_prometheus(struct sbuf *out, const struct npa_stats *stats,
		      int device_count, const struct npa_flavor *fl);
/*
 * host_memory_stats() in the same form, appended after the devices'
 * (no device label; families named host_* so no key meets a device's):
 *   npumemfs_host_allocated_bytes{stat="current"} 65536
 *   npumemfs_host_allocated_bytes_allocated_total 196608
 *   npumemfs_host_alloc_time_seconds{stat="max"} 0.000012,
 *   npumemfs_host_alloc_time_seconds_total, npumemfs_host_alloc_time_count_total,
 *   npumemfs_num_host_alloc_total
 * (durations in seconds, Prometheus' unit, where host/stats has microseconds).
 */
int report_prometheus_host(struct sbuf *out, const struct npa_host_stats *s);

/*
 * Memory history entries (npa_history_copy), one compact JSON object a
 * line, upstream's TraceEntry keys in its order:
 *   {"action":"alloc","addr":140..,"size":1000,"stream":0,"time_us":17..}
 * "oom" has "device_free" where the others have "addr".
 */
int report_trace_jsonl(struct sbuf *out, const struct npa_trace *t);

/*
 * torch.cuda.memory._snapshot() as the pickle _dump_snapshot writes and
 * memory_viz reads (protocol 4, opcodes MemoryViz.js accepts): a dict with
 * "segments" (the keys of report_snapshot_json), "device_traces" (traces[i]
 * is device i's history, ndevices lists; a NULL traces gives empty lists)
 * and, for a flavor with PyTorch's settings dialect (cuda) and a conf,
 * "allocator_settings" (torch_npu's snapshot has none). Binary: the sbuf's
 * len counts the bytes, which may include NULs.
 */
int report_snapshot_pickle(struct sbuf *out, const struct npa_snapshot *snap,
			   const struct npa_trace *traces, int ndevices,
			   const struct npa_flavor *fl, const struct npa_conf *conf);

/*
 * ctl/allocator: the allocators of a switch (sw_list's all[0..n-1]), the
 * current one and each retired one still holding blocks, e.g.
 *   current plugin1
 *     path /opt/arena.so
 *     alloc arena_alloc
 *     free arena_free
 *     hooks init=arena_init reset=arena_reset
 *     loaded 2024-05-01T12:00:00Z
 *     live_blocks 1
 *     ...
 * then "refused_frees N".
 */
int report_allocators(struct sbuf *out, const struct sw_info *all, size_t n,
		      uint64_t refused_frees);

/*
 * Why an allocation ran out (npa_last_oom's figures), the lines that follow
 * upstream's message: "request", "largest_free_block", "pool_free",
 * "headroom", "private_pools", "pending_frees" (then each stream waited
 * on), "other_allocators", each with exact bytes first, then
 * "verdict: KIND: ..." in words. Nothing for figures that are not valid.
 */
int report_oom_why(struct sbuf *out, const struct npa_oom_why *w);

/* A pool's id as a file or label name: "FIRST_SECOND", e.g. "1_0". */
int report_pool_name(char *buf, size_t len, struct npa_pool_id id);
/*
 * pools/deviceN: a header naming the columns, then one line per private
 * pool (npa_pool_list order): pool, use_count, freeable, device_mallocs,
 * segments, reserved_bytes, allocated_bytes, active_bytes, use_on_oom,
 * no_split, routing (yes/no), right-aligned under their names.
 */
int report_pools_text(struct sbuf *out, const struct npa_pool_info *pools, size_t n);
/* The same as a JSON list, one object a pool with those keys and "id"
 * ([first, second]); flags are booleans. */
int report_pools_json(struct sbuf *out, const struct npa_pool_info *pools, size_t n);
/*
 * Per-pool gauges of every device (pools[d][0..npools[d]-1]), e.g.
 *   npumemfs_pool_reserved_bytes{device="0",pool="1_0"} 2097152
 * families pool_reserved_bytes, pool_allocated_bytes, pool_active_bytes,
 * pool_segments, pool_uses (the pool's use_count); each family's HELP and
 * TYPE even with no pool.
 */
int report_prometheus_pools(struct sbuf *out, const struct npa_pool_info *const *pools,
			    const size_t *npools, int device_count);

/*
 * npumem-replay's lines for the private pools of a trace with graph or
 * mempool lines, after its memory_summary, memory_stats or JSON. Text:
 *   Graph pools of device 0:
 *     pool (0,1): 25165824 bytes reserved in 3 segments, 1213952 allocated, use_count 11
 *   graph pools hold 25165824 bytes
 * Flat: graph_pools.FIRST_SECOND.{allocated_bytes,reserved_bytes,segments,
 * use_count} per pool, then graph_pools.reserved_bytes (the sum). JSON: the
 * same keys nested, added as member "graph_pools" of the object that ends
 * `out` (report_stats_json's).
 */
int report_graph_pools_text(struct sbuf *out, const struct npa_pool_info *pools, size_t n,
			    int device);
int report_graph_pools_flat(struct sbuf *out, const struct npa_pool_info *pools, size_t n);
int report_graph_pools_json(struct sbuf *out, const struct npa_pool_info *pools, size_t n);

/* host_memory_stats(): 28 "key value" lines sorted by key, or nested JSON. */
int report_host_stats_flat(struct sbuf *out, const struct npa_host_stats *s);
int report_host_stats_json(struct sbuf *out, const struct npa_host_stats *s);
/* The pinned blocks, a header then one line each: address, size,
 * requested, pool, state (allocated, pending, free, unmapped), pending
 * events, streams that used it, allocated during a capture. */
int report_host_blocks(struct sbuf *out, const struct npa_host_block_info *b, size_t n);
/* The host allocator's private pools, a header then one line each. */
int report_host_pools(struct sbuf *out, const struct npa_host_pool_info *p, size_t n);

/* What a replay's pins asked for: host_memory_stats() sees only the
 * rounded blocks that hold them. */
struct report_pins {
	uint64_t requested;       /* bytes the live pins asked for */
	uint64_t requested_peak;
	uint64_t pins, copies;
	uint64_t refused;         /* pins the host allocator refused */
};
/*
 * npumem-replay's lines for the pinned host allocator, after its report:
 * text ending "pinned memory holds H bytes (peak P) for requests of R
 * (peak Q)"; flat, report_host_stats_flat's keys under host_memory_stats.
 * then pinned_requested_bytes.{current,peak}; JSON, members
 * "host_memory_stats" and "pinned_requested_bytes" added to the object
 * that ends `out`.
 */
int report_pinned_text(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p);
int report_pinned_flat(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p);
int report_pinned_json(struct sbuf *out, const struct npa_host_stats *h,
		       const struct report_pins *p);

#endif /* NPUMEMFS_REPORT_H */
