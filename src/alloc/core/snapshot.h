/*
 * snapshot.h - a copy of an allocator's segments and blocks.
 *
 * Taken under the allocator's lock in one go and formatted later without
 * it, so a reader never holds up an allocation. Fields and states are those
 * of upstream's memory_snapshot().
 */
#ifndef NPUMEMFS_SNAPSHOT_H
#define NPUMEMFS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One frame of upstream's "frames" list ({"name", "filename", "line"}):
 * where the call that made a block, a segment or a trace entry came from.
 * The strings live as long as the allocator that recorded the frame.
 */
struct npa_frame {
	const char *filename;  /* NULL: no frame (frames is an empty list) */
	const char *name;
	uint32_t line;
};

enum npa_block_state {
	NPA_BLOCK_INACTIVE,            /* "inactive" */
	NPA_BLOCK_ACTIVE_ALLOCATED,    /* "active_allocated" */
	NPA_BLOCK_ACTIVE_PENDING_FREE, /* "active_pending_free" */
};

struct npa_block_info {
	uint64_t address;
	uint64_t size;
	uint64_t requested_size;
	enum npa_block_state state;
	struct npa_frame frame;   /* of the allocation, while the block is active */
};

struct npa_segment_info {
	int device;
	uint64_t address;
	uint64_t total_size;
	uint64_t allocated_size;
	uint64_t active_size;
	uint64_t requested_size;
	uint64_t stream;          /* stream number, 0 for the default stream */
	bool is_large;            /* segment_type "large" (else "small") */
	bool is_expandable;
	uint64_t pool_id[2];      /* segment_pool_id, (0,0) for the default pool */
	struct npa_frame frame;   /* of the call that made the segment */
	size_t nblocks;
	struct npa_block_info *blocks;
};

/* A span of device memory [lo, hi), for checks across allocators. */
struct npa_range {
	uintptr_t lo, hi;
};

struct npa_snapshot {
	size_t nsegments;          /* sorted by (device, address) */
	struct npa_segment_info *segments;
};

/* Upstream's state strings. Inline so that the report layer, which does
 * not link the allocator, reads the same table. */
static inline const char *npa_block_state_name(enum npa_block_state state)
{
	switch (state) {
	case NPA_BLOCK_ACTIVE_ALLOCATED:
		return "active_allocated";
	case NPA_BLOCK_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	case NPA_BLOCK_INACTIVE:
		break;
	}
	return "inactive";
}

void npa_snapshot_release(struct npa_snapshot *snap);

/*
 * Memory history (upstream _record_memory_history): what the allocator did,
 * in order, as upstream's TraceEntry actions.
 */
enum npa_trace_action {
	NPA_TRACE_ALLOC,          /* "alloc": addr = block, size = requested bytes */
	NPA_TRACE_FREE_REQUESTED, /* "free_requested": size = requested bytes */
	NPA_TRACE_FREE_COMPLETED, /* "free_completed": back in the pool */
	NPA_TRACE_SEGMENT_ALLOC,  /* "segment_alloc": a device malloc */
	NPA_TRACE_SEGMENT_FREE,   /* "segment_free" */
	NPA_TRACE_SEGMENT_MAP,    /* "segment_map": pages mapped into an expandable segment */
	NPA_TRACE_SEGMENT_UNMAP,  /* "segment_unmap" */
	NPA_TRACE_SNAPSHOT,       /* "snapshot": addr 0, size = active bytes */
	NPA_TRACE_OOM,            /* "oom": addr = device_free, size = rounded request */
};

struct npa_trace_entry {
	enum npa_trace_action action;
	uint64_t addr;      /* device_free for "oom" */
	uint64_t size;
	uint64_t stream;    /* stream number, 0 for the default stream */
	uint64_t pool_id[2]; /* the block's private pool, (0, 0) for the default pools */
	int64_t time_us;    /* microseconds since the epoch (CLOCK_REALTIME), as upstream */
	struct npa_frame frame;
};

/* A copy of part of one device's history. Entries are numbered from 0 in
 * the order they were recorded; the copy holds [first, first + n). */
struct npa_trace {
	int device;
	uint64_t first;     /* number of entries[0] */
	uint64_t recorded;  /* entries recorded since recording was turned on */
	size_t n;
	struct npa_trace_entry *entries;
};

/* Upstream's action strings, shared by the allocator and the report layer. */
static inline const char *npa_trace_action_name(enum npa_trace_action action)
{
	static const char *const names[] = {
		[NPA_TRACE_ALLOC] = "alloc",
		[NPA_TRACE_FREE_REQUESTED] = "free_requested",
		[NPA_TRACE_FREE_COMPLETED] = "free_completed",
		[NPA_TRACE_SEGMENT_ALLOC] = "segment_alloc",
		[NPA_TRACE_SEGMENT_FREE] = "segment_free",
		[NPA_TRACE_SEGMENT_MAP] = "segment_map",
		[NPA_TRACE_SEGMENT_UNMAP] = "segment_unmap",
		[NPA_TRACE_SNAPSHOT] = "snapshot",
		[NPA_TRACE_OOM] = "oom",
	};
	return (unsigned)action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}

void npa_trace_release(struct npa_trace *t);

#endif /* NPUMEMFS_SNAPSHOT_H */
