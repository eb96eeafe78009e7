/*
 * test_sim_stress.c - many threads allocating, copying, freeing and
 * recording events at once. Run under TSan to check the locking.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

/*
 * One thread re-records an event behind ever more work while others query
 * it, which takes no lock: the clock stays at 0, so once the first record
 * is seen every answer must be a successful NOT_READY. Under TSan this is
 * the race between the lock-free reader and the writer.
 */
#define RECORDS 20000

struct shared_event {
	aclrtStream stream;
	aclrtEvent event;
	atomic_int recorded;
	atomic_int done;
};

static void *rerecord(void *arg)
{
	struct shared_event *x = arg;

	for (int r = 0; r < RECORDS; r++) {
		npusim_launch(x->stream, 10);
		npusim_launch_open(x->stream);
		aclrtRecordEvent(x->event, x->stream);
		atomic_store(&x->recorded, 1);
	}
	atomic_store(&x->done, 1);
	return NULL;
}

static void *query(void *arg)
{
	struct shared_event *x = arg;
	aclrtEventRecordedStatus st;
	intptr_t wrong = 0;

	while (!atomic_load(&x->recorded))
		;
	while (!atomic_load(&x->done))
		if (aclrtQueryEventStatus(x->event, &st) != ACL_SUCCESS ||
		    st != ACL_EVENT_RECORDED_STATUS_NOT_READY)
			wrong++;
	return (void *)wrong;
}

static void queries_racing_records_never_see_a_recorded_event_complete(void **state)
{
	struct shared_event x = { 0 };
	pthread_t w, q[THREADS - 1];
	void *wrong;

	(void)state;
	assert_int_equal(aclrtCreateStream(&x.stream), ACL_SUCCESS);
	assert_int_equal(aclrtCreateEvent(&x.event), ACL_SUCCESS);
	for (int i = 0; i < THREADS - 1; i++)
		pthread_create(&q[i], NULL, query, &x);
	pthread_create(&w, NULL, rerecord, &x);
	pthread_join(w, NULL);
	for (int i = 0; i < THREADS - 1; i++) {
		pthread_join(q[i], &wrong);
		assert_int_equal((intptr_t)wrong, 0);
	}
	assert_int_equal(npusim_now_ns(), 0);
	assert_int_equal(aclrtDestroyEvent(x.event), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyStream(x.stream), ACL_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(four_threads_on_two_devices_keep_data_and_counts_straight, two_64mib_devices),
		SIM_TEST(queries_racing_records_never_see_a_recorded_event_complete, two_64mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
