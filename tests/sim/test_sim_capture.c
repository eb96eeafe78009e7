/*
 * test_sim_capture.c - graph capture: status and ids, what a capture
 * refuses, recorded work and copies replayed by aclmdlRIExecuteAsync.
 */
#include <pthread.h>
#include <string.h>

#include <acl/acl_mdl.h>

#include "sim_fixture.h"

#define NONE ACL_MODEL_RI_CAPTURE_STATUS_NONE
#define ACTIVE ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
#define INVALIDATED ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
#define GLOBAL ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
#define THREAD_LOCAL ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL
#define RELAXED ACL_MODEL_RI_CAPTURE_MODE_RELAXED

static aclrtStream new_stream(void)
{
	aclrtStream s;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	return s;
}

static aclmdlRICaptureStatus status_of(aclrtStream s)
{
	aclmdlRICaptureStatus st = (aclmdlRICaptureStatus)-1;

	assert_int_equal(aclmdlRICaptureGetInfo(s, &st, NULL), ACL_SUCCESS);
	return st;
}

static uint32_t id_of(aclmdlRI m)
{
	uint32_t id = 0;

	assert_int_equal(aclmdlRIGetId(m, &id), ACL_SUCCESS);
	return id;
}

static aclmdlRI end_capture(aclrtStream s)
{
	aclmdlRI m = NULL;

	assert_int_equal(aclmdlRICaptureEnd(s, &m), ACL_SUCCESS);
	assert_non_null(m);
	return m;
}

/* The capture on s was invalidated: its end fails, gives no model and
 * leaves the stream free to capture again. */
static void assert_capture_invalidated(aclrtStream s)
{
	aclmdlRI m = (aclmdlRI)1;

	assert_int_equal(status_of(s), INVALIDATED);
	assert_int_equal(aclmdlRICaptureEnd(s, &m), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	assert_null(m);
	assert_int_equal(status_of(s), NONE);
}

/* Whether the work enqueued on s so far has ended; not during a capture
 * that forbids event queries. */
static bool stream_done(aclrtStream s)
{
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, s), ACL_SUCCESS);
	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
	return st == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}

static void a_stream_that_never_captured_has_status_none_and_no_model(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRICaptureStatus st = ACTIVE;
	aclmdlRI m = (aclmdlRI)1;

	(void)state;
	assert_int_equal(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
	assert_int_equal(st, NONE);
	assert_null(m);
	assert_int_equal(npusim_stream_capture_id(s), 0);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void begin_makes_the_status_active_and_end_makes_it_none(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(status_of(s), NONE);
	assert_int_equal(npusim_stream_capture_id(s), 0);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void end_gives_the_model_get_info_named_during_the_capture(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI during = NULL, after;
	aclmdlRICaptureStatus st;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureGetInfo(s, &st, &during), ACL_SUCCESS);
	assert_non_null(during);
	after = end_capture(s);
	assert_ptr_equal(after, during);
	assert_int_equal(npusim_stream_capture_id(s), 0);
	assert_int_equal(aclmdlRIDestroy(after), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* NPUGraph's allocation filter compares the stream's capture id with its
 * graph's: each capture needs its own, and the stream control must agree
 * with aclmdlRIGetId. */
static void each_capture_has_the_next_id_on_the_stream_and_its_model(void **state)
{
	aclrtStream a = new_stream(), b = new_stream();
	aclmdlRI ma, mb, mc;
	uint32_t first;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(a, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(b, GLOBAL), ACL_SUCCESS);
	first = npusim_stream_capture_id(a);
	assert_true(first > 0);
	assert_int_equal(npusim_stream_capture_id(b), first + 1);
	ma = end_capture(a);
	mb = end_capture(b);
	assert_int_equal(id_of(ma), first);
	assert_int_equal(id_of(mb), first + 1);
	assert_int_equal(aclmdlRICaptureBegin(a, GLOBAL), ACL_SUCCESS);
	assert_int_equal(npusim_stream_capture_id(a), first + 2);
	mc = end_capture(a);
	assert_int_equal(id_of(mc), first + 2);
	aclmdlRIDestroy(ma);
	aclmdlRIDestroy(mb);
	aclmdlRIDestroy(mc);
}

static void capture_calls_refuse_the_default_stream(void **state)
{
	aclmdlRICaptureStatus st;
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(NULL, GLOBAL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRICaptureGetInfo(NULL, &st, &m), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRICaptureEnd(NULL, &m), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(npusim_stream_capture_id(NULL), 0);
}

/* By its own handle a default stream takes no capture either, and is
 * asked about like any stream that does not capture. */
static void the_default_streams_handle_never_captures(void **state)
{
	aclrtStream d = npusim_default_stream(0);
	aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
	aclmdlRI m = NULL;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(d, GLOBAL), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRICaptureGetInfo(d, &st, &m), ACL_SUCCESS);
	assert_int_equal(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
	assert_int_equal(npusim_stream_capture_id(d), 0);
}

static void a_second_begin_on_a_capturing_stream_is_refused(void **state)
{
	aclrtStream s = new_stream();
	uint32_t id;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	id = npusim_stream_capture_id(s);
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_ERROR_RT_STREAM_CAPTURED);
	assert_int_equal(status_of(s), ACTIVE);
	assert_int_equal(npusim_stream_capture_id(s), id);
	aclmdlRIDestroy(end_capture(s));
}

static void an_unknown_capture_mode_is_refused(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)3),
			 ACL_ERROR_RT_PARAM_INVALID);
	assert_int_equal(status_of(s), NONE);
}

static void get_info_with_nowhere_to_write_is_refused(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureGetInfo(s, NULL, NULL), ACL_ERROR_INVALID_PARAM);
}

