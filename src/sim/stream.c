/*
 * stream.c - streams, the virtual clock and launched work.
 */
#include <stdlib.h>

#include "sched.h"

struct sim_stream *sched_stream(aclrtStream handle)
{
	struct sim_stream *s;

	if (!handle)
		return &sim.device[sim_current_device()].default_stream;
	HASH_FIND_PTR(sim.streams, &handle, s);
	return s;
}

void sched_sync_stream(struct sim_stream *s)
{
	if (sim.now < s->tail)
		sim.now = s->tail;
	s->open_ended = s->open_launched;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ACL_ERROR_BAD_ALLOC;
	s->device = sim_current_device();
	s->self = s;
	pthread_mutex_lock(&sim.sched_lock);
	s->id = sim.next_stream_id++;
	HASH_ADD_PTR(sim.streams, self, s);
	pthread_mutex_unlock(&sim.sched_lock);
	*stream = s;
	return ACL_SUCCESS;
}

/* Destroying a stream waits for its work, like a synchronize, so events
 * recorded on it still complete. */
aclError aclrtDestroyStream(aclrtStream stream)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	if (!stream)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s) {
		sched_sync_stream(s);
		sched_forget_stream(s);
		HASH_DEL(sim.streams, s);
	}
	pthread_mutex_unlock(&sim.sched_lock);
	if (!s)
		return ACL_ERROR_INVALID_PARAM;
	free(s);
	return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s)
		sched_sync_stream(s);
	pthread_mutex_unlock(&sim.sched_lock);
	return s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtSynchronizeDevice(void)
{
	int dev;
	struct sim_stream *s, *tmp;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	dev = sim_current_device();
	pthread_mutex_lock(&sim.sched_lock);
	sched_sync_stream(&sim.device[dev].default_stream);
	HASH_ITER(hh, sim.streams, s, tmp)
		if (s->device == dev)
			sched_sync_stream(s);
	pthread_mutex_unlock(&sim.sched_lock);
	return ACL_SUCCESS;
}

aclError npusim_launch(aclrtStream stream, uint64_t ns)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s)
		s->tail = (s->tail > sim.now ? s->tail : sim.now) + ns;
	pthread_mutex_unlock(&sim.sched_lock);
	return s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError npusim_launch_open(aclrtStream stream)
{
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s)
		s->open_launched++;
	pthread_mutex_unlock(&sim.sched_lock);
	return s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
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
	id = s ? s->id : UINT64_MAX;
	pthread_mutex_unlock(&sim.sched_lock);
	return id;
}

uint64_t npusim_now_ns(void)
{
	pthread_mutex_lock(&sim.sched_lock);
	uint64_t now = sim.now;
	pthread_mutex_unlock(&sim.sched_lock);
	return now;
}

void npusim_advance_ns(uint64_t ns)
{
	pthread_mutex_lock(&sim.sched_lock);
	sim.now += ns;
	pthread_mutex_unlock(&sim.sched_lock);
}

void sim_sched_reset(void)
{
	struct sim_stream *s, *tmp;

	pthread_mutex_lock(&sim.sched_lock);
	sched_free_events();
	HASH_ITER(hh, sim.streams, s, tmp) {
		HASH_DEL(sim.streams, s);
		free(s);
	}
	sim.now = 0;
	pthread_mutex_unlock(&sim.sched_lock);
}
