/*
 * The last cached hit, taken again (device_allocator.c): a free that would
 * put a block straight back where its malloc found it (merged into the
 * rest it was split from, or whole) leaves it aside, and a malloc of the
 * same size right after takes it back. Nothing may tell. A seeded trace runs twice, once as it is and once with the
 * device settled after every call (npa_check settles, as every locked
 * operation does), and both runs must give the same pointers, the same
 * stats after every call, the same snapshots and the same error codes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"
#include "alloc/device/devices.h"

#define STEPS 3000
#define LIVE 64

/* What a call left behind: its pointer or error, the stats, a snapshot digest. */
struct seen {
	void *p;
	int rc;
	struct npa_stats st;
	uint64_t snap; /* 0: none taken at this step */
};

struct trace {
	struct npa *a;
	bool settle;          /* the second run: settled after every call */
	struct fx_rng rng;
	unsigned read_every;  /* stats are read after one step in this many */
	unsigned steps;
	aclrtStream streams[2];
	struct npa_pool_id pool;
	bool in_pool;
	unsigned uses;        /* of the pool, taken by entering its scope */
	size_t repeat;        /* the size allocated and freed in turn */
	void *live[LIVE];
	size_t nlive;
	unsigned kept[2];     /* frees that left their block aside: whole, split */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * UINT64_C(0x100000001b3);
}

static uint64_t snapshot_digest(struct npa *a)
{
	struct npa_snapshot snap;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	for (size_t i = 0; i < snap.nsegments; i++) {
		const struct npa_segment_info *s = &snap.segments[i];

		h = mix(h, s->address), h = mix(h, s->total_size), h = mix(h, s->allocated_size);
		h = mix(h, s->active_size), h = mix(h, s->requested_size), h = mix(h, s->stream);
		h = mix(h, s->is_large), h = mix(h, s->pool_id[0]), h = mix(h, s->pool_id[1]);
		for (size_t j = 0; j < s->nblocks; j++) {
			const struct npa_block_info *b = &s->blocks[j];

			h = mix(h, b->address), h = mix(h, b->size);
			h = mix(h, b->requested_size), h = mix(h, b->state);
		}
	}
	npa_snapshot_release(&snap);
	return h;
}

/* Sizes of both pools; the small ones split 2 MiB blocks. */
static size_t random_size(struct fx_rng *r)
{
	static const size_t sizes[] = { 1, 512, 4000, 4096, 65536, 1 * MiB, 3 * MiB, 12 * MiB };

	return sizes[fx_below(r, sizeof(sizes) / sizeof(sizes[0]))];
}

static void *alloc(struct trace *t, size_t size, aclrtStream s, int *rc)
{
	char err[NPA_ERRLEN];
	void *p = NULL;

	*rc = npa_malloc(t->a, 0, size, s, &p, err, sizeof(err));
	assert_true(*rc == 0 || *rc == -ENOMEM);
	if (t->settle)
		fx_check(t->a);
	return p;
}

static void release(struct trace *t, void *p)
{
	fx_free(t->a, p);
	if (t->a->dev[0].last_hit.freed)
		t->kept[t->a->dev[0].last_hit.split]++;
}

/* The repeated size, allocated and freed; one time in eight it stays live. */
static void *step_pair(struct trace *t, int *rc)
{
	if (fx_below(&t->rng, 16) == 0)
		t->repeat = random_size(&t->rng);
	void *p = alloc(t, t->repeat, t->streams[fx_below(&t->rng, 8) == 0], rc);

	if (p != NULL && fx_below(&t->rng, 8) == 0 && t->nlive < LIVE)
		t->live[t->nlive++] = p;
	else if (p != NULL)
		release(t, p);
	return p;
}

static bool every_stream(aclrtStream stream, void *arg)
{
	(void)stream, (void)arg;
	return true;
}

/* Into a MemPool's scope (each entry takes a use), or out of it. The
 * scope takes every stream, or as use_mem_pool's only the second, so a
 * block of the pool may be the last hit of a stream it no longer routes. */
