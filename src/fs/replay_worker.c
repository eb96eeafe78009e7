/*
 * replay_worker.c - the background replay thread.
 *
 * The thread runs the trace in chunks through wl_replay_run and copies its
 * counters out under the worker's lock after each chunk; readers of
 * workload/replay only ever take that lock, never the replay itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "replay_worker.h"

#define CHUNK 256
/* Between rounds of a looping replay: live numbers without a spinning core. */
#define ROUND_PAUSE_NS (10 * 1000 * 1000)

static const char *const state_names[] = {
	[RW_IDLE] = "idle", [RW_RUNNING] = "running", [RW_DONE] = "done",
	[RW_FAILED] = "failed", [RW_STOPPED] = "stopped",
};

static double elapsed(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) +
	       (double)(now.tv_nsec - since->tv_nsec) / 1e9;
}

void rw_init(struct replay_worker *rw, struct allocator target,
	     struct dlog *log)
{
	memset(rw, 0, sizeof(*rw));
	rw->target = target;
	rw->log = log;
	pthread_mutex_init(&rw->start_lock, NULL);
	pthread_mutex_init(&rw->lock, NULL);
	atomic_init(&rw->stop, false);
}

/* CPU time of the calling thread; a replay has a thread of its own. */
static double thread_cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void publish(struct replay_worker *rw, size_t done, uint64_t delta)
{
	double cpu = thread_cpu_seconds();

	pthread_mutex_lock(&rw->lock);
	rw->cpu_seconds = cpu;
	rw->done = done;
	rw->done_total += delta;
	wl_replay_counters(rw->replay, &rw->counters);
	pthread_mutex_unlock(&rw->lock);
}

/* One pass over the trace from event `start`: 0, -ECANCELED, or the
 * replay's error. */
static int run_round(struct replay_worker *rw, size_t start, char *err, size_t errlen)
{
	size_t total = rw->trace->nevents;

	for (size_t from = start; from < total; from += CHUNK) {
		size_t to = from + CHUNK < total ? from + CHUNK : total;
		int rc = wl_replay_run(rw->replay, from, to, &rw->stop, err, errlen);
		publish(rw, to, to - from);
		if (rc)
			return rc;
	}
	return 0;
}

static void finish(struct replay_worker *rw, int rc, const char *err)
{
	pthread_mutex_lock(&rw->lock);
	rw->seconds = elapsed(&rw->started);
	if (rc == 0)
		rw->state = RW_DONE;
	else if (rc == -ECANCELED)
		rw->state = RW_STOPPED;
	else
		rw->state = RW_FAILED;
	if (rc && rc != -ECANCELED)
		snprintf(rw->error, sizeof(rw->error), "%s", err);
	pthread_mutex_unlock(&rw->lock);
	if (rc && rc != -ECANCELED)
		dlog_printf(rw->log, "replay %s failed: %s", rw->path, err);
	else
		dlog_printf(rw->log, "replay %s %s after %llu events", rw->path,
			    rc ? "stopped" : "done",
			    (unsigned long long)rw->done_total);
}

static void *thread_main(void *arg)
{
	struct replay_worker *rw = arg;
	char err[WL_ERRLEN] = "";
	int rc;

	/* A trace with loop_start keeps what the lines before it made, as a
	 * training run keeps its weights; one without starts afresh. */
	const struct wl_trace *t = rw->trace;
	size_t start = 0;

	for (;;) {
		rc = run_round(rw, start, err, sizeof(err));
		if (rc == 0) {
			pthread_mutex_lock(&rw->lock);
			rw->rounds++;
			pthread_mutex_unlock(&rw->lock);
		}
		if (rc || !rw->loop || atomic_load(&rw->stop))
			break;
		if (t->has_loop)
			start = t->loop_from;
		else
			wl_replay_release_all(rw->replay);
		nanosleep(&(struct timespec){ 0, ROUND_PAUSE_NS }, NULL);
		pthread_mutex_lock(&rw->lock);
		rw->paused += ROUND_PAUSE_NS / 1e9;
		pthread_mutex_unlock(&rw->lock);
	}
	if (rc == 0 && atomic_load(&rw->stop))
		rc = -ECANCELED;
	finish(rw, rc, err);
	return NULL;
}

/* Wait for the thread (its replay has ended), then drop what it held. */
static void reap(struct replay_worker *rw)
{
	if (rw->joinable) {
		pthread_join(rw->thread, NULL);
		rw->joinable = false;
	}
	if (rw->replay) {
		wl_replay_release_all(rw->replay);
		wl_replay_free(rw->replay);
	}
	wl_trace_free(rw->trace);
	pthread_mutex_lock(&rw->lock);
	rw->replay = NULL;
	rw->trace = NULL;
	pthread_mutex_unlock(&rw->lock);
}

/* Signals belong to the FUSE loop's thread, never to ours. */
static int spawn(struct replay_worker *rw)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&rw->thread, NULL, thread_main, rw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Named for top -H and perf -t: the replay's CPU is its own. */
	if (rc == 0)
		pthread_setname_np(rw->thread, "npumemfs-replay");
	return -rc;
}

