/*
 * model.h - model runtime instances: the work a capture recorded (internal).
 *
 * Everything here runs under sim.sched_lock. A model's handle is its id,
 * not its address, so that a handle kept after aclmdlRIDestroy (or from
 * before a restart) names no model rather than a newer one.
 */
#ifndef NPUSIM_MODEL_H
#define NPUSIM_MODEL_H

#include "sim.h"

enum sim_task_kind { TASK_TIMED, TASK_OPEN, TASK_COPY };

/* One piece of recorded work: npusim_launch, npusim_launch_open or
 * aclrtMemcpyAsync, with the arguments it was given. */
struct sim_task {
	enum sim_task_kind kind;
	uint64_t ns;
	void *dst;
	size_t dest_max;
	const void *src;
	size_t count;
	aclrtMemcpyKind copy_kind;
};

struct sim_model {
	uint32_t id;
	bool capturing;        /* its capture has not ended: not executable */
	size_t ntasks, room;
	struct sim_task *task;
	UT_hash_handle hh;
};

/* A new, empty, capturing model with the next id, or NULL. */
struct sim_model *model_new(void);
/* The model a handle names, or NULL. */
struct sim_model *model_find(aclmdlRI handle);
aclmdlRI model_handle(const struct sim_model *m);
/* 0, or -ENOMEM with the model unchanged. */
int model_append(struct sim_model *m, const struct sim_task *t);
void model_free(struct sim_model *m);

#endif /* NPUSIM_MODEL_H */