static void toggle_pool(struct trace *t)
{
	char err[NPA_ERRLEN];

	if (t->in_pool) {
		assert_int_equal(npa_end_allocate_to_pool(t->a, 0, t->pool, err, sizeof(err)), 0);
	} else if (fx_below(&t->rng, 2) == 0) {
		assert_int_equal(npa_begin_allocate_to_pool(t->a, 0, t->pool, every_stream, NULL,
							     err, sizeof(err)), 0);
		t->uses++;
	} else {
		assert_int_equal(npa_mempool_begin_stream(t->a, 0, t->pool, t->streams[1], err,
							  sizeof(err)), 0);
		t->uses++;
	}
	t->in_pool = !t->in_pool;
}

static void step(struct trace *t, struct seen *out)
{
	size_t k = fx_below(&t->rng, 100);

	memset(out, 0, sizeof(*out));
	if (k < 55) {
		out->p = step_pair(t, &out->rc);
	} else if (k < 70 && t->nlive < LIVE) {
		out->p = alloc(t, random_size(&t->rng), t->streams[fx_below(&t->rng, 2)], &out->rc);
		if (out->p != NULL)
			t->live[t->nlive++] = out->p;
	} else if (k < 85 && t->nlive > 0) {
		fx_free_random(t->a, &t->rng, t->live, &t->nlive, t->streams, 2);
	} else if (k < 88) {
		assert_int_equal(aclrtSynchronizeStream(t->streams[fx_below(&t->rng, 2)]),
				 ACL_SUCCESS);
	} else if (k < 90) {
		out->rc = npa_empty_cache(t->a, 0);
	} else if (k < 92) {
		assert_int_equal(npa_reset_peak_stats(t->a, 0), 0);
	} else if (k < 93) {
		assert_int_equal(npa_reset_accumulated_stats(t->a, 0), 0);
	} else if (k < 95 && t->nlive > 0) {
		out->rc = (int)npa_block_size(t->a, t->live[fx_below(&t->rng, t->nlive)]);
	} else if (k < 96) {
		toggle_pool(t);
	} else if (k < 98) {
		out->snap = snapshot_digest(t->a);
	}
	if (t->settle)
		fx_check(t->a);
	if (t->steps++ % t->read_every == 0)
		assert_int_equal(npa_get_stats(t->a, 0, &out->st), 0);
}

static void run(const struct npa_flavor *f, void (*tweak)(struct npa_conf *), bool settle,
		unsigned read_every, struct seen *seen, unsigned kept[2])
{
	struct trace t = { .settle = settle, .rng = { 23 }, .read_every = read_every,
			   .repeat = 4096 };
	char err[NPA_ERRLEN];

	t.a = fx_start_device_segments(f, 1 * GiB, tweak);
	t.streams[0] = NULL;
	assert_int_equal(aclrtCreateStream(&t.streams[1]), ACL_SUCCESS);
	t.pool = npa_graph_pool_handle(t.a, true);
	for (int i = 0; i < STEPS; i++)
		step(&t, &seen[i]);
	if (t.in_pool)
		toggle_pool(&t);
	while (t.nlive > 0)
		fx_free(t.a, t.live[--t.nlive]);
	assert_int_equal(aclrtSynchronizeStream(t.streams[1]), ACL_SUCCESS);
	seen[STEPS].snap = snapshot_digest(t.a);
	while (t.uses-- > 0)
		assert_int_equal(npa_release_pool(t.a, 0, t.pool, err, sizeof(err)), 0);
	kept[0] = t.kept[0];
	kept[1] = t.kept[1];
	fx_stop(t.a);
}

static void same_runs_read(const struct npa_flavor *f, void (*tweak)(struct npa_conf *),
			   unsigned read_every)
{
	struct seen *fast = calloc(STEPS + 1, sizeof(*fast));
	struct seen *settled = calloc(STEPS + 1, sizeof(*settled));
	unsigned kept_fast[2], kept_settled[2];

	assert_non_null(fast);
	assert_non_null(settled);
	run(f, tweak, false, read_every, fast, kept_fast);
	run(f, tweak, true, read_every, settled, kept_settled);
	/* The shortcut was taken often, for whole and split blocks, and only
	 * where nothing settled it. */
	assert_true(kept_fast[0] > STEPS / 20);
	assert_true(kept_fast[1] > STEPS / 20);
	assert_int_equal(kept_settled[0] + kept_settled[1], 0);
	for (int i = 0; i <= STEPS; i++) {
		if (fast[i].p != settled[i].p || fast[i].rc != settled[i].rc ||
		    fast[i].snap != settled[i].snap ||
		    memcmp(&fast[i].st, &settled[i].st, sizeof(fast[i].st)) != 0)
			fail_msg("step %d: the runs differ", i);
	}
	free(fast);
	free(settled);
}

