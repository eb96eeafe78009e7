/*
 * device_stats.c - upstream's resetPeakStats and resetAccumulatedStats, and
 * the stats published for readers.
 */
#include <stddef.h>

#include "device.h"

/*
 * Owed. While a block stays the last hit (device_allocator.c, "The last
 * hit, again") its neighbours cannot change, so each taking of it again
 * and each free of it changes the stats by the same amounts. Neither pays
 * them: a taking counts itself and its request, and the stats are paid
 * here all at once, before anything reads them or changes them otherwise
 * (npa_device_settle, the lock's publisher, npa_get_stats). Every value
 * the stats pass through meanwhile is one they had since the last
 * reset_peak (which settles), so no peak moves but requested_bytes',
 * whose request may differ within a rounded size: its peak is the current
 * before the takings plus the largest of them.
 */

/* `taken` changes of `per` and `freed` changes back, for "all" and `t`. */
static void owe(struct npa_stat *arr, int t, int64_t per, int64_t taken, int64_t freed)
{
	const int64_t up = per > 0 ? per : 0, down = per < 0 ? -per : 0;
	const int types[2] = { NPA_STAT_ALL, t };

	for (int i = 0; i < 2; i++) {
		struct npa_stat *s = &arr[types[i]];

		s->current += (taken - freed) * per;
		s->allocated += taken * up + freed * down;
		s->freed += taken * down + freed * up;
	}
}

/* The inactive_split stats: what taking the block changes, per hit_again. */
static void owe_split(struct npa_device *dev, int t, int64_t taken, int64_t freed)
{
	const struct npa_block *b = dev->last_hit.block;
	struct npa_stats *st = &dev->stats;
	const int64_t n = (int64_t)b->size;

	if (dev->last_hit.split) {
		const struct npa_block *rest = b->next;

		if (b->prev != NULL || rest->next != NULL) {
			owe(st->inactive_split_bytes, t, -n, taken, freed);
		} else {
			owe(st->inactive_split_bytes, t, (int64_t)rest->size, taken, freed);
			owe(st->inactive_split, t, 1, taken, freed);
		}
	} else if (npa_block_is_split(b)) {
		owe(st->inactive_split_bytes, t, -n, taken, freed);
		owe(st->inactive_split, t, -1, taken, freed);
	}
}

static void owe_requested(struct npa_device *dev, int t, int64_t freed_sum)
{
	const struct npa_last_hit *hit = &dev->last_hit;
	struct npa_stat *arr = dev->stats.requested_bytes;
	const int types[2] = { NPA_STAT_ALL, t };
	const int64_t taken_sum = (int64_t)hit->owed_requested;

	for (int i = 0; i < 2; i++) {
		struct npa_stat *s = &arr[types[i]];

		if (s->current + (int64_t)hit->owed_largest > s->peak)
			s->peak = s->current + (int64_t)hit->owed_largest;
		s->current += taken_sum - freed_sum;
		s->allocated += taken_sum;
		s->freed += freed_sum;
	}
}

void npa_device_pay_owed(struct npa_device *dev)
{
	struct npa_last_hit *hit = &dev->last_hit;

	if (hit->owed == 0)
		return;
	const struct npa_block *b = hit->block;
	struct npa_stats *st = &dev->stats;
	const int t = npa_pool_stat_type(b->pool);
	const int64_t n = (int64_t)b->size;
	/* Every taking is freed again but the last, unless it is too. */
	const int64_t k = (int64_t)hit->owed, f = hit->freed ? k : k - 1;

	owe(st->allocation, t, 1, k, f);
	owe(st->allocated_bytes, t, n, k, f);
	owe(st->active, t, 1, k, f);
	owe(st->active_bytes, t, n, k, f);
	owe_split(dev, t, k, f);
	if (b->size >= dev->conf->max_split_size) {
		st->oversize_allocations.current += k - f;
		st->oversize_allocations.allocated += k;
		st->oversize_allocations.freed += f;
	}
	owe_requested(dev, t,
		      (int64_t)hit->owed_requested - (hit->freed ? 0 : (int64_t)b->requested_size));
	hit->owed = 0;
	hit->owed_requested = 0;
	hit->owed_largest = 0;
}

static struct npa_device *device_of_lock(struct npa_lock *lock)
{
	return (struct npa_device *)((char *)lock - offsetof(struct npa_device, lock));
}

void npa_device_complete_stats(struct npa_lock *lock)
{
	npa_device_pay_owed(device_of_lock(lock));
}

void npa_device_publish_stats(struct npa_lock *lock)
{
	struct npa_device *dev = device_of_lock(lock);

	__atomic_store_n(&lock->wanted, 0, __ATOMIC_RELAXED);
	npa_device_pay_owed(dev);
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
