/*
 * event.c - events: a recorded point in a stream's work.
 */
#include <stdlib.h>

#include "sched.h"

static struct sim_event *find_event(aclrtEvent handle)
{
	struct sim_event *e = NULL;

	if (handle)
		HASH_FIND_PTR(sim.events, &handle, e);
	return e;
}

static bool event_complete(const struct sim_event *e)
{
	if (!e->recorded)
		return true;
	if (sim.now < e->time)
		return false;
	return !e->stream || e->stream->open_ended >= e->open_seq;
}

void sched_forget_stream(struct sim_stream *s)
{
	struct sim_event *e, *tmp;

	HASH_ITER(hh, sim.events, e, tmp)
		if (e->stream == s)
			e->stream = NULL;
}

void sched_free_events(void)
{
	struct sim_event *e, *tmp;

	HASH_ITER(hh, sim.events, e, tmp) {
		HASH_DEL(sim.events, e);
		free(e);
	}
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	struct sim_event *e;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	if (!event)
		return ACL_ERROR_INVALID_PARAM;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ACL_ERROR_BAD_ALLOC;
	e->self = e;
	pthread_mutex_lock(&sim.sched_lock);
	HASH_ADD_PTR(sim.events, self, e);
	pthread_mutex_unlock(&sim.sched_lock);
	*event = e;
	return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	struct sim_event *e;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	e = find_event(event);
	if (e)
		HASH_DEL(sim.events, e);
	pthread_mutex_unlock(&sim.sched_lock);
	if (!e)
		return ACL_ERROR_INVALID_PARAM;
	free(e);
	return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	struct sim_event *e;
	struct sim_stream *s;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	e = find_event(event);
	s = sched_stream(stream);
	if (e && s) {
		e->recorded = true;
		e->stream = s;
		e->time = s->tail;
		e->open_seq = s->open_launched;
	}
	pthread_mutex_unlock(&sim.sched_lock);
	return e && s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	struct sim_event *e;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	if (!status)
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&sim.sched_lock);
	e = find_event(event);
	if (e)
		*status = event_complete(e) ? ACL_EVENT_RECORDED_STATUS_COMPLETE
					    : ACL_EVENT_RECORDED_STATUS_NOT_READY;
	pthread_mutex_unlock(&sim.sched_lock);
	return e ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	struct sim_event *e;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	pthread_mutex_lock(&sim.sched_lock);
	e = find_event(event);
	if (e && e->recorded) {
		if (sim.now < e->time)
			sim.now = e->time;
		if (e->stream && e->stream->open_ended < e->open_seq)
			e->stream->open_ended = e->open_seq;
	}
	pthread_mutex_unlock(&sim.sched_lock);
	return e ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}
