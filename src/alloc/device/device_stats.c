/*
 * device_stats.c - upstream's resetPeakStats and resetAccumulatedStats, and
 * the stats published for readers.
 */
#include <stddef.h>

#include "device.h"

void npa_device_publish_stats(struct npa_lock *lock)
{
	struct npa_device *dev =
		(struct npa_device *)((char *)lock - offsetof(struct npa_device, lock));

	__atomic_store_n(&lock->wanted, 0, __ATOMIC_RELAXED);
	npa_stats_block_write(&dev->published, &dev->stats);
}

void npa_stats_reset_peak(struct npa_stats *st)
{
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
#define NPA_X(name) npa_stat_reset_peak(&st->name[t]);
		NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
	}
#define NPA_X(name) npa_stat_reset_peak(&st->name);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
}

void npa_stats_reset_accumulated(struct npa_stats *st)
{
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
#define NPA_X(name) npa_stat_reset_accumulated(&st->name[t]);
		NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
	}
#define NPA_X(name) npa_stat_reset_accumulated(&st->name);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
	/* max_split_size is a setting, not a counter: it stays. */
	st->num_alloc_retries = 0;
	st->num_ooms = 0;
	st->num_sync_all_streams = 0;
	st->num_device_alloc = 0;
	st->num_device_free = 0;
	st->num_oom_rejections = 0;
}
