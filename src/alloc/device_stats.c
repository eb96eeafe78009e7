/*
 * device_stats.c - upstream's update_stat over "all" and the block's pool.
 */
#include "device.h"

void npa_stat_single_update(struct npa_stat *s, int64_t amount)
{
	if (amount > 0)
		npa_stat_increase(s, amount);
	else if (amount < 0)
		npa_stat_decrease(s, -amount);
}

void npa_stat_update(struct npa_stat *arr, const struct npa_pool *pool, int64_t amount)
{
	npa_stat_single_update(&arr[NPA_STAT_ALL], amount);
	npa_stat_single_update(&arr[pool->is_small ? NPA_STAT_SMALL_POOL : NPA_STAT_LARGE_POOL],
			       amount);
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
