/*
 * stream_map.h - streams laid out as upstream's ska::flat_hash_map lays
 * out its keys.
 *
 * Upstream keeps pending events in ska::flat_hash_map<stream, deque>
 * (cuda_events, npu_events) and a block's streams in a
 * ska::flat_hash_set<stream>, and walks both in slot order. That order
 * decides which pending block comes back first, and so how free_block
 * counts inactive_split, so it is reproduced here rule for rule
 * (c10/util/flat_hash_map.h, sherwood_v3_table): Fibonacci hashing of the
 * stream's c10 hash, linear probing with robin-hood displacement, at most
 * max(4, log2(slots)) probes, a load factor of 0.5, growth by doubling
 * from 4 slots, overflow slots past the end instead of wrapping, and
 * backward-shift erase. Entries compare by stream handle; the key only
 * places them.
 */
#ifndef NPA_STREAM_MAP_H
#define NPA_STREAM_MAP_H

#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

struct npa_pending;

/* One stream's FIFO of pending events (the map's value). */
struct npa_event_queue {
	aclrtStream stream;
	uint64_t key;              /* c10::Stream::hash() of the stream */
	struct npa_pending *head;
	struct npa_pending *tail;
};

struct npa_stream_slot {
	int8_t dist;               /* distance from its hashed slot; -1 empty */
	struct npa_event_queue q;
};

struct npa_stream_map {
	struct npa_stream_slot *slot; /* nslots + max_lookups, the last a sentinel */
	uint64_t nslots;           /* 0 (no table yet) or a power of two */
	int8_t max_lookups;
	int8_t shift;              /* 64 - log2(nslots) */
	size_t n;                  /* entries */
};

/* The queue of `stream`, inserted (empty) with `key` if absent, as
 * operator[] does; NULL when memory runs out. Moves other entries. */
struct npa_event_queue *npa_stream_map_get(struct npa_stream_map *m, aclrtStream stream,
					   uint64_t key);
/* Slots to walk: entry i is npa_stream_map_at(m, i), NULL when empty. */
static inline size_t npa_stream_map_end(const struct npa_stream_map *m)
{
	return m->nslots ? m->nslots + (size_t)m->max_lookups - 1 : 0;
}

static inline struct npa_event_queue *npa_stream_map_at(struct npa_stream_map *m, size_t i)
{
	return m->slot[i].dist >= 0 ? &m->slot[i].q : NULL;
}

/* Erase entry i; a later entry may shift into i (walk i again). */
void npa_stream_map_erase(struct npa_stream_map *m, size_t i);
void npa_stream_map_fini(struct npa_stream_map *m);

#endif /* NPA_STREAM_MAP_H */
