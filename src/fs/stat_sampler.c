/*
 * stat_sampler.c - the thread that reads each device's byte stats.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stat_sampler.h"

int sampler_init(struct stat_sampler *sm, struct sw *sw, int device_count)
{
	memset(sm, 0, sizeof(*sm));
	sm->sw = sw;
	sm->device_count = device_count;
	sm->rings = calloc((size_t)device_count, sizeof(*sm->rings));
	if (sm->rings == NULL)
		return -ENOMEM;
	pthread_mutex_init(&sm->lock, NULL);
	pthread_cond_init(&sm->wake, NULL);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One reading of device d, taken outside the rings' lock. */
static int read_device(struct stat_sampler *sm, int d, struct report_sample *s)
{
	struct npa_stats st;
	int rc = sw_get_stats(sm->sw, d, &st);

	if (rc)
		return rc;
	s->time_ms = now_ms();
	s->allocated = st.allocated_bytes[NPA_STAT_ALL].current;
	s->reserved = st.reserved_bytes[NPA_STAT_ALL].current;
	s->active = st.active_bytes[NPA_STAT_ALL].current;
	return 0;
}

static void record(struct stat_sampler *sm)
{
	for (int d = 0; d < sm->device_count; d++) {
		struct report_sample s;
		if (read_device(sm, d, &s))
			continue;
		pthread_mutex_lock(&sm->lock);
		struct sampler_ring *r = &sm->rings[d];
		r->s[r->head] = s;
		r->head = (r->head + 1) % SAMPLER_SAMPLES;
		if (r->count < SAMPLER_SAMPLES)
			r->count++;
		pthread_mutex_unlock(&sm->lock);
	}
}

static void *sampler_main(void *arg)
{
	struct stat_sampler *sm = arg;
	struct timespec until;

	pthread_mutex_lock(&sm->lock);
	while (!sm->stop) {
		pthread_mutex_unlock(&sm->lock);
		record(sm);
		if (sm->tick)
			sm->tick(sm->tick_arg);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += SAMPLER_PERIOD_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&sm->lock);
		if (!sm->stop)
			pthread_cond_timedwait(&sm->wake, &sm->lock, &until);
	}
	pthread_mutex_unlock(&sm->lock);
	return NULL;
}

/* Signals belong to the FUSE loop's thread, never to ours. */
int sampler_start(struct stat_sampler *sm)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&sm->thread, NULL, sampler_main, sm);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sm->running = rc == 0;
	if (sm->running)
		pthread_setname_np(sm->thread, "npumemfs-sample");
	return -rc;
}

void sampler_fini(struct stat_sampler *sm)
{
	if (sm->rings == NULL)
		return;
	if (sm->running) {
		pthread_mutex_lock(&sm->lock);
		sm->stop = true;
		pthread_cond_signal(&sm->wake);
		pthread_mutex_unlock(&sm->lock);
		pthread_join(sm->thread, NULL);
		sm->running = false;
	}
	pthread_cond_destroy(&sm->wake);
	pthread_mutex_destroy(&sm->lock);
	free(sm->rings);
	sm->rings = NULL;
}

int sampler_copy(struct stat_sampler *sm, int device, struct report_sample **out,
		 size_t *n)
{
	struct report_sample *s = malloc((SAMPLER_SAMPLES + 1) * sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&sm->lock);
	const struct sampler_ring *r = &sm->rings[device];
	size_t first = (r->head + SAMPLER_SAMPLES - r->count) % SAMPLER_SAMPLES;
	for (size_t i = 0; i < r->count; i++)
		s[i] = r->s[(first + i) % SAMPLER_SAMPLES];
	*n = r->count;
	pthread_mutex_unlock(&sm->lock);
	if (read_device(sm, device, &s[*n]) == 0)
		(*n)++;
	*out = s;
	return 0;
}
