/*
 * stat_sampler.h - each device's allocated, active and reserved bytes,
 * read every SAMPLER_PERIOD_MS into a ring, for the history picture
 * (snapshot/deviceN.history.svg): the last SAMPLER_SAMPLES readings, one
 * minute, whether or not memory history is recorded.
 */
#ifndef NPUMEMFS_STAT_SAMPLER_H
#define NPUMEMFS_STAT_SAMPLER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "alloc/switch/allocator_switch.h"
#include "report/report.h"

#define SAMPLER_PERIOD_MS 100
#define SAMPLER_SAMPLES 600

struct sampler_ring {
	struct report_sample s[SAMPLER_SAMPLES];
	size_t head;  /* next slot to write */
	size_t count;
};

struct stat_sampler {
	struct sw *sw;
	int device_count;
	pthread_mutex_t lock;  /* the rings and `stop` */
	pthread_cond_t wake;
	bool stop;
	bool running;
	pthread_t thread;
	struct sampler_ring *rings;  /* [device_count] */
	/* Called after each reading, outside the lock, if set before
	 * sampler_start: the daemon's clock for what must look now and then
	 * (poll notifications for files that wait). */
	void (*tick)(void *arg);
	void *tick_arg;
};

int sampler_init(struct stat_sampler *sm, struct sw *sw, int device_count);
/* Start reading (after daemonizing: a thread does not survive the fork). */
int sampler_start(struct stat_sampler *sm);
/* Stop the thread, if it runs, and free the rings. */
void sampler_fini(struct stat_sampler *sm);
/* The readings of `device`, oldest first, with one taken now at the end.
 * *out is malloc'ed; 0 or -ENOMEM. */
int sampler_copy(struct stat_sampler *sm, int device, struct report_sample **out,
		 size_t *n);

#endif /* NPUMEMFS_STAT_SAMPLER_H */
