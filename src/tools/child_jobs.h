/*
 * child_jobs.h - independent pieces of work, each in a child process of
 * its own, at most N at a time; each child's output comes back over a
 * pipe. A simulated machine is one per process, so processes (not
 * threads) are what lets replays run side by side.
 */
#ifndef NPUMEMFS_CHILD_JOBS_H
#define NPUMEMFS_CHILD_JOBS_H

#include <stddef.h>

#include "base/sbuf.h"

struct child_jobs {
	unsigned njobs;   /* pieces of work, 0..njobs-1 */
	unsigned width;   /* at most this many children at once (>= 1) */
	/* In the child: do piece k, its output into out; the exit status
	 * (0, or the program's status for a failure, its message printed). */
	int (*work)(void *ctx, unsigned k, struct sbuf *out);
	/* In the parent, for each child once it ended: how (waitpid's
	 * status) and its whole output. 0, or an exit status that stops
	 * the rest; a child that failed is the caller's to count. */
	int (*done)(void *ctx, unsigned k, int wait_status, const char *out, size_t len);
	void *ctx;
};

/* Run them all: 0, or the highest exit status done gave, 1 if a child
 * could not start. */
int child_jobs_run(const struct child_jobs *j);

/* The CPUs this process may run on (sched_getaffinity), at least 1. */
unsigned child_jobs_cpus(void);

#endif /* NPUMEMFS_CHILD_JOBS_H */
