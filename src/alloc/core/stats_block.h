/*
 * stats_block.h - a device's stats as a reader copies them: one moment's
 * values, without making the allocating thread wait.
 *
 * A reader takes the device lock only when it is free. When it is held,
 * the reader asks the holder instead: the holder copies its stats into the
 * device's stats block just before it releases the lock (npa_lock's
 * publisher), and the reader copies the block without the lock, as a
 * seqlock reader: the block's sequence is odd while it is written, and a
 * copy made across a change of it is made again. So the allocating thread
 * never waits for a reader; what it pays is one copy of its own stats,
 * from its own cache, per reader that asked.
 */
#ifndef NPA_STATS_BLOCK_H
#define NPA_STATS_BLOCK_H

#include <stdint.h>

#include "lock.h"
#include "stats.h"

#define NPA_STATS_WORDS (sizeof(struct npa_stats) / sizeof(int64_t))

/* Padded so that no line of it holds anything else (the allocator's
 * structs come from calloc, so alignment cannot say it): readers wait on
 * these lines, and the allocator's lines stay the allocator's. */
struct npa_stats_block {
	char before[64];
	unsigned seq;                   /* odd while written; atomic */
	int64_t word[NPA_STATS_WORDS];  /* struct npa_stats; each word atomic */
	char after[64];
};

/* The holder of the lock guarding `from`: publish it. */
void npa_stats_block_write(struct npa_stats_block *b, const struct npa_stats *from);

/* Copies the stats that `lock` guards, or a publication of them into `b`,
 * into `out`. `lock`'s publisher must write `b`; `complete`, called with
 * the lock held, brings the stats up to date before they are copied. */
void npa_stats_copy(struct npa_lock *lock, void (*complete)(struct npa_lock *lock),
		    const struct npa_stats *stats, struct npa_stats_block *b,
		    struct npa_stats *out);

#endif /* NPA_STATS_BLOCK_H */
