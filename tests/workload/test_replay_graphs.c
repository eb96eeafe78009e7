/*
 * test_replay_graphs.c - graph captures and MemPools in a replayed trace,
 * in both flavors: upstream's numbers (test_graph_two_successive,
 * test_mempool_destructor, MemPool use_count) reached through trace lines,
 * and upstream's refusals stopping the replay at their line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <npumemfs/npusim.h>
#include "alloc/device/mempool.h"
#include "workload/replay.h"

#include "replay_fixture.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define SMALL_SEGMENT 2097152 /* kSmallBuffer */
/* 64 MiB - 512: a block of 64 MiB in both flavors (npu pads 32 bytes). */
#define ALMOST_64MIB "67108352"

#define FLAVOR(state) ((const struct npa_flavor *)*(state))
#define NPU(state) (FLAVOR(state)->upstream == NPA_UPSTREAM_TORCH_NPU)

static struct fixture *start(const struct npa_flavor *flavor)
{
	return start_flavor(flavor, 1, 8 * GiB);
}

/* Run events [from, to) of the trace, which must go well. */
static void run(struct fixture *fx, size_t from, size_t to)
{
	if (wl_replay_run(fx->r, from, to, NULL, fx->err, sizeof(fx->err)) != 0)
		fail_msg("replay: %s", fx->err);
}

static int64_t reserved(struct fixture *fx)
{
	struct npa_stats s;

	assert_int_equal(npa_get_stats(fx->a, 0, &s), 0);
	return s.reserved_bytes[NPA_STAT_ALL].current;
}

/* The private pools of device 0; free() the result. */
static struct npa_pool_info *pools(struct fixture *fx, size_t *n)
{
	struct npa_pool_info *p;

	assert_int_equal(npa_pool_list(fx->a, 0, &p, n), 0);
	return p;
}

static int use_count(struct fixture *fx)
{
	size_t n;
	struct npa_pool_info *p = pools(fx, &n);
	int count = n ? p[0].use_count : 0;

	assert_int_equal(n, 1);
	free(p);
	return count;
}

/* b = func_with_temps(b, 1) as test_alloc_graphs.c has it: (t.clone() + v)
 * + (t.clone() + v), temporaries freed as Python drops them. */
static size_t func_with_temps(char *buf, size_t len, size_t n, unsigned *id, unsigned t)
{
	unsigned x1 = (*id)++, y1 = (*id)++, x2 = (*id)++, y2 = (*id)++, out = (*id)++;

	n += (size_t)snprintf(buf + n, len - n,
			      "alloc t%u 4000 stream=1\nalloc t%u 4000 stream=1\nfree t%u\n"
			      "alloc t%u 4000 stream=1\nalloc t%u 4000 stream=1\nfree t%u\n"
			      "alloc t%u 4000 stream=1\nfree t%u\nfree t%u\nfree t%u\n",
			      x1, y1, x1, x2, y2, x2, out, y1, y2, t);
	return n;
}

/* One graph of test_graph_two_successive: a clone, then func 5 times. */
static size_t one_graph(char *buf, size_t len, size_t n, unsigned *id, const char *opts)
{
	unsigned b = (*id)++;

	n += (size_t)snprintf(buf + n, len - n, "capture_begin 1%s\nalloc t%u 4000 stream=1\n",
			      opts, b);
	for (int i = 0; i < 5; i++) {
		unsigned next = *id + 4;
		n = func_with_temps(buf, len, n, id, b);
		b = next;
	}
	return n + (size_t)snprintf(buf + n, len - n, "capture_end 1\n");
}

/* test_graph_two_successive's two graphs, each capture_begin with its
 * own options; the bytes reserved at the end. */
static int64_t two_captures(const struct npa_flavor *flavor, const char *first,
			    const char *second)
{
	static char text[8192];
	unsigned id = 0;
	size_t n = (size_t)snprintf(text, sizeof(text), "alloc in 4000\n");
	struct fixture *fx = start(flavor);

	n = one_graph(text, sizeof(text), n, &id, first);
	one_graph(text, sizeof(text), n, &id, second);
	load(fx, text);
	run_all(fx);
	int64_t bytes = reserved(fx);
	stop_fixture(fx);
	return bytes;
}

static int64_t two_successive(const struct npa_flavor *flavor, bool share)
{
	const char *pool = share ? " pool=P" : "";

	return two_captures(flavor, pool, pool);
}

/* g1.capture_begin(pool=g0.pool()): the second graph shares the first's. */
static void pool_graph_g_shares_that_graphs_pool(void **state)
{
	assert_int_equal(two_captures(FLAVOR(state), " graph=g0", " graph=g1 pool=graph:g0"),
			 4194304);
}

