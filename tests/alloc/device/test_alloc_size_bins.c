/*
 * Best fit through the size bins (size_bins.h): every cached hit hands out
 * the lower bound of upstream's pool order, the first free block of the
 * request's stream at or above its size, lowest address first. A random
 * trace compares each malloc with the lower bound found by looking at
 * every block of every segment, not through the bins; one test per way the
 * first block of a size changes (taken, merged away, a split remainder in
 * front of it) and per edge of a bin pins the rest. A stream's bins come
 * with its first segment in a pool and go with its last; when they cannot
 * be made, the malloc fails and nothing changes.
 */
#include <errno.h>
#include <stdlib.h>

#include "alloc_fixture.h"
#include "alloc/device/devices.h"

#define STEPS 3000
#define LIVE 96

/* A request that rounds to exactly `bytes` (a multiple of 512). */
static size_t req(const struct npa_flavor *f, size_t bytes)
{
	return bytes - f->pad;
}

/* Free in its pool: what upstream's BlockPool::blocks would hold. */
static bool pooled(const struct npa_block *b)
{
	return !b->allocated && b->event_count == 0 && b->nuses == 0 && b->mapped;
}

/* The lower bound of (stream, size, 0) among every segment's blocks. */
static struct npa_block *scan_lower_bound(struct npa_device *dev, struct npa_pool *pool,
					  aclrtStream stream, size_t size)
{
	struct npa_block *best = NULL;
	struct npa_segment *seg;

	RB_FOREACH(seg, npa_segment_tree, &dev->segments) {
		for (struct npa_block *b = seg->head; b != NULL; b = b->next) {
			if (b->pool != pool || b->stream != stream || !pooled(b) || b->size < size)
				continue;
			if (best == NULL || b->size < best->size ||
			    (b->size == best->size && b->ptr < best->ptr))
				best = b;
		}
	}
	return best;
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
	struct npa_block *b = scan_lower_bound(dev, pool, stream, size);
	npa_lock_release(&dev->lock);
	return b != NULL ? b->ptr : NULL;
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

static void every_cached_hit_is_the_pools_lower_bound(void **state)
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

static void taking_the_first_block_of_a_size_leaves_the_next_one_first(void **state)
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

static void a_merged_block_leaves_the_bins_of_its_parts(void **state)
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

static void a_split_remainder_in_front_of_a_size_comes_first(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	void *whole = fx_malloc(a, req(f, 12288), NULL);
	void *sep1 = fx_malloc(a, req(f, 512), NULL);
	void *later = fx_malloc(a, req(f, 4096), NULL);
	void *sep2 = fx_malloc(a, req(f, 512), NULL);

	fx_free(a, later);
	fx_free(a, whole);
	/* No 8 KiB block: best fit splits the 12 KiB block, whose 4 KiB
	 * remainder lies before the only other 4 KiB block. */
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

/*
 * Above 1 MiB a bin holds a range of sizes (64 KiB wide from 2 to 4 MiB):
 * a request between two of them takes the larger, and one above both
 * takes the first block of the next bin holding any.
 */
static void a_request_inside_a_bin_of_sizes_takes_the_first_block_large_enough(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	const size_t sep_bytes = MiB + 512;
	void *three = fx_malloc(a, req(f, 3 * MiB), NULL);
	void *sep1 = fx_malloc(a, req(f, sep_bytes), NULL);
	void *wider = fx_malloc(a, req(f, 3 * MiB + 32 * KiB), NULL);
	void *sep2 = fx_malloc(a, req(f, sep_bytes), NULL);
	void *five = fx_malloc(a, req(f, 5 * MiB), NULL);
	void *sep3 = fx_malloc(a, req(f, sep_bytes), NULL);

	assert_int_equal(npa_bin_of(3 * MiB), npa_bin_of(3 * MiB + 32 * KiB));
	assert_int_not_equal(npa_bin_of(3 * MiB + 48 * KiB), npa_bin_of(5 * MiB));
	fx_free(a, three);
	fx_free(a, wider);
	fx_free(a, five);
	fx_check(a);
	assert_ptr_equal(fx_malloc(a, req(f, 3 * MiB + 16 * KiB), NULL), wider);
	assert_ptr_equal(fx_malloc(a, req(f, 3 * MiB + 48 * KiB), NULL), five);
	assert_ptr_equal(fx_malloc(a, req(f, 3 * MiB), NULL), three);
	fx_check(a);
	void *all[] = { three, wider, five, sep1, sep2, sep3 };
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
		fx_free(a, all[k]);
	fx_stop(a);
}

/* Streams with bins in the small pool of device 0. */
static size_t small_pool_streams(struct npa *a)
{
	struct npa_device *dev = &a->dev[0];

	npa_device_lock(dev);
	size_t n = dev->small.nstreams;
	npa_lock_release(&dev->lock);
	return n;
}

static void a_streams_bins_come_with_its_first_segment_and_go_with_its_last(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	aclrtStream s;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(small_pool_streams(a), 0);
	void *p = fx_malloc(a, req(f, 4096), s);
	/* A second segment of the stream: 2 MiB do not fit beside p. */
	void *q = fx_malloc(a, req(f, MiB), s);
	void *r = fx_malloc(a, req(f, MiB), s);
	assert_int_equal(small_pool_streams(a), 1);
	fx_free(a, p);
	fx_free(a, q);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	/* r's segment is still there, so are the bins. */
	assert_int_equal(small_pool_streams(a), 1);
	fx_check(a);
	fx_free(a, r);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(small_pool_streams(a), 0);
	fx_check(a);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	fx_stop(a);
}

#define NSTREAMS 40

/* Each of many streams finds its own block: the pool's streams are kept
 * in address order and searched, not scanned. */
static void each_of_many_streams_takes_back_its_own_block(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	aclrtStream s[NSTREAMS];
	void *p[NSTREAMS], *sep[NSTREAMS];

	for (int i = 0; i < NSTREAMS; i++) {
		assert_int_equal(aclrtCreateStream(&s[i]), ACL_SUCCESS);
		p[i] = fx_malloc(a, req(f, 4096), s[i]);
		sep[i] = fx_malloc(a, req(f, 512), s[i]);
	}
	for (int i = 0; i < NSTREAMS; i++)
		fx_free(a, p[i]);
	assert_int_equal(small_pool_streams(a), NSTREAMS);
	fx_check(a);
	for (int i = NSTREAMS - 1; i >= 0; i--)
		assert_ptr_equal(fx_malloc(a, req(f, 4096), s[i]), p[i]);
	fx_check(a);
	for (int i = 0; i < NSTREAMS; i++) {
		fx_free(a, p[i]);
		fx_free(a, sep[i]);
	}
	for (int i = 0; i < NSTREAMS; i++)
		assert_int_equal(aclrtSynchronizeStream(s[i]), ACL_SUCCESS);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	assert_int_equal(small_pool_streams(a), 0);
	for (int i = 0; i < NSTREAMS; i++)
		assert_int_equal(aclrtDestroyStream(s[i]), ACL_SUCCESS);
	fx_stop(a);
}

/* calloc of a stream's bins fails while this is set (see main). */
static bool fail_bins;

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_bins && n == 1 && size == sizeof(struct npa_stream_bins))
		return NULL;
	return __real_calloc(n, size);
}

