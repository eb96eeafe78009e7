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
	size_t nblocks;
	struct npa_block_info *blocks;
};

struct npa_snapshot {
	size_t nsegments;          /* sorted by (device, address) */
	struct npa_segment_info *segments;
};

const char *npa_block_state_name(enum npa_block_state state);
void npa_snapshot_release(struct npa_snapshot *snap);

#endif /* NPUMEMFS_SNAPSHOT_H */