static void same_runs(const struct npa_flavor *f, void (*tweak)(struct npa_conf *))
{
	same_runs_read(f, tweak, 1);
}

static void nothing_tells_a_block_kept_aside_from_one_back_in_its_pool(void **state)
{
	same_runs(FLAVOR(state), NULL);
}

/* Oversize blocks (never split, taken only by requests near their size)
 * and sizes rounded to power-of-two divisions. */
static void oversize_and_divisions(struct npa_conf *c)
{
	c->max_split_size = 3 * MiB;
	c->max_non_split_rounding = 2 * MiB;
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		c->roundup_power2_divisions[i] = 4;
}

static void nothing_tells_it_with_oversize_blocks_and_divisions(void **state)
{
	same_runs(FLAVOR(state), oversize_and_divisions);
}

/* Up to 512 pending events are left for later: a block is taken again
 * while some wait. */
static void lazy_reclaim(struct npa_conf *c)
{
	c->multi_stream_lazy_reclaim = true;
}

static void nothing_tells_it_with_lazy_reclaim(void **state)
{
	same_runs(FLAVOR(state), lazy_reclaim);
}

/* A block kept aside has been freed: freeing it again or naming it is
 * refused as for any freed pointer, and changes nothing. */
static void a_block_kept_aside_is_refused_as_a_freed_pointer(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	char err[NPA_ERRLEN], want[NPA_ERRLEN];
	void *p = fx_malloc(a, 4096, NULL);

	fx_free(a, p);
	/* A cached hit now, freed right after: kept aside. */
	assert_ptr_equal(fx_malloc(a, 4096, NULL), p);
	fx_free(a, p);
	assert_true(a->dev[0].last_hit.freed);
	struct npa_stats before = fx_stats(a);

	assert_int_equal(npa_free(a, p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "invalid device pointer: %p", p);
	assert_string_equal(err, want);
	assert_int_equal(npa_record_stream(a, p, NULL), -EINVAL);
	assert_int_equal(npa_block_size(a, p), 0);
	struct npa_stats after = fx_stats(a);
	assert_memory_equal(&before, &after, sizeof(before));
	fx_stop(a);
}

/* Read seldom, the stats have owed the changes of many pairs in a row
 * when they are read (device_stats.c, "Owed"). */
static void nothing_tells_it_when_stats_are_read_seldom(void **state)
{
	same_runs_read(FLAVOR(state), NULL, 29);
}

/* Three requests that round to 3072 bytes in both flavors. */
static const size_t requests[] = { 2600, 2700, 2800 };
#define PAIRS 10

/* PAIRS + 1 pairs of the requests in turn: the first makes a segment, the
 * second is a cached hit and each after it that hit taken again, the
 * largest request first among them. Returns the requests' sum. */
static int64_t pairs_in_a_row(struct npa *a, bool settle)
{
	int64_t sum = 0;

	for (int i = 0; i <= PAIRS; i++) {
		size_t size = requests[i % 3];
		void *p = fx_malloc(a, size, NULL);

		if (settle)
			fx_check(a);
		fx_free(a, p);
		if (settle)
			fx_check(a);
		sum += (int64_t)size;
	}
	return sum;
}

static void a_run_of_pairs_read_once_shows_every_pair(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	int64_t sum = pairs_in_a_row(a, false);
	struct npa_stats st = fx_stats(a);

	fx_stop(a);
	a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	pairs_in_a_row(a, true);
	struct npa_stats settled = fx_stats(a);

	assert_int_equal(st.allocation[ALL].allocated, PAIRS + 1);
	assert_int_equal(st.allocation[ALL].freed, PAIRS + 1);
	assert_int_equal(st.allocation[SMALL].current, 0);
	assert_int_equal(st.allocation[SMALL].peak, 1);
	assert_int_equal(st.active_bytes[SMALL].allocated, (PAIRS + 1) * 3072);
	/* The one split of the 2 MiB segment, made and undone with each pair. */
	assert_int_equal(st.inactive_split[ALL].allocated, PAIRS + 1);
	assert_int_equal(st.inactive_split_bytes[ALL].freed, (PAIRS + 1) * (2 * MiB - 3072));
	assert_int_equal(st.requested_bytes[ALL].allocated, sum);
	assert_int_equal(st.requested_bytes[ALL].freed, sum);
	assert_int_equal(st.requested_bytes[ALL].current, 0);
	/* The largest request, first made by a taking again. */
	assert_int_equal(st.requested_bytes[ALL].peak, 2800);
	assert_int_equal(st.requested_bytes[SMALL].peak, 2800);
	assert_memory_equal(&st, &settled, sizeof(st));
	fx_stop(a);
}

/* Read while a block taken again is allocated, the stats count it once,
 * and its free after the read once more. */
static void stats_read_while_a_taking_is_allocated_count_it_once(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	void *p = fx_malloc(a, 2600, NULL);

	/* A new segment's block, then a cached hit: the last hit. */
	fx_free(a, p);
	assert_ptr_equal(fx_malloc(a, 2600, NULL), p);
	fx_free(a, p);
	assert_ptr_equal(fx_malloc(a, 2800, NULL), p);
	struct npa_stats st = fx_stats(a);

	assert_int_equal(st.allocation[ALL].current, 1);
	assert_int_equal(st.allocation[ALL].allocated, 3);
	assert_int_equal(st.allocation[ALL].freed, 2);
	assert_int_equal(st.requested_bytes[ALL].current, 2800);
	assert_int_equal(st.requested_bytes[ALL].peak, 2800);
	assert_int_equal(st.inactive_split[ALL].current, 1);
	fx_free(a, p);
	st = fx_stats(a);
	assert_int_equal(st.allocation[ALL].current, 0);
	assert_int_equal(st.allocation[ALL].freed, 3);
	assert_int_equal(st.requested_bytes[ALL].current, 0);
	assert_int_equal(st.requested_bytes[ALL].freed, 2600 + 2600 + 2800);
	assert_int_equal(st.inactive_split[ALL].current, 0);
	assert_int_equal(st.inactive_split[ALL].freed, 3);
	fx_stop(a);
}

struct reader {
	struct npa *a;
	struct npa_stats st;
};

static void *read_stats(void *arg)
{
	struct reader *r = arg;

	assert_int_equal(npa_get_stats(r->a, 0, &r->st), 0);
	return NULL;
}

/* A reader that finds the lock held gets the holder's publication: it
 * shows the pairs the stats owed when the holder let go. */
static void a_reader_waiting_for_the_lock_is_shown_every_pair(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	struct npa_lock *lock = &a->dev[0].lock;
	struct reader r = { .a = a };
	pthread_t tid;
	int64_t sum = pairs_in_a_row(a, false);

	npa_lock_acquire(lock);
	assert_int_equal(pthread_create(&tid, NULL, read_stats, &r), 0);
	while (!__atomic_load_n(&lock->wanted, __ATOMIC_ACQUIRE))
		sched_yield();
	npa_lock_release(lock);
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_int_equal(r.st.allocation[ALL].allocated, PAIRS + 1);
	assert_int_equal(r.st.requested_bytes[ALL].allocated, sum);
	assert_int_equal(r.st.requested_bytes[ALL].peak, 2800);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(nothing_tells_a_block_kept_aside_from_one_back_in_its_pool),
		BOTH_FLAVORS(nothing_tells_it_with_oversize_blocks_and_divisions),
		BOTH_FLAVORS(nothing_tells_it_with_lazy_reclaim),
		BOTH_FLAVORS(a_block_kept_aside_is_refused_as_a_freed_pointer),
		BOTH_FLAVORS(nothing_tells_it_when_stats_are_read_seldom),
		BOTH_FLAVORS(a_run_of_pairs_read_once_shows_every_pair),
		BOTH_FLAVORS(stats_read_while_a_taking_is_allocated_count_it_once),
		BOTH_FLAVORS(a_reader_waiting_for_the_lock_is_shown_every_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
