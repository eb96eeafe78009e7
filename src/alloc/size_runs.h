/*
 * size_runs.h - the first block of every (stream, size) run of a pool's
 * free tree, found by hash.
 *
 * The tree orders free blocks by (stream, size, address), so the blocks
 * of one stream and size lie together in address order: a run. When a
 * request's rounded size has a run, the tree's lower bound is that run's
 * first block; this index gives it without descending the tree, and gives
 * a freed block that precedes a run its place in the tree (just before
 * the run's first block). That is what keeps a cached hit flat in the
 * number of free blocks. Blocks too large to be requested exactly (over
 * kSmallSize in the small pool) are left out; those are the 2 MiB
 * segments the small pool splits, whose size changes on every split.
 *
 * Chained through the indexed blocks themselves (run_next), so adding one
 * never allocates: the table doubles when runs outnumber its buckets, and
 * when memory runs out it keeps its size with longer chains.
 */
#ifndef NPA_SIZE_RUNS_H
#define NPA_SIZE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <acl/acl_rt.h>

struct npa_block;

#define NPA_SIZE_RUNS_MIN 16 /* buckets held inline, so a new pool allocates nothing */

struct npa_size_runs {
	struct npa_block **bucket;
	size_t mask;               /* buckets - 1 */
	unsigned shift;            /* 64 - log2(buckets) */
	size_t count;              /* runs indexed */
	struct npa_block *first[NPA_SIZE_RUNS_MIN];
};

void npa_size_runs_init(struct npa_size_runs *r);
void npa_size_runs_fini(struct npa_size_runs *r);

/* The first block of run (stream, size), or NULL. */
struct npa_block *npa_size_runs_find(const struct npa_size_runs *r, aclrtStream stream,
				     size_t size);
/* `b` starts a run that had no block. */
void npa_size_runs_add(struct npa_size_runs *r, struct npa_block *b);
/* `b`, of the same stream and size, is the run's first block instead of `old`. */
void npa_size_runs_replace(struct npa_size_runs *r, struct npa_block *old,
			   struct npa_block *b);
/* `b`'s run has no block left. */
void npa_size_runs_remove(struct npa_size_runs *r, struct npa_block *b);

/* Sizes are multiples of 512: the low 9 bits carry nothing. */
static inline size_t npa_size_runs_home(const struct npa_size_runs *r, aclrtStream stream,
					size_t size)
{
	uint64_t k = (uint64_t)(size >> 9) ^ ((uint64_t)(uintptr_t)stream * UINT64_C(0xff51afd7ed558ccd));

	return (size_t)((k * UINT64_C(0x9E3779B97F4A7C15)) >> r->shift);
}

#endif /* NPA_SIZE_RUNS_H */
