/*
 * test_sim_streams.c - streams and events on the virtual clock.
 */
#include "sim_fixture.h"

static aclrtEventRecordedStatus status_of(aclrtEvent e)
{
	aclrtEventRecordedStatus st = (aclrtEventRecordedStatus)-1;

	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	return st;
}

#define READY ACL_EVENT_RECORDED_STATUS_COMPLETE
#define NOT_READY ACL_EVENT_RECORDED_STATUS_NOT_READY

static aclrtEvent recorded_on(aclrtStream s)
{
	aclrtEvent e;

	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, s), ACL_SUCCESS);
	return e;
}

static void stream_ids_are_0_for_default_then_1_2_3_in_creation_order(void **state)
{
	aclrtStream a, b, c;

	(void)state;
	assert_int_equal(npusim_stream_id(NULL), 0);
	assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
	assert_int_equal(aclrtSetDevice(1), ACL_SUCCESS);
	assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
	assert_int_equal(npusim_stream_id(a), 1);
	assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
	assert_int_equal(npusim_stream_id(a), UINT64_MAX);
	assert_int_equal(aclrtCreateStream(&c), ACL_SUCCESS);
	assert_int_equal(npusim_stream_id(b), 2);
	assert_int_equal(npusim_stream_id(c), 3);
	aclrtDestroyStream(b);
	aclrtDestroyStream(c);
}

static void each_device_has_a_default_stream_handle_with_id_0(void **state)
{
	aclrtStream d0 = npusim_default_stream(0), d1 = npusim_default_stream(1);
	int32_t id = -1;

	(void)state;
	assert_non_null(d0);
	assert_non_null(d1);
	assert_ptr_not_equal(d0, d1);
	assert_null(npusim_default_stream(2));
	assert_null(npusim_default_stream(-1));
	assert_int_equal(aclrtStreamGetId(d1, &id), ACL_SUCCESS);
	assert_int_equal(id, 0);
	assert_int_equal(npusim_stream_id(d0), 0);
}

/* NULL names the current device's default stream: work launched through
 * one is waited for through the other. */
static void null_and_the_handle_name_one_default_stream(void **state)
{
	aclrtStream d0 = npusim_default_stream(0);
	aclrtEvent e;

	(void)state;
	assert_int_equal(npusim_launch(NULL, 100), ACL_SUCCESS);
	e = recorded_on(d0);
	assert_int_equal(status_of(e), NOT_READY);
	assert_int_equal(aclrtSynchronizeStream(d0), ACL_SUCCESS);
	assert_int_equal(status_of(e), READY);
	assert_int_equal(npusim_now_ns(), 100);
	aclrtDestroyEvent(e);
}

