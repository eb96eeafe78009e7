/*
 * device_stats_abi.c - torch_npu's DeviceStats, as a get_device_stats hook
 * returns it, read into the stats schema.
 *
 * Both structs name their fields after upstream's keys, so the schema's
 * lists copy every one; only the order of the plain counters differs.
 */
#include <npumemfs/plugin.h>

#include "pluggable_allocator.h"

/* The ABI is upstream's layout: 9 stat arrays, 2 single stats, 7 counters. */
_Static_assert(sizeof(struct npumemfs_stat) == 4 * sizeof(int64_t), "Stat is 4 int64_t");
_Static_assert(sizeof(struct npumemfs_device_stats) ==
		       (9 * NPUMEMFS_STAT_TYPES + 2) * sizeof(struct npumemfs_stat) +
			       7 * sizeof(int64_t),
	       "DeviceStats has upstream's size");
_Static_assert(NPUMEMFS_STAT_TYPES == NPA_STAT_TYPES, "StatType count");

static struct npa_stat stat_of(const struct npumemfs_stat *s)
{
	return (struct npa_stat){ .current = s->current, .peak = s->peak,
				  .allocated = s->allocated, .freed = s->freed };
}

void npl_stats_from_abi(struct npa_stats *out, const struct npumemfs_device_stats *in)
{
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
#define NPA_X(name) out->name[t] = stat_of(&in->name[t]);
		NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
	}
#define NPA_X(name) out->name = in->name;
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name) out->name = stat_of(&in->name);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
}
