/*
 * model.c - model runtime instances: keeping, executing and destroying the
 * work a capture recorded.
 *
 * Executing enqueues the recorded work on a stream as if it were launched
 * again, and makes the recorded copies again: a replayed graph reads its
 * sources and writes its destinations anew, as its kernels would. The
 * copies run outside the scheduler lock, on a copy of the task list, so
 * that no device or VM lock is taken under it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "sched.h"

struct sim_model *model_new(void)
{
	struct sim_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->id = ++sim.last_model_id;
	m->capturing = true;
	HASH_ADD(hh, sim.models, id, sizeof(m->id), m);
	return m;
}

struct sim_model *model_find(aclmdlRI handle)
{
	uintptr_t h = (uintptr_t)handle;
	uint32_t id = (uint32_t)h;
	struct sim_model *m;

	if (h == 0 || h != id)
		return NULL;
	HASH_FIND(hh, sim.models, &id, sizeof(id), m);
	return m;
}

aclmdlRI model_handle(const struct sim_model *m)
{
	return (aclmdlRI)(uintptr_t)m->id;
}

int model_append(struct sim_model *m, const struct sim_task *t)
{
	if (m->ntasks == m->room) {
		size_t room = m->room ? 2 * m->room : 8;
		struct sim_task *grown = realloc(m->task, room * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->task = grown;
		m->room = room;
	}
	m->task[m->ntasks++] = *t;
	return 0;
}

void model_free(struct sim_model *m)
{
	HASH_DEL(sim.models, m);
	free(m->task);
	free(m);
}

void sim_models_reset(void)
{
	struct sim_model *m, *tmp;

	HASH_ITER(hh, sim.models, m, tmp)
		model_free(m);
}

/* The recorded work of an executable model, copied out, for a stream that
 * may run it. */
static aclError take_tasks(aclmdlRI modelRI, aclrtStream stream,
			   struct sim_task **tasks, size_t *n)
{
	struct sim_model *m = model_find(modelRI);
	struct sim_stream *s = sched_stream(stream);

	if (!m || !s)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (m->capturing)
		return sim_status(ACL_ERROR_RT_MODEL_CAPTURED);
	if (s->cap.model)
		return sim_status(ACL_ERROR_RT_STREAM_CAPTURED);
	if (m->ntasks == 0)
		return ACL_SUCCESS;
	*tasks = malloc(m->ntasks * sizeof(**tasks));
	if (!*tasks)
		return sim_status(ACL_ERROR_BAD_ALLOC);
	memcpy(*tasks, m->task, m->ntasks * sizeof(**tasks));
	*n = m->ntasks;
	return ACL_SUCCESS;
}

/* Memory a recorded copy named may have been freed since the capture. */
static aclError check_copies(const struct sim_task *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		aclError rc;

		if (t[i].kind != TASK_COPY)
			continue;
		rc = sim_copy_check(t[i].dst, t[i].dest_max, t[i].src, t[i].count,
				    t[i].copy_kind);
		if (rc != ACL_SUCCESS)
			return sim_status(rc);
	}
	return ACL_SUCCESS;
}

static aclError enqueue_work(aclrtStream stream, const struct sim_task *t, size_t n)
{
	struct sim_stream *s;

	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	for (size_t i = 0; s && i < n; i++) {
		if (t[i].kind == TASK_TIMED)
			sched_launch(s, t[i].ns);
		else if (t[i].kind == TASK_OPEN)
			s->open_launched++;
	}
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(s ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM);
}

static void make_copies(const struct sim_task *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].kind == TASK_COPY)
			memmove(t[i].dst, t[i].src, t[i].count);
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
	struct sim_task *tasks = NULL;
	size_t n = 0;
	aclError rc;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.sched_lock);
	rc = take_tasks(modelRI, stream, &tasks, &n);
	pthread_mutex_unlock(&sim.sched_lock);
	if (rc == ACL_SUCCESS)
		rc = check_copies(tasks, n);
	if (rc == ACL_SUCCESS)
		rc = enqueue_work(stream, tasks, n);
	if (rc == ACL_SUCCESS)
		make_copies(tasks, n);
	free(tasks);
	return sim_status(rc);
}

/* A model still capturing belongs to its stream until the capture ends. */
aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
	struct sim_model *m;
	aclError rc = ACL_SUCCESS;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	pthread_mutex_lock(&sim.sched_lock);
	m = model_find(modelRI);
	if (!m)
		rc = ACL_ERROR_INVALID_PARAM;
	else if (m->capturing)
		rc = ACL_ERROR_RT_MODEL_CAPTURED;
	else
		model_free(m);
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
	struct sim_model *m;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!modelRIId)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&sim.sched_lock);
	m = model_find(modelRI);
	if (m)
		*modelRIId = m->id;
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(m ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM);
}