static int prepare(struct replay_worker *rw, const char *path, char *err,
		   size_t errlen)
{
	struct wl_trace *t = NULL;
	struct wl_replay *r = NULL;
	int rc = wl_trace_load_file(path, &t, err, errlen);

	if (rc == 0)
		rc = wl_replay_new_target(rw->target, t, &r, err, errlen);
	if (rc == 0 && rw->launcher)
		wl_replay_set_launcher(r, rw->launcher);
	if (rc) {
		if (t)
			wl_trace_free(t);
		return rc;
	}
	reap(rw);
	pthread_mutex_lock(&rw->lock);
	rw->trace = t;
	rw->replay = r;
	rw->total = t->nevents;
	pthread_mutex_unlock(&rw->lock);
	return 0;
}

int rw_start(struct replay_worker *rw, const char *path, bool loop, char *err,
	     size_t errlen)
{
	int rc;

	pthread_mutex_lock(&rw->start_lock);
	pthread_mutex_lock(&rw->lock);
	bool busy = rw->state == RW_RUNNING;
	if (busy)
		snprintf(err, errlen, "a replay of %s is running", rw->path);
	pthread_mutex_unlock(&rw->lock);
	rc = busy ? -EBUSY : prepare(rw, path, err, errlen);
	if (rc) {
		pthread_mutex_unlock(&rw->start_lock);
		return rc;
	}
	pthread_mutex_lock(&rw->lock);
	snprintf(rw->path, sizeof(rw->path), "%s", path);
	rw->loop = loop;
	rw->state = RW_RUNNING;
	rw->done = rw->done_total = rw->rounds = 0;
	rw->paused = rw->cpu_seconds = 0;
	memset(&rw->counters, 0, sizeof(rw->counters));
	rw->error[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &rw->started);
	atomic_store(&rw->stop, false);
	rc = spawn(rw);
	rw->joinable = rc == 0;
	if (rc)
		rw->state = RW_FAILED;
	pthread_mutex_unlock(&rw->lock);
	if (rc)
		snprintf(err, errlen, "cannot start the replay thread: %s",
			 strerror(-rc));
	else
		dlog_printf(rw->log, "replay %s started (%llu events%s)", path,
			    (unsigned long long)rw->total, loop ? ", looping" : "");
	pthread_mutex_unlock(&rw->start_lock);
	return rc;
}

int rw_halt(struct replay_worker *rw, char *err, size_t errlen)
{
	pthread_mutex_lock(&rw->start_lock);
	pthread_mutex_lock(&rw->lock);
	bool idle = rw->state == RW_IDLE;
	pthread_mutex_unlock(&rw->lock);
	if (idle) {
		pthread_mutex_unlock(&rw->start_lock);
		snprintf(err, errlen, "no trace was replayed yet: nothing to stop");
		return -EINVAL;
	}
	atomic_store(&rw->stop, true);
	reap(rw);
	pthread_mutex_lock(&rw->lock);
	rw->state = RW_STOPPED;
	pthread_mutex_unlock(&rw->lock);
	dlog_printf(rw->log, "replay %s: stopped, what it held is freed", rw->path);
	pthread_mutex_unlock(&rw->start_lock);
	return 0;
}

bool rw_running(struct replay_worker *rw)
{
	pthread_mutex_lock(&rw->lock);
	bool running = rw->state == RW_RUNNING;
	pthread_mutex_unlock(&rw->lock);
	return running;
}

void rw_stop(struct replay_worker *rw)
{
	pthread_mutex_lock(&rw->start_lock);
	atomic_store(&rw->stop, true);
	reap(rw);
	pthread_mutex_unlock(&rw->start_lock);
	pthread_mutex_destroy(&rw->lock);
	pthread_mutex_destroy(&rw->start_lock);
}

int rw_format(struct replay_worker *rw, struct sbuf *out)
{
	pthread_mutex_lock(&rw->lock);
	double secs = rw->state == RW_RUNNING ? elapsed(&rw->started) : rw->seconds;
	secs -= rw->paused;
	sbuf_printf(out, "state: %s\n", state_names[rw->state]);
	if (rw->state != RW_IDLE) {
		sbuf_printf(out, "trace: %s\nloop: %s\nrounds: %llu\n", rw->path,
			    rw->loop ? "true" : "false",
			    (unsigned long long)rw->rounds);
		sbuf_printf(out, "events: %llu/%llu\nevents_per_second: %.0f\n",
			    (unsigned long long)rw->done,
			    (unsigned long long)rw->total,
			    secs > 0 ? (double)rw->done_total / secs : 0.0);
		sbuf_printf(out, "cpu_seconds: %.3f\nevents_per_cpu_second: %.0f\n",
			    rw->cpu_seconds,
			    rw->cpu_seconds > 0 ? (double)rw->done_total / rw->cpu_seconds : 0.0);
		sbuf_printf(out, "allocs: %llu\nfrees: %llu\nooms: %llu\n",
			    (unsigned long long)rw->counters.allocs,
			    (unsigned long long)rw->counters.frees,
			    (unsigned long long)rw->counters.ooms);
		sbuf_printf(out, "error: %s\n", rw->error[0] ? rw->error : "none");
	}
	pthread_mutex_unlock(&rw->lock);
	return out->error;
}