/* pool=handle:P is the handle bare pool=P keeps. */
static void pool_handle_h_is_the_bare_pool_name(void **state)
{
	assert_int_equal(two_captures(FLAVOR(state), " pool=P", " pool=handle:P"), 4194304);
}

static void two_graphs_sharing_a_pool_save_one_small_segment(void **state)
{
	int64_t unshared = two_successive(FLAVOR(state), false);
	int64_t shared = two_successive(FLAVOR(state), true);

	/* upstream: reserved(no sharing) - reserved(sharing) == kSmallBuffer */
	assert_int_equal(unshared - shared, SMALL_SEGMENT);
	assert_int_equal(shared, 2 * SMALL_SEGMENT);
}

/* MemPool use_count: 1 made, 2 inside use_mem_pool, 1 after it. */
static void use_mem_pool_takes_a_use_and_gives_it_back(void **state)
{
	struct fixture *fx = start(FLAVOR(state));

	load(fx, "mempool_create m\nmempool_begin m stream=1\nalloc a 1MiB stream=1\n"
		 "alloc b 3MiB\nmempool_end m\nfree a\nfree b\n");
	run(fx, 0, 1);
	assert_int_equal(use_count(fx), 1);
	run(fx, 1, 4);
	assert_int_equal(use_count(fx), 2);
	size_t n;
	struct npa_pool_info *p = pools(fx, &n);
	/* Only stream 1's allocation went to the pool. */
	assert_true(p[0].allocated_bytes >= 1 * MiB && p[0].allocated_bytes < 2 * MiB);
	free(p);
	run(fx, 4, 5);
	assert_int_equal(use_count(fx), 1);
	stop_fixture(fx);
}

/* The trace holds 64 MiB after its first `held` events, nothing and no
 * pool after the rest. */
static void holds_64_mib_until_the_end(void **state, const char *text, size_t held)
{
	struct fixture *fx = start(FLAVOR(state));
	size_t n;

	load(fx, text);
	run(fx, 0, held);
	assert_int_equal(reserved(fx), 64 * MiB);
	run(fx, held, fx->t->nevents);
	assert_int_equal(reserved(fx), 0);
	free(pools(fx, &n));
	assert_int_equal(n, 0);
	stop_fixture(fx);
}

/* test_mempool_destructor: a live MemPool keeps its memory through
 * empty_cache; its destructor gives it back. */
static void a_live_mempool_keeps_its_memory_through_empty_cache(void **state)
{
	holds_64_mib_until_the_end(state, "mempool_create m\nmempool_begin m stream=1\n"
				   "alloc a " ALMOST_64MIB " stream=1\nmempool_end m\nfree a\n"
				   "empty_cache\nmempool_release m\n", 6);
}

static void graph_reset_lets_empty_cache_free_the_pool(void **state)
{
	holds_64_mib_until_the_end(state, "capture_begin 1 graph=g\n"
				   "alloc a " ALMOST_64MIB " stream=1\ncapture_end 1\nfree a\n"
				   "empty_cache\ngraph_reset g\nempty_cache\n", 5);
}

/* The end of a loop frees graphs and mempools: the run again takes new
 * handles and holds what the first run held. */
static void release_all_gives_graphs_and_mempools_back(void **state)
{
	struct fixture *fx = start(FLAVOR(state));
	size_t n;

	load(fx, "mempool_create m\nmempool_begin m stream=2\nalloc b 3MiB stream=2\n"
		 "mempool_end m\ncapture_begin 1 pool=m\nalloc a 5MiB stream=1\ncapture_end 1\n"
		 "capture_begin 1 pool=P\nalloc c 1MiB stream=1\ncapture_end 1\n"
		 "mempool_create n\nmempool_begin n stream=3\nalloc d 1MiB stream=3\n");
	run_all(fx);
	int64_t first = reserved(fx);
	wl_replay_release_all(fx->r);
	assert_int_equal(npa_empty_cache(fx->a, 0), 0);
	assert_int_equal(reserved(fx), 0);
	free(pools(fx, &n));
	assert_int_equal(n, 0);
	run_all(fx);
	assert_int_equal(reserved(fx), first);
	struct npa_pool_info *p = pools(fx, &n);
	assert_int_equal(n, 3);
	/* MemPool() and graph_pool_handle() count on from (0,3). */
	assert_true(p[0].id.first == 0 && p[0].id.second == 4);
	assert_true(p[2].id.first == 0 && p[2].id.second == 6);
	free(p);
	stop_fixture(fx);
}

/* The replay stops at the line upstream refuses, with upstream's text. */
static void refused(void **state, const char *text, const char *want)
{
	struct fixture *fx = start(FLAVOR(state));

	load(fx, text);
	assert_int_not_equal(wl_replay_run(fx->r, 0, fx->t->nevents, NULL, fx->err,
					   sizeof(fx->err)), 0);
	assert_string_equal(fx->err, want);
	stop_fixture(fx);
}

