/*
 * stream.c - streams, the virtual clock and launched work.
 */
#include <stdlib.h>

#include "capture.h"
#include "sched.h"

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A device's default stream is not in sim.streams: it lives with its
 * device and is never destroyed. */
static struct sim_stream *default_stream_of(aclrtStream handle)
{
	for (int i = 0; i < sim.ndev; i++)
		if (handle == &sim.device[i].default_stream)
			return &sim.device[i].default_stream;
	return NULL;
}

struct sim_stream *sched_stream(aclrtStream handle)
{
	struct sim_stream *s;

	if (!handle)
		return &sim.device[sim_current_device()].default_stream;
	HASH_FIND_PTR(sim.streams, &handle, s);
	return s ? s : default_stream_of(handle);
}

aclrtStream npusim_default_stream(int device)
{
	if (!atomic_load(&sim.up) || device < 0 || device >= sim.ndev)
		return NULL;
	return &sim.device[device].default_stream;
}

void sched_sync_stream(struct sim_stream *s)
{
	if (atomic_load(&sim.now) < s->tail)
		atomic_store(&sim.now, s->tail);
	atomic_store(&s->open_ended, s->open_launched);
}

/* A destroyed stream's memory if there is one: see struct sim_stream. */
static struct sim_stream *reuse_stream(void)
{
	struct sim_stream *s = sim.free_streams;

	if (s) {
		sim.free_streams = s->next_free;
		s->tail = 0;
		s->open_launched = 0;
		atomic_store(&s->open_ended, 0);
	}
	return s;
}

/* Priority and flags change nothing on the virtual clock: a fast-launch
 * stream is the same stream here. */
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
	(void)priority;
	if (flag & ~(uint32_t)(ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	return aclrtCreateStream(stream);
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!stream)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.sched_lock);
	s = reuse_stream();
	if (!s)
		s = calloc(1, sizeof(*s));
	if (s) {
		s->device = sim_current_device();
		s->self = s;
		atomic_store(&s->id, sim.next_stream_id++);
		HASH_ADD_PTR(sim.streams, self, s);
	}
	pthread_mutex_unlock(&sim.sched_lock);
	if (!s)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	*stream = s;
	return ACL_SUCCESS;
}

/* Run `fn` on the stream behind `stream` under the scheduler lock. */
static aclError on_stream(aclrtStream stream,
			  aclError (*fn)(struct sim_stream *s, uint64_t arg), uint64_t arg)
{
	struct sim_stream *s;
	aclError rc = ACL_ERROR_INVALID_PARAM;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s)
		rc = fn(s, arg);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

/* Destroying a stream waits for its work, like a synchronize, so events
 * recorded on it still complete. A capturing stream is refused, as CANN
 * does (ApiErrorDecorator::StreamDestroy). */
static aclError destroy_locked(struct sim_stream *s, uint64_t unused)
{
	(void)unused;
	if (atomic_load(&s->id) == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM); /* a default stream */
	if (s->cap.model)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURED);
	sched_sync_stream(s);
	HASH_DEL(sim.streams, s);
	atomic_store(&s->id, UINT64_MAX);
	s->next_free = sim.free_streams;
	sim.free_streams = s;
	return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	if (!stream && atomic_load(&sim.up))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	return on_stream(stream, destroy_locked, 0);
}

/* Its work is in a model, not on the clock: CANN refuses
 * (ApiErrorDecorator::StreamSynchronize). */
static aclError sync_locked(struct sim_stream *s, uint64_t unused)
{
	(void)unused;
	if (s->cap.model)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURED);
	sched_sync_stream(s);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return on_stream(stream, sync_locked, 0);
}

aclError aclrtSynchronizeDevice(void)
{
	int dev;
	struct sim_stream *s, *tmp;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	dev = sim_current_device();
	pthread_mutex_lock(&sim.sched_lock);
	/* Refused while a stream of the device captures, as CANN's
	 * Context::Synchronize does, before anything is waited for. */
	if (capture_on_device(dev)) {
		pthread_mutex_unlock(&sim.sched_lock);
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURED);
	}
	sched_sync_stream(&sim.device[dev].default_stream);
	HASH_ITER(hh, sim.streams, s, tmp)
		if (s->device == dev)
			sched_sync_stream(s);
	pthread_mutex_unlock(&sim.sched_lock);
	return ACL_SUCCESS;
}

void sched_launch(struct sim_stream *s, uint64_t ns)
{
	s->tail = max_u64(s->tail, atomic_load(&sim.now)) + ns;
}

static aclError launch_locked(struct sim_stream *s, uint64_t ns)
{
	struct sim_task t = { .kind = TASK_TIMED, .ns = ns };

	if (s->cap.model)
		return capture_record(s, &t);
	sched_launch(s, ns);
	return ACL_SUCCESS;
}

aclError npusim_launch(aclrtStream stream, uint64_t ns)
{
	return on_stream(stream, launch_locked, ns);
}

static aclError launch_open_locked(struct sim_stream *s, uint64_t unused)
{
	struct sim_task t = { .kind = TASK_OPEN };

	(void)unused;
	if (s->cap.model)
		return capture_record(s, &t);
	s->open_launched++;
	return ACL_SUCCESS;
}

aclError npusim_launch_open(aclrtStream stream)
{
	return on_stream(stream, launch_open_locked, 0);
}

uint64_t npusim_stream_id(aclrtStream stream)
{
	struct sim_stream *s;
	uint64_t id;

	if (!stream)
		return 0;
	if (!atomic_load(&sim.up))
		return UINT64_MAX;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	id = s ? atomic_load(&s->id) : UINT64_MAX;
	pthread_mutex_unlock(&sim.sched_lock);
	return id;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
	uint64_t id = npusim_stream_id(stream);

	if (!streamId || id > INT32_MAX)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*streamId = (int32_t)id;
	return ACL_SUCCESS;
}

uint64_t npusim_now_ns(void)
{
	return atomic_load(&sim.now);
}

void npusim_advance_ns(uint64_t ns)
{
	pthread_mutex_lock(&sim.sched_lock);
	atomic_fetch_add(&sim.now, ns);
	pthread_mutex_unlock(&sim.sched_lock);
}

void sim_sched_reset(void)
{
	struct sim_stream *s, *tmp;

	event_table_reset(&sim.events);
	pthread_mutex_lock(&sim.sched_lock);
	HASH_ITER(hh, sim.streams, s, tmp) {
		HASH_DEL(sim.streams, s);
		free(s);
	}
	while ((s = reuse_stream()))
		free(s);
	sim_models_reset();
	atomic_store(&sim.capturing, 0);
	atomic_store(&sim.now, 0);
	pthread_mutex_unlock(&sim.sched_lock);
}
