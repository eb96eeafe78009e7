/*
 * test_stream_map.c - pending-event streams sit where upstream's
 * ska::flat_hash_map puts them, so they are walked in the same order.
 *
 * Keys are c10::Stream::hash(): device type << 56 | device << 48 | id.
 * CUDA: the default stream is id 0, the S-th pool stream id 32(S-1)+3;
 * torch_npu: (3 << 5) | (S-1) on PrivateUse1 (20).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "alloc/core/stream_map.h"

#define CUDA(id) ((UINT64_C(1) << 56) | (id))
#define NPU(id) ((UINT64_C(20) << 56) | (id))

/* Streams are handles; any distinct pointers do. */
static char handle[8];
#define S(n) ((aclrtStream)&handle[n])

/* The trace numbers of the map's streams, in walk order. */
static unsigned walk(struct npa_stream_map *m, int *out)
{
	unsigned n = 0;

	for (size_t i = 0; i < npa_stream_map_end(m); i++) {
		struct npa_event_queue *q = npa_stream_map_at(m, i);

		if (q != NULL)
			out[n++] = (int)((char *)q->stream - handle);
	}
	return n;
}

static void insert(struct npa_stream_map *m, int stream, uint64_t key)
{
	assert_non_null(npa_stream_map_get(m, S(stream), key));
}

static void cuda_streams_0_1_2_3_walk_as_0_3_2_1(void **state)
{
	struct npa_stream_map m = { 0 };
	int order[8];

	(void)state;
	insert(&m, 1, CUDA(3));
	insert(&m, 2, CUDA(35));
	insert(&m, 3, CUDA(67));
	insert(&m, 0, CUDA(0));
	assert_int_equal(m.nslots, 8);
	assert_int_equal(walk(&m, order), 4);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	assert_int_equal(order[3], 1);
	npa_stream_map_fini(&m);
}

static void two_cuda_streams_in_the_first_4_slot_table_walk_3_before_1(void **state)
{
	struct npa_stream_map m = { 0 };
	int order[8];

	(void)state;
	insert(&m, 1, CUDA(3));
	insert(&m, 3, CUDA(67));
	assert_int_equal(m.nslots, 4);
	assert_int_equal(walk(&m, order), 2);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 1);
	npa_stream_map_fini(&m);
}

/* torch_npu: five streams grow the table to 16 slots, where the default
 * stream (id 0) and ids 96..99 land at 10, 15, 9, 3, 13. */
static void npu_streams_0_to_4_walk_as_3_2_0_4_1(void **state)
{
	struct npa_stream_map m = { 0 };
	int order[8];

	(void)state;
	for (int s = 0; s <= 4; s++)
		insert(&m, s, NPU(s ? 96 + s - 1 : 0));
	assert_int_equal(m.nslots, 16);
	assert_int_equal(walk(&m, order), 5);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	assert_int_equal(order[3], 4);
	assert_int_equal(order[4], 1);
	npa_stream_map_fini(&m);
}

/* In 4 slots torch_npu's default stream and stream 2 both hash to slot 2:
 * the later one probes on to slot 3, and erasing the first shifts it back. */
static void a_collision_probes_on_and_erase_shifts_it_back(void **state)
{
	struct npa_stream_map m = { 0 };
	int order[8];

	(void)state;
	insert(&m, 0, NPU(0));
	insert(&m, 2, NPU(97));
	assert_int_equal(m.nslots, 4);
	assert_int_equal(m.slot[2].dist, 0);
	assert_int_equal(m.slot[3].dist, 1);
	npa_stream_map_erase(&m, 2);
	assert_int_equal(m.slot[2].dist, 0);
	assert_ptr_equal(m.slot[2].q.stream, S(2));
	assert_int_equal(walk(&m, order), 1);
	npa_stream_map_fini(&m);
}

static void the_same_stream_is_found_not_inserted_twice(void **state)
{
	struct npa_stream_map m = { 0 };
	struct npa_event_queue *a, *b;

	(void)state;
	a = npa_stream_map_get(&m, S(1), CUDA(3));
	b = npa_stream_map_get(&m, S(1), CUDA(3));
	assert_ptr_equal(a, b);
	assert_int_equal(m.n, 1);
	npa_stream_map_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cuda_streams_0_1_2_3_walk_as_0_3_2_1),
		cmocka_unit_test(two_cuda_streams_in_the_first_4_slot_table_walk_3_before_1),
		cmocka_unit_test(npu_streams_0_to_4_walk_as_3_2_0_4_1),
		cmocka_unit_test(a_collision_probes_on_and_erase_shifts_it_back),
		cmocka_unit_test(the_same_stream_is_found_not_inserted_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