static void synchronizing_a_capturing_stream_is_refused_and_it_stays_active(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
}

static void synchronizing_the_device_is_refused_while_a_stream_captures(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	npusim_launch(NULL, 40);
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_SUCCESS);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_ERROR_RT_STREAM_CAPTURED);
	assert_int_equal(npusim_now_ns(), 0);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 40);
}

static void destroying_a_capturing_stream_is_refused(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CAPTURED);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
}

static void recording_an_event_on_a_capturing_stream_is_refused(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void an_event_query_in_a_global_capture_is_refused_and_invalidates_it(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclrtRecordEvent(e, NULL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	assert_capture_invalidated(s);
	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void an_event_synchronize_in_a_global_capture_is_refused_and_invalidates_it(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtSynchronizeEvent(e), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	assert_capture_invalidated(s);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

struct query_arg {
	aclrtEvent event;
	aclError rc;
};

static void *query_on_other_thread(void *p)
{
	struct query_arg *q = p;
	aclrtEventRecordedStatus st;

	q->rc = aclrtQueryEventStatus(q->event, &st);
	return NULL;
}

static aclError query_elsewhere(aclrtEvent e)
{
	struct query_arg q = { .event = e, .rc = -1 };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, query_on_other_thread, &q), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	return q.rc;
}

static void a_thread_local_capture_forbids_event_queries_on_its_own_thread_only(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, THREAD_LOCAL), ACL_SUCCESS);
	assert_int_equal(query_elsewhere(e), ACL_SUCCESS);
	assert_int_equal(status_of(s), ACTIVE);
	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	assert_capture_invalidated(s);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void a_global_capture_forbids_event_queries_on_other_threads_too(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(query_elsewhere(e), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	assert_capture_invalidated(s);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void a_relaxed_capture_allows_event_queries(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_SUCCESS);
	assert_int_equal(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
	assert_int_equal(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
	assert_int_equal(aclrtSynchronizeEvent(e), ACL_SUCCESS);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void a_synchronous_memcpy_in_a_global_capture_is_refused_and_it_stays_active(void **state)
{
	aclrtStream s = new_stream();
	unsigned char in[64], out[64];
	void *dev;

	(void)state;
	memset(in, 0xab, sizeof(in));
	memset(out, 0, sizeof(out));
	assert_int_equal(aclrtMalloc(&dev, 64, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 64, out, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
	assert_int_equal(aclrtMemcpy(out, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
	assert_int_equal(out[0], 0);
	aclrtFree(dev);
}

static void work_enqueued_on_an_invalidated_capture_is_refused(void **state)
{
	aclrtStream s = new_stream();
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	(void)state;
	assert_int_equal(aclrtCreateEvent(&e), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	aclrtQueryEventStatus(e, &st);
	assert_int_equal(npusim_launch(s, 10), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	assert_int_equal(npusim_launch_open(s), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	assert_capture_invalidated(s);
	assert_int_equal(aclrtDestroyEvent(e), ACL_SUCCESS);
}

static void end_on_a_stream_that_does_not_capture_is_refused(void **state)
{
	aclrtStream capturing = new_stream(), other = new_stream();
	aclmdlRI m = (aclmdlRI)1;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(capturing, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureEnd(other, &m), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
	assert_null(m);
	assert_int_equal(status_of(capturing), ACTIVE);
	aclmdlRIDestroy(end_capture(capturing));
}

static void end_with_nowhere_to_put_the_model_is_refused_and_the_capture_goes_on(void **state)
{
	aclrtStream s = new_stream();

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureEnd(s, NULL), ACL_ERROR_RT_PARAM_INVALID);
	assert_int_equal(status_of(s), ACTIVE);
	aclmdlRIDestroy(end_capture(s));
}

struct end_arg {
	aclrtStream stream;
	aclmdlRI model;
	aclError rc;
};

static void *end_on_other_thread(void *p)
{
	struct end_arg *a = p;

	a->rc = aclmdlRICaptureEnd(a->stream, &a->model);
	return NULL;
}

static aclError end_elsewhere(aclrtStream s, aclmdlRI *m)
{
	struct end_arg a = { .stream = s, .rc = -1 };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, end_on_other_thread, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	*m = a.model;
	return a.rc;
}

static void end_on_another_thread_fails_a_global_capture(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m = (aclmdlRI)1;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(end_elsewhere(s, &m), ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
	assert_null(m);
	assert_int_equal(status_of(s), NONE);
}

static void end_on_another_thread_completes_a_relaxed_capture(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m = NULL;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_SUCCESS);
	assert_int_equal(end_elsewhere(s, &m), ACL_SUCCESS);
	assert_non_null(m);
	assert_int_equal(aclmdlRIDestroy(m), ACL_SUCCESS);
}

static void work_launched_during_a_capture_does_not_run(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, RELAXED), ACL_SUCCESS);
	assert_int_equal(npusim_launch(s, 100), ACL_SUCCESS);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	m = end_capture(s);
	assert_true(stream_done(s));
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	assert_int_equal(npusim_now_ns(), 0);
	aclmdlRIDestroy(m);
}

static void each_execute_enqueues_the_recorded_work_again(void **state)
{
	aclrtStream s = new_stream(), run = new_stream();
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	npusim_launch(s, 30);
	npusim_launch(s, 70);
	m = end_capture(s);
	assert_int_equal(aclmdlRIExecuteAsync(m, run), ACL_SUCCESS);
	assert_int_equal(aclmdlRIExecuteAsync(m, run), ACL_SUCCESS);
	npusim_advance_ns(199);
	assert_false(stream_done(run));
	npusim_advance_ns(1);
	assert_true(stream_done(run));
	assert_true(stream_done(s));
	aclmdlRIDestroy(m);
}

static void recorded_open_work_ends_when_the_executing_stream_is_synchronized(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	npusim_launch_open(s);
	m = end_capture(s);
	assert_int_equal(aclmdlRIExecuteAsync(m, NULL), ACL_SUCCESS);
	npusim_advance_ns(1000);
	assert_false(stream_done(NULL));
	assert_int_equal(aclrtSynchronizeStream(NULL), ACL_SUCCESS);
	assert_true(stream_done(NULL));
	aclmdlRIDestroy(m);
}

static void memcpy_async_outside_a_capture_copies_at_once(void **state)
{
	aclrtStream s = new_stream();
	unsigned char in[256], out[256];
	void *dev;

	(void)state;
	memset(in, 0x5a, sizeof(in));
	memset(out, 0, sizeof(out));
	assert_int_equal(aclrtMalloc(&dev, 256, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(dev, 256, in, 256, ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(out, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST, NULL),
			 ACL_SUCCESS);
	assert_memory_equal(in, out, 256);
	aclrtFree(dev);
}

static void memcpy_async_makes_the_checks_memcpy_makes(void **state)
{
	aclrtStream s = new_stream();
	unsigned char host[64] = { 0 };
	void *dev;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 64, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(dev, 32, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpyAsync(host, 64, host, 64, ACL_MEMCPY_DEVICE_TO_HOST, s),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpyAsync(dev, 64, host, 64, (aclrtMemcpyKind)9, s),
			 ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE,
					  (aclrtStream)host), ACL_ERROR_INVALID_PARAM);
	aclrtFree(dev);
}

static void read_device(void *dev, unsigned char *out, size_t n)
{
	assert_int_equal(aclrtMemcpy(out, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
}

static void a_captured_memcpy_writes_only_when_the_model_executes(void **state)
{
	aclrtStream s = new_stream();
	unsigned char src[128], out[128], zero[128] = { 0 };
	void *dev;
	aclmdlRI m;

	(void)state;
	memset(src, 0x11, sizeof(src));
	assert_int_equal(aclrtMalloc(&dev, 128, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpy(dev, 128, zero, 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(dev, 128, src, 128, ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_SUCCESS);
	m = end_capture(s);
	read_device(dev, out, 128);
	assert_memory_equal(out, zero, 128);
	assert_int_equal(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
	read_device(dev, out, 128);
	assert_memory_equal(out, src, 128);
	aclmdlRIDestroy(m);
	aclrtFree(dev);
}

static void a_second_execute_copies_the_source_as_it_is_then(void **state)
{
	aclrtStream s = new_stream();
	unsigned char in[64], out[64];
	void *a, *b;
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclrtMalloc(&a, 64, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b, 64, 0), ACL_SUCCESS);
	memset(in, 1, sizeof(in));
	assert_int_equal(aclrtMemcpy(a, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclrtMemcpyAsync(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s),
			 ACL_SUCCESS);
	m = end_capture(s);
	assert_int_equal(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
	read_device(b, out, 64);
	assert_int_equal(out[63], 1);
	memset(in, 2, sizeof(in));
	assert_int_equal(aclrtMemcpy(a, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
	read_device(b, out, 64);
	assert_int_equal(out[63], 1);
	assert_int_equal(aclmdlRIExecuteAsync(m, s), ACL_SUCCESS);
	read_device(b, out, 64);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[63], 2);
	aclmdlRIDestroy(m);
	aclrtFree(a);
	aclrtFree(b);
}

static void executing_a_model_whose_capture_goes_on_is_refused(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m;
	aclmdlRICaptureStatus st;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureGetInfo(s, &st, &m), ACL_SUCCESS);
	assert_int_equal(aclmdlRIExecuteAsync(m, NULL), ACL_ERROR_RT_MODEL_CAPTURED);
	assert_int_equal(aclmdlRIDestroy(m), ACL_ERROR_RT_MODEL_CAPTURED);
	aclmdlRIDestroy(end_capture(s));
}

static void executing_on_a_capturing_stream_is_refused(void **state)
{
	aclrtStream s = new_stream(), other = new_stream();
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	m = end_capture(s);
	assert_int_equal(aclmdlRICaptureBegin(other, GLOBAL), ACL_SUCCESS);
	assert_int_equal(aclmdlRIExecuteAsync(m, other), ACL_ERROR_RT_STREAM_CAPTURED);
	aclmdlRIDestroy(end_capture(other));
	aclmdlRIDestroy(m);
}

static void a_destroyed_model_is_refused_by_every_model_call(void **state)
{
	aclrtStream s = new_stream();
	aclmdlRI m;
	uint32_t id;

	(void)state;
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	npusim_launch(s, 10);
	m = end_capture(s);
	assert_int_equal(aclmdlRIDestroy(m), ACL_SUCCESS);
	assert_int_equal(aclmdlRIGetId(m, &id), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRIExecuteAsync(m, s), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRIDestroy(m), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(aclmdlRIDestroy(NULL), ACL_ERROR_INVALID_PARAM);
	assert_true(stream_done(s));
}

/* Graph memory freed before a replay: a copy into it is refused rather
 * than written into memory the device no longer holds. */
static void executing_a_copy_into_freed_memory_is_refused(void **state)
{
	aclrtStream s = new_stream();
	unsigned char in[64] = { 7 };
	void *dev;
	aclmdlRI m;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 64, 0), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	npusim_launch(s, 10);
	assert_int_equal(aclrtMemcpyAsync(dev, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE, s),
			 ACL_SUCCESS);
	m = end_capture(s);
	assert_int_equal(aclrtFree(dev), ACL_SUCCESS);
	assert_int_equal(aclmdlRIExecuteAsync(m, s), ACL_ERROR_INVALID_PARAM);
	assert_true(stream_done(s));
	aclmdlRIDestroy(m);
}

/* stop_sim shuts down; valgrind and ASan see whether the models leak. */
static void shutdown_frees_models_left_alive_and_their_handles_stay_refused(void **state)
{
	aclrtStream s = new_stream(), t = new_stream();
	unsigned char host[16] = { 0 };
	void *dev;
	aclmdlRI done;
	uint32_t id;

	(void)state;
	assert_int_equal(aclrtMalloc(&dev, 16, 0), ACL_SUCCESS);
	assert_int_equal(aclmdlRICaptureBegin(s, GLOBAL), ACL_SUCCESS);
	for (int i = 0; i < 100; i++)
		aclrtMemcpyAsync(dev, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE, s);
	done = end_capture(s);
	assert_int_equal(aclmdlRICaptureBegin(t, RELAXED), ACL_SUCCESS);
	npusim_launch(t, 5);
	aclrtFree(dev);
	npusim_shutdown();
	start_sim(1, 8 * MiB);
	assert_int_equal(aclmdlRIGetId(done, &id), ACL_ERROR_INVALID_PARAM);
	t = new_stream();
	assert_int_equal(status_of(t), NONE);
	assert_int_equal(aclrtSynchronizeDevice(), ACL_SUCCESS);
}

/* Thread safety: one thread captures, replays and destroys graphs on its
 * stream while another launches, copies, records and queries on its own.
 * A thread-local capture leaves the other thread's queries allowed. */
enum { ROUNDS = 200 };

struct worker {
	void *dev;
	unsigned char host[32];
	int failures;
};

static void *capture_rounds(void *p)
{
	struct worker *w = p;
	aclrtStream s;
	aclmdlRI m;

	if (aclrtCreateStream(&s) != ACL_SUCCESS)
		return NULL;
	for (int i = 0; i < ROUNDS; i++) {
		w->host[0] = (unsigned char)i;
		w->failures += aclmdlRICaptureBegin(s, THREAD_LOCAL) != ACL_SUCCESS;
		w->failures += npusim_launch(s, 3) != ACL_SUCCESS;
		w->failures += aclrtMemcpyAsync(w->dev, 32, w->host, 32,
						ACL_MEMCPY_HOST_TO_DEVICE, s) != ACL_SUCCESS;
		w->failures += aclmdlRICaptureEnd(s, &m) != ACL_SUCCESS;
		w->failures += aclmdlRIExecuteAsync(m, s) != ACL_SUCCESS;
		w->failures += aclrtSynchronizeStream(s) != ACL_SUCCESS;
		w->failures += aclmdlRIDestroy(m) != ACL_SUCCESS;
	}
	aclrtDestroyStream(s);
	return NULL;
}

static void *stream_rounds(void *p)
{
	struct worker *w = p;
	aclrtStream s;
	aclrtEvent e;
	aclrtEventRecordedStatus st;

	if (aclrtCreateStream(&s) != ACL_SUCCESS || aclrtCreateEvent(&e) != ACL_SUCCESS)
		return NULL;
	for (int i = 0; i < ROUNDS; i++) {
		w->failures += npusim_launch(s, 2) != ACL_SUCCESS;
		w->failures += aclrtMemcpyAsync(w->dev, 32, w->host, 32,
						ACL_MEMCPY_HOST_TO_DEVICE, s) != ACL_SUCCESS;
		w->failures += aclrtRecordEvent(e, s) != ACL_SUCCESS;
		w->failures += aclrtQueryEventStatus(e, &st) != ACL_SUCCESS;
		w->failures += aclrtSynchronizeStream(s) != ACL_SUCCESS;
	}
	aclrtDestroyEvent(e);
	aclrtDestroyStream(s);
	return NULL;
}

static void a_capture_on_one_thread_and_work_on_another_stream_do_not_interfere(void **state)
{
	struct worker a = { 0 }, b = { 0 };
	unsigned char out[32];
	pthread_t ta, tb;

	(void)state;
	assert_int_equal(aclrtMalloc(&a.dev, 32, 0), ACL_SUCCESS);
	assert_int_equal(aclrtMalloc(&b.dev, 32, 0), ACL_SUCCESS);
	assert_int_equal(pthread_create(&ta, NULL, capture_rounds, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, stream_rounds, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.failures, 0);
	assert_int_equal(b.failures, 0);
	read_device(a.dev, out, 32);
	assert_int_equal(out[0], ROUNDS - 1);
	aclrtFree(a.dev);
	aclrtFree(b.dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		SIM_TEST(a_stream_that_never_captured_has_status_none_and_no_model, one_8mib_device),
		SIM_TEST(begin_makes_the_status_active_and_end_makes_it_none, one_8mib_device),
		SIM_TEST(end_gives_the_model_get_info_named_during_the_capture, one_8mib_device),
		SIM_TEST(each_capture_has_the_next_id_on_the_stream_and_its_model, one_8mib_device),
		SIM_TEST(capture_calls_refuse_the_default_stream, one_8mib_device),
		SIM_TEST(the_default_streams_handle_never_captures, one_8mib_device),
		SIM_TEST(a_second_begin_on_a_capturing_stream_is_refused, one_8mib_device),
		SIM_TEST(an_unknown_capture_mode_is_refused, one_8mib_device),
		SIM_TEST(get_info_with_nowhere_to_write_is_refused, one_8mib_device),
		SIM_TEST(synchronizing_a_capturing_stream_is_refused_and_it_stays_active, one_8mib_device),
		SIM_TEST(synchronizing_the_device_is_refused_while_a_stream_captures, one_8mib_device),
		SIM_TEST(destroying_a_capturing_stream_is_refused, one_8mib_device),
		SIM_TEST(recording_an_event_on_a_capturing_stream_is_refused, one_8mib_device),
		SIM_TEST(an_event_query_in_a_global_capture_is_refused_and_invalidates_it, one_8mib_device),
		SIM_TEST(an_event_synchronize_in_a_global_capture_is_refused_and_invalidates_it, one_8mib_device),
		SIM_TEST(a_thread_local_capture_forbids_event_queries_on_its_own_thread_only, one_8mib_device),
		SIM_TEST(a_global_capture_forbids_event_queries_on_other_threads_too, one_8mib_device),
		SIM_TEST(a_relaxed_capture_allows_event_queries, one_8mib_device),
		SIM_TEST(a_synchronous_memcpy_in_a_global_capture_is_refused_and_it_stays_active, one_8mib_device),
		SIM_TEST(work_enqueued_on_an_invalidated_capture_is_refused, one_8mib_device),
		SIM_TEST(end_on_a_stream_that_does_not_capture_is_refused, one_8mib_device),
		SIM_TEST(end_with_nowhere_to_put_the_model_is_refused_and_the_capture_goes_on, one_8mib_device),
		SIM_TEST(end_on_another_thread_fails_a_global_capture, one_8mib_device),
		SIM_TEST(end_on_another_thread_completes_a_relaxed_capture, one_8mib_device),
		SIM_TEST(work_launched_during_a_capture_does_not_run, one_8mib_device),
		SIM_TEST(each_execute_enqueues_the_recorded_work_again, one_8mib_device),
		SIM_TEST(recorded_open_work_ends_when_the_executing_stream_is_synchronized, one_8mib_device),
		SIM_TEST(memcpy_async_outside_a_capture_copies_at_once, one_8mib_device),
		SIM_TEST(memcpy_async_makes_the_checks_memcpy_makes, one_8mib_device),
		SIM_TEST(a_captured_memcpy_writes_only_when_the_model_executes, one_8mib_device),
		SIM_TEST(a_second_execute_copies_the_source_as_it_is_then, one_8mib_device),
		SIM_TEST(executing_a_model_whose_capture_goes_on_is_refused, one_8mib_device),
		SIM_TEST(executing_on_a_capturing_stream_is_refused, one_8mib_device),
		SIM_TEST(a_destroyed_model_is_refused_by_every_model_call, one_8mib_device),
		SIM_TEST(executing_a_copy_into_freed_memory_is_refused, one_8mib_device),
		SIM_TEST(shutdown_frees_models_left_alive_and_their_handles_stay_refused, one_8mib_device),
		SIM_TEST(a_capture_on_one_thread_and_work_on_another_stream_do_not_interfere, one_8mib_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
