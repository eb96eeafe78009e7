/*
 * Best fit through the size-runs index: every cached hit hands out the
 * block the pool tree's lower bound names, the first free block of the
 * request's stream at or above its size, lowest address first. A random
 * trace compares each malloc with a walk of the tree; one test per way a
 * run's first block changes (taken, merged away, a split remainder in
 * front of it) pins the edges.
 */
#include <errno.h>

#include "alloc_fixture.h"
#include "caching_allocator_impl.h"

#define STEPS 3000
#define LIVE 96

/* A request that rounds to exactly `bytes` (a multiple of 512). */
static size_t req(const struct npa_flavor *f, size_t bytes)
{
	return bytes - f->pad;
}

/* The lower bound by walking the whole tree in order, without the index. */
static struct npa_block *walk_lower_bound(struct npa_pool *pool, aclrtStream stream,
					  size_t size)
{
	struct npa_block *b;

	RB_FOREACH(b, npa_block_tree, &pool->blocks)
		if (b->stream == stream ? b->size >= size
					: (uintptr_t)b->stream > (uintptr_t)stream)
			return b;
	return NULL;
}

/* Where a cached hit for `bytes` on `stream` must start, or NULL for none. */
static void *expected_hit(struct npa *a, size_t bytes, aclrtStream stream)
{
	struct npa_device *dev = &a->dev[0];
	size_t size = npa_round_size(dev, bytes);
	struct npa_pool *pool = size <= NPA_SMALL_SIZE ? &dev->small : &dev->large;

	npa_device_lock(dev);
	/* Pending events free their blocks first, so the tree is final. */
	npa_process_events(dev);
	struct npa_block *b = walk_lower_bound(pool, stream, size);
	npa_lock_release(&dev->lock);
	return b != NULL && b->stream == stream ? b->ptr : NULL;
}

/* Many sizes of both pools, each often enough to make runs of several blocks. */
static size_t random_bytes(struct fx_rng *r)
{
	static const size_t sizes[] = {
		512,	 1024,	  1536,	   4096,     4608,     8192,	32768,
		65536,	 131072,  524288,  1048576,  1049088,  2097152, 3145728,
		4194304, 5242880, 6291456, 8388608,  10485760,
	};
	size_t bytes = sizes[fx_below(r, sizeof(sizes) / sizeof(sizes[0]))];

	/* Sometimes a request that is not a multiple of 512. */
	return fx_below(r, 4) == 0 && bytes > 512 ? bytes - 1 - fx_below(r, 500) : bytes;
}

struct trace {
	struct npa *a;
	struct fx_rng rng;
	aclrtStream streams[2];
	void *live[LIVE];
	size_t nlive;
	unsigned hits;
};

static void step_alloc(struct trace *t)
{
	char err[NPA_ERRLEN];
	size_t bytes = random_bytes(&t->rng);
	aclrtStream s = t->streams[fx_below(&t->rng, 2)];
	void *want = expected_hit(t->a, bytes, s);
	void *p = NULL;
	int rc = npa_malloc(t->a, 0, bytes, s, &p, err, sizeof(err));

	if (want == NULL && rc == -ENOMEM)
		return;
	assert_int_equal(rc, 0);
	if (want != NULL) {
		assert_ptr_equal(p, want);
		t->hits++;
	}
	t->live[t->nlive++] = p;
}

static void step(struct trace *t)
{
	size_t k = fx_below(&t->rng, 100);

	if (k < 95 && t->nlive < LIVE && (t->nlive == 0 || fx_below(&t->rng, LIVE) >= t->nlive))
		step_alloc(t);
	else if (k < 95)
		fx_free_random(t->a, &t->rng, t->live, &t->nlive, t->streams, 2);
	else
		assert_int_equal(aclrtSynchronizeStream(t->streams[fx_below(&t->rng, 2)]),
				 ACL_SUCCESS);
	fx_check(t->a);
}

