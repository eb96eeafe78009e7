/*
 * A seeded random trace over several streams with record_stream, OOMs and
 * empty_cache; every invariant is checked after every step, and at the end
 * the device gets all its memory back.
 */
#include <errno.h>

#include "alloc_fixture.h"

#define STEPS 4000
#define LIVE 256
#define STREAMS 3

/* Mostly small, some 1-10 MiB, a few up to 60 MiB: every pool and segment kind. */
static size_t random_size(struct fx_rng *r)
{
	size_t k = fx_below(r, 100);

	if (k < 70)
		return 1 + fx_below(r, 1 * MiB);
	if (k < 92)
		return 1 * MiB + fx_below(r, 9 * MiB);
	return 10 * MiB + fx_below(r, 50 * MiB);
}

struct trace {
	struct npa *a;
	struct fx_rng rng;
	aclrtStream streams[STREAMS];
	void *live[LIVE];
	size_t nlive;
	unsigned ooms;
};

static void step_alloc(struct trace *t)
{
	char err[NPA_ERRLEN];
	void *p = NULL;

	if (t->nlive == LIVE)
		return;
	int rc = npa_malloc(t->a, 0, random_size(&t->rng), t->streams[fx_below(&t->rng, STREAMS)],
			    &p, err, sizeof(err));
	if (rc == -ENOMEM) {
		t->ooms++;
		return;
	}
	assert_int_equal(rc, 0);
	t->live[t->nlive++] = p;
}

static void step(struct trace *t)
{
	size_t k = fx_below(&t->rng, 100);

	/* Allocating gets rarer as blocks pile up: about LIVE / 2 stay live. */
	if (k < 92 && fx_below(&t->rng, LIVE) >= t->nlive)
		step_alloc(t);
	else if (k < 92)
		fx_free_random(t->a, &t->rng, t->live, &t->nlive, t->streams, STREAMS);
	else if (k < 97)
		assert_int_equal(aclrtSynchronizeStream(t->streams[fx_below(&t->rng, STREAMS)]),
				 ACL_SUCCESS);
	else if (k < 99)
		assert_int_equal(npa_empty_cache(t->a, 0), 0);
	else
		assert_int_equal(npa_reset_peak_stats(t->a, 0), 0);
	fx_check(t->a);
}

static void run(const struct npa_flavor *f, uint64_t seed, void (*tweak)(struct npa_conf *))
{
	struct trace t = { .rng = { seed } };
	size_t free_mem, total;

	t.a = fx_start_conf(f, 1 * GiB, tweak);
	t.streams[0] = NULL;
	for (int i = 1; i < STREAMS; i++)
		assert_int_equal(aclrtCreateStream(&t.streams[i]), ACL_SUCCESS);
	for (int i = 0; i < STEPS; i++)
		step(&t);
	while (t.nlive > 0)
		fx_free(t.a, t.live[--t.nlive]);
	for (int i = 0; i < STREAMS; i++)
		assert_int_equal(aclrtSynchronizeStream(t.streams[i]), ACL_SUCCESS);
	assert_int_equal(npa_empty_cache(t.a, 0), 0);
	fx_check(t.a);
	struct npa_stats st = fx_stats(t.a);
	/* The trace reaches the retry ladder, not only the cache (expandable
	 * segments fragment too little on it to need the ladder). */
	if (!fx_expandable())
		assert_true(st.num_alloc_retries > 0);
	assert_int_equal(st.reserved_bytes[ALL].current, 0);
	assert_int_equal(st.active[ALL].current, 0);
	assert_int_equal(st.num_ooms, t.ooms);
	/* A map call and the unmaps that undo it do not pair up one to one. */
	if (!fx_expandable())
		assert_int_equal(st.num_device_alloc, st.num_device_free);
	else
		assert_int_equal(fx_device().physical_used, 0);
	assert_int_equal(aclrtGetMemInfo(ACL_HBM_MEM, &free_mem, &total), ACL_SUCCESS);
	assert_int_equal(free_mem, total);
	fx_stop(t.a);
}

static void defaults(struct npa_conf *c)
{
	(void)c;
}

static void max_split_40mib(struct npa_conf *c)
{
	c->max_split_size = 40 * MiB;
}

static void gc_with_fraction(struct npa_conf *c)
{
	c->per_process_memory_fraction = 0.6;
	c->garbage_collection_threshold = 0.5;
}

static void divisions_4(struct npa_conf *c)
{
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		c->roundup_power2_divisions[i] = 4;
}

static void random_trace_default_settings(void **state)
{
	run(FLAVOR(state), 1, defaults);
}

static void random_trace_max_split_size(void **state)
{
	run(FLAVOR(state), 2, max_split_40mib);
}

static void random_trace_gc_and_fraction(void **state)
{
	run(FLAVOR(state), 3, gc_with_fraction);
}

static void random_trace_roundup_divisions(void **state)
{
	run(FLAVOR(state), 4, divisions_4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(random_trace_default_settings),
		BOTH_FLAVORS(random_trace_max_split_size),
		BOTH_FLAVORS(random_trace_gc_and_fraction),
		BOTH_FLAVORS(random_trace_roundup_divisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
