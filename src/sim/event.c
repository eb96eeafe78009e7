/*
 * event.c - events: a recorded point in a stream's work.
 *
 * Only recording and synchronizing take the scheduler lock; a query reads
 * the event under its sequence count and the stream's atomics, so the
 * allocator's poll of pending events costs a few loads.
 *
 * While a capture forbids it (see capture_unsafe_call), a query or a
 * synchronize is refused and invalidates the capture: CANN's ACL Graph
 * FAQ ("ACLGraph捕获过程中任务提交限制") says querying or synchronizing an
 * event during a capture makes the capture fail, as CUDA's global mode
 * does, and this is how a caching allocator that polls its events
 * mid-capture finds out.
 */
#include <errno.h>
#include <sched.h>

#include "capture.h"
#include "sched.h"

struct event_point {
	struct sim_stream *stream; /* NULL: never recorded */
	uint64_t stream_id;
	uint64_t time;
	uint64_t open_seq;
};

/* One try at a consistent copy of what the last record left: false if a
 * record was writing. */
static inline bool try_read_point(struct sim_event *e, struct event_point *p)
{
	uint32_t seq = atomic_load(&e->seq);

	if (seq & 1)
		return false;
	p->stream = atomic_load(&e->stream);
	p->stream_id = atomic_load(&e->stream_id);
	p->time = atomic_load(&e->time);
	p->open_seq = atomic_load(&e->open_seq);
	return atomic_load(&e->seq) == seq;
}

/* Out of line so that the common path saves no registers for the call. */
static __attribute__((noinline)) void wait_read_point(struct sim_event *e,
						      struct event_point *p)
{
	while (!try_read_point(e, p))
		sched_yield();
}

static inline void read_point(struct sim_event *e, struct event_point *p)
{
	if (__builtin_expect(!try_read_point(e, p), 0))
		wait_read_point(e, p);
}

/* Called with sim.sched_lock held, the only writer. */
static void write_point(struct sim_event *e, const struct event_point *p)
{
	atomic_fetch_add(&e->seq, 1);
	atomic_store(&e->stream, p->stream);
	atomic_store(&e->stream_id, p->stream_id);
	atomic_store(&e->time, p->time);
	atomic_store(&e->open_seq, p->open_seq);
	atomic_fetch_add(&e->seq, 1);
}

/* Whether the open-ended work before the point has ended. A destroyed
 * stream was synchronized first, so all of its work has. The id is read
 * again after open_ended so that a value from a reused stream is not
 * taken for this one's. */
static inline bool open_work_ended(const struct event_point *p)
{
	struct sim_stream *s = p->stream;
	uint64_t ended;

	if (atomic_load(&s->id) != p->stream_id)
		return true;
	ended = atomic_load(&s->open_ended);
	if (atomic_load(&s->id) != p->stream_id)
		return true;
	return ended >= p->open_seq;
}

static inline bool point_complete(const struct event_point *p)
{
	if (!p->stream)
		return true;
	if (atomic_load(&sim.now) < p->time)
		return false;
	return p->open_seq == 0 || open_work_ended(p);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	struct sim_event *e;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!event)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (event_table_new(&sim.events, event, &e) < 0)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (event_table_delete(&sim.events, event) < 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	return ACL_SUCCESS;
}

/* Called with sim.sched_lock held. CANN records an event on a capturing
 * stream only if it was made by aclrtCreateEventExWithFlag
 * (ApiImpl::EventRecord); an aclrtCreateEvent event, the only kind here,
 * is refused. */
static aclError record_locked(struct sim_event *e, struct sim_stream *s)
{
	struct event_point p = {
		.stream = s,
		.stream_id = atomic_load(&s->id),
		.time = s->tail,
		.open_seq = s->open_launched,
	};

	if (s->cap.model)
		return sim_status(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
	write_point(e, &p);
	return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	struct sim_event *e;
	struct sim_stream *s;
	aclError rc = ACL_ERROR_INVALID_PARAM;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	e = event_table_find(&sim.events, event);
	if (!e)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s)
		rc = record_locked(e, s);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

/* Where event `event` stands, for a call a capture refuses (a query or a
 * wait would make the capture depend on work outside it). Inline, with
 * the capture test's lock-free case in front: an allocator polls its
 * pending events at every malloc, so a query is mostly these loads. */
static inline __attribute__((always_inline)) aclError
read_event_outside_capture(aclrtEvent event, struct event_point *p, const char *call)
{
	struct sim_event *e = event_table_find(&sim.events, event);

	if (!e)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (atomic_load(&sim.capturing) != 0 && capture_unsafe_call(call) != ACL_SUCCESS)
		return sim_status(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
	read_point(e, p);
	return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	struct event_point p;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!status)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if ((rc = read_event_outside_capture(event, &p, "aclrtQueryEventStatus")) != ACL_SUCCESS)
		return sim_status(rc);
	*status = point_complete(&p) ? ACL_EVENT_RECORDED_STATUS_COMPLETE
				     : ACL_EVENT_RECORDED_STATUS_NOT_READY;
	return ACL_SUCCESS;
}

/* Called with sim.sched_lock held. */
static void sync_point(const struct event_point *p)
{
	struct sim_stream *s = p->stream;

	if (!s)
		return;
	if (atomic_load(&sim.now) < p->time)
		atomic_store(&sim.now, p->time);
	if (atomic_load(&s->id) == p->stream_id &&
	    atomic_load(&s->open_ended) < p->open_seq)
		atomic_store(&s->open_ended, p->open_seq);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	struct event_point p;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if ((rc = read_event_outside_capture(event, &p, "aclrtSynchronizeEvent")) != ACL_SUCCESS)
		return sim_status(rc);
	/* Already complete: nothing to wait for, the clock stays. */
	if (point_complete(&p))
		return ACL_SUCCESS;
	pthread_mutex_lock(&sim.sched_lock);
	sync_point(&p);
	pthread_mutex_unlock(&sim.sched_lock);
	return ACL_SUCCESS;
}