static void every_cached_hit_is_the_trees_lower_bound(void **state)
{
	struct trace t = { .rng = { 15 } };

	t.a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);
	t.streams[0] = NULL;
	assert_int_equal(aclrtCreateStream(&t.streams[1]), ACL_SUCCESS);
	for (int i = 0; i < STEPS; i++)
		step(&t);
	while (t.nlive > 0)
		fx_free(t.a, t.live[--t.nlive]);
	assert_int_equal(aclrtSynchronizeStream(t.streams[1]), ACL_SUCCESS);
	/* Most allocations came from the cache: the comparison was made. */
	assert_true(t.hits > STEPS / 3);
	fx_stop(t.a);
}

static void taking_a_runs_first_block_leaves_the_next_one_first(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	void *run[3], *sep[3];

	for (int i = 0; i < 3; i++) {
		run[i] = fx_malloc(a, req(f, 4096), NULL);
		sep[i] = fx_malloc(a, req(f, 512), NULL);
	}
	/* Last first: each free puts a block in front of the run. */
	for (int i = 2; i >= 0; i--)
		fx_free(a, run[i]);
	fx_check(a);
	for (int i = 0; i < 3; i++) {
		assert_ptr_equal(fx_malloc(a, req(f, 4096), NULL), run[i]);
		fx_check(a);
	}
	for (int i = 0; i < 3; i++) {
		fx_free(a, run[i]);
		fx_free(a, sep[i]);
	}
	fx_stop(a);
}

static void a_merge_takes_run_blocks_out_of_the_index(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	void *first = fx_malloc(a, req(f, 4096), NULL);
	void *middle = fx_malloc(a, req(f, 8192), NULL);
	void *second = fx_malloc(a, req(f, 4096), NULL);
	void *sep1 = fx_malloc(a, req(f, 512), NULL);
	void *last = fx_malloc(a, req(f, 4096), NULL);
	void *sep2 = fx_malloc(a, req(f, 512), NULL);

	fx_free(a, first);
	fx_free(a, second);
	fx_free(a, last);
	/* Both 4096 blocks around it merge into one of 16 KiB. */
	fx_free(a, middle);
	fx_check(a);
	assert_ptr_equal(fx_malloc(a, req(f, 4096), NULL), last);
	assert_ptr_equal(fx_malloc(a, req(f, 16384), NULL), first);
	fx_check(a);
	fx_free(a, first);
	fx_free(a, last);
	fx_free(a, sep1);
	fx_free(a, sep2);
	fx_stop(a);
}

static void a_split_remainder_in_front_of_a_run_becomes_its_first(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	void *whole = fx_malloc(a, req(f, 12288), NULL);
	void *sep1 = fx_malloc(a, req(f, 512), NULL);
	void *later = fx_malloc(a, req(f, 4096), NULL);
	void *sep2 = fx_malloc(a, req(f, 512), NULL);

	fx_free(a, later);
	fx_free(a, whole);
	/* 8 KiB has no run: best fit splits the 12 KiB block, whose 4 KiB
	 * remainder lies before the 4 KiB run's only block. */
	assert_ptr_equal(fx_malloc(a, req(f, 8192), NULL), whole);
	fx_check(a);
	assert_ptr_equal(fx_malloc(a, req(f, 4096), NULL), (char *)whole + 8192);
	assert_ptr_equal(fx_malloc(a, req(f, 4096), NULL), later);
	fx_check(a);
	fx_free(a, (char *)whole + 8192);
	fx_free(a, whole);
	fx_free(a, later);
	fx_free(a, sep1);
	fx_free(a, sep2);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(every_cached_hit_is_the_trees_lower_bound),
		BOTH_FLAVORS(taking_a_runs_first_block_leaves_the_next_one_first),
		BOTH_FLAVORS(a_merge_takes_run_blocks_out_of_the_index),
		BOTH_FLAVORS(a_split_remainder_in_front_of_a_run_becomes_its_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
