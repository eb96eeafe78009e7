/*
 * Four threads allocate and free on two devices while a fifth copies stats
 * and snapshots; run under TSan to see the locking.
 */
#include <pthread.h>

#include "alloc_fixture.h"

#define WORKERS 4
#define ROUNDS 3000
#define HELD 16

struct shared {
	struct npa *a;
	volatile int done;
};

struct worker {
	struct shared *sh;
	unsigned id;
	uint64_t allocs;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	void *held[HELD] = { 0 };
	uint64_t x = w->id * 7919 + 1;

	for (int i = 0; i < ROUNDS; i++) {
		unsigned slot = (unsigned)(x % HELD);
		int device = (int)((x >> 8) % 2);
		size_t size = 256 + (size_t)((x >> 16) % (3 * MiB));

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		if (held[slot] != NULL) {
			assert_int_equal(npa_free(w->sh->a, held[slot], NULL, 0), 0);
			held[slot] = NULL;
		} else {
			assert_int_equal(npa_malloc(w->sh->a, device, size, NULL, &held[slot],
						    NULL, 0), 0);
			w->allocs++;
		}
	}
	for (int i = 0; i < HELD; i++)
		assert_int_equal(npa_free(w->sh->a, held[i], NULL, 0), 0);
	return NULL;
}

static void *observe(void *arg)
{
	struct shared *sh = arg;
	struct npa_stats st;
	struct npa_snapshot snap;

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		for (int d = 0; d < 2; d++) {
			assert_int_equal(npa_get_stats(sh->a, d, &st), 0);
			assert_true(st.allocated_bytes[ALL].current <= st.reserved_bytes[ALL].current);
		}
		assert_int_equal(npa_snapshot(sh->a, -1, &snap), 0);
		npa_snapshot_release(&snap);
	}
	return NULL;
}

/* One moment's values: each pool's share adds up to the whole, and what
 * was allocated less what was freed is what is held. A copy torn between
 * two moments (a stat of one, its pool's of the next) breaks one of these. */
static void assert_one_moment(const struct npa_stats *st)
{
	const struct npa_stat *arrays[] = {
		st->allocation, st->segment, st->active, st->allocated_bytes,
		st->reserved_bytes, st->active_bytes, st->requested_bytes,
	};

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		const struct npa_stat *s = arrays[i];
		assert_int_equal(s[ALL].current, s[SMALL].current + s[LARGE].current);
		assert_int_equal(s[ALL].allocated, s[SMALL].allocated + s[LARGE].allocated);
		assert_int_equal(s[ALL].freed, s[SMALL].freed + s[LARGE].freed);
		assert_int_equal(s[ALL].allocated - s[ALL].freed, s[ALL].current);
	}
}

static void *copy_stats(void *arg)
{
	struct shared *sh = arg;
	struct npa_stats st;

	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		assert_int_equal(npa_get_stats(sh->a, 0, &st), 0);
		assert_one_moment(&st);
	}
	return NULL;
}

static void run_workers(struct shared *sh, uint64_t *allocs)
{
	struct worker w[WORKERS];
	pthread_t tid[WORKERS];

	for (unsigned i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ .sh = sh, .id = i };
		assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
	}
	for (unsigned i = 0; i < WORKERS; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		*allocs += w[i].allocs;
	}
}

/* Two devices of 4 GiB; WORKERS threads allocate while `reader` runs. */
static void run_with_reader(void **state, struct shared *sh, void *(*reader)(void *),
			    uint64_t *allocs)
{
	struct npusim_config cfg;
	struct npa_options opt = { .flavor = FLAVOR(state), .device_count = 2 };
	pthread_t tid;

	npusim_config_default(&cfg, 2, 4 * GiB);
	assert_int_equal(npusim_init(&cfg), 0);
	npa_conf_default(&opt.conf, opt.flavor);
	assert_int_equal(npa_create(&opt, &sh->a), 0);
	assert_int_equal(pthread_create(&tid, NULL, reader, sh), 0);
	run_workers(sh, allocs);
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(tid, NULL), 0);
}

static void a_stats_copy_taken_while_threads_allocate_is_one_moment(void **state)
{
	struct shared sh = { 0 };
	uint64_t allocs = 0;

	run_with_reader(state, &sh, copy_stats, &allocs);
	assert_int_equal(npa_destroy(sh.a, NULL), 0);
	npusim_shutdown();
}

static void four_threads_and_a_reader_keep_every_invariant(void **state)
{
	struct shared sh = { 0 };
	uint64_t allocs = 0;

	run_with_reader(state, &sh, observe, &allocs);

	int64_t counted = 0;
	for (int d = 0; d < 2; d++) {
		struct npa_stats st;
		char err[NPA_ERRLEN] = "";

		assert_int_equal(npa_check(sh.a, d, err, sizeof(err)), 0);
		assert_int_equal(npa_get_stats(sh.a, d, &st), 0);
		assert_int_equal(st.allocation[ALL].current, 0);
		counted += st.allocation[ALL].allocated;
	}
	assert_int_equal(counted, (int64_t)allocs);
	assert_int_equal(npa_empty_cache(sh.a, -1), 0);
	for (int d = 0; d < 2; d++) {
		struct npa_stats st;

		assert_int_equal(npa_get_stats(sh.a, d, &st), 0);
		assert_int_equal(st.reserved_bytes[ALL].current, 0);
	}
	assert_int_equal(npa_destroy(sh.a, NULL), 0);
	npusim_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(four_threads_and_a_reader_keep_every_invariant),
		BOTH_FLAVORS(a_stats_copy_taken_while_threads_allocate_is_one_moment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