static void a_segment_whose_bins_cannot_be_made_is_given_back(void **state)
{
	const struct npa_flavor *f = FLAVOR(state);
	struct npa *a = fx_start_device_segments(f, 1 * GiB, NULL);
	struct npusim_counters before = fx_device();
	char err[NPA_ERRLEN] = "";
	void *p = NULL;

	fail_bins = true;
	int rc = npa_malloc(a, 0, req(f, 4096), NULL, &p, err, sizeof(err));
	fail_bins = false;
	assert_int_equal(rc, -ENOMEM);
	assert_string_equal(err, "out of host memory for allocator bookkeeping");
	struct npusim_counters after = fx_device();
	assert_int_equal(after.live_allocations, before.live_allocations);
	assert_int_equal(after.used, before.used);
	struct npa_stats st = fx_stats(a);
	assert_int_equal(st.reserved_bytes[NPA_STAT_ALL].current, 0);
	assert_int_equal(st.segment[NPA_STAT_ALL].current, 0);
	assert_int_equal(st.allocation[NPA_STAT_ALL].current, 0);
	assert_int_equal(small_pool_streams(a), 0);
	fx_check(a);
	/* Memory back, the same malloc works. */
	p = fx_malloc(a, req(f, 4096), NULL);
	assert_int_equal(small_pool_streams(a), 1);
	fx_free(a, p);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(every_cached_hit_is_the_pools_lower_bound),
		BOTH_FLAVORS(taking_the_first_block_of_a_size_leaves_the_next_one_first),
		BOTH_FLAVORS(a_merged_block_leaves_the_bins_of_its_parts),
		BOTH_FLAVORS(a_split_remainder_in_front_of_a_size_comes_first),
		BOTH_FLAVORS(a_request_inside_a_bin_of_sizes_takes_the_first_block_large_enough),
		BOTH_FLAVORS(a_streams_bins_come_with_its_first_segment_and_go_with_its_last),
		BOTH_FLAVORS(each_of_many_streams_takes_back_its_own_block),
		BOTH_FLAVORS(a_segment_whose_bins_cannot_be_made_is_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
