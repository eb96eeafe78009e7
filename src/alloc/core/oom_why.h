/*
 * oom_why.h - why an allocation ran out of memory, as figures.
 *
 * Taken under the device's lock when the retry ladder gives up, beside
 * upstream's message, and formatted later without it (report/). Every
 * figure is in bytes and describes the moment of the OOM, after the
 * ladder's releases.
 *
 * Names follow upstream where it has one: a pool is upstream's BlockPool
 * ("large_pool", "small_pool", either of a private pool), "private pools"
 * are the graph and MemPool pools of upstream's graph_pools, a pending
 * free is a block in upstream's snapshot state "active_pending_free".
 */
#ifndef NPUMEMFS_OOM_WHY_H
#define NPUMEMFS_OOM_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What the request lacked, first match in this order (each adds the bytes
 * of the one before it, so the verdict names what would have sufficed
 * with the least given up):
 *   FRAGMENTATION  the pool's free bytes would hold the request, but no
 *                  one free block does;
 *   PRIVATE_POOLS  with the free bytes of the private pools it would;
 *   PENDING_FREES  with the blocks waiting on stream events too it would;
 *   OUT_OF_MEMORY  not even with all of them.
 * "Would hold" is npa_oom_would_fit below.
 */
enum npa_oom_verdict {
	NPA_OOM_FRAGMENTATION,
	NPA_OOM_PRIVATE_POOLS,
	NPA_OOM_PENDING_FREES,
	NPA_OOM_OUT_OF_MEMORY,
};

/* Streams named one by one among the pending frees; the rest are summed. */
#define NPA_OOM_WHY_STREAMS 8

struct npa_oom_stream_bytes {
	uint64_t stream;          /* stream number (npa_stream_id) */
	uint64_t bytes;
};

struct npa_oom_why {
	bool valid;               /* false: the last OOM has no figures */
	/* The request: its rounded size, the segment a device malloc would
	 * have made for it, its stream and the pool asked. */
	uint64_t request;
	uint64_t alloc_size;
	uint64_t stream;
	bool small_pool;
	uint64_t pool_id[2];      /* the private pool's id, (0,0) the default pools */
	/* The largest free block of the asked pool on the request's stream
	 * (the only ones it may take), and every free byte of the pool (all
	 * streams) with the number of segments they lie in. */
	uint64_t largest_free_block;
	uint64_t pool_free;
	uint64_t pool_free_segments;
	/* Device bytes this allocator could still take: the device's free
	 * bytes, or less when a memory fraction leaves less. */
	uint64_t headroom;
	/* Free bytes cached in the pools of private pools, the asked one left
	 * out, and how many private pools hold them. With the asked pool's
	 * own free bytes added back when it is private, upstream's
	 * allocated_in_private_pools. */
	uint64_t private_free;
	uint64_t private_pools;
	/* Blocks freed but waiting on stream events (or, freed during a
	 * capture, on its end), each counted once; and by stream waited on,
	 * a block under each of its streams, in stream order, the streams
	 * past NPA_OOM_WHY_STREAMS summed in pending_other_streams. */
	uint64_t pending_free;
	size_t npending_streams;
	struct npa_oom_stream_bytes pending[NPA_OOM_WHY_STREAMS];
	uint64_t pending_other_streams;
	/* Device bytes in use that this allocator does not hold (plug-ins,
	 * uncached allocations, ACL allocators): total - free - reserved. */
	uint64_t other_allocators;
	enum npa_oom_verdict verdict;
};

/*
 * Whether the request would have been served with `extra` more free bytes
 * beside the pool's: as one block of the pool (pool_free + extra holds the
 * rounded request), or as a new segment once those bytes went back to the
 * device (pool_free + headroom + extra holds the segment size).
 */
static inline bool npa_oom_would_fit(const struct npa_oom_why *w, uint64_t extra)
{
	return w->pool_free + extra >= w->request ||
	       w->pool_free + w->headroom + extra >= w->alloc_size;
}

/* The verdict of figures w, by the order above. */
static inline enum npa_oom_verdict npa_oom_verdict_of(const struct npa_oom_why *w)
{
	if (w->pool_free > 0 && npa_oom_would_fit(w, 0))
		return NPA_OOM_FRAGMENTATION;
	if (w->private_free > 0 && npa_oom_would_fit(w, w->private_free))
		return NPA_OOM_PRIVATE_POOLS;
	if (w->pending_free > 0 && npa_oom_would_fit(w, w->private_free + w->pending_free))
		return NPA_OOM_PENDING_FREES;
	return NPA_OOM_OUT_OF_MEMORY;
}

static inline const char *npa_oom_verdict_name(enum npa_oom_verdict v)
{
	switch (v) {
	case NPA_OOM_FRAGMENTATION:
		return "fragmentation";
	case NPA_OOM_PRIVATE_POOLS:
		return "held by private pools";
	case NPA_OOM_PENDING_FREES:
		return "held by pending frees";
	case NPA_OOM_OUT_OF_MEMORY:
		break;
	}
	return "out of memory";
}

#endif /* NPUMEMFS_OOM_WHY_H */
