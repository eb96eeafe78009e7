/*
 * test_sim_events.c - event handles: what is refused once an event is
 * gone, and what stays true of events whose memory is reused.
 */
#include "sim_fixture.h"

#define READY ACL_EVENT_RECORDED_STATUS_COMPLETE
#define NOT_READY ACL_EVENT_RECORDED_STATUS_NOT_READY

static aclrtEventRecordedStatus status_of(aclrtEvent e)
{
	aclrtEventRecordedStatus st = (aclrtEventRecordedStatus)-1;

	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	return st;
}

static void assert_refused(aclrtEvent e)
{
	aclrtEventRecordedStatus st;

	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtRecordEvent(e, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtSynchronizeEvent(e), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtDestroyEvent(e), ACL_ERROR_INVALID_PARAM);
}

static void a_destroyed_event_is_refused_by_every_event_call(void **state)
{
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
	assert_refused(e);
}

static void a_stale_handle_is_refused_after_its_memory_serves_a_new_event(void **state)
{
	aclrtEvent old, fresh;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&old), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyEvent(old), ACL_SUCCESS);
	assert_int_equal(aclrtCreateEvent(&fresh), ACL_SUCCESS);
	assert_ptr_not_equal(fresh, old);
	npusim_launch(NULL, 50);
	assert_int_equal(aclrtRecordEvent(fresh, NULL), ACL_SUCCESS);
	assert_refused(old);
	/* The refusals left the new event as it was. */
	assert_int_equal(status_of(fresh), NOT_READY);
	assert_int_equal(aclrtDestroyEvent(fresh), ACL_SUCCESS);
}

static void an_event_from_before_a_restart_is_refused(void **state)
{
	aclrtEvent before, after;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&before), ACL_SUCCESS);
	npusim_shutdown();
	start_sim(2, 8 * MiB);
	assert_int_equal(aclrtCreateEvent(&after), ACL_SUCCESS);
	assert_ptr_not_equal(after, before);
	assert_refused(before);
	assert_int_equal(status_of(after), READY);
	assert_int_equal(aclrtDestroyEvent(after), ACL_SUCCESS);
}

static void a_reused_event_starts_unrecorded(void **state)
{
	aclrtEvent e;

	(void)state;
	npusim_launch(NULL, 100);
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, NULL), ACL_SUCCESS);
	assert_int_equal(status_of(e), NOT_READY);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(status_of(e), READY);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

/* 3000 live events span three chunks of 1024 slots. */
static void three_thousand_live_events_are_each_their_own(void **state)
{
	enum { N = 3000 };
	static aclrtEvent e[N];

	(void)state;
	for (int i = 0; i < N; i++) {
		assert_int_equal(aclrtCreateEvent(&e[i]), ACL_SUCCESS);
		npusim_launch(NULL, 1);
		assert_int_equal(aclrtRecordEvent(e[i], NULL), ACL_SUCCESS);
	}
	/* Event i ends at i + 1 ns: at 1500 ns the first 1500 are complete. */
	npusim_advance_ns(1500);
	for (int i = 0; i < N; i++)
		assert_int_equal(status_of(e[i]), i < 1500 ? READY : NOT_READY);
	for (int i = 0; i < N; i++)
		assert_int_equal(aclrtDestroyEvent(e[i]), ACL_SUCCESS);
	for (int i = 0; i < N; i++)
		assert_int_equal(aclrtDestroyEvent(e[i]), ACL_ERROR_INVALID_PARAM);
}

static void an_event_on_a_destroyed_stream_stays_complete_when_a_new_stream_takes_its_place(void **state)
{
	aclrtStream gone, next;
	aclrtEvent on_gone, on_next;

	(void)state;
	assert_int_equal(aclrtCreateStream(&gone), ACL_SUCCESS);
	npusim_launch_open(gone);
	assert_int_equal(aclrtCreateEvent(&on_gone), ACL_SUCCESS);
	npusim_launch_open(gone);
	npusim_launch_open(gone);
	assert_int_equal(aclrtRecordEvent(on_gone, gone), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyStream(gone), ACL_SUCCESS);
	/* The next stream may live where the old one did, with open work
	 * that has not ended: the old event must not wait for it. */
	assert_int_equal(aclrtCreateStream(&next), ACL_SUCCESS);
	npusim_launch_open(next);
	assert_int_equal(status_of(on_gone), READY);
	assert_int_equal(aclrtCreateEvent(&on_next), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(on_next, next), ACL_SUCCESS);
	assert_int_equal(status_of(on_next), NOT_READY);
	aclrtDestroyEvent(on_gone);
	aclrtDestroyEvent(on_next);
	aclrtDestroyStream(next);
}

static void synchronizing_a_complete_event_leaves_the_clock(void **state)
{
	aclrtEvent e;

	(void)state;
	npusim_launch(NULL, 30);
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, NULL), ACL_SUCCESS);
	npusim_launch(NULL, 70);
	assert_int_equal(aclrtSynchronizeEvent(e), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 30);
	assert_int_equal(aclrtSynchronizeEvent(e), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 30);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(a_destroyed_event_is_refused_by_every_event_call, two_8mib_devices),
		SIM_TEST(a_stale_handle_is_refused_after_its_memory_serves_a_new_event, two_8mib_devices),
		SIM_TEST(an_event_from_before_a_restart_is_refused, two_8mib_devices),
		SIM_TEST(a_reused_event_starts_unrecorded, two_8mib_devices),
		SIM_TEST(three_thousand_live_events_are_each_their_own, two_8mib_devices),
		SIM_TEST(an_event_on_a_destroyed_stream_stays_complete_when_a_new_stream_takes_its_place, two_8mib_devices),
		SIM_TEST(synchronizing_a_complete_event_leaves_the_clock, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
