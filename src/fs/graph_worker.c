/*
 * graph_worker.c - a thread with a one-job slot: callers queue on the
 * slot's lock, post a job and wait for its result.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "alloc/caching/caching_allocator.h"

#include "graph_worker.h"

struct graph_worker {
	pthread_t thread;
	pthread_mutex_t submit; /* one caller at a time owns the slot */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	gw_job_fn fn;           /* the posted job, NULL when none */
	void *arg;
	/* The poster's origin: its allocator calls run here (npa_set_origin). */
	const struct npa_frame *origin;
	int rc;
	bool done;
	bool stop;
};

static void *work(void *arg)
{
	struct graph_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->fn && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->fn)
			break;
		gw_job_fn fn = w->fn;
		npa_set_origin(w->origin);
		pthread_mutex_unlock(&w->lock);
		int rc = fn(w->arg);
		npa_set_origin(NULL);
		pthread_mutex_lock(&w->lock);
		w->rc = rc;
		w->fn = NULL;
		w->done = true;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int gw_start(struct graph_worker **out)
{
	struct graph_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->submit, NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	int rc = pthread_create(&w->thread, NULL, work, w);
	if (rc) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		pthread_mutex_destroy(&w->submit);
		free(w);
		return -rc;
	}
	pthread_setname_np(w->thread, "npumemfs-graph");
	*out = w;
	return 0;
}

int gw_run(struct graph_worker *w, gw_job_fn fn, void *arg)
{
	pthread_mutex_lock(&w->submit);
	pthread_mutex_lock(&w->lock);
	w->fn = fn;
	w->arg = arg;
	w->origin = npa_origin(); /* the poster waits below, so it stays valid */
	w->done = false;
	pthread_cond_broadcast(&w->cond);
	while (!w->done)
		pthread_cond_wait(&w->cond, &w->lock);
	int rc = w->rc;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_unlock(&w->submit);
	return rc;
}

void gw_stop(struct graph_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->submit);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_unlock(&w->submit);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->submit);
	free(w);
}
