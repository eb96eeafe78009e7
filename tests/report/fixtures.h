/*
 * fixtures.h - allocator states written down by hand, for the report tests.
 */
#ifndef NPUREPORT_TEST_FIXTURES_H
#define NPUREPORT_TEST_FIXTURES_H

#include "alloc/core/stats.h"

/* Sets `pool` and "all" of a stat array to the same four numbers. */
void fixture_set_pool(struct npa_stat arr[NPA_STAT_TYPES],
		      enum npa_stat_type pool, int64_t current, int64_t peak,
		      int64_t allocated, int64_t freed);

/*
 * A fresh CUDA device after torch.empty(1 << 20, dtype=torch.uint8): one
 * 1048576-byte block split from a 2 MiB small-pool segment, the other
 * 1 MiB of it an inactive split block.
 */
void fixture_one_mib_tensor(struct npa_stats *s);

/*
 * The worked example (CUDA rules) after x = alloc(1000), y = alloc(3000),
 * free(x), empty_cache(): one 2 MiB small segment holding y (3072 bytes)
 * between two inactive split blocks.
 */
void fixture_worked_example(struct npa_stats *s);

/* Every number in the struct different (1, 2, 3, ... in schema order), so
 * a view that mixes two keys up shows it. */
void fixture_distinct(struct npa_stats *s);

#endif /* NPUREPORT_TEST_FIXTURES_H */