static void a_default_stream_is_never_destroyed(void **state)
{
	(void)state;
	assert_int_equal(aclrtDestroyStream(npusim_default_stream(0)), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(npusim_stream_id(npusim_default_stream(0)), 0);
}

static void create_stream_with_config_takes_torch_npus_flags(void **state)
{
	aclrtStream s;

	(void)state;
	assert_int_equal(aclrtCreateStreamWithConfig(&s, 0,
						     ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC),
			 ACL_SUCCESS);
	assert_int_equal(npusim_stream_id(s), 1);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	assert_int_equal(aclrtCreateStreamWithConfig(&s, 0, 0x80), ACL_ERROR_INVALID_PARAM);
}

static void acl_stream_get_id_gives_the_same_numbers(void **state)
{
	aclrtStream a, b;
	int32_t id = -1;

	(void)state;
	assert_int_equal(aclrtStreamGetId(NULL, &id), ACL_SUCCESS);
	assert_int_equal(id, 0);
	assert_int_equal(aclrtCreateStream(&a), ACL_SUCCESS);
	assert_int_equal(aclrtCreateStream(&b), ACL_SUCCESS);
	assert_int_equal(aclrtStreamGetId(b, &id), ACL_SUCCESS);
	assert_int_equal(id, (int32_t)npusim_stream_id(b));
	assert_int_equal(id, 2);
	assert_int_equal(aclrtStreamGetId(a, NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtDestroyStream(a), ACL_SUCCESS);
	assert_int_equal(aclrtStreamGetId(a, &id), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(id, 2);
	aclrtDestroyStream(b);
}

static void an_event_never_recorded_is_complete(void **state)
{
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void an_event_on_an_idle_stream_is_complete_at_once(void **state)
{
	aclrtEvent e = recorded_on(NULL);

	(void)state;
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void timed_work_of_100ns_completes_when_the_clock_reaches_100(void **state)
{
	aclrtEvent e;

	(void)state;
	assert_int_equal(npusim_launch(NULL, 100), ACL_SUCCESS);
	e = recorded_on(NULL);
	npusim_advance_ns(99);
	assert_int_equal(status_of(e), NOT_READY);
	npusim_advance_ns(1);
	assert_int_equal(npusim_now_ns(), 100);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void work_on_an_idle_stream_starts_now_and_queues_behind_work(void **state)
{
	aclrtEvent e;

	(void)state;
	npusim_advance_ns(1000);
	npusim_launch(NULL, 50);
	npusim_launch(NULL, 25);          /* ends at 1075 */
	e = recorded_on(NULL);
	npusim_advance_ns(74);
	assert_int_equal(status_of(e), NOT_READY);
	npusim_advance_ns(1);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void open_work_blocks_an_event_until_its_stream_is_synchronized(void **state)
{
	aclrtStream s;
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	e = recorded_on(s);
	npusim_advance_ns(1000000000);
	assert_int_equal(status_of(e), NOT_READY);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
	aclrtDestroyStream(s);
}

static void open_work_launched_after_the_record_does_not_block_it(void **state)
{
	aclrtEvent e;

	(void)state;
	e = recorded_on(NULL);
	npusim_launch_open(NULL);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void synchronize_stream_moves_the_clock_to_its_tail(void **state)
{
	aclrtStream s;

	(void)state;
	aclrtCreateStream(&s);
	npusim_launch(s, 500);
	assert_int_equal(npusim_now_ns(), 0);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 500);
	/* The clock never runs backwards. */
	npusim_advance_ns(100);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 600);
	aclrtDestroyStream(s);
}

static void synchronizing_one_stream_leaves_another_stream_open(void **state)
{
	aclrtStream a, b;
	aclrtEvent e;

	(void)state;
	aclrtCreateStream(&a);
	aclrtCreateStream(&b);
	npusim_launch_open(b);
	e = recorded_on(b);
	aclrtSynchronizeStream(a);
	aclrtSynchronizeStream(NULL);
	assert_int_equal(status_of(e), NOT_READY);
	aclrtDestroyEvent(e);
	aclrtDestroyStream(a);
	aclrtDestroyStream(b);
}

static void synchronize_device_ends_every_stream_of_the_current_device_only(void **state)
{
	aclrtStream s0, s1;
	aclrtEvent on_s0, on_default, on_s1;

	(void)state;
	aclrtCreateStream(&s0);
	npusim_launch_open(s0);
	npusim_launch(s0, 300);
	npusim_launch_open(NULL);
	on_s0 = recorded_on(s0);
	on_default = recorded_on(NULL);
	aclrtSetDevice(1);
	aclrtCreateStream(&s1);
	npusim_launch_open(s1);
	on_s1 = recorded_on(s1);
	aclrtSetDevice(0);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 300);
	assert_int_equal(status_of(on_s0), READY);
	assert_int_equal(status_of(on_default), READY);
	assert_int_equal(status_of(on_s1), NOT_READY);
	aclrtDestroyEvent(on_s0);
	aclrtDestroyEvent(on_default);
	aclrtDestroyEvent(on_s1);
	aclrtDestroyStream(s0);
	aclrtDestroyStream(s1);
}

static void synchronize_event_ends_open_work_only_up_to_that_event(void **state)
{
	aclrtStream s;
	aclrtEvent first, second;

	(void)state;
	aclrtCreateStream(&s);
	npusim_launch(s, 300);
	npusim_launch_open(s);
	first = recorded_on(s);
	npusim_launch_open(s);
	second = recorded_on(s);
	assert_int_equal(aclrtSynchronizeEvent(first), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 300);
	assert_int_equal(status_of(first), READY);
	assert_int_equal(status_of(second), NOT_READY);
	aclrtSynchronizeStream(s);
	assert_int_equal(status_of(second), READY);
	aclrtDestroyEvent(first);
	aclrtDestroyEvent(second);
	aclrtDestroyStream(s);
}

static void the_null_stream_is_the_current_devices_default_stream(void **state)
{
	aclrtEvent on_dev1, on_dev0;

	(void)state;
	aclrtSetDevice(1);
	npusim_launch_open(NULL);
	on_dev1 = recorded_on(NULL);
	aclrtSetDevice(0);
	on_dev0 = recorded_on(NULL);
	assert_int_equal(status_of(on_dev0), READY);
	assert_int_equal(status_of(on_dev1), NOT_READY);
	aclrtSynchronizeStream(NULL);           /* device 0's default */
	assert_int_equal(status_of(on_dev1), NOT_READY);
	aclrtSetDevice(1);
	aclrtSynchronizeStream(NULL);
	assert_int_equal(status_of(on_dev1), READY);
	aclrtDestroyEvent(on_dev0);
	aclrtDestroyEvent(on_dev1);
}

static void destroying_a_stream_completes_the_events_recorded_on_it(void **state)
{
	aclrtStream s;
	aclrtEvent e;

	(void)state;
	aclrtCreateStream(&s);
	npusim_launch_open(s);
	npusim_launch(s, 40);
	e = recorded_on(s);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 40);
	assert_int_equal(status_of(e), READY);
	aclrtDestroyEvent(e);
}

static void a_re_recorded_event_tracks_the_new_point(void **state)
{
	aclrtEvent e;

	(void)state;
	e = recorded_on(NULL);
	npusim_launch(NULL, 10);
	assert_int_equal(aclrtRecordEvent(e, NULL), ACL_SUCCESS);
	assert_int_equal(status_of(e), NOT_READY);
	aclrtDestroyEvent(e);
}

static void unknown_handles_are_invalid(void **state)
{
	aclrtStream s;
	aclrtEvent e;
	aclrtEventRecordedStatus st;
	int not_a_handle;

	(void)state;
	aclrtCreateStream(&s);
	aclrtCreateEvent(&e);
	assert_int_equal(aclrtDestroyStream(&not_a_handle), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtSynchronizeStream(&not_a_handle), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(npusim_launch(&not_a_handle, 1), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtRecordEvent(&not_a_handle, s), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtRecordEvent(e, &not_a_handle), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtQueryEventStatus(&not_a_handle, &st), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtSynchronizeEvent(&not_a_handle), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtDestroyEvent(&not_a_handle), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
	aclrtDestroyStream(s);
	aclrtDestroyEvent(e);
}

static void shutdown_frees_streams_and_events_left_behind(void **state)
{
	aclrtStream s;
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, s), ACL_SUCCESS);
	/* stop_sim shuts down; valgrind and ASan see whether they leak. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(stream_ids_are_0_for_default_then_1_2_3_in_creation_order, two_8mib_devices),
		SIM_TEST(acl_stream_get_id_gives_the_same_numbers, two_8mib_devices),
		SIM_TEST(each_device_has_a_default_stream_handle_with_id_0, two_8mib_devices),
		SIM_TEST(null_and_the_handle_name_one_default_stream, two_8mib_devices),
		SIM_TEST(a_default_stream_is_never_destroyed, two_8mib_devices),
		SIM_TEST(create_stream_with_config_takes_torch_npus_flags, two_8mib_devices),
		SIM_TEST(an_event_never_recorded_is_complete, two_8mib_devices),
		SIM_TEST(an_event_on_an_idle_stream_is_complete_at_once, two_8mib_devices),
		SIM_TEST(timed_work_of_100ns_completes_when_the_clock_reaches_100, two_8mib_devices),
		SIM_TEST(work_on_an_idle_stream_starts_now_and_queues_behind_work, two_8mib_devices),
		SIM_TEST(open_work_blocks_an_event_until_its_stream_is_synchronized, two_8mib_devices),
		SIM_TEST(open_work_launched_after_the_record_does_not_block_it, two_8mib_devices),
		SIM_TEST(synchronize_stream_moves_the_clock_to_its_tail, two_8mib_devices),
		SIM_TEST(synchronizing_one_stream_leaves_another_stream_open, two_8mib_devices),
		SIM_TEST(synchronize_device_ends_every_stream_of_the_current_device_only, two_8mib_devices),
		SIM_TEST(synchronize_event_ends_open_work_only_up_to_that_event, two_8mib_devices),
		SIM_TEST(the_null_stream_is_the_current_devices_default_stream, two_8mib_devices),
		SIM_TEST(destroying_a_stream_completes_the_events_recorded_on_it, two_8mib_devices),
		SIM_TEST(a_re_recorded_event_tracks_the_new_point, two_8mib_devices),
		SIM_TEST(unknown_handles_are_invalid, two_8mib_devices),
		SIM_TEST(shutdown_frees_streams_and_events_left_behind, two_8mib_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
