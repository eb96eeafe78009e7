/*
 * capture.c - graph capture on a stream (aclmdlRICapture*), as CANN's
 * runtime does it (hicann/runtime, src/runtime/feature/aclgraph/).
 *
 * A capture is a model and a status kept on its stream; work enqueued on
 * the stream goes into the model. A failed end (invalidated capture, wrong
 * thread) frees the model, as CANN's ClearCaptureModel does, so that no
 * model is left that the caller has no handle for.
 */
#include <stdio.h>
#include <unistd.h>

#include "capture.h"
#include "sched.h"

/* The stream behind a non-NULL handle. */
static aclError find_capture_stream(aclrtStream stream, struct sim_stream **out)
{
	*out = NULL;
	if (!stream)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	*out = sched_stream(stream);
	return sim_status(*out ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM);
}

/* A default stream never captures, named by NULL or by its own handle. */
static aclError begin_locked(struct sim_stream *s, aclmdlRICaptureMode mode)
{
	struct sim_model *m;

	if (atomic_load(&s->id) == 0)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (s->cap.model)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURED);
	m = model_new();
	if (!m)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	s->cap = (struct sim_capture){
		.model = m,
		.status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
		.mode = mode,
		.thread = pthread_self(),
	};
	atomic_fetch_add(&sim.capturing, 1);
	return ACL_SUCCESS;
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
	struct sim_stream *s;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!stream)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
		return sim_status(ACL_ERROR_RT_PARAM_INVALID);
	pthread_mutex_lock(&sim.sched_lock);
	rc = find_capture_stream(stream, &s);
	if (rc == ACL_SUCCESS)
		rc = begin_locked(s, mode);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
				aclmdlRI *modelRI)
{
	struct sim_stream *s;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!status && !modelRI)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.sched_lock);
	rc = find_capture_stream(stream, &s);
	if (rc == ACL_SUCCESS && status)
		*status = s->cap.model ? s->cap.status : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	if (rc == ACL_SUCCESS && modelRI)
		*modelRI = s->cap.model ? model_handle(s->cap.model) : NULL;
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

/* The stream stops capturing; its model is the caller's to keep or free. */
static struct sim_model *stop_capture(struct sim_stream *s)
{
	struct sim_model *m = s->cap.model;

	s->cap = (struct sim_capture){ .status = ACL_MODEL_RI_CAPTURE_STATUS_NONE };
	atomic_fetch_sub(&sim.capturing, 1);
	return m;
}

/* Why the capture on s cannot give a model, or ACL_SUCCESS. */
static aclError end_refusal(const struct sim_stream *s)
{
	if (s->cap.mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED &&
	    !pthread_equal(s->cap.thread, pthread_self()))
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
	if (s->cap.status == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	return ACL_SUCCESS;
}

/* The end's caller learns which call, made by whom, invalidated it. */
static void tell_why_invalidated(const struct sim_stream *s)
{
	if (!s->cap.invalidated_by[0])
		return;
	if (s->cap.mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
		sim_set_recent_error("the capture was invalidated by %s, a call a global capture "
				     "forbids on every thread of device %d; a thread_local or "
				     "relaxed capture allows it on other threads",
				     s->cap.invalidated_by, s->device);
	else
		sim_set_recent_error("the capture was invalidated by %s, a call a thread_local "
				     "capture forbids on the thread that began it; a relaxed "
				     "capture allows it", s->cap.invalidated_by);
}

static aclError end_locked(struct sim_stream *s, aclmdlRI *modelRI)
{
	struct sim_model *m;
	aclError rc;

	if (!s->cap.model)
		return sim_status(ACL_ERROR_RT_STREAM_NOT_CAPTURED);
	if (!modelRI)
		return sim_status(ACL_ERROR_RT_PARAM_INVALID);
	rc = end_refusal(s);
	if (rc == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED)
		tell_why_invalidated(s);
	m = stop_capture(s);
	if (rc != ACL_SUCCESS) {
		model_free(m);
		return sim_status(rc);
	}
	m->capturing = false;
	*modelRI = model_handle(m);
	return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
	struct sim_stream *s;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (modelRI)
		*modelRI = NULL;
	pthread_mutex_lock(&sim.sched_lock);
	rc = find_capture_stream(stream, &s);
	if (rc == ACL_SUCCESS)
		rc = end_locked(s, modelRI);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

uint32_t npusim_stream_capture_id(aclrtStream stream)
{
	struct sim_stream *s;
	uint32_t id = 0;

	if (!stream || !atomic_load(&sim.up))
		return 0;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s && s->cap.model)
		id = s->cap.model->id;
	pthread_mutex_unlock(&sim.sched_lock);
	return id;
}

/* Work enqueued on an invalidated capture is refused; work that cannot be
 * recorded invalidates the capture, as a failed task allocation does in
 * CANN (Stream::SingleStreamTerminateCapture). */
aclError capture_record(struct sim_stream *s, const struct sim_task *t)
{
	if (s->cap.status == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
	if (model_append(s->cap.model, t) < 0) {
		s->cap.status = ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED;
		return sim_status(ACL_ERROR_BAD_ALLOC);
	}
	return ACL_SUCCESS;
}

bool capture_on_device(int device)
{
	struct sim_stream *s, *tmp;

	HASH_ITER(hh, sim.streams, s, tmp)
		if (s->device == device && s->cap.model)
			return true;
	return false;
}

/*
 * CANN's Context::IsCaptureModeSupport, with the thread's exchange mode at
 * its default: a global capture forbids unsafe calls on every thread of
 * its device, a thread-local one on the thread that began it, a relaxed
 * one nowhere.
 */
static bool forbids(const struct sim_stream *s, int device)
{
	const struct sim_capture *c = &s->cap;

	if (!c->model || s->device != device)
		return false;
	if (c->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
		return true;
	return c->mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL &&
	       pthread_equal(c->thread, pthread_self());
}

/* The first call to invalidate a capture is its reason; later ones only
 * follow from it. */
static void invalidate(struct sim_capture *c, const char *call)
{
	char name[16] = "?";

	if (c->status == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED)
		return;
	c->status = ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED;
	pthread_getname_np(pthread_self(), name, sizeof(name));
	snprintf(c->invalidated_by, sizeof(c->invalidated_by), "%s on thread %s (tid %d)",
		 call, name, (int)gettid());
}

static bool unsafe_call_locked(const char *invalidating_call)
{
	int device = sim_current_device();
	struct sim_stream *s, *tmp;
	bool forbidden = false;

	HASH_ITER(hh, sim.streams, s, tmp) {
		if (!forbids(s, device))
			continue;
		forbidden = true;
		if (invalidating_call)
			invalidate(&s->cap, invalidating_call);
	}
	return forbidden;
}

aclError capture_unsafe_call(const char *invalidating_call)
{
	bool forbidden;

	if (atomic_load(&sim.capturing) == 0)
		return ACL_SUCCESS;
	pthread_mutex_lock(&sim.sched_lock);
	forbidden = unsafe_call_locked(invalidating_call);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(forbidden ? ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT : ACL_SUCCESS);
}

bool npusim_capture_forbids_query(void)
{
	return capture_unsafe_call(NULL) != ACL_SUCCESS;
}
