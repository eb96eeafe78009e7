/*
 * extent_map.h - a page-granular space allocator.
 *
 * Hands out runs of whole pages from [0, npages): best fit by size, lowest
 * address among equals, neighbours merged on free. Free runs are kept in
 * two red-black trees (by address for merging, by size for the fit), live
 * runs in a third (by address, for lookups), so every operation is
 * O(log n). Not thread-safe: the owner locks.
 */
#ifndef NPUSIM_EXTENT_MAP_H
#define NPUSIM_EXTENT_MAP_H

#include <stddef.h>
#include <stdint.h>

#include <bsd/sys/tree.h>

/*
 * A device maps its memory page by page, so an allocation needs free
 * pages, not a free run of them. A map that places a device's pages in
 * runs (addresses for aclrtMalloc, offsets in a memory file for physical
 * handles) spans this many times the memory: addresses and file offsets
 * cost no RAM, and the owner's count of pages in use decides. The runs
 * can still be cut up too finely to hold a request the free pages allow,
 * but only by a contrived pattern (blocks of every power of two, every
 * second one freed, half the memory in use); the simulator then says so
 * in the call's recent error (aclGetRecentErrMsg).
 */
#define EXTENT_SPAN_FACTOR 4

/* The span of a map placing `npages` pages: EXTENT_SPAN_FACTOR times them,
 * or `npages` where that many pages of `page` bytes would not fit in 64 bits. */
static inline uint64_t extent_span_pages(uint64_t npages, uint64_t page)
{
	return npages > UINT64_MAX / EXTENT_SPAN_FACTOR / page ? npages
							      : npages * EXTENT_SPAN_FACTOR;
}

struct extent {
	uint64_t start;   /* first page */
	uint64_t npages;
	uint64_t bytes;   /* live runs: the size the caller asked for */
	RB_ENTRY(extent) by_addr; /* free_addr or live tree */
	RB_ENTRY(extent) by_size; /* free_size tree */
};

RB_HEAD(extent_addr_tree, extent);
RB_HEAD(extent_size_tree, extent);

struct extent_map {
	struct extent_addr_tree free_addr;
	struct extent_size_tree free_size;
	struct extent_addr_tree live;
	uint64_t npages;
	uint64_t free_pages;
	uint64_t live_count;
};

/* Returns 0 or -ENOMEM (no memory for the first free run). */
int extent_map_init(struct extent_map *m, uint64_t npages);
/* Frees every run, live or not; live ones are forgotten. */
void extent_map_destroy(struct extent_map *m);

/* A live run of `npages` pages; -ENOSPC if no free run is long enough. */
int extent_map_alloc(struct extent_map *m, uint64_t npages, struct extent **out);
void extent_map_free(struct extent_map *m, struct extent *e);

/* The live run starting at page `start`, or NULL. */
struct extent *extent_map_find(struct extent_map *m, uint64_t start);
/* The live run that contains page `page`, or NULL. */
struct extent *extent_map_containing(struct extent_map *m, uint64_t page);
/* Length of the longest free run, in pages. */
uint64_t extent_map_largest_free(struct extent_map *m);
/* Number of separate free runs. */
uint64_t extent_map_free_runs(struct extent_map *m);

#endif /* NPUSIM_EXTENT_MAP_H */
