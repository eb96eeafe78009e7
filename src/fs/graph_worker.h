/*
 * graph_worker.h - one thread that runs graph calls one at a time.
 *
 * A capture in global or thread-local mode must end on the thread that
 * began it (the runtime refuses otherwise), and FUSE serves each write on
 * whichever of its threads is free. So every ctl/graph write runs here, as
 * a program's captures run on its one Python thread.
 */
#ifndef NPUMEMFS_GRAPH_WORKER_H
#define NPUMEMFS_GRAPH_WORKER_H

struct graph_worker;

typedef int (*gw_job_fn)(void *arg);

/* 0, or -errno when the thread cannot start. */
int gw_start(struct graph_worker **out);
/* Run fn(arg) on the worker and wait for it; fn's result. */
int gw_run(struct graph_worker *w, gw_job_fn fn, void *arg);
/* Let a running job finish, then stop the thread and free it. */
void gw_stop(struct graph_worker *w);

#endif /* NPUMEMFS_GRAPH_WORKER_H */
