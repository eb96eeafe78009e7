/*
 * fixtures.c - allocator states written down by hand, for the report tests.
 */
#include <string.h>

#include "fixtures.h"

static void set(struct npa_stat *st, int64_t current, int64_t peak,
		int64_t allocated, int64_t freed)
{
	st->current = current;
	st->peak = peak;
	st->allocated = allocated;
	st->freed = freed;
}

void fixture_set_pool(struct npa_stat arr[NPA_STAT_TYPES],
		      enum npa_stat_type pool, int64_t current, int64_t peak,
		      int64_t allocated, int64_t freed)
{
	set(&arr[NPA_STAT_ALL], current, peak, allocated, freed);
	set(&arr[pool], current, peak, allocated, freed);
}

void fixture_one_mib_tensor(struct npa_stats *s)
{
	const enum npa_stat_type small = NPA_STAT_SMALL_POOL;
	memset(s, 0, sizeof(*s));
	fixture_set_pool(s->allocation, small, 1, 1, 1, 0);
	fixture_set_pool(s->segment, small, 1, 1, 1, 0);
	fixture_set_pool(s->active, small, 1, 1, 1, 0);
	fixture_set_pool(s->inactive_split, small, 1, 1, 1, 0);
	fixture_set_pool(s->allocated_bytes, small, 1048576, 1048576, 1048576, 0);
	fixture_set_pool(s->reserved_bytes, small, 2097152, 2097152, 2097152, 0);
	fixture_set_pool(s->active_bytes, small, 1048576, 1048576, 1048576, 0);
	fixture_set_pool(s->inactive_split_bytes, small, 1048576, 1048576,
			 1048576, 0);
	fixture_set_pool(s->requested_bytes, small, 1048576, 1048576, 1048576, 0);
	s->max_split_size = -1;
	s->num_device_alloc = 1;
}

void fixture_worked_example(struct npa_stats *s)
{
	const enum npa_stat_type small = NPA_STAT_SMALL_POOL;
	memset(s, 0, sizeof(*s));
	fixture_set_pool(s->allocation, small, 1, 2, 2, 1);
	fixture_set_pool(s->segment, small, 1, 1, 1, 0);
	fixture_set_pool(s->active, small, 1, 2, 2, 1);
	/* +1 at the first split, +1 when x's block came back still split. */
	fixture_set_pool(s->inactive_split, small, 2, 2, 2, 0);
	fixture_set_pool(s->allocated_bytes, small, 3072, 4096, 4096, 1024);
	fixture_set_pool(s->reserved_bytes, small, 2097152, 2097152, 2097152, 0);
	fixture_set_pool(s->active_bytes, small, 3072, 4096, 4096, 1024);
	/* 2096128 left by x, 3072 taken by y, 1024 returned by x. */
	fixture_set_pool(s->inactive_split_bytes, small, 2094080, 2096128,
			 2097152, 3072);
	fixture_set_pool(s->requested_bytes, small, 3000, 4000, 4000, 1000);
	s->max_split_size = -1;
	s->num_sync_all_streams = 1;
	s->num_device_alloc = 1;
}

void fixture_distinct(struct npa_stats *s)
{
	int64_t n = 0;
#define NPA_X(name)                                                            \
	for (int t = 0; t < NPA_STAT_TYPES; t++)                               \
		set(&s->name[t], n + 1, n + 2, n + 3, n + 4), n += 4;
	NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
#define NPA_X(name) s->name = ++n;
	NPA_STAT_SCALARS(NPA_X)
#undef NPA_X
#define NPA_X(name) set(&s->name, n + 1, n + 2, n + 3, n + 4), n += 4;
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
}