static void a_capture_on_the_default_stream_is_refused(void **state)
{
	refused(state, "alloc a 1\ncapture_begin 0\n",
		NPU(state) ? "t:2: NPU graphs must be captured on a non-default stream. "
			     "(However, after capture, it's ok to replay them on the default stream.)"
			   : "t:2: CUDA graphs must be captured on a non-default stream. "
			     "(However, after capture, it's ok to replay them on the default stream.)");
}

static void a_second_mempool_begin_is_refused(void **state)
{
	refused(state, "mempool_create m\nmempool_begin m stream=1\nmempool_begin m stream=2\n",
		"t:3: beginAllocateToPool: already recording to mempool_id");
}

static void a_mempool_end_without_begin_is_refused(void **state)
{
	refused(state, "mempool_create m\nmempool_end m\n",
		"t:2: endAllocatePool: not currently recording to mempool_id");
}

static void a_second_capture_of_a_graph_is_refused(void **state)
{
	refused(state, "capture_begin 1 graph=g\ncapture_end 1\ncapture_begin 2 graph=g\n",
		NPU(state) ? "t:3: This NPUGraph instance already owns a captured graph. To "
			     "capture a new graph, create a new instance."
			   : "t:3: This CUDAGraph instance already owns a captured graph. To "
			     "capture a new graph, create a new instance.");
}

static void a_replay_after_reset_is_refused(void **state)
{
	refused(state, "capture_begin 1 graph=g\ncapture_end 1\ngraph_replay g\ngraph_reset g\n"
		       "graph_replay g stream=1\n",
		NPU(state) ? "t:5: Called NPUGraph::replay without a preceding successful capture."
			   : "t:5: Called CUDAGraph::replay without a preceding successful capture.");
}

/* npu: empty_cache's device synchronization is refused by the runtime;
 * cuda: captures_underway is not empty. */
static void empty_cache_during_a_capture_is_refused(void **state)
{
	refused(state, "alloc a 4096\nfree a\ncapture_begin 1\nempty_cache\n",
		"t:4: empty_cache failed: refused while a capture is under way on the device");
}

/* g1.capture_begin(pool=g0.pool()) while g0 still captures. */
static void the_pool_of_a_graph_still_capturing_is_refused(void **state)
{
	refused(state, "capture_begin 1 graph=g0\ncapture_begin 2 graph=g1 pool=graph:g0\n",
		NPU(state) ? "t:2: Called NPUGraph::pool() without a preceding successful capture."
			   : "t:2: Called CUDAGraph::pool() without a preceding successful capture.");
}

/* A reset graph captures again, into a new pool of its own. */
static void a_reset_graph_captures_again(void **state)
{
	struct fixture *fx = start(FLAVOR(state));

	load(fx, "capture_begin 1 graph=g\nalloc a 1MiB stream=1\ncapture_end 1\nfree a\n"
		 "graph_reset g\ncapture_begin 1 graph=g\nalloc b 1MiB stream=1\ncapture_end 1\n"
		 "graph_replay g\nsync\n");
	run_all(fx);
	size_t n;
	struct npa_pool_info *p = pools(fx, &n);
	assert_int_equal(n, 2);
	assert_true(p[0].freeable && !p[1].freeable);
	assert_true(p[1].id.first == 2 && p[1].id.second == 0);
	free(p);
	stop_fixture(fx);
}

#define BOTH(fn)                                                                       \
	{ #fn "/npu", fn, NULL, teardown, (void *)&npa_flavor_npu },                    \
	{ #fn "/cuda", fn, NULL, teardown, (void *)&npa_flavor_cuda }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(two_graphs_sharing_a_pool_save_one_small_segment),
		BOTH(pool_graph_g_shares_that_graphs_pool),
		BOTH(pool_handle_h_is_the_bare_pool_name),
		BOTH(use_mem_pool_takes_a_use_and_gives_it_back),
		BOTH(a_live_mempool_keeps_its_memory_through_empty_cache),
		BOTH(graph_reset_lets_empty_cache_free_the_pool),
		BOTH(release_all_gives_graphs_and_mempools_back),
		BOTH(a_capture_on_the_default_stream_is_refused),
		BOTH(a_second_mempool_begin_is_refused),
		BOTH(a_mempool_end_without_begin_is_refused),
		BOTH(a_second_capture_of_a_graph_is_refused),
		BOTH(a_replay_after_reset_is_refused),
		BOTH(empty_cache_during_a_capture_is_refused),
		BOTH(a_reset_graph_captures_again),
		BOTH(the_pool_of_a_graph_still_capturing_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
