/*
 * test_sim_stress.c - many threads allocating, copying, freeing and
 * recording events at once. Run under TSan to check the locking.
 */
#include <pthread.h>
#include <string.h>

#include "sim_fixture.h"

#define THREADS 4
#define ROUNDS 2000
#define SLOTS 8

struct worker {
	int device;
	uint64_t seed;
	int bad_copies;
	int mallocs;
};

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned char *slot[SLOTS] = { 0 };
	unsigned char in[64], out[64];
	aclrtStream s;
	aclrtEvent e;

	aclrtSetDevice(w->device);
	aclrtCreateStream(&s);
	aclrtCreateEvent(&e);
	for (int r = 0; r < ROUNDS; r++) {
		int i = (int)(next_rand(&w->seed) % SLOTS);

		if (slot[i]) {
			aclrtMemcpy(out, 64, slot[i], 64, ACL_MEMCPY_DEVICE_TO_HOST);
			memset(in, i + w->device * 16, 64);
			w->bad_copies += memcmp(in, out, 64) != 0;
			aclrtFree(slot[i]);
			slot[i] = NULL;
		} else if (aclrtMalloc((void **)&slot[i], 1 + next_rand(&w->seed) % (3 * MiB), 0) == ACL_SUCCESS) {
			w->mallocs++;
			memset(in, i + w->device * 16, 64);
			aclrtMemcpy(slot[i], 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE);
		} else {
			slot[i] = NULL;
		}
		npusim_launch(s, 10);
		aclrtRecordEvent(e, s);
		if (r % 64 == 0)
			aclrtSynchronizeStream(s);
	}
	for (int i = 0; i < SLOTS; i++)
		if (slot[i])
			aclrtFree(slot[i]);
	aclrtDestroyEvent(e);
	aclrtDestroyStream(s);
	return NULL;
}

static int two_64mib_devices(void **state)
{
	(void)state;
	start_sim(2, 64 * MiB);
	return 0;
}

static void four_threads_on_two_devices_keep_data_and_counts_straight(void **state)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];
	struct npusim_counters c[2];
	int mallocs = 0;

	(void)state;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .device = i % 2, .seed = 0x9e3779b9u * (i + 1) };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].bad_copies, 0);
		mallocs += w[i].mallocs;
	}
	for (int d = 0; d < 2; d++) {
		assert_int_equal(npusim_device_counters(d, &c[d]), 0);
		assert_int_equal(c[d].used, 0);
		assert_int_equal(c[d].live_allocations, 0);
		assert_int_equal(c[d].malloc_calls, c[d].free_calls);
		assert_int_equal(c[d].malloc_bytes, c[d].free_bytes);
		assert_true(c[d].peak_used <= 64 * MiB);
	}
	assert_int_equal(c[0].malloc_calls + c[1].malloc_calls, mallocs);
	assert_true(mallocs > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(four_threads_on_two_devices_keep_data_and_counts_straight, two_64mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
