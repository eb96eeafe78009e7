/*
 * test_graph_driver.c - the graph and MemPool driver that ctl/graph,
 * ctl/mempool and the replay share: what a pool handle takes, what a
 * refused use_mem_pool entry leaves for each of its callers, a program's
 * end, and the device a shared graph pool must be on.
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
#include "workload/graph_driver.h"

#include "replay_fixture.h"

#define GiB (1ULL << 30)

static struct fixture *start(int devices)
{
	return start_flavor(&npa_flavor_npu, devices, 8 * GiB);
}

static aclrtStream new_stream(void)
{
	aclrtStream s = NULL;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

/* The use_count of device 0's only pool, 0 when there is none. */
static int use_count(struct fixture *fx)
{
	struct npa_pool_info *p;
	size_t n;

	assert_int_equal(npa_pool_list(fx->a, 0, &p, &n), 0);
	int count = n ? p[0].use_count : 0;
	free(p);
	return count;
}

static void a_pool_handle_is_taken_once_and_shared(void **state)
{
	struct fixture *fx = start(1);
	struct wl_pool_handle h = { 0 }, other = { 0 };

	(void)state;
	struct npa_pool_id first = wl_pool_handle_id(fx->a, &h);
	struct npa_pool_id again = wl_pool_handle_id(fx->a, &h);
	struct npa_pool_id next = wl_pool_handle_id(fx->a, &other);
	assert_true(first.first == 0 && first.second == 1);
	assert_true(npa_pool_id_eq(first, again));
	assert_true(next.first == 0 && next.second == 2);
	stop_fixture(fx);
}

/* A MemPool on device 0 entered for one stream, then entered again for
 * another, refused with upstream's text; the pool's use_count after. */
static int use_count_after_a_refused_begin(enum wl_refusal refusal)
{
	struct fixture *fx = start(1);
	struct wl_mempool m = { 0 };
	char err[NPA_ERRLEN] = "";

	assert_int_equal(wl_mempool_create(fx->a, npa_allocator(fx->a), &m, 0, false, false, NULL, err,
					   sizeof(err)), 0);
	assert_int_equal(wl_mempool_begin(fx->a, &m, new_stream(), 1, refusal, err,
					  sizeof(err)), 0);
	assert_int_equal(wl_mempool_begin(fx->a, &m, new_stream(), 2, refusal, err,
					  sizeof(err)), -EBUSY);
	assert_string_equal(err, "beginAllocateToPool: already recording to mempool_id");
	assert_true(m.routing && m.stream == 1);
	int count = use_count(fx);
	stop_fixture(fx);
	return count;
}

static void a_refused_begin_keeps_the_use_upstream_took(void **state)
{
	(void)state;
	assert_int_equal(use_count_after_a_refused_begin(WL_REFUSAL_AS_UPSTREAM), 3);
}

static void a_refused_begin_undone_gives_the_use_back(void **state)
{
	(void)state;
	assert_int_equal(use_count_after_a_refused_begin(WL_REFUSAL_UNDONE), 2);
}

static void drop_exits_the_routing_and_destroys_the_mempool(void **state)
{
	struct fixture *fx = start(1);
	struct wl_mempool m = { 0 };
	char err[NPA_ERRLEN] = "";

	(void)state;
	assert_int_equal(wl_mempool_create(fx->a, npa_allocator(fx->a), &m, 0, true, false, NULL, err,
					   sizeof(err)), 0);
	assert_int_equal(wl_mempool_begin(fx->a, &m, new_stream(), 1, WL_REFUSAL_UNDONE, err,
					  sizeof(err)), 0);
	wl_mempool_drop(fx->a, &m, err, sizeof(err));
	assert_int_equal(use_count(fx), 0);
	assert_false(m.live || m.routing || m.handle.taken);
	stop_fixture(fx);
}

static void a_pool_of_another_devices_graph_is_refused(void **state)
{
	struct fixture *fx = start(2);
	struct wl_capture c = { .device = 0, .mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL };
	struct npa_graph *g = NULL;
	struct npa_pool_id id;
	char err[NPA_ERRLEN] = "";

	(void)state;
	assert_int_equal(aclrtSetDevice(0), ACL_SUCCESS);
	c.stream = new_stream();
	assert_int_equal(wl_graph_capture_begin(fx->a, npa_allocator(fx->a), &g, &c, err, sizeof(err)), 0);
	assert_int_equal(npa_graph_capture_end(g, c.stream, err, sizeof(err)), 0);
	assert_int_equal(wl_graph_pool_of(g, "g", 0, &id, err, sizeof(err)), 0);
	assert_int_equal(wl_graph_pool_of(g, "g", 1, &id, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "graph g's pool is on device0, not device1");
	npa_graph_free(g);
	stop_fixture(fx);
}

#define TEST(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(a_pool_handle_is_taken_once_and_shared),
		TEST(a_refused_begin_keeps_the_use_upstream_took),
		TEST(a_refused_begin_undone_gives_the_use_back),
		TEST(drop_exits_the_routing_and_destroys_the_mempool),
		TEST(a_pool_of_another_devices_graph_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
